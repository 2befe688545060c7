// The values of a constant integer operand (Slice's starts, Reshape's shape):
// what shape rules, views and kernels read from one definition.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <vector>

namespace tc::infer {

// Values of a constant integer operand (i64/i32), or nullopt when the
// operand is not a constant.
std::optional<std::vector<int64_t>> constantInts(const Value *v);

} // namespace tc::infer
