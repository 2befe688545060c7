// Kernels of sampling at computed positions and index-driven data movement:
// GridSample (N-D; nearest, linear, cubic; zeros, border, reflection),
// RoiAlign, MaxUnpool, ReverseSequence; and Det (LU with partial pivoting).
// Everything computes in double and rounds once to the result type.
#include "Kernels.h"
#include "tc/IR/NNMath.h"
#include <algorithm>
#include <cmath>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// ---- GridSample ------------------------------------------------------------

// Reflects x into [lo, hi] by the nearer border, repeatedly.
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo || x > hi) {
    double dx = x < lo ? lo - x : x - hi;
    double n = std::floor(dx / range), r = dx - n * range;
    bool even = std::fmod(n, 2.0) == 0;
    x = (x < lo) == even ? lo + r : hi - r;
  }
  return x;
}

// One sample along one axis: the input index (-1: outside, reads 0) and weight.
struct Tap {
  int64_t index;
  double weight;
};

struct GridAxis {
  int64_t size;
  double lo, hi; // the reflection borders
  bool alignCorners;
  const std::string *padding;

  // The input index sampled for integer position i.
  int64_t source(int64_t i) const {
    if (*padding == "zeros")
      return i >= 0 && i < size ? i : -1;
    if (*padding == "border")
      return std::clamp<int64_t>(i, 0, size - 1);
    return std::clamp<int64_t>(int64_t(reflect(double(i), lo, hi)), 0, size - 1);
  }

  // The taps of normalized coordinate g for `mode`.
  std::vector<Tap> taps(double g, const std::string &mode) const {
    double x = alignCorners ? (g + 1) / 2 * double(size - 1) : ((g + 1) * double(size) - 1) / 2;
    if (mode == "nearest")
      x = std::nearbyint(x); // half to even, as PyTorch
    if (x < lo || x > hi) {
      if (*padding == "border")
        x = std::clamp(x, 0.0, double(size - 1));
      else if (*padding == "reflection")
        x = reflect(x, lo, hi);
    }
    if (mode == "nearest")
      return {{source(int64_t(x)), 1.0}};
    double f = std::floor(x), t = x - f;
    int64_t i0 = int64_t(f);
    if (mode == "linear")
      return {{source(i0), 1 - t}, {source(i0 + 1), t}};
    double w[4];
    nn::cubicWeights(t, -0.75, w);
    return {
        {source(i0 - 1), w[0]}, {source(i0), w[1]}, {source(i0 + 1), w[2]}, {source(i0 + 2), w[3]}};
  }
};

void gridSampleKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &grid = *ins[1];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &gs = grid.shape();
  size_t sp = xs.size() - 2;
  if (xs.size() < 3 || gs.size() != sp + 2 || gs.back() != int64_t(sp) || gs[0] != xs[0])
    fail("X ", x.typeStr(), " and grid ", grid.typeStr(), " do not agree");
  const std::string &mode = op.getString("mode"), &padding = op.getString("padding_mode");
  bool align = op.getInt("align_corners") != 0;
  std::vector<GridAxis> axes;
  for (size_t d = 0; d < sp; ++d) {
    int64_t n = xs[2 + d];
    axes.push_back(
        {n, align ? 0.0 : -0.5, align ? double(n - 1) : double(n) - 0.5, align, &padding});
  }
  Dims in(xs.begin() + 2, xs.end()), inStr = stridesOf(in);
  int64_t N = xs[0], C = xs[1], IS = numElements(in),
          P = numElements(Dims(gs.begin() + 1, gs.end() - 1));
  if (IS == 0 && P > 0)
    fail("X ", x.typeStr(), " has no elements to sample");
  std::vector<double> xv = loadDoubles(x), gv = loadDoubles(grid);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < P; ++p) {
      // The grid lists coordinates innermost axis first.
      const double *g = gv.data() + (n * P + p) * int64_t(sp);
      std::vector<std::vector<Tap>> taps(sp);
      for (size_t d = 0; d < sp; ++d)
        taps[d] = axes[d].taps(g[sp - 1 - d], mode);
      for (int64_t c = 0; c < C; ++c) {
        const double *plane = xv.data() + (n * C + c) * IS;
        // Sum over every combination of one tap per axis.
        double acc = 0;
        std::vector<size_t> k(sp, 0);
        while (true) {
          double w = 1;
          int64_t off = 0;
          for (size_t d = 0; d < sp && w != 0; ++d) {
            const Tap &t = taps[d][k[d]];
            w = t.index < 0 ? 0 : w * t.weight;
            off += t.index * inStr[d];
          }
          if (w != 0)
            acc += w * plane[off];
          size_t d = sp;
          while (d > 0 && ++k[d - 1] == taps[d - 1].size())
            k[--d] = 0;
          if (d == 0)
            break;
        }
        y.setDouble((n * C + c) * P + p, acc);
      }
    }
}

// ---- RoiAlign --------------------------------------------------------------

// One bilinear sample: four flat offsets into an H x W plane and weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinearSample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (y < -1.0 || y > double(H) || x < -1.0 || x > double(W))
    return s; // outside: contributes 0
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = int64_t(y), x0 = int64_t(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = double(y0);
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = double(x0);
  }
  double ly = y - double(y0), lx = x - double(x0), hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y0 * W + x0, s.pos[1] = y0 * W + x1, s.pos[2] = y1 * W + x0, s.pos[3] = y1 * W + x1;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

void roiAlignKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0], &rois = *ins[1], &batch = *ins[2];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  if (xs.size() != 4)
    fail("X must be 4-D, got ", x.typeStr());
  int64_t R = batch.numElements(), C = xs[1], H = xs[2], W = xs[3];
  int64_t OH = op.getInt("output_height"), OW = op.getInt("output_width");
  if (rois.shape() != Dims{R, 4})
    fail("rois ", rois.typeStr(), " must be [", R, ", 4]");
  int64_t ratio = op.getInt("sampling_ratio");
  double scale = op.getFloat("spatial_scale");
  bool halfPixel = op.getString("coordinate_transformation_mode") == "half_pixel";
  bool avg = op.getString("mode") == "avg";
  std::vector<double> xv = loadDoubles(x), rv = loadDoubles(rois);
  for (int64_t r = 0; r < R; ++r) {
    int64_t b = batch.getInt(r);
    if (b < 0 || b >= xs[0])
      fail("batch_indices[", r, "] = ", b, " is out of range for ", xs[0], " images");
    double off = halfPixel ? 0.5 : 0.0;
    double x0 = rv[size_t(4 * r)] * scale - off, y0 = rv[size_t(4 * r + 1)] * scale - off;
    double rw = rv[size_t(4 * r + 2)] * scale - off - x0,
           rh = rv[size_t(4 * r + 3)] * scale - off - y0;
    if (!halfPixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    double bh = rh / double(OH), bw = rw / double(OW);
    double gh = ratio > 0 ? double(ratio) : std::ceil(rh / double(OH));
    double gw = ratio > 0 ? double(ratio) : std::ceil(rw / double(OW));
    if (!(gh * gw <= double(int64_t(1) << 24)))
      fail("roi ", r, " needs ", gh, " x ", gw, " samples per bin (at most 2^24)");
    int64_t GH = int64_t(gh), GW = int64_t(gw);
    double count = double(std::max<int64_t>(GH * GW, 1));
    for (int64_t ph = 0; ph < OH; ++ph)
      for (int64_t pw = 0; pw < OW; ++pw) {
        std::vector<Sample> samples;
        for (int64_t iy = 0; iy < GH; ++iy)
          for (int64_t ix = 0; ix < GW; ++ix)
            samples.push_back(bilinearSample(y0 + double(ph) * bh + (double(iy) + 0.5) * bh / gh,
                                             x0 + double(pw) * bw + (double(ix) + 0.5) * bw / gw, H,
                                             W));
        for (int64_t c = 0; c < C; ++c) {
          const double *plane = xv.data() + (b * C + c) * H * W;
          double acc = 0;
          for (size_t i = 0; i < samples.size(); ++i) {
            const Sample &s = samples[i];
            if (avg) {
              for (int k = 0; k < 4; ++k)
                acc += s.w[k] * plane[s.pos[k]];
            } else {
              // ONNX (and onnxruntime): the largest weighted corner value.
              double m = s.w[0] * plane[s.pos[0]];
              for (int k = 1; k < 4; ++k)
                m = std::max(m, s.w[k] * plane[s.pos[k]]);
              acc = i == 0 ? m : std::max(acc, m);
            }
          }
          y.setDouble(((r * C + c) * OH + ph) * OW + pw, avg ? acc / count : acc);
        }
      }
  }
}

// ---- MaxUnpool -------------------------------------------------------------

void maxUnpoolKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &ind = *ins[1];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ys = y.shape();
  if (ind.shape() != xs || ys.size() != xs.size() || xs.size() < 3)
    fail("X ", x.typeStr(), ", I ", ind.typeStr(), " and the result ", y.typeStr(),
         " do not agree");
  size_t sp = xs.size() - 2;
  const Dims &kernel = op.getInts("kernel_shape");
  Dims strides = op.getInts("strides"), pads = op.getInts("pads");
  if (strides.empty())
    strides.assign(sp, 1);
  if (pads.empty())
    pads.assign(2 * sp, 0);
  if (kernel.size() != sp || strides.size() != sp || pads.size() != 2 * sp)
    fail("kernel_shape, strides and pads do not match ", sp, " spatial axes");
  // The indices address the unpooled tensor of MaxPool's input size, which
  // sits at the start of each axis of the (possibly larger) result.
  Dims full{xs[0], xs[1]};
  for (size_t d = 0; d < sp; ++d)
    full.push_back(std::max<int64_t>(xs[2 + d] - 1, 0) * strides[d] - pads[d] - pads[d + sp] +
                   kernel[d]);
  for (size_t d = 0; d < xs.size(); ++d)
    if (full[d] > ys[d])
      fail("the result ", y.typeStr(), " is smaller than the unpooled size ", full[d], " of axis ",
           d);
  Dims fullStr = stridesOf(full), yStr = stridesOf(ys);
  int64_t total = numElements(full);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t j = ind.getInt(i);
    if (j < 0 || j >= total)
      fail("I[", i, "] = ", j, " is out of range for ", total, " unpooled elements");
    int64_t o = 0;
    for (size_t d = 0; d < full.size(); ++d)
      o += j / fullStr[d] % full[d] * yStr[d];
    y.setDouble(o, x.getDouble(i));
  }
}

// ---- ReverseSequence -------------------------------------------------------

void reverseSequenceKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &lens = *ins[1];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  size_t b = size_t(op.getInt("batch_axis")), t = size_t(op.getInt("time_axis"));
  if (xs.size() < 2 || b > 1 || t > 1 || lens.numElements() != xs[b])
    fail("sequence_lens ", lens.typeStr(), " does not match ", x.typeStr());
  for (int64_t i = 0; i < xs[b]; ++i)
    if (lens.getInt(i) < 0 || lens.getInt(i) > xs[t])
      fail("sequence_lens[", i, "] = ", lens.getInt(i), " is outside [0, ", xs[t], "]");
  Dims str = stridesOf(xs);
  size_t bytes = dtypeSize(x.dtype());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t bi = i / str[b] % xs[b], ti = i / str[t] % xs[t], len = lens.getInt(bi);
    int64_t src = ti < len ? i + (len - 1 - 2 * ti) * str[t] : i;
    std::copy_n(x.bytes() + src * int64_t(bytes), bytes, y.bytes() + i * int64_t(bytes));
  }
}

// ---- Det -------------------------------------------------------------------

void detKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  if (xs.size() < 2 || xs[xs.size() - 1] != xs[xs.size() - 2])
    fail("X ", x.typeStr(), " does not hold square matrices");
  int64_t n = xs.back(), count = outs[0].numElements();
  std::vector<double> v = loadDoubles(x);
  for (int64_t m = 0; m < count; ++m) {
    double *a = v.data() + m * n * n, det = 1;
    for (int64_t c = 0; c < n && det != 0; ++c) {
      int64_t piv = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c]))
          piv = r;
      if (piv != c) {
        std::swap_ranges(a + piv * n, a + piv * n + n, a + c * n);
        det = -det;
      }
      double p = a[c * n + c];
      det *= p;
      if (p == 0)
        break;
      for (int64_t r = c + 1; r < n; ++r) {
        double f = a[r * n + c] / p;
        for (int64_t k = c; k < n; ++k)
          a[r * n + k] -= f * a[c * n + k];
      }
    }
    outs[0].setDouble(m, det);
  }
}

} // namespace

void registerSpatialKernels(KernelTable &t) {
  t[size_t(OpKind::GridSample)] = gridSampleKernel;
  t[size_t(OpKind::RoiAlign)] = roiAlignKernel;
  t[size_t(OpKind::MaxUnpool)] = maxUnpoolKernel;
  t[size_t(OpKind::ReverseSequence)] = reverseSequenceKernel;
  t[size_t(OpKind::Det)] = detKernel;
}

} // namespace tc::ref
