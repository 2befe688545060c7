// Kernels of the signal-processing ops: DFT and STFT (naive O(n^2) sums in
// double), the Hann, Hamming and Blackman windows, and MelWeightMatrix.
#include "Kernels.h"
#include <cmath>
#include <complex>
#include <numbers>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;
using Complex = std::complex<double>;

// e^(sign * 2 pi i k m / n), with k m reduced mod n first to keep the
// angle accurate, and exact at multiples of a quarter turn.
Complex twiddle(int64_t k, int64_t m, int64_t n, double sign) {
  int64_t r = (k % n) * (m % n) % n;
  if (4 * r % n == 0) {
    constexpr double kCos[] = {1, 0, -1, 0}, kSin[] = {0, 1, 0, -1};
    int64_t q = 4 * r / n;
    return {kCos[q], sign * kSin[q]};
  }
  double a = sign * 2 * std::numbers::pi * double(r) / double(n);
  return {std::cos(a), std::sin(a)};
}

void dftKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ys = y.shape();
  const int64_t rank = int64_t(xs.size());
  const int64_t axis = normalizeAxis(op.getInt("axis"), rank);
  const bool inverse = op.getInt("inverse") != 0, onesided = op.getInt("onesided") != 0;
  const int64_t in = xs[size_t(axis)], c = xs.back(), outLen = ys[size_t(axis)], outC = ys.back();
  int64_t n = op.getInt("dft_length");
  if (n == 0)
    n = inverse && onesided ? 2 * (in - 1) : in;
  if (n <= 0 || axis == rank - 1)
    fail("bad DFT length ", n, " or axis ", axis, " for ", x.typeStr());
  int64_t pre = 1, post = 1;
  for (int64_t d = 0; d < axis; ++d)
    pre *= xs[size_t(d)];
  for (int64_t d = axis + 1; d < rank - 1; ++d)
    post *= xs[size_t(d)];
  std::vector<double> X = loadDoubles(x);
  // Inverse onesided: bins 0..n/2 given (zero past the input), the rest by
  // conjugate symmetry; only the real part of the result is kept.
  const int64_t kept = inverse && onesided ? std::min(in, n / 2 + 1) : std::min(in, n);
  std::vector<Complex> spec(static_cast<size_t>(n));
  for (int64_t p = 0; p < pre; ++p)
    for (int64_t q = 0; q < post; ++q) {
      std::fill(spec.begin(), spec.end(), Complex{});
      for (int64_t k = 0; k < kept; ++k) {
        size_t at = size_t(((p * in + k) * post + q) * c);
        spec[size_t(k)] = {X[at], c == 2 ? X[at + 1] : 0.0};
      }
      if (inverse && onesided)
        for (int64_t k = n / 2 + 1; k < n; ++k)
          spec[size_t(k)] = std::conj(spec[size_t(n - k)]);
      for (int64_t m = 0; m < outLen; ++m) {
        Complex sum{};
        for (int64_t k = 0; k < n; ++k)
          sum += spec[size_t(k)] * twiddle(k, m, n, inverse ? 1.0 : -1.0);
        if (inverse)
          sum /= double(n);
        int64_t at = ((p * outLen + m) * post + q) * outC;
        y.setDouble(at, sum.real());
        if (outC == 2)
          y.setDouble(at + 1, sum.imag());
      }
    }
}

void stftKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const HostTensor *window = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  const int64_t batch = x.shape()[0], len = x.shape()[1], c = x.shape()[2];
  const int64_t frames = y.shape()[1], bins = y.shape()[2], step = op.getInt("frame_step");
  int64_t fl = op.getInt("frame_length");
  if (fl == 0)
    fl = window ? window->numElements() : len;
  if (fl <= 0 || fl > len || step <= 0 || (window && window->numElements() != fl) ||
      frames != (len - fl) / step + 1)
    fail("frame_length ", fl, " and frame_step ", step, " do not fit signal ", x.typeStr());
  std::vector<double> X = loadDoubles(x),
                      win = window ? loadDoubles(*window) : std::vector<double>(size_t(fl), 1.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t w = 0; w < bins; ++w) {
        Complex sum{};
        for (int64_t k = 0; k < fl; ++k) {
          size_t at = size_t((b * len + f * step + k) * c);
          sum +=
              Complex{X[at], c == 2 ? X[at + 1] : 0.0} * win[size_t(k)] * twiddle(k, w, fl, -1.0);
        }
        int64_t at = ((b * frames + f) * bins + w) * 2;
        y.setDouble(at, sum.real());
        y.setDouble(at + 1, sum.imag());
      }
}

// The window functions: w(n) = sum_j a_j cos(2 pi j n / N), N = size when
// periodic, size - 1 when symmetric (a symmetric window of size 1 is [1]).
template <int Kind> void windowKernel(const Op &op, const Ins &, Outs &outs) {
  HostTensor &y = outs[0];
  int64_t size = y.numElements(), denom = op.getInt("periodic") ? size : size - 1;
  constexpr double kHamming = 25.0 / 46.0;
  for (int64_t i = 0; i < size; ++i) {
    double t = denom > 0 ? 2 * std::numbers::pi * double(i) / double(denom) : 0.0, v;
    if constexpr (Kind == 0) // Hann: sin^2(pi n / N)
      v = 0.5 - 0.5 * std::cos(t);
    else if constexpr (Kind == 1)
      v = kHamming - (1 - kHamming) * std::cos(t);
    else
      v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
    y.setDouble(i, v);
  }
}

// Triangular bands on the mel scale mel(f) = 2595 log10(1 + f / 700): the
// band edges are num_mel_bins + 2 points evenly spaced from lower to upper
// mel (step (upper - lower) / (num_mel_bins + 2), as the ONNX reference
// implementation), mapped to DFT bins floor((dft_length + 1) * f / rate).
void melWeightMatrixKernel(const Op &op, const Ins &, Outs &outs) {
  HostTensor &y = outs[0];
  const int64_t bins = y.shape()[0], mels = y.shape()[1], dft = op.getInt("dft_length");
  const int64_t rate = op.getInt("sample_rate");
  auto toMel = [](double f) { return 2595 * std::log10(1 + f / 700); };
  double lo = toMel(op.getFloat("lower_edge_hertz")), hi = toMel(op.getFloat("upper_edge_hertz"));
  double step = (hi - lo) / double(mels + 2);
  std::vector<int64_t> edge;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * step + lo) / 2595) - 1);
    edge.push_back(int64_t(std::floor(double(dft + 1) * hz / double(rate))));
    if (edge.back() < 0 || edge.back() >= bins)
      fail("mel band edge ", hz, " Hz falls outside the ", bins, " DFT bins");
  }
  std::vector<double> w(size_t(bins * mels), 0.0);
  for (int64_t m = 0; m < mels; ++m) {
    int64_t left = edge[size_t(m)], center = edge[size_t(m + 1)], right = edge[size_t(m + 2)];
    if (center == left)
      w[size_t(center * mels + m)] = 1;
    for (int64_t j = left; j <= center && center > left; ++j)
      w[size_t(j * mels + m)] = double(j - left) / double(center - left);
    for (int64_t j = center; j < right; ++j)
      w[size_t(j * mels + m)] = double(right - j) / double(right - center);
  }
  for (int64_t i = 0; i < bins * mels; ++i)
    y.setDouble(i, w[size_t(i)]);
}

} // namespace

void registerSignalKernels(KernelTable &t) {
  t[size_t(OpKind::DFT)] = dftKernel;
  t[size_t(OpKind::STFT)] = stftKernel;
  t[size_t(OpKind::HannWindow)] = windowKernel<0>;
  t[size_t(OpKind::HammingWindow)] = windowKernel<1>;
  t[size_t(OpKind::BlackmanWindow)] = windowKernel<2>;
  t[size_t(OpKind::MelWeightMatrix)] = melWeightMatrixKernel;
}

} // namespace tc::ref
