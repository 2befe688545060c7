// The reference kernel of tc's fused Attention op (Ops.def): per (batch,
// head, query) the scores s_j = scale * q.k_j + mask, causal keys hidden,
// a numerically stable softmax (the row maximum subtracted) and the
// probability-weighted sum of v, all in double. A row whose scores are all
// -inf (every key masked) gives 0, as exporters' IsNaN -> Where(0) after
// Softmax does.
#include "Kernels.h"
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

// Element offset of index (b, h, i, j) in a tensor of dims `d` (rank <= 4,
// right-aligned) broadcast to the 4-D index space.
int64_t broadcastOffset(const Dims &d, const int64_t (&idx)[4]) {
  int64_t off = 0, stride = 1;
  size_t r = d.size();
  for (size_t a = 0; a < r; ++a) {
    size_t axis = r - 1 - a;
    int64_t i = d[axis] == 1 ? 0 : idx[3 - a];
    off += i * stride;
    stride *= d[axis];
  }
  return off;
}

void attentionKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                     std::vector<HostTensor> &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &q = *ins[0], &k = *ins[1], &v = *ins[2];
  const HostTensor *mask = ins.size() > 3 ? ins[3] : nullptr;
  HostTensor &y = outs[0];
  const Dims &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    fail("q, k and v must be 4-D");
  int64_t B = std::max({qs[0], ks[0], vs[0], mask && mask->rank() == 4 ? mask->shape()[0] : 1}),
          H = qs[1], Sq = qs[2], D = qs[3], Hkv = ks[1], Skv = ks[2], Dv = vs[3];
  if (ks[3] != D || vs[2] != Skv || vs[1] != Hkv || Hkv <= 0 || H % Hkv)
    fail("q ", dimsText(qs), ", k ", dimsText(ks), " and v ", dimsText(vs), " do not fit");
  for (const Dims *d : {&qs, &ks, &vs})
    if ((*d)[0] != B && (*d)[0] != 1)
      fail("q, k and v must have batch ", B, " or 1");
  if (mask) { // broadcasts to the scores [B, H, Sq, Skv], never widens them
    const Dims &m = mask->shape();
    Dims scores{B, H, Sq, Skv};
    for (size_t a = 0; a < m.size(); ++a)
      if (m.size() > 4 || (m[a] != 1 && m[a] != scores[4 - m.size() + a]))
        fail("the mask does not broadcast to the scores");
  }
  double scale = op.getFloat("scale");
  if (scale == 0)
    scale = 1.0 / std::sqrt(double(D));
  bool causal = op.getInt("causal") != 0;
  int64_t group = H / Hkv;
  std::vector<double> qd = loadDoubles(q), kd = loadDoubles(k), vd = loadDoubles(v);
  std::vector<double> md = mask ? loadDoubles(*mask) : std::vector<double>();
  std::vector<double> s(static_cast<size_t>(Skv)), acc(static_cast<size_t>(Dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t qb = qs[0] == 1 ? 0 : b, kb = ks[0] == 1 ? 0 : b, vb = vs[0] == 1 ? 0 : b;
      int64_t hk = h / group;
      const double *kh = kd.data() + ((kb * Hkv + hk) * Skv) * D;
      const double *vh = vd.data() + ((vb * Hkv + hk) * Skv) * Dv;
      for (int64_t i = 0; i < Sq; ++i) {
        const double *qi = qd.data() + ((qb * H + h) * Sq + i) * D;
        double mx = -INFINITY;
        for (int64_t j = 0; j < Skv; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += qi[c] * kh[j * D + c];
          double sj = scale * dot;
          if (mask) {
            int64_t idx[4] = {b, h, i, j};
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
              acc[size_t(c)] += p * vh[j * Dv + c];
          }
        int64_t o = ((b * H + h) * Sq + i) * Dv;
        for (int64_t c = 0; c < Dv; ++c)
          y.setDouble(o + c, sum > 0 ? acc[size_t(c)] / sum : 0.0);
      }
    }
}

} // namespace

void registerAttentionKernels(KernelTable &t) { t[size_t(OpKind::Attention)] = attentionKernel; }

} // namespace tc::ref
