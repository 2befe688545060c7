// Gradient of the training dropout (PhiloxDropout): the op is linear in its
// data, dX = dY * mask / (1 - ratio), and its mask a function of (seed,
// offset, stream, element index) only, so the backward is the same op over
// dY: the mask is recomputed, never stored (CSE keeps the two apart, their
// data differ).
#include "GradRules.h"

namespace tc::grad {

void philoxDropout(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0])
    return;
  const Op &f = b.fwd;
  og[0] = b.op(OpKind::PhiloxDropout, {rg[0], f.operand(1), f.operand(2)}, f.attrs);
}

} // namespace tc::grad
