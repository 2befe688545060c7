// The reference kernel of AttentionGrad (Ops.def), in double: per (batch,
// head, query) the probabilities recomputed from the scores and the
// forward's log-sum-exp, p_j = exp(s_j - lse) (s_j = scale q.k_j + mask,
// causal keys -inf), D = dout.out, dp_j = dout.v_j, ds_j = p_j (dp_j - D);
// then dq += scale ds_j k_j, dk_j += scale ds_j q, dv_j += p_j dout into
// the query's kv head (h / group). A row whose lse is -inf (every key
// hidden: the forward wrote 0) adds nothing. Each tensor is read and
// written by its layout code's strides (dq, dk, dv as parts of one result
// where packed). With mask_grad, ds_j / scale lands in dmask [B, H, Sq, Skv]
// (0 at the keys and rows nothing flows through).
#include "AttentionTensors.h"
#include <cmath>

namespace tc::ref {

namespace {

void attentionGradKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                         std::vector<HostTensor> &outs) {
  const bool packed = attentionGradPacked(op); // dq, dk, dv parts of one result
  const int dmaskAt = attentionGradMaskResult(op);
  expectArity(ins, 3, outs, (packed ? 1 : 3) + (dmaskAt >= 0 ? 1 : 0));
  HostTensor *dmask = dmaskAt >= 0 ? &outs[size_t(dmaskAt)] : nullptr;
  if (dmask)
    for (int64_t e = 0; e < dmask->numElements(); ++e)
      dmask->setDouble(e, 0.0);
  if (ins.size() != 7)
    fail("internal: AttentionGrad called with ", ins.size(), " operands");
  for (size_t i : {0, 1, 2, 4, 5, 6})
    if (!ins[i])
      fail("internal: operand ", i, " is missing");
  const HostTensor &lse = *ins[6];
  const HostTensor *mask = ins[3];
  // Each tensor by its layout code (AttentionTensor order).
  AttentionOperand t[8];
  for (size_t i = 0; i < 5; ++i)
    t[i] = attentionOperand(op, i, *ins[attentionGradOperand(i)]);
  for (size_t r = 0; r < 3; ++r)
    t[kAttnDq + r] = attentionOperand(op, kAttnDq + r, outs[packed ? 0 : r]);
  const AttentionOperand &qo = t[kAttnQ], &ko = t[kAttnK], &vo = t[kAttnV], &oo = t[kAttnOut],
                         &go = t[kAttnDout];
  const Dims &qs = qo.d, &ks = ko.d, &vs = vo.d;
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2] ||
      ks[1] <= 0 || qs[1] % ks[1])
    fail("q, k and v do not fit");
  int64_t B = qs[0], H = qs[1], Sq = qs[2], D = qs[3], Hkv = ks[1], Skv = ks[2], Dv = vs[3];
  int64_t MB = mask && mask->rank() == 4 ? mask->shape()[0] : 1;
  if (mask && (MB == 0 || B % MB))
    fail("the mask's batch does not divide the batch");
  double scale = attentionScale(op, D);
  bool causal = op.getInt("causal") != 0;
  int64_t group = H / Hkv;
  std::vector<double> qd = loadDoubles(*ins[0]), kd = loadDoubles(*ins[1]),
                      vd = loadDoubles(*ins[2]), od = loadDoubles(*ins[4]),
                      gd = loadDoubles(*ins[5]), ld = loadDoubles(lse);
  std::vector<double> md = mask ? loadDoubles(*mask) : std::vector<double>();
  // The sums in [B, H, S, D] order, written out by the results' codes.
  std::vector<double> dq(size_t(B * H * Sq * D), 0.0), dk(size_t(B * Hkv * Skv * D), 0.0),
      dv(size_t(B * Hkv * Skv * Dv), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t hk = h / group, kvRow = (b * Hkv + hk) * Skv;
      for (int64_t i = 0; i < Sq; ++i) {
        int64_t row = (b * H + h) * Sq + i;
        double L = ld[size_t(row)];
        if (L == -INFINITY)
          continue;
        const double *qi = &qd[size_t(qo.row(b, h, i))], *oi = &od[size_t(oo.row(b, h, i))],
                     *gi = &gd[size_t(go.row(b, h, i))];
        double Di = 0;
        for (int64_t c = 0; c < Dv; ++c)
          Di += gi[c] * oi[c];
        for (int64_t j = 0; j < Skv; ++j) {
          if (causal && j > i + Skv - Sq)
            continue;
          const double *kj = &kd[size_t(ko.row(b, hk, j))], *vj = &vd[size_t(vo.row(b, hk, j))];
          double s = 0, dp = 0;
          for (int64_t c = 0; c < D; ++c)
            s += qi[c] * kj[c];
          s *= scale;
          if (mask) {
            int64_t idx[4] = {b % MB, h, i, j};
            s += md[size_t(broadcastOffset(mask->shape(), idx))];
          }
          double p = std::exp(s - L);
          if (p == 0)
            continue;
          for (int64_t c = 0; c < Dv; ++c)
            dp += gi[c] * vj[c];
          double ds = p * (dp - Di) * scale;
          if (dmask)
            dmask->setDouble((row * Skv + j), p * (dp - Di));
          for (int64_t c = 0; c < D; ++c) {
            dq[size_t(row * D + c)] += ds * kj[c];
            dk[size_t((kvRow + j) * D + c)] += ds * qi[c];
          }
          for (int64_t c = 0; c < Dv; ++c)
            dv[size_t((kvRow + j) * Dv + c)] += p * gi[c];
        }
      }
    }
  for (size_t r = 0; r < 3; ++r) {
    const std::vector<double> &g = r == 0 ? dq : r == 1 ? dk : dv;
    const AttentionOperand &to = t[kAttnDq + r];
    int64_t heads = to.d[1], toks = to.d[2], width = to.d[3];
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t s = 0; s < toks; ++s) {
          int64_t from = ((b * heads + h) * toks + s) * width, at = to.row(b, h, s);
          for (int64_t c = 0; c < width; ++c)
            outs[packed ? 0 : r].setDouble(at + c, g[size_t(from + c)]);
        }
  }
}

} // namespace

void registerAttentionGradKernel(KernelTable &t) {
  t[size_t(OpKind::AttentionGrad)] = attentionGradKernel;
}

} // namespace tc::ref
