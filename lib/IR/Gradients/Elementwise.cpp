// Gradient rules of the pointwise ops: arithmetic with numpy broadcasting
// (each operand's cotangent summed back over the axes it was broadcast
// along), activations, comparisons-as-masks (Where, Clip, Max/Min, Relu).
#include "GradRules.h"
#include <cmath>

namespace tc::grad {

namespace {
Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }
Value *out(GradBuilder &b) { return b.fwd.result(); }
// The cotangent of operand i from the cotangent `g` of the (broadcast) result.
Value *back(GradBuilder &b, Value *g, size_t i) { return b.unbroadcast(g, b.dims(in(b, i))); }
} // namespace

void add(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  for (size_t i = 0; i < 2; ++i)
    if (w[i])
      og[i] = back(b, rg[0], i);
}

void sub(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (w[0])
    og[0] = back(b, rg[0], 0);
  if (w[1])
    og[1] = back(b, b.neg(rg[0]), 1);
}

void mul(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (w[0])
    og[0] = back(b, b.mul(rg[0], in(b, 1)), 0);
  if (w[1])
    og[1] = back(b, b.mul(rg[0], in(b, 0)), 1);
}

// y = a / b: da = g / b, db = -g * y / b.
void div(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (w[0])
    og[0] = back(b, b.div(rg[0], in(b, 1)), 0);
  if (w[1])
    og[1] = back(b, b.neg(b.div(b.mul(rg[0], out(b)), in(b, 1))), 1);
}

// y = x ^ p: dx = g p x^(p-1), dp = g y log(x).
void pow(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *x = in(b, 0), *p = in(b, 1);
  if (w[0]) {
    Value *pf = b.castTo(p, x->type.dtype);
    Value *d = b.mul(pf, b.op(OpKind::Pow, {x, b.sub(pf, b.scalar(1, x))}));
    og[0] = back(b, b.mul(rg[0], d), 0);
  }
  if (w[1])
    og[1] = back(b, b.mul(rg[0], b.mul(out(b), b.op(OpKind::Log, {x}))), 1);
}

// Mod of floats (fmod, truncated): a - trunc(a / b) b; da = g, db = -g trunc(a / b).
void mod(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (w[0])
    og[0] = back(b, rg[0], 0);
  if (w[1]) {
    Value *q = b.div(in(b, 0), in(b, 1));
    Value *trunc = b.mul(b.op(OpKind::Sign, {q}), b.op(OpKind::Floor, {b.op(OpKind::Abs, {q})}));
    og[1] = back(b, b.neg(b.mul(rg[0], trunc)), 1);
  }
}

void neg(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) { og[0] = b.neg(rg[0]); }
void identity(GradBuilder &, const Grads &rg, const Wanted &, Grads &og) { og[0] = rg[0]; }

// Float to float: the cotangent goes back in the operand's type (Cast, CastLike).
void cast(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.castTo(rg[0], in(b, 0)->type.dtype);
}

void abs(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.op(OpKind::Sign, {in(b, 0)}));
}

// Where the forward let x through (mask true) the cotangent passes.
static Value *masked(GradBuilder &b, Value *mask, Value *g) {
  return b.where(mask, g, b.scalar(0, g));
}

// The mask from the output (y > 0 exactly where x > 0): the backward reads
// the value the next layer saves anyway, so the pre-activation is not kept
// and the op before can write y alone (a GEMM's ReLU epilogue, a batch
// norm's apply and ReLU in one kernel).
void relu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = masked(b, b.op(OpKind::Greater, {out(b), b.scalar(0, out(b))}), rg[0]);
}

void leakyRelu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  Value *neg = b.scale(rg[0], b.fwd.getFloat("alpha"));
  og[0] = b.where(b.op(OpKind::Greater, {x, b.scalar(0, x)}), rg[0], neg);
}

void elu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  // x > 0: 1; else alpha e^x = y + alpha.
  Value *x = in(b, 0);
  Value *d = b.add(out(b), b.scalar(b.fwd.getFloat("alpha"), x));
  og[0] = b.where(b.op(OpKind::Greater, {x, b.scalar(0, x)}), rg[0], b.mul(rg[0], d));
}

void sigmoid(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *y = out(b);
  og[0] = b.mul(rg[0], b.mul(y, b.sub(b.scalar(1, y), y)));
}

void tanh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *y = out(b);
  og[0] = b.mul(rg[0], b.sub(b.scalar(1, y), b.mul(y, y)));
}

void exp(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], out(b));
}
void log(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.div(rg[0], in(b, 0));
}

void sqrt(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.div(b.scale(rg[0], 0.5), out(b));
}

void reciprocal(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.neg(b.mul(rg[0], b.mul(out(b), out(b))));
}

void sin(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.op(OpKind::Cos, {in(b, 0)}));
}

void cos(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.neg(b.mul(rg[0], b.op(OpKind::Sin, {in(b, 0)})));
}

// d erf(x) = 2 / sqrt(pi) e^(-x^2).
void erf(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  Value *e = b.op(OpKind::Exp, {b.neg(b.mul(x, x))});
  og[0] = b.mul(rg[0], b.scale(e, 2.0 / std::sqrt(M_PI)));
}

// The inverse and hyperbolic trigonometric functions, and tan.
void tan(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.add(b.scalar(1, out(b)), b.mul(out(b), out(b))));
}
namespace {
// g / sqrt(c + s x^2).
Value *overRoot(GradBuilder &b, Value *g, double c, double s) {
  Value *x = in(b, 0);
  return b.div(g, b.op(OpKind::Sqrt, {b.add(b.scalar(c, x), b.scale(b.mul(x, x), s))}));
}
} // namespace
void asin(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = overRoot(b, rg[0], 1, -1);
}
void acos(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.neg(overRoot(b, rg[0], 1, -1));
}
void asinh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = overRoot(b, rg[0], 1, 1);
}
void acosh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = overRoot(b, rg[0], -1, 1);
}
void atan(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  og[0] = b.div(rg[0], b.add(b.scalar(1, x), b.mul(x, x)));
}
void atanh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  og[0] = b.div(rg[0], b.sub(b.scalar(1, x), b.mul(x, x)));
}
void sinh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.op(OpKind::Cosh, {in(b, 0)}));
}
void cosh(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.op(OpKind::Sinh, {in(b, 0)}));
}

void softplus(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.mul(rg[0], b.op(OpKind::Sigmoid, {in(b, 0)}));
}

void softsign(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  Value *d = b.add(b.scalar(1, x), b.op(OpKind::Abs, {x}));
  og[0] = b.div(rg[0], b.mul(d, d));
}

// Gelu: exact, x Phi(x) -> Phi(x) + x phi(x); tanh form: the derivative of
// 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
void gelu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  if (b.fwd.getString("approximate") == "tanh") {
    double k = std::sqrt(2.0 / M_PI);
    Value *x2 = b.mul(x, x);
    Value *inner = b.scale(b.mul(x, b.add(b.scalar(1, x), b.scale(x2, 0.044715))), k);
    Value *t = b.op(OpKind::Tanh, {inner});
    Value *one = b.scalar(1, x);
    Value *dinner = b.scale(b.add(one, b.scale(x2, 3 * 0.044715)), k);
    Value *d = b.add(b.scale(b.add(one, t), 0.5),
                     b.mul(b.scale(x, 0.5), b.mul(b.sub(one, b.mul(t, t)), dinner)));
    og[0] = b.mul(rg[0], d);
    return;
  }
  Value *cdf =
      b.scale(b.add(b.scalar(1, x), b.op(OpKind::Erf, {b.scale(x, 1 / std::sqrt(2.0))})), 0.5);
  Value *pdf = b.scale(b.op(OpKind::Exp, {b.scale(b.mul(x, x), -0.5)}), 1 / std::sqrt(2 * M_PI));
  og[0] = b.mul(rg[0], b.add(cdf, b.mul(x, pdf)));
}

// HardSigmoid: alpha inside the linear part, 0 outside.
void hardSigmoid(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  double alpha = b.fwd.getFloat("alpha"), beta = b.fwd.getFloat("beta");
  Value *lin = b.add(b.scale(x, alpha), b.scalar(beta, x));
  Value *inside = b.op(OpKind::And, {b.op(OpKind::Greater, {lin, b.scalar(0, x)}),
                                     b.op(OpKind::Less, {lin, b.scalar(1, x)})});
  og[0] = masked(b, inside, b.scale(rg[0], alpha));
}

// HardSwish x relu6(x + 3) / 6: 0 below -3, 1 above 3, (2x + 3) / 6 between.
void hardSwish(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  Value *mid = b.add(b.scale(x, 1.0 / 3), b.scalar(0.5, x));
  Value *d = b.where(b.op(OpKind::Less, {x, b.scalar(-3, x)}), b.scalar(0, x),
                     b.where(b.op(OpKind::Greater, {x, b.scalar(3, x)}), b.scalar(1, x), mid));
  og[0] = b.mul(rg[0], d);
}

// Mish x tanh(softplus(x)): tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2).
void mish(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  Value *t = b.op(OpKind::Tanh, {b.op(OpKind::Softplus, {x})});
  Value *d =
      b.add(t, b.mul(b.mul(x, b.op(OpKind::Sigmoid, {x})), b.sub(b.scalar(1, x), b.mul(t, t))));
  og[0] = b.mul(rg[0], d);
}

// Rounding: zero almost everywhere.
void zero(GradBuilder &b, const Grads &, const Wanted &w, Grads &og) {
  for (size_t i = 0; i < og.size(); ++i)
    if (w[i])
      og[i] = b.zerosLike(in(b, i));
}

void where(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *c = in(b, 0), *g = rg[0], *z = b.scalar(0, g);
  if (w[1])
    og[1] = back(b, b.where(c, g, z), 1);
  if (w[2])
    og[2] = back(b, b.where(c, z, g), 2);
}

void clip(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *x = in(b, 0);
  // Passes where the result equals x (inside the bounds).
  if (w[0])
    og[0] = masked(b, b.op(OpKind::Equal, {out(b), x}), rg[0]);
  for (size_t i = 1; i < 3; ++i)
    if (w[i] && in(b, i)) {
      Value *hit = b.op(OpKind::Equal, {out(b), in(b, i)});
      Value *notX = b.op(OpKind::Not, {b.op(OpKind::Equal, {out(b), x})});
      og[i] = back(b, masked(b, b.op(OpKind::And, {hit, notX}), rg[0]), i);
    }
}

// Max/Min of any number of operands: the cotangent goes to the operands the
// result came from, split evenly among ties (PyTorch's maximum/minimum).
void maxMin(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  size_t n = b.fwd.operands.size();
  if (n == 1) {
    og[0] = rg[0];
    return;
  }
  std::vector<Value *> hits;
  Value *count = nullptr;
  for (size_t i = 0; i < n; ++i) {
    hits.push_back(b.op(OpKind::Equal, {out(b), in(b, i)}));
    Value *one = b.castTo(hits.back(), rg[0]->type.dtype);
    count = count ? b.add(count, one) : one;
  }
  Value *share = b.div(rg[0], count);
  for (size_t i = 0; i < n; ++i)
    if (w[i])
      og[i] = back(b, masked(b, hits[i], share), i);
}

void sum(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  for (size_t i = 0; i < og.size(); ++i)
    if (w[i])
      og[i] = back(b, rg[0], i);
}

void mean(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *g = b.scale(rg[0], 1.0 / double(og.size()));
  for (size_t i = 0; i < og.size(); ++i)
    if (w[i])
      og[i] = back(b, g, i);
}

// Selu: gamma above 0, else gamma alpha e^x = y + gamma alpha.
void selu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  double alpha = b.fwd.getFloat("alpha"), gamma = b.fwd.getFloat("gamma");
  Value *d = b.where(b.op(OpKind::Greater, {x, b.scalar(0, x)}), b.scalar(gamma, x),
                     b.add(out(b), b.scalar(gamma * alpha, x)));
  og[0] = b.mul(rg[0], d);
}

// Celu: 1 above 0, else e^(x / alpha) = y / alpha + 1.
void celu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  double alpha = b.fwd.getFloat("alpha");
  Value *d = b.add(b.scale(out(b), 1 / alpha), b.scalar(1, x));
  og[0] = b.where(b.op(OpKind::Greater, {x, b.scalar(0, x)}), rg[0], b.mul(rg[0], d));
}

void thresholdedRelu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  og[0] = masked(b, b.op(OpKind::Greater, {x, b.scalar(b.fwd.getFloat("alpha"), x)}), rg[0]);
}

// Shrink: 1 outside [-lambd, lambd], 0 inside.
void shrink(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  double l = b.fwd.getFloat("lambd");
  Value *outside = b.op(OpKind::Or, {b.op(OpKind::Greater, {x, b.scalar(l, x)}),
                                     b.op(OpKind::Less, {x, b.scalar(-l, x)})});
  og[0] = masked(b, outside, rg[0]);
}

void prelu(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *x = in(b, 0), *slope = in(b, 1);
  Value *pos = b.op(OpKind::Greater, {x, b.scalar(0, x)});
  if (w[0])
    og[0] = b.where(pos, rg[0], b.mul(rg[0], slope));
  if (w[1])
    og[1] = back(b, b.where(pos, b.scalar(0, x), b.mul(rg[0], x)), 1);
}

} // namespace tc::grad
