// Gradient rules of the normalizations beyond batch, layer and instance
// norm (NN.cpp): GroupNormalization (the groups' statistics recomputed over
// an [N, G, rest] view), MeanVarianceNormalization and LpNormalization.
// RMSNorm needs no rule: ONNX's RMSNormalization (opset 23) is not imported,
// and PyTorch exports it decomposed (Pow, ReduceMean, Add, Sqrt, Reciprocal,
// Mul), ops with rules of their own.
#include "GradRules.h"
#include <numeric>

namespace tc::grad {

namespace {
Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }
int64_t normAxis(int64_t a, size_t rank) { return a < 0 ? a + int64_t(rank) : a; }
// Every axis of a rank-r tensor but 1 (the channels).
std::vector<int64_t> allButChannels(size_t r) {
  std::vector<int64_t> axes{0};
  for (size_t a = 2; a < r; ++a)
    axes.push_back(int64_t(a));
  return axes;
}
} // namespace

// GroupNormalization (scale and bias per channel, [C]): x viewed as
// [N, G, C/G * spatial] and normalized over its last axis.
void groupNorm(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  std::vector<int64_t> xD = b.dims(X);
  size_t r = xD.size();
  int64_t G = b.fwd.getInt("num_groups");
  if (r < 2 || G < 1 || xD[1] % G != 0 || b.dims(in(b, 1)) != std::vector<int64_t>{xD[1]})
    fail(b.fwd.where(), ": gradients of a GroupNormalization need [C] scale and bias and ",
         "num_groups dividing C");
  int64_t rest = std::accumulate(xD.begin() + 1, xD.end(), int64_t(1), std::multiplies<>()) / G;
  std::vector<int64_t> grouped{xD[0], G, rest}, perC(r, 1);
  perC[1] = xD[1];
  Normalized n = normalize(b, b.reshape(X, grouped), {2}, b.fwd.getFloat("epsilon"));
  std::vector<int64_t> outer = allButChannels(r);
  if (w[0]) {
    Value *dxhat = b.reshape(b.mul(g, b.reshape(in(b, 1), perC)), grouped);
    og[0] = b.reshape(normalizeBackward(b, n, dxhat, {2}), xD);
  }
  if (w[1])
    og[1] = b.reduceSum(b.mul(g, b.reshape(n.xhat, xD)), outer, false);
  if (w[2])
    og[2] = b.reduceSum(g, outer, false);
}

// MeanVarianceNormalization, y = xc s with xc = x - mean(x), s = 1 / (sigma + 1e-9),
// sigma = sqrt(mean(xc^2)): dxc = g s - xc s^2 mean(g xc) / sigma; dx = dxc - mean(dxc).
void meanVarianceNorm(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  size_t r = X->type.rank();
  std::vector<int64_t> axes;
  for (int64_t a : b.fwd.getInts("axes"))
    axes.push_back(normAxis(a, r));
  Value *xc = b.sub(X, b.reduceMean(X, axes, true));
  Value *sigma = b.op(OpKind::Sqrt, {b.reduceMean(b.mul(xc, xc), axes, true)});
  Value *s = b.op(OpKind::Reciprocal, {b.add(sigma, b.scalar(1e-9, X))});
  Value *a = b.div(b.reduceMean(b.mul(g, xc), axes, true), sigma);
  Value *dxc = b.sub(b.mul(g, s), b.mul(b.mul(xc, b.mul(s, s)), a));
  og[0] = b.sub(dxc, b.reduceMean(dxc, axes, true));
}

// LpNormalization y = x / ||x||_p along an axis: p = 2, (g - y sum(g y)) / ||x||;
// p = 1, (g - sign(x) sum(g y)) / ||x||.
void lpNorm(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *X = in(b, 0), *y = b.fwd.result(), *g = rg[0];
  int64_t axis = normAxis(b.fwd.getInt("axis"), X->type.rank());
  int64_t p = b.fwd.getInt("p");
  if (p != 1 && p != 2)
    fail(b.fwd.where(), ": gradients of an LpNormalization need p 1 or 2, not ", p);
  Value *norm = p == 2 ? b.op(OpKind::Sqrt, {b.reduceSum(b.mul(X, X), {axis}, true)})
                       : b.reduceSum(b.op(OpKind::Abs, {X}), {axis}, true);
  Value *dir = p == 2 ? y : b.op(OpKind::Sign, {X});
  Value *gy = b.reduceSum(b.mul(g, y), {axis}, true);
  og[0] = b.div(b.sub(g, b.mul(dir, gy)), norm);
}

} // namespace tc::grad
