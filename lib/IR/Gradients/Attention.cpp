// Gradient of tc's fused Attention op (Ops.def). The usual case is one
// AttentionGrad op: it recomputes the probabilities block by block from q,
// k and the forward's row log-sum-exp (the op's second result, which
// attention-fusion{lse} gives a train step's forward; an op without it gets
// a second Attention that computes it), so no [B, H, Sq, Skv] tensor lives
// between the forward and the backward.
//
// A mask that needs a gradient (a trainable position bias: T5, MPNet,
// DeBERTa) takes AttentionGrad's dmask result (mask_grad): dS itself,
// [B, H, Sq, Skv], summed over the mask's broadcast axes here.
//
// Where AttentionGrad does not apply (q, k, v of different batches: batch
// 1 broadcast) the backward is decomposed into MatMul / Softmax /
// ReduceSum ops that recompute the scores (an Sq x Skv tensor inside the
// backward only). Its rows whose keys are all hidden give NaN where the op
// gives 0. Layouts other than [B, H, S, D] (attention-layouts, which
// `--train` runs after autodiff) have neither: one line naming the node.
#include "GradRules.h"
#include "tc/IR/AttentionLayout.h"
#include <cmath>
#include <optional>

namespace tc::grad {

namespace {

using Dims = std::vector<int64_t>;

// k or v of `hkv` heads read by `h` query heads: the kv head h / (h / hkv)
// repeated, and the sum back over the query heads that share one.
Value *repeatHeads(GradBuilder &b, Value *x, int64_t h) {
  Dims d = b.dims(x);
  if (d[1] == h)
    return x;
  Dims five{d[0], d[1], 1, d[2], d[3]};
  Value *r = b.reshape(x, five);
  five[2] = h / d[1];
  return b.reshape(b.expandTo(r, five), {d[0], h, d[2], d[3]});
}
Value *sumHeads(GradBuilder &b, Value *g, int64_t hkv) {
  Dims d = b.dims(g);
  if (d[1] == hkv)
    return g;
  return b.reduceSum(b.reshape(g, {d[0], hkv, d[1] / hkv, d[2], d[3]}), {2}, false);
}

// A 4-D mask whose batch MB is neither 1 nor B divides B (b reads b % MB:
// swin's windows): it adds over the scores [B, H, Sq, Skv] viewed as
// [B / MB, MB, H, Sq, Skv]; any other mask broadcasts with numpy's rules.
std::optional<Dims> windowsView(const Dims &md, const Dims &sd) {
  if (md.size() != 4 || md[0] == 1 || md[0] == sd[0])
    return std::nullopt;
  return Dims{sd[0] / md[0], md[0], sd[1], sd[2], sd[3]};
}

// The mask's gradient from dS [B, H, Sq, Skv]: summed over its broadcast axes.
Value *maskGradient(GradBuilder &b, Value *ds, const Dims &md) {
  std::optional<Dims> wd = windowsView(md, b.dims(ds));
  return b.unbroadcast(wd ? b.reshape(ds, *wd) : ds, md);
}

// The backward through the op's definition (see the file comment).
void decomposed(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  const Op &f = b.fwd;
  Value *q = f.operand(0), *mask = f.operand(3);
  Dims qd = b.dims(q), kd = b.dims(f.operand(1)), vd = b.dims(f.operand(2));
  int64_t h = qd[1], sq = qd[2], skv = kd[2];
  double scale = attentionScale(f, qd[3]);
  Value *k = repeatHeads(b, f.operand(1), h), *v = repeatHeads(b, f.operand(2), h);
  Value *s = b.scale(b.op(OpKind::MatMul, {q, b.swapLastTwo(k)}), scale);
  Dims sd = b.dims(s); // [B, H, Sq, Skv]
  Dims md = mask ? b.dims(mask) : Dims();
  std::optional<Dims> wd = windowsView(md, sd);
  if (mask)
    s = wd ? b.reshape(b.add(b.reshape(s, *wd), mask), sd) : b.add(s, mask);
  if (f.getInt("causal")) { // -inf where j > i + Skv - Sq
    Value *hidden = b.expandTo(b.scalar(-INFINITY, q), {sq, skv});
    Value *kth = b.reshape(b.ints({skv - sq + 1}), {});
    s = b.add(s, b.op(OpKind::Trilu, {hidden, kth}, {{"upper", Attribute(int64_t(1))}}));
  }
  Value *p = b.op(OpKind::Softmax, {s}, {{"axis", Attribute(int64_t(-1))}});
  Value *dout = rg[0];
  Value *dp = b.op(OpKind::MatMul, {dout, b.swapLastTwo(v)});
  Value *ds = b.mul(p, b.sub(dp, b.reduceSum(b.mul(dp, p), {3}, true)));
  if (w[0])
    og[0] = b.unbroadcast(b.scale(b.op(OpKind::MatMul, {ds, k}), scale), qd);
  if (w[1]) {
    Value *dk = b.scale(b.op(OpKind::MatMul, {b.swapLastTwo(ds), q}), scale);
    og[1] = sumHeads(b, b.unbroadcast(dk, {kd[0], h, skv, kd[3]}), kd[1]);
  }
  if (w[2]) {
    Value *dv = b.op(OpKind::MatMul, {b.swapLastTwo(p), dout});
    og[2] = sumHeads(b, b.unbroadcast(dv, {vd[0], h, skv, vd[3]}), vd[1]);
  }
  if (mask && w[3])
    og[3] = maskGradient(b, ds, md);
}

} // namespace

void attention(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  const Op &f = b.fwd;
  if (f.results.size() > 1 && rg[1])
    fail(f.where(), ": no gradient flows through Attention's log-sum-exp result");
  for (int64_t code : f.getInts("layout"))
    if (code != 0)
      fail(f.where(), ": gradients of an Attention with layout codes other than 0 are not "
                      "supported (run autodiff before attention-layouts, as --train does)");
  Value *q = f.operand(0), *k = f.operand(1), *v = f.operand(2), *mask = f.operand(3);
  int64_t batch = b.dims(q)[0];
  if (b.dims(k)[0] != batch || b.dims(v)[0] != batch || b.dims(f.result())[0] != batch)
    return decomposed(b, rg, w, og);
  const bool maskGrad = mask && w[3];
  std::vector<std::pair<std::string, Attribute>> attrs{
      {"causal", f.attr("causal")}, {"scale", f.attr("scale")}, {"kv_heads", f.attr("kv_heads")}};
  Value *out = f.result(), *lse = f.results.size() > 1 ? f.result(1) : nullptr;
  if (!lse) { // the forward again, with its log-sum-exp
    std::vector<Value *> ins(f.operands.begin(), f.operands.end());
    std::vector<Value *> r = b.ops(OpKind::Attention, ins, 2, attrs);
    out = r[0];
    lse = r[1];
  }
  if (maskGrad)
    attrs.push_back({"mask_grad", Attribute(int64_t(1))});
  std::vector<Value *> g =
      b.ops(OpKind::AttentionGrad, {q, k, v, mask, out, rg[0], lse}, maskGrad ? 4 : 3, attrs);
  for (size_t i = 0; i < 3; ++i)
    if (w[i])
      og[i] = g[i];
  if (maskGrad)
    og[3] = maskGradient(b, g[3], b.dims(mask));
}

} // namespace tc::grad
