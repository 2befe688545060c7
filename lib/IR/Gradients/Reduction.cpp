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

// ReduceMax / ReduceMin: to the elements equal to the extremum, split
// evenly among ties (PyTorch's amax / amin).
void reduceExtremum(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  std::vector<int64_t> xD = b.dims(x);
  Value *hit = b.op(OpKind::Equal, {x, b.expandTo(b.reshape(b.fwd.result(), r.keptDims), xD)});
  Value *count = b.reduceSum(b.castTo(hit, x->type.dtype), r.axes, true);
  Value *share = b.div(b.reshape(rg[0], r.keptDims), count);
  og[0] = b.where(hit, b.expandTo(share, xD), b.scalar(0, x));
}

// ReduceProd: the product of the others, g y / x where no element of the
// group is 0; where one is, only it gets g times the product of the rest.
void reduceProd(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  Value *zero = b.op(OpKind::Equal, {x, b.scalar(0, x)});
  Value *safe = b.where(zero, b.scalar(1, x), x);
  Value *prodNonZero = b.op(OpKind::ReduceProd, {safe},
                            {{"axes", Attribute(r.axes)}, {"keepdims", Attribute(int64_t(1))}});
  Value *zeros = b.reduceSum(b.castTo(zero, x->type.dtype), r.axes, true);
  Value *none = b.op(OpKind::Equal, {zeros, b.scalar(0, x)});
  Value *one = b.op(OpKind::Equal, {zeros, b.scalar(1, x)});
  Value *d = b.where(none, b.div(prodNonZero, safe),
                     b.where(b.op(OpKind::And, {one, zero}), prodNonZero, b.scalar(0, x)));
  og[0] = b.mul(d, b.reshape(rg[0], r.keptDims));
}

// ReduceL1: sign(x); ReduceLogSum: 1 / sum(x).
void reduceL1(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  og[0] = b.mul(b.op(OpKind::Sign, {x}), b.reshape(rg[0], r.keptDims));
}

void reduceLogSum(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Reduced r = reducedOf(b);
  Value *x = b.fwd.operand(0);
  Value *inv = b.op(OpKind::Exp, {b.neg(b.reshape(b.fwd.result(), r.keptDims))});
  og[0] = b.expandTo(b.mul(inv, b.reshape(rg[0], r.keptDims)), b.dims(x));
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
