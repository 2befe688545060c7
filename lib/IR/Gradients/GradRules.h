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

// Shared by the normalizations (NN.cpp, Norms.cpp): x normalized over `axes`
// with its own statistics, xhat and 1 / sqrt(var + eps); and the cotangent of
// x from that of xhat.
struct Normalized {
  Value *xhat, *invStd;
};
Normalized normalize(GradBuilder &b, Value *x, const std::vector<int64_t> &axes, double eps);
Value *normalizeBackward(GradBuilder &b, const Normalized &n, Value *dxhat,
                         const std::vector<int64_t> &axes);

} // namespace tc::grad
