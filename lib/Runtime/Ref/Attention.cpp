// The reference kernel of tc's fused Attention op (Ops.def): per (batch,
// head, query) the scores s_j = scale * q.k_j + mask, causal keys hidden,
// a numerically stable softmax (the row maximum subtracted) and the
// probability-weighted sum of v, all in double. A row whose scores are all
// -inf (every key masked) gives 0, as exporters' IsNaN -> Where(0) after
// Softmax does. Each tensor is read and written by its layout's strides.
// A second result, if asked for, gets each row's log-sum-exp (-inf for a
// row of -inf scores): AttentionGrad's (AttentionGrad.cpp).
#include "AttentionTensors.h"
#include <algorithm>
#include <cmath>
#include <string>

namespace tc::ref {

namespace {

std::string dimsText(const Dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

void attentionKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                     std::vector<HostTensor> &outs) {
  if (outs.size() != 1 && outs.size() != 2)
    fail("expects 1 or 2 outputs, got ", outs.size());
  expectArity(ins, 3, outs, outs.size());
  const HostTensor &q = *ins[0], &k = *ins[1], &v = *ins[2];
  const HostTensor *mask = ins.size() > 3 ? ins[3] : nullptr;
  HostTensor &y = outs[0];
  AttentionOperand qo = attentionOperand(op, kAttnQ, q), ko = attentionOperand(op, kAttnK, k),
                   vo = attentionOperand(op, kAttnV, v);
  const Dims &qs = qo.d, &ks = ko.d, &vs = vo.d;
  int64_t B = std::max({qs[0], ks[0], vs[0], mask && mask->rank() == 4 ? mask->shape()[0] : 1}),
          H = qs[1], Sq = qs[2], D = qs[3], Hkv = ks[1], Skv = ks[2], Dv = vs[3];
  if (ks[3] != D || vs[2] != Skv || vs[1] != Hkv || Hkv <= 0 || H % Hkv)
    fail("q ", dimsText(qs), ", k ", dimsText(ks), " and v ", dimsText(vs), " do not fit");
  for (const Dims *d : {&qs, &ks, &vs})
    if ((*d)[0] != B && (*d)[0] != 1)
      fail("q, k and v must have batch ", B, " or 1");
  // The mask broadcasts to the scores [B, H, Sq, Skv], never widens them;
  // its batch MB may also divide B: batch b reads b % MB (swin's windows).
  int64_t MB = mask && mask->rank() == 4 ? mask->shape()[0] : 1;
  if (mask) {
    const Dims &m = mask->shape();
    Dims scores{B, H, Sq, Skv};
    for (size_t a = 0; a < m.size(); ++a) {
      size_t axis = 4 - m.size() + a;
      if (m.size() > 4 || (m[a] != 1 && m[a] != scores[axis] && (axis > 0 || B % m[a])))
        fail("the mask does not broadcast to the scores");
    }
  }
  double scale = attentionScale(op, D);
  bool causal = op.getInt("causal") != 0;
  int64_t group = H / Hkv;
  AttentionStrides ys = attentionStrides(attentionAxes(op, 3), y.shape());
  std::vector<double> qd = loadDoubles(q), kd = loadDoubles(k), vd = loadDoubles(v);
  std::vector<double> md = mask ? loadDoubles(*mask) : std::vector<double>();
  std::vector<double> s(static_cast<size_t>(Skv)), acc(static_cast<size_t>(Dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t hk = h / group;
      const double *kh = kd.data() + ko.row(b, hk, 0), *vh = vd.data() + vo.row(b, hk, 0);
      for (int64_t i = 0; i < Sq; ++i) {
        const double *qi = qd.data() + qo.row(b, h, i);
        double mx = -INFINITY;
        for (int64_t j = 0; j < Skv; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += qi[c] * kh[j * ko.s.tokens + c];
          double sj = scale * dot;
          if (mask) {
            int64_t idx[4] = {b % MB, h, i, j};
            sj += md[size_t(broadcastOffset(mask->shape(), idx))];
          }
          if (causal && j > i + Skv - Sq)
            sj = -INFINITY;
          s[size_t(j)] = sj;
          mx = std::max(mx, sj);
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        double sum = 0;
        if (mx != -INFINITY)
          for (int64_t j = 0; j < Skv; ++j) {
            double p = std::exp(s[size_t(j)] - mx);
            sum += p;
            for (int64_t c = 0; c < Dv; ++c)
              acc[size_t(c)] += p * vh[j * vo.s.tokens + c];
          }
        int64_t o = b * ys.batch + h * ys.heads + i * ys.tokens;
        for (int64_t c = 0; c < Dv; ++c)
          y.setDouble(o + c, sum > 0 ? acc[size_t(c)] / sum : 0.0);
        if (outs.size() == 2)
          outs[1].setDouble((b * H + h) * Sq + i, sum > 0 ? mx + std::log(sum) : -INFINITY);
      }
    }
}

} // namespace

AttentionOperand attentionOperand(const Op &op, size_t i, const HostTensor &t) {
  AttentionAxes a = attentionAxes(op, i);
  const Dims &x = t.shape();
  if (x.size() != a.rank() || (a.part >= 0 && a.part >= x[a.partAxis]))
    fail("tensor ", i, " ", dimsText(x), " does not fit its layout");
  return {attentionLogicalDims(a, x), attentionStrides(a, x)};
}

void registerAttentionKernels(KernelTable &t) {
  t[size_t(OpKind::Attention)] = attentionKernel;
  registerAttentionGradKernel(t);
}

} // namespace tc::ref
