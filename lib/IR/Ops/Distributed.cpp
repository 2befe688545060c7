// Shape rules of the tensor-parallel ops (Ops.def, "Distributed").
#include "OpInference.h"

namespace tc::infer {

namespace {

int64_t ranksOf(const Op &op) {
  int64_t n = op.getInt("ranks");
  if (n < 1)
    fail("ranks must be >= 1, got ", n);
  return n;
}

void checkReduction(const Op &op) {
  const std::string &r = op.getString("reduction");
  if (r != "sum" && r != "max" && r != "min")
    fail("reduction must be sum, max or min, not '", r, "'");
}

// X's type with the extent of `axis` scaled by ranks (up) or divided (down).
std::vector<TensorType> scaledAxis(const Op &op, bool up) {
  TensorType t = operandType(op, 0);
  int64_t n = ranksOf(op), axis = normalizeAxis(op.getInt("axis"), int64_t(t.rank()));
  Dim &d = t.shape[size_t(axis)];
  if (n == 1)
    return {t};
  if (!d.isStatic())
    fail("the ", up ? "gathered" : "split", " axis ", axis, " must have a static extent, got ",
         t.str());
  if (up)
    d = Dim::fixed(checkedMul(d.size, n));
  else if (d.size % n)
    fail("axis ", axis, " of ", t.str(), " does not divide into ", n, " ranks");
  else
    d = Dim::fixed(d.size / n);
  return {t};
}

} // namespace

std::vector<TensorType> inferRankSlice(const Op &op) { return scaledAxis(op, false); }

std::vector<TensorType> inferAllReduce(const Op &op) {
  ranksOf(op);
  checkReduction(op);
  return {operandType(op, 0)};
}

std::vector<TensorType> inferAllGather(const Op &op) { return scaledAxis(op, true); }

std::vector<TensorType> inferReduceScatter(const Op &op) {
  checkReduction(op);
  return scaledAxis(op, false);
}

} // namespace tc::infer
