// Resampling and padding kernels: Resize (nearest, linear, cubic, with
// antialiasing and every coordinate transformation of ONNX) and Pad.
//
// Resize is separable: each axis maps an output position to a few input
// taps with weights (the ONNX reference's 1-D rule: the taps nearest the
// source coordinate, edge-clamped), and an output element is the weighted
// sum over the product of its axes' taps, computed in double and rounded
// once (to nearest, ties to even, for integer types).
#include "Kernels.h"
#include "tc/IR/NNMath.h"
#include <algorithm>
#include <cmath>
#include <cstring>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

struct Tap {
  int64_t index;
  double weight;
};

struct AxisTaps {
  std::vector<std::vector<Tap>> taps; // per output position
  std::vector<bool> outside;          // tf_crop_and_resize: extrapolated
};

// Weights of the taps base + first, base + first + 1, ... for a source
// coordinate `ratio` past `base` (ratio in (0, 1]).
std::vector<double> coefficients(const std::string &mode, const std::string &nearest, double ratio,
                                 double scale, bool antialias, double A, int64_t &first) {
  if (mode == "nearest") {
    first = 0;
    bool hi;
    if (ratio == 1.0 || nearest == "ceil")
      hi = true;
    else if (nearest == "round_prefer_floor")
      hi = ratio > 0.5;
    else if (nearest == "round_prefer_ceil")
      hi = ratio >= 0.5;
    else
      hi = false; // floor
    return {hi ? 0.0 : 1.0, hi ? 1.0 : 0.0};
  }
  if (!antialias || scale >= 1) {
    if (mode == "linear") {
      first = 0;
      return {1 - ratio, ratio};
    }
    first = -1;
    double w[4];
    nn::cubicWeights(ratio, A, w);
    return {w[0], w[1], w[2], w[3]};
  }
  // Antialiasing: the kernel stretched by 1 / scale, normalized.
  bool linear = mode == "linear";
  double support = linear ? 1 : 2;
  if (support / scale > double(int64_t(1) << 19))
    fail("antialiasing a downscale by ", 1 / scale, " is not supported (at most 2^18)");
  first = int64_t(std::floor(-support / scale)) + 1;
  int64_t n = 2 - 2 * first;
  std::vector<double> w(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double t = std::fabs(scale * (double(first + i) - ratio));
    double v = linear ? std::max(0.0, 1 - t) : nn::cubicKernel(t, A);
    w[size_t(i)] = v;
    sum += v;
  }
  for (double &v : w)
    v /= sum;
  return w;
}

AxisTaps axisTaps(const Op &op, int64_t in, int64_t out, double scale, double roiStart,
                  double roiEnd) {
  const std::string &mode = op.getString("mode"), &nearest = op.getString("nearest_mode"),
                    &coord = op.getString("coordinate_transformation_mode");
  bool antialias = op.getInt("antialias") != 0, exclude = op.getInt("exclude_outside") != 0;
  double A = op.getFloat("cubic_coeff_a");
  // The ONNX reference's output width: scale * input (not rounded).
  double width = scale * double(in);
  AxisTaps r;
  r.taps.resize(size_t(out));
  r.outside.assign(size_t(out), false);
  for (int64_t o = 0; o < out; ++o) {
    double y = double(o), x;
    if (coord == "align_corners") {
      x = width == 1 ? 0 : y * double(in - 1) / (width - 1);
    } else if (coord == "asymmetric") {
      x = y / scale;
    } else if (coord == "tf_crop_and_resize") {
      x = width == 1 ? (roiEnd - roiStart) * double(in - 1) / 2
                     : y * (roiEnd - roiStart) * double(in - 1) / (width - 1);
      x += roiStart * double(in - 1);
      r.outside[size_t(o)] = x < 0 || x > double(in - 1);
    } else if (coord == "pytorch_half_pixel") {
      // ONNX says 0 for a result of length 1 (its Python reference: -0.5
      // where scale * input is 1; onnxruntime: 0 where the length is 1).
      x = out > 1 ? (y + 0.5) / scale - 0.5 : 0;
    } else if (coord == "half_pixel") {
      x = (y + 0.5) / scale - 0.5;
    } else if (coord == "half_pixel_symmetric") {
      double adjustment = double(out) / width, center = double(in) / 2;
      x = center * (1 - adjustment) + (y + 0.5) / scale - 0.5;
    } else if (coord == "tf_half_pixel_for_nn") {
      x = (y + 0.5) / scale;
    } else {
      fail("unknown coordinate_transformation_mode '", coord, "'");
    }
    if (r.outside[size_t(o)])
      continue;                                // the extrapolation value, no taps
    if (!(std::fabs(x) <= 4503599627370496.0)) // 2^52 (NaN fails too)
      fail("the source coordinate ", x, " of output position ", o, " is out of range");
    // Taps are taken left of x: at an integer x, ratio 1 past x - 1.
    double base = std::floor(x);
    if (base == x)
      base -= 1;
    double ratio = x - base;
    int64_t first = 0;
    std::vector<double> w = coefficients(mode, nearest, ratio, scale, antialias, A, first);
    std::vector<Tap> &taps = r.taps[size_t(o)], inside;
    double sum = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      int64_t idx = int64_t(base) + first + int64_t(i);
      taps.push_back({std::clamp<int64_t>(idx, 0, in - 1), w[i]});
      if (idx >= 0 && idx < in) {
        inside.push_back(taps.back());
        sum += w[i];
      }
    }
    // exclude_outside: only the taps inside, renormalized (when any).
    if (exclude && sum != 0) {
      taps = inside;
      for (Tap &t : taps)
        t.weight /= sum;
    }
  }
  return r;
}

void resizeKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ys = y.shape();
  size_t r = xs.size();
  if (ys.size() != r)
    fail("internal: result ", y.typeStr(), " for input ", x.typeStr());
  Dims axes;
  for (int64_t a : op.getInts("axes"))
    axes.push_back(normalizeAxis(a, int64_t(r)));
  if (axes.empty())
    for (size_t a = 0; a < r; ++a)
      axes.push_back(int64_t(a));
  nn::ResizePlan plan = nn::resizePlan(xs, axes, op.attr("scales").floats(), op.getInts("sizes"),
                                       op.getString("keep_aspect_ratio_policy"));
  if (plan.out != ys)
    fail("internal: result ", y.typeStr(), " differs from the planned size");
  const std::vector<double> &roi = op.attr("roi").floats();
  std::vector<AxisTaps> taps(r);
  for (size_t d = 0; d < r; ++d) {
    auto it = std::find(axes.begin(), axes.end(), int64_t(d));
    size_t i = size_t(it - axes.begin());
    double rs = roi.size() == 2 * axes.size() && it != axes.end() ? roi[i] : 0.0;
    double re = roi.size() == 2 * axes.size() && it != axes.end() ? roi[i + axes.size()] : 1.0;
    // Not resized, or a scale of 1 that keeps the size and the region: the
    // identity (as in ONNX's reference, whatever the coordinate mode).
    auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); };
    bool same =
        near(plan.scale[d], 1.0) && ys[d] == xs[d] && std::fabs(rs) <= 1e-9 && near(re, 1.0);
    if (it == axes.end() || same) {
      taps[d].taps.resize(size_t(ys[d]));
      taps[d].outside.assign(size_t(ys[d]), false);
      for (int64_t o = 0; o < ys[d]; ++o)
        taps[d].taps[size_t(o)] = {{o, 1.0}};
      continue;
    }
    if (xs[d] == 0 && ys[d] > 0)
      fail("axis ", d, " of size 0 cannot be resized to ", ys[d]);
    taps[d] = axisTaps(op, xs[d], ys[d], plan.scale[d], rs, re);
  }
  double extrapolation = op.getFloat("extrapolation_value");
  bool roundInt = !isFloat(y.dtype());
  std::vector<double> v = loadDoubles(x);
  Dims xStr = stridesOf(xs), yStr = stridesOf(ys);
  Dims o(r, 0);
  for (int64_t e = 0, n = y.numElements(); e < n; ++e) {
    for (size_t d = 0; d < r; ++d)
      o[d] = e / yStr[d] % ys[d];
    bool outside = false;
    for (size_t d = 0; d < r; ++d)
      outside |= taps[d].outside[size_t(o[d])];
    double acc = 0;
    if (outside) {
      acc = extrapolation;
    } else {
      // Odometer over the product of the axes' taps.
      std::vector<size_t> k(r, 0);
      while (true) {
        double w = 1;
        int64_t at = 0;
        for (size_t d = 0; d < r; ++d) {
          const Tap &t = taps[d].taps[size_t(o[d])][k[d]];
          w *= t.weight;
          at += t.index * xStr[d];
        }
        acc += w * v[size_t(at)];
        size_t d = r;
        while (d-- > 0) {
          if (++k[d] < taps[d].taps[size_t(o[d])].size())
            break;
          k[d] = 0;
        }
        if (d == size_t(-1))
          break;
      }
    }
    y.setDouble(e, roundInt ? std::nearbyint(acc) : acc);
  }
}

// ---- Pad -------------------------------------------------------------------

// Source index of output position `i - padBegin` on an axis of size n, or -1
// for the constant.
int64_t padSource(int64_t i, int64_t n, const std::string &mode) {
  if (i >= 0 && i < n)
    return i;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return i < 0 ? 0 : n - 1;
  if (mode == "wrap")
    return (i % n + n) % n;
  // reflect (numpy): mirror without repeating the edge, repeatedly.
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1), m = (i % period + period) % period;
  return m < n ? m : period - m;
}

void padKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ys = y.shape();
  size_t r = xs.size();
  const Dims &pads = op.getInts("pads");
  const std::string &mode = op.getString("mode");
  if (pads.size() != 2 * r || ys.size() != r)
    fail("internal: pads ", pads.size(), " for ", x.typeStr(), " -> ", y.typeStr());
  std::vector<Dims> src(r);
  for (size_t d = 0; d < r; ++d) {
    if (ys[d] != xs[d] + pads[d] + pads[d + r])
      fail("internal: axis ", d, " of ", y.typeStr(), " does not match the pads");
    if (xs[d] == 0 && ys[d] > 0 && mode != "constant")
      fail(mode, " padding of the empty axis ", d, " has nothing to copy from");
    for (int64_t o = 0; o < ys[d]; ++o)
      src[d].push_back(padSource(o - pads[d], xs[d], mode));
  }
  double value = op.getFloat("value");
  size_t es = dtypeSize(x.dtype());
  Dims xStr = stridesOf(xs), yStr = stridesOf(ys);
  for (int64_t e = 0, n = y.numElements(); e < n; ++e) {
    int64_t at = 0;
    for (size_t d = 0; d < r && at >= 0; ++d) {
      int64_t s = src[d][size_t(e / yStr[d] % ys[d])];
      at = s < 0 ? -1 : at + s * xStr[d];
    }
    if (at < 0)
      y.setDouble(e, value);
    else
      std::memcpy(y.bytes() + size_t(e) * es, x.bytes() + size_t(at) * es, es);
  }
}

} // namespace

void registerResampleKernels(KernelTable &t) {
  t[size_t(OpKind::Resize)] = resizeKernel;
  t[size_t(OpKind::Pad)] = padKernel;
}

} // namespace tc::ref
