// The gradient rule functions (lib/IR/Gradients/*.cpp), named in
// include/tc/IR/Gradients.def. Internal to lib/IR/Gradients.
#pragma once
#include "tc/IR/Gradient.h"
#include "tc/Support/Error.h"

namespace tc::grad {

using Grads = std::vector<Value *>;
using Wanted = std::vector<bool>;

#define TC_GRAD(OP, FN) void FN(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og);
#include "tc/IR/Gradients.def"
#undef TC_GRAD

// Shared by the normalizations (NN.cpp, Norms.cpp): the cotangent of x from
// that of xhat = normalize(x) (tc/IR/Gradient.h).
Value *normalizeBackward(GradBuilder &b, const Normalized &n, Value *dxhat,
                         const std::vector<int64_t> &axes);

} // namespace tc::grad
