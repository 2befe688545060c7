// Shape/dtype inference rules referenced by Ops.def, and the helpers they share.
#pragma once
#include "tc/IR/ConstantInts.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/IR.h"
#include "tc/Support/Error.h"

namespace tc::infer {

// Numpy-style broadcast of two shapes; symbolic dims are kept where the
// result is certain, unknown otherwise. Throws on a static mismatch.
Shape broadcast(const Shape &a, const Shape &b);
// Normalizes a possibly negative axis against `rank`; throws if out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what = "axis");
// Product of dims as a Dim: static when all static, the symbol when exactly
// one symbolic dim and the rest are 1, unknown otherwise.
Dim product(const Shape &s, size_t begin, size_t end);
// Dimension arithmetic that throws instead of overflowing (hostile models
// carry dims and attributes near INT64_MAX).
int64_t checkedMul(int64_t a, int64_t b);
int64_t checkedAdd(int64_t a, int64_t b);
// constantInts: tc/IR/ConstantInts.h.
// Operand i's type; throws if the operand is absent.
const TensorType &operandType(const Op &op, size_t i);
// Element i of a constant, any dtype, as a double; and of an integer dtype
// exactly (u64: the bit pattern; floats truncate).
double elementAsDouble(const Value &v, size_t i);
int64_t elementAsInt(const Value &v, size_t i);
// The static length of run-time attribute operand i (see Ops.def), an i32 or
// i64 tensor of rank <= 1 computed at run time.
int64_t runtimeIntsLength(const Op &op, size_t i);

#define TC_OP(ENUM, CAT, PREC, LIB, FLOPS, NRES, INFER, ...)                                       \
  std::vector<TensorType> INFER(const Op &op);
#include "tc/IR/Ops.def"
#undef TC_OP

} // namespace tc::infer
