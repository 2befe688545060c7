// Kernels of the recurrent ops RNN, GRU and LSTM (layouts and gate order:
// Ops.def), one time step, one batch entry and one direction at a time, in
// double; results round once to their type.
#include "Kernels.h"
#include "tc/IR/RecurrentMath.h"
#include <algorithm>
#include <cmath>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// An optional operand's values, or `n` zeros when absent.
std::vector<double> valuesOr(const HostTensor *t, int64_t n) {
  std::vector<double> v = t ? loadDoubles(*t) : std::vector<double>(size_t(n), 0.0);
  if (int64_t(v.size()) != n)
    fail("an optional input holds ", v.size(), " values, expected ", n);
  return v;
}

void recurrentKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, outs.size());
  if (outs.empty() || outs.size() > (op.is(OpKind::LSTM) ? 3u : 2u))
    fail("internal: ", outs.size(), " results");
  const HostTensor &x = *ins[0], &w = *ins[1], &r = *ins[2];
  const int64_t G = op.is(OpKind::RNN) ? 1 : op.is(OpKind::GRU) ? 3 : 4;
  const bool batchMajor = op.getInt("layout") == 1;
  const std::string &direction = op.getString("direction");
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3)
    fail("X, W and R must be 3-D, got ", x.typeStr(), ", ", w.typeStr(), " and ", r.typeStr());
  const int64_t T = x.shape()[batchMajor ? 1 : 0], N = x.shape()[batchMajor ? 0 : 1],
                I = x.shape()[2];
  const int64_t D = w.shape()[0], H = r.shape()[2];
  if (w.shape() != Dims{D, G * H, I} || r.shape() != Dims{D, G * H, H} ||
      D != (direction == "bidirectional" ? 2 : 1))
    fail("W ", w.typeStr(), " and R ", r.typeStr(), " do not match X ", x.typeStr());

  std::vector<double> X = loadDoubles(x), W = loadDoubles(w), R = loadDoubles(r);
  std::vector<double> B = valuesOr(ins.size() > 3 ? ins[3] : nullptr, D * 2 * G * H);
  std::vector<double> H0 = valuesOr(ins.size() > 5 ? ins[5] : nullptr, D * N * H);
  std::vector<double> C0 = valuesOr(ins.size() > 6 ? ins[6] : nullptr, D * N * H);
  std::vector<double> P = valuesOr(ins.size() > 7 ? ins[7] : nullptr, D * 3 * H);
  std::vector<int64_t> lens(size_t(N), T);
  if (ins.size() > 4 && ins[4]) {
    lens = loadInts(*ins[4]);
    if (int64_t(lens.size()) != N)
      fail("sequence_lens holds ", lens.size(), " values for batch size ", N);
  }
  for (int64_t len : lens)
    if (len < 0 || len > T)
      fail("sequence_lens value ", len, " is outside [0, ", T, "]");

  std::vector<std::string> defaults = nn::rnnDefaultActivations(G);
  std::vector<nn::RnnActivation> acts =
      nn::rnnActivations(op.attr("activations").strings(), op.attr("activation_alpha").floats(),
                         op.attr("activation_beta").floats(), defaults, size_t(D));
  const double clipAt = op.getFloat("clip");
  auto clip = [&](double v) { return clipAt > 0 ? std::clamp(v, -clipAt, clipAt) : v; };
  const bool linearBeforeReset = op.is(OpKind::GRU) && op.getInt("linear_before_reset") != 0;
  const bool inputForget = op.is(OpKind::LSTM) && op.getInt("input_forget") != 0;

  auto xAt = [&](int64_t t, int64_t n) { return (batchMajor ? n * T + t : t * N + n) * I; };
  auto yAt = [&](int64_t t, int64_t d, int64_t n) {
    return (batchMajor ? (n * T + t) * D + d : (t * D + d) * N + n) * H;
  };
  auto stateAt = [&](int64_t d, int64_t n) { return (batchMajor ? n * D + d : d * N + n) * H; };

  for (HostTensor &o : outs)
    for (int64_t i = 0, e = o.numElements(); i < e; ++i)
      o.setDouble(i, 0.0);
  const size_t gh = size_t(G * H), hs = size_t(H);
  std::vector<double> h(hs), c(hs), xw(gh), hr(gh), hNew(hs), cNew(hs), reset(hs);
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const nn::RnnActivation *act = &acts[size_t(d) * defaults.size()];
    const double *Wd = &W[size_t(d * G * H * I)], *Rd = &R[size_t(d * G * H * H)];
    const double *Wb = &B[size_t(d * 2 * G * H)], *Rb = Wb + G * H, *Pd = &P[size_t(d * 3 * H)];
    for (int64_t n = 0; n < N; ++n) {
      std::copy_n(&H0[size_t(stateAt(d, n))], H, h.begin());
      std::copy_n(&C0[size_t(stateAt(d, n))], H, c.begin());
      for (int64_t s = 0; s < lens[size_t(n)]; ++s) {
        const int64_t t = reverse ? lens[size_t(n)] - 1 - s : s;
        const double *xt = &X[size_t(xAt(t, n))];
        // xw = x W^T + Wb and hr = h R^T + Rb, all gates.
        for (int64_t g = 0; g < G * H; ++g) {
          double a = Wb[g], b = Rb[g];
          for (int64_t i = 0; i < I; ++i)
            a += xt[i] * Wd[g * I + i];
          for (int64_t k = 0; k < H; ++k)
            b += h[size_t(k)] * Rd[g * H + k];
          xw[size_t(g)] = a;
          hr[size_t(g)] = b;
        }
        auto gate = [&](int64_t g, int64_t j) {
          return xw[size_t(g * H + j)] + hr[size_t(g * H + j)];
        };
        if (G == 3) // the reset gate, which the candidate of every unit reads
          for (int64_t k = 0; k < H; ++k)
            reset[size_t(k)] = act[0](clip(gate(1, k)));
        for (int64_t j = 0; j < H; ++j) {
          if (G == 1) {
            hNew[size_t(j)] = act[0](clip(gate(0, j)));
          } else if (G == 3) { // z, r, h
            double z = act[0](clip(gate(0, j))), pre = xw[size_t(2 * H + j)];
            if (linearBeforeReset) {
              pre += reset[size_t(j)] * hr[size_t(2 * H + j)];
            } else { // (r * h) Rh^T + Rbh
              pre += Rb[2 * H + j];
              for (int64_t k = 0; k < H; ++k)
                pre += reset[size_t(k)] * h[size_t(k)] * Rd[(2 * H + j) * H + k];
            }
            hNew[size_t(j)] = (1 - z) * act[1](clip(pre)) + z * h[size_t(j)];
          } else { // i, o, f, c
            double cj = c[size_t(j)];
            double in = act[0](clip(gate(0, j) + Pd[j] * cj));
            double fg = inputForget ? 1 - in : act[0](clip(gate(2, j) + Pd[2 * H + j] * cj));
            cNew[size_t(j)] = fg * cj + in * act[1](clip(gate(3, j)));
            double og = act[0](clip(gate(1, j) + Pd[H + j] * cNew[size_t(j)]));
            hNew[size_t(j)] = og * act[2](cNew[size_t(j)]);
          }
        }
        if (G == 4)
          c = cNew;
        h = hNew;
        for (int64_t j = 0; j < H; ++j)
          outs[0].setDouble(yAt(t, d, n) + j, h[size_t(j)]);
      }
      for (int64_t j = 0; j < H; ++j) {
        if (outs.size() > 1)
          outs[1].setDouble(stateAt(d, n) + j, h[size_t(j)]);
        if (outs.size() > 2)
          outs[2].setDouble(stateAt(d, n) + j, c[size_t(j)]);
      }
    }
  }
}

} // namespace

void registerRecurrentKernels(KernelTable &t) {
  t[size_t(OpKind::RNN)] = recurrentKernel;
  t[size_t(OpKind::GRU)] = recurrentKernel;
  t[size_t(OpKind::LSTM)] = recurrentKernel;
}

} // namespace tc::ref
