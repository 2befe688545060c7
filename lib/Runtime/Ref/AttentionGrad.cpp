// The reference kernel of AttentionGrad (Ops.def), in double: per (batch,
// head, query) the probabilities recomputed from the scores and the
// forward's log-sum-exp, p_j = exp(s_j - lse) (s_j = scale q.k_j + mask,
// causal keys -inf), D = dout.out, dp_j = dout.v_j, ds_j = p_j (dp_j - D);
// then dq += scale ds_j k_j, dk_j += scale ds_j q, dv_j += p_j dout into
// the query's kv head (h / group). A row whose lse is -inf (every key
// hidden: the forward wrote 0) adds nothing. All tensors [B, H, S, D].
#include "AttentionMask.h"
#include "tc/IR/AttentionLayout.h"
#include <cmath>

namespace tc::ref {

namespace {

void attentionGradKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                         std::vector<HostTensor> &outs) {
  expectArity(ins, 3, outs, 3);
  if (ins.size() != 7)
    fail("internal: AttentionGrad called with ", ins.size(), " operands");
  for (size_t i : {0, 1, 2, 4, 5, 6})
    if (!ins[i])
      fail("internal: operand ", i, " is missing");
  const HostTensor &q = *ins[0], &k = *ins[1], &v = *ins[2], &o = *ins[4], &dout = *ins[5],
                   &lse = *ins[6];
  const HostTensor *mask = ins[3];
  const Dims &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || ks[0] != qs[0] || vs[0] != qs[0] ||
      ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2] || ks[1] <= 0 || qs[1] % ks[1])
    fail("q, k and v do not fit");
  int64_t B = qs[0], H = qs[1], Sq = qs[2], D = qs[3], Hkv = ks[1], Skv = ks[2], Dv = vs[3];
  int64_t MB = mask && mask->rank() == 4 ? mask->shape()[0] : 1;
  if (mask && (MB == 0 || B % MB))
    fail("the mask's batch does not divide the batch");
  double scale = attentionScale(op, D);
  bool causal = op.getInt("causal") != 0;
  int64_t group = H / Hkv;
  std::vector<double> qd = loadDoubles(q), kd = loadDoubles(k), vd = loadDoubles(v),
                      od = loadDoubles(o), gd = loadDoubles(dout), ld = loadDoubles(lse);
  std::vector<double> md = mask ? loadDoubles(*mask) : std::vector<double>();
  std::vector<double> dq(qd.size(), 0.0), dk(kd.size(), 0.0), dv(vd.size(), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t kvBase = (b * Hkv + h / group) * Skv;
      for (int64_t i = 0; i < Sq; ++i) {
        int64_t row = (b * H + h) * Sq + i;
        double L = ld[size_t(row)];
        if (L == -INFINITY)
          continue;
        const double *qi = &qd[size_t(row * D)], *oi = &od[size_t(row * Dv)],
                     *gi = &gd[size_t(row * Dv)];
        double Di = 0;
        for (int64_t c = 0; c < Dv; ++c)
          Di += gi[c] * oi[c];
        for (int64_t j = 0; j < Skv; ++j) {
          if (causal && j > i + Skv - Sq)
            continue;
          const double *kj = &kd[size_t((kvBase + j) * D)], *vj = &vd[size_t((kvBase + j) * Dv)];
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
          for (int64_t c = 0; c < D; ++c) {
            dq[size_t(row * D + c)] += ds * kj[c];
            dk[size_t((kvBase + j) * D + c)] += ds * qi[c];
          }
          for (int64_t c = 0; c < Dv; ++c)
            dv[size_t((kvBase + j) * Dv + c)] += p * gi[c];
        }
      }
    }
  for (size_t r = 0; r < 3; ++r) {
    const std::vector<double> &g = r == 0 ? dq : r == 1 ? dk : dv;
    for (size_t e = 0; e < g.size(); ++e)
      outs[r].setDouble(int64_t(e), g[e]);
  }
}

} // namespace

void registerAttentionGradKernel(KernelTable &t) {
  t[size_t(OpKind::AttentionGrad)] = attentionGradKernel;
}

} // namespace tc::ref
