// Normalization kernels: BatchNormalization (inference and training), Instance-, Layer-,
// Group-, Lp- and MeanVarianceNormalization, LRN. Statistics are computed in
// double in two passes (mean, then the mean squared deviation: the
// population variance), and every result is rounded once.
#include "Kernels.h"
#include <cmath>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

int64_t product(const Dims &d, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < d.size(); ++i)
    n *= d[i];
  return n;
}

// Mean and population variance of v[at(0)], ..., v[at(n - 1)].
template <typename At>
std::pair<double, double> moments(const std::vector<double> &v, int64_t n, At at) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += v[size_t(at(i))];
  double mean = sum / double(n), sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = v[size_t(at(i))] - mean;
    sq += d * d;
  }
  return {mean, sq / double(n)};
}

void batchNormKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 5, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  if (xs.size() < 2)
    fail("X must have rank >= 2, got ", x.typeStr());
  int64_t C = xs[1], inner = product(xs, 2, xs.size()), n = x.numElements();
  double eps = op.getFloat("epsilon");
  std::vector<double> xv = loadDoubles(x), p[4];
  bool perChannel[4];
  for (size_t i = 0; i < 4; ++i) {
    const HostTensor &t = *ins[i + 1];
    perChannel[i] = t.rank() == 1 && t.shape()[0] == C;
    if (!perChannel[i] && t.numElements() != C * inner)
      fail("parameter ", i + 1, " ", t.typeStr(), " is neither [C] nor X's dims after N");
    p[i] = loadDoubles(t);
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = i / inner % C, a = i % (C * inner);
    auto at = [&](size_t k) { return p[k][size_t(perChannel[k] ? c : a)]; };
    y.setDouble(i, (xv[size_t(i)] - at(2)) / std::sqrt(at(3) + eps) * at(0) + at(1));
  }
}

// Training mode: each channel is normalized with the batch's mean and
// population variance over all axes but 1; results 1 and 2 are the running
// statistics input * momentum + batch * (1 - momentum).
void batchNormTrainingKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 5, outs, 3);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  if (xs.size() < 2)
    fail("X must have rank >= 2, got ", x.typeStr());
  int64_t N = xs[0], C = xs[1], inner = product(xs, 2, xs.size());
  std::vector<double> xv = loadDoubles(x), p[4];
  for (size_t i = 0; i < 4; ++i) {
    if (ins[i + 1]->numElements() != C)
      fail("parameter ", i + 1, " ", ins[i + 1]->typeStr(), " must have ", C, " entries");
    p[i] = loadDoubles(*ins[i + 1]);
  }
  double eps = op.getFloat("epsilon"), momentum = op.getFloat("momentum");
  for (int64_t c = 0; c < C; ++c) {
    auto at = [&](int64_t i) { return (i / inner * C + c) * inner + i % inner; };
    auto [mean, var] = moments(xv, N * inner, at);
    double inv = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < N * inner; ++i)
      outs[0].setDouble(at(i),
                        (xv[size_t(at(i))] - mean) * inv * p[0][size_t(c)] + p[1][size_t(c)]);
    outs[1].setDouble(c, p[2][size_t(c)] * momentum + mean * (1 - momentum));
    outs[2].setDouble(c, p[3][size_t(c)] * momentum + var * (1 - momentum));
  }
}

void instanceNormKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  int64_t NC = product(xs, 0, 2), C = xs[1], inner = product(xs, 2, xs.size());
  if (ins[1]->numElements() != C || ins[2]->numElements() != C)
    fail("scale and B must have ", C, " entries");
  double eps = op.getFloat("epsilon");
  std::vector<double> xv = loadDoubles(x), scale = loadDoubles(*ins[1]), b = loadDoubles(*ins[2]);
  for (int64_t nc = 0; nc < NC; ++nc) {
    auto [mean, var] = moments(xv, inner, [&](int64_t i) { return nc * inner + i; });
    double inv = 1 / std::sqrt(var + eps);
    int64_t c = nc % C;
    for (int64_t i = 0; i < inner; ++i) {
      int64_t at = nc * inner + i;
      y.setDouble(at, (xv[size_t(at)] - mean) * inv * scale[size_t(c)] + b[size_t(c)]);
    }
  }
}

// Where each of the normalized positions `normDims` reads parameter t
// (LayerNormalization's Scale and B: a one-way broadcast).
std::vector<int64_t> normalizedIndex(const Dims &normDims, const HostTensor &t) {
  std::vector<int64_t> idx(static_cast<size_t>(product(normDims, 0, normDims.size())));
  BroadcastWalk(normDims, {t.shape()}).run([&](int64_t o, const int64_t *i) {
    idx[size_t(o)] = i[0];
  });
  return idx;
}

void layerNormKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (outs.empty() || outs.size() > 3)
    fail("internal: LayerNormalization with ", outs.size(), " results");
  expectArity(ins, 2, outs, outs.size());
  const HostTensor &x = *ins[0];
  const HostTensor *bias = ins.size() > 2 ? ins[2] : nullptr;
  const Dims &xs = x.shape();
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(xs.size())));
  int64_t outer = product(xs, 0, axis), inner = product(xs, axis, xs.size());
  Dims normDims(xs.begin() + int64_t(axis), xs.end());
  std::vector<int64_t> scaleAt = normalizedIndex(normDims, *ins[1]),
                       biasAt = bias ? normalizedIndex(normDims, *bias) : Dims{};
  double eps = op.getFloat("epsilon");
  std::vector<double> xv = loadDoubles(x), scale = loadDoubles(*ins[1]);
  std::vector<double> b = bias ? loadDoubles(*bias) : std::vector<double>{};
  for (int64_t r = 0; r < outer; ++r) {
    auto [mean, var] = moments(xv, inner, [&](int64_t i) { return r * inner + i; });
    double inv = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      int64_t at = r * inner + i;
      double v = (xv[size_t(at)] - mean) * inv * scale[size_t(scaleAt[size_t(i)])];
      if (bias)
        v += b[size_t(biasAt[size_t(i)])];
      outs[0].setDouble(at, v);
    }
    if (outs.size() > 1)
      outs[1].setDouble(r, mean);
    if (outs.size() > 2)
      outs[2].setDouble(r, inv);
  }
}

// dX = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dY * Scale.
void layerNormGradKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, outs.size() == 2 ? 2 : 1); // dX, and dY * xhat if asked
  const HostTensor &x = *ins[0], &scaleT = *ins[1], &dyT = *ins[2];
  const Dims &xs = x.shape();
  if (dyT.shape() != xs)
    fail("dY's shape differs from X's");
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(xs.size())));
  int64_t outer = product(xs, 0, axis), inner = product(xs, axis, xs.size());
  Dims normDims(xs.begin() + int64_t(axis), xs.end());
  std::vector<int64_t> scaleAt = normalizedIndex(normDims, scaleT);
  double eps = op.getFloat("epsilon");
  std::vector<double> xv = loadDoubles(x), scale = loadDoubles(scaleT), dy = loadDoubles(dyT);
  std::vector<double> g(static_cast<size_t>(inner)), xhat(static_cast<size_t>(inner));
  for (int64_t r = 0; r < outer; ++r) {
    auto [mean, var] = moments(xv, inner, [&](int64_t i) { return r * inner + i; });
    double inv = 1 / std::sqrt(var + eps), s1 = 0, s2 = 0;
    for (int64_t i = 0; i < inner; ++i) {
      size_t at = size_t(r * inner + i), k = size_t(i);
      g[k] = dy[at] * scale[size_t(scaleAt[k])];
      xhat[k] = (xv[at] - mean) * inv;
      s1 += g[k];
      s2 += g[k] * xhat[k];
    }
    s1 /= double(inner);
    s2 /= double(inner);
    for (int64_t i = 0; i < inner; ++i) {
      outs[0].setDouble(r * inner + i, inv * (g[size_t(i)] - s1 - xhat[size_t(i)] * s2));
      if (outs.size() > 1)
        outs[1].setDouble(r * inner + i, dy[size_t(r * inner + i)] * xhat[size_t(i)]);
    }
  }
}

void groupNormKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  int64_t N = xs[0], C = xs[1], G = op.getInt("num_groups"), inner = product(xs, 2, xs.size());
  if (G < 1 || C % G != 0)
    fail("num_groups ", G, " does not divide the ", C, " channels");
  if (ins[1]->numElements() != C || ins[2]->numElements() != C)
    fail("scale and bias must have ", C, " entries");
  int64_t perGroup = C / G * inner;
  double eps = op.getFloat("epsilon");
  std::vector<double> xv = loadDoubles(x), scale = loadDoubles(*ins[1]), b = loadDoubles(*ins[2]);
  for (int64_t ng = 0; ng < N * G; ++ng) {
    auto [mean, var] = moments(xv, perGroup, [&](int64_t i) { return ng * perGroup + i; });
    double inv = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < perGroup; ++i) {
      int64_t at = ng * perGroup + i, c = at / inner % C;
      y.setDouble(at, (xv[size_t(at)] - mean) * inv * scale[size_t(c)] + b[size_t(c)]);
    }
  }
}

void lpNormKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(xs.size())));
  int64_t outer = product(xs, 0, axis), len = xs[axis], inner = product(xs, axis + 1, xs.size());
  bool l1 = op.getInt("p") == 1;
  std::vector<double> v = loadDoubles(x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return size_t((o * len + k) * inner + in); };
      double norm = 0;
      for (int64_t k = 0; k < len; ++k)
        norm += l1 ? std::fabs(v[at(k)]) : v[at(k)] * v[at(k)];
      if (!l1)
        norm = std::sqrt(norm);
      // A zero norm (an all-zero line) gives zeros, not NaN (ONNX).
      for (int64_t k = 0; k < len; ++k)
        outs[0].setDouble(int64_t(at(k)), norm == 0 ? 0.0 : v[at(k)] / norm);
    }
}

void mvnKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  int64_t rank = int64_t(xs.size()), n = x.numElements();
  std::vector<bool> reduced(xs.size());
  for (int64_t a : op.getInts("axes"))
    reduced[size_t(normalizeAxis(a, rank))] = true;
  // Group of each element: its index over the kept axes.
  Dims str = stridesOf(xs);
  std::vector<int64_t> group(static_cast<size_t>(n));
  int64_t groups = 1, members = 1;
  for (size_t d = 0; d < xs.size(); ++d)
    (reduced[d] ? members : groups) *= xs[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!reduced[d])
        g = g * xs[d] + i / str[d] % xs[d];
    group[size_t(i)] = g;
  }
  std::vector<double> v = loadDoubles(x), mean(static_cast<size_t>(groups)),
                      sq(static_cast<size_t>(groups));
  for (int64_t i = 0; i < n; ++i)
    mean[size_t(group[size_t(i)])] += v[size_t(i)];
  for (double &m : mean)
    m /= double(members);
  for (int64_t i = 0; i < n; ++i) {
    double d = v[size_t(i)] - mean[size_t(group[size_t(i)])];
    sq[size_t(group[size_t(i)])] += d * d;
  }
  for (int64_t i = 0; i < n; ++i) {
    size_t g = size_t(group[size_t(i)]);
    outs[0].setDouble(i, (v[size_t(i)] - mean[g]) / (std::sqrt(sq[g] / double(members)) + 1e-9));
  }
}

void lrnKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  int64_t N = xs[0], C = xs[1], inner = product(xs, 2, xs.size()), size = op.getInt("size");
  double alpha = op.getFloat("alpha"), beta = op.getFloat("beta"), bias = op.getFloat("bias");
  // Channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2).
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> v = loadDoubles(x);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k) {
          double e = v[size_t((n * C + k) * inner + i)];
          sq += e * e;
        }
        int64_t at = (n * C + c) * inner + i;
        outs[0].setDouble(at, v[size_t(at)] / std::pow(bias + alpha / double(size) * sq, beta));
      }
}

} // namespace

void registerNormalizationKernels(KernelTable &t) {
  t[size_t(OpKind::BatchNormalization)] = batchNormKernel;
  t[size_t(OpKind::BatchNormalizationTraining)] = batchNormTrainingKernel;
  t[size_t(OpKind::InstanceNormalization)] = instanceNormKernel;
  t[size_t(OpKind::LayerNormalization)] = layerNormKernel;
  t[size_t(OpKind::LayerNormalizationGrad)] = layerNormGradKernel;
  t[size_t(OpKind::GroupNormalization)] = groupNormKernel;
  t[size_t(OpKind::LpNormalization)] = lpNormKernel;
  t[size_t(OpKind::MeanVarianceNormalization)] = mvnKernel;
  t[size_t(OpKind::LRN)] = lrnKernel;
}

} // namespace tc::ref
