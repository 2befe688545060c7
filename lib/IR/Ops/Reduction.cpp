// Shape rules of reductions along axes: Reduce*, ArgMax/ArgMin, CumSum, TopK.
#include "OpInference.h"
#include <set>

namespace tc::infer {

static void requireNumeric(const TensorType &t, bool allowBool = false) {
  if (t.dtype == DType::Bool && !allowBool)
    fail("expects a numeric tensor, got ", t.str());
}

static bool keepDims(const Op &op) {
  int64_t k = op.getInt("keepdims");
  if (k != 0 && k != 1)
    fail("keepdims must be 0 or 1, got ", k);
  return k;
}

std::vector<TensorType> inferReduce(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumeric(x, op.is(OpKind::ReduceMax) || op.is(OpKind::ReduceMin));
  int64_t r = int64_t(x.rank());
  bool keep = keepDims(op);
  if (op.operand(1)) {
    // Axes computed at run time: which dims go is unknown.
    int64_t n = runtimeIntsLength(op, 1);
    if (n == 0 || n > r)
      fail("axes operand has ", n, " entries for a rank-", r, " input");
    return {TensorType{x.dtype, Shape(size_t(keep ? r : r - n), Dim::unknown())}};
  }
  std::vector<bool> reduced(size_t(r), op.getInts("axes").empty());
  std::set<int64_t> seen;
  for (int64_t a : op.getInts("axes")) {
    int64_t n = normalizeAxis(a, r);
    if (!seen.insert(n).second)
      fail("axis ", a, " is listed twice");
    reduced[size_t(n)] = true;
  }
  Shape out;
  for (int64_t d = 0; d < r; ++d) {
    if (!reduced[size_t(d)])
      out.push_back(x.shape[size_t(d)]);
    else if (keep)
      out.push_back(Dim::fixed(1));
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferArgReduce(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumeric(x);
  int64_t r = int64_t(x.rank());
  if (r == 0)
    fail("expects a tensor of rank >= 1, got ", x.str());
  int64_t axis = normalizeAxis(op.getInt("axis"), r);
  int64_t last = op.getInt("select_last_index");
  if (last != 0 && last != 1)
    fail("select_last_index must be 0 or 1, got ", last);
  if (x.shape[size_t(axis)].isStatic() && x.shape[size_t(axis)].size == 0)
    fail("cannot take the index of an extreme of an empty axis");
  Shape out = x.shape;
  if (keepDims(op))
    out[size_t(axis)] = Dim::fixed(1);
  else
    out.erase(out.begin() + axis);
  return {TensorType{DType::I64, out}};
}

std::vector<TensorType> inferCumSum(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumeric(x);
  if (x.rank() == 0)
    fail("expects a tensor of rank >= 1, got ", x.str());
  if (op.operand(1)) { // axis computed at run time
    if (runtimeIntsLength(op, 1) != 1)
      fail("axis operand must hold one value, got ", operandType(op, 1).str());
  } else {
    normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  }
  for (const char *flag : {"exclusive", "reverse"})
    if (op.getInt(flag) != 0 && op.getInt(flag) != 1)
      fail(flag, " must be 0 or 1, got ", op.getInt(flag));
  return {x};
}

std::vector<TensorType> inferTopK(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumeric(x);
  if (x.rank() == 0)
    fail("expects a tensor of rank >= 1, got ", x.str());
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  for (const char *flag : {"largest", "sorted"})
    if (op.getInt(flag) != 0 && op.getInt(flag) != 1)
      fail(flag, " must be 0 or 1, got ", op.getInt(flag));
  Shape out = x.shape;
  if (op.operand(1)) { // k computed at run time
    if (runtimeIntsLength(op, 1) != 1)
      fail("k operand must hold one value, got ", operandType(op, 1).str());
    out[size_t(axis)] = Dim::unknown();
    return {TensorType{x.dtype, out}, TensorType{DType::I64, out}};
  }
  int64_t k = op.getInt("k");
  const Dim &d = x.shape[size_t(axis)];
  if (k < 0)
    fail("k must be >= 0, got ", k);
  if (d.isStatic() && k > d.size)
    fail("k = ", k, " is larger than axis ", axis, " (", d.size, ")");
  out[size_t(axis)] = Dim::fixed(k);
  return {TensorType{x.dtype, out}, TensorType{DType::I64, out}};
}

} // namespace tc::infer
