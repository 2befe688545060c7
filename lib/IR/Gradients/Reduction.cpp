// Gradient rules of the reductions: the cotangent broadcast back over the
// reduced axes (scaled for means, masked to the extrema for Max/Min).
#include "GradRules.h"

namespace tc::grad {

namespace {
// The reduced axes (normalized) and the result's dims with them kept.
struct Reduced {
  std::vector<int64_t> axes, keptDims;
};
Reduced reducedOf(GradBuilder &b) {
  std::vector<int64_t> xD = b.dims(b.fwd.operand(0));
  std::vector<int64_t> axes = b.fwd.getInts("axes");
  if (b.fwd.operand(1))
    fail(b.fwd.where(), ": gradients of a reduction need constant axes");
  if (axes.empty())
    for (size_t a = 0; a < xD.size(); ++a)
      axes.push_back(int64_t(a));
  Reduced r{{}, xD};
  for (int64_t a : axes) {
    a = a < 0 ? a + int64_t(xD.size()) : a;
    r.axes.push_back(a);
    r.keptDims[size_t(a)] = 1;
  }
  return r;
}
} // namespace

void reduceSum(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  og[0] = b.expandTo(b.reshape(rg[0], r.keptDims), b.dims(b.fwd.operand(0)));
}

void reduceMean(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  std::vector<int64_t> xD = b.dims(b.fwd.operand(0));
  double n = 1;
  for (int64_t a : r.axes)
    n *= double(xD[size_t(a)]);
  og[0] = b.expandTo(b.scale(b.reshape(rg[0], r.keptDims), 1.0 / n), xD);
}

void reduceSumSquare(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  og[0] = b.mul(b.scale(x, 2.0), b.reshape(rg[0], r.keptDims));
}

// ReduceMax / ReduceMin: to the elements equal to the extremum.
void reduceExtremum(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  std::vector<int64_t> xD = b.dims(x);
  Value *hit = b.op(OpKind::Equal, {x, b.expandTo(b.reshape(b.fwd.result(), r.keptDims), xD)});
  og[0] = b.where(hit, b.expandTo(b.reshape(rg[0], r.keptDims), xD), b.scalar(0, x));
}

// ReduceL2: x / y; ReduceLogSumExp: exp(x - y).
void reduceL2(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  og[0] = b.mul(b.div(x, b.reshape(b.fwd.result(), r.keptDims)), b.reshape(rg[0], r.keptDims));
}

void reduceLogSumExp(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  Value *p = b.op(OpKind::Exp, {b.sub(x, b.reshape(b.fwd.result(), r.keptDims))});
  og[0] = b.mul(p, b.reshape(rg[0], r.keptDims));
}

} // namespace tc::grad
