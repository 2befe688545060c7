// Pooling kernels: MaxPool (with optional indices) and its gradient,
// AveragePool, LpPool over N-D sliding windows, and the global poolings. The window geometry comes
// from tc/IR/NNMath.h, the same arithmetic that sized the results.
#include "Kernels.h"
#include "tc/IR/NNMath.h"
#include <cmath>
#include <limits>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// MaxGrad: MaxPoolGrad(X, dY), each window's dY added at its maximum's tap.
enum class Pool { Max, MaxGrad, Average, Lp };

Dims perAxis(const Op &op, const char *name, int64_t dflt, size_t n) {
  Dims v = op.getInts(name);
  if (v.empty())
    v.assign(n, dflt);
  if (v.size() != n)
    fail(name, " has ", v.size(), " values, expected ", n);
  return v;
}

// Decoded multi-indices of every position of a row-major box.
std::vector<Dims> positions(const Dims &box) {
  int64_t n = numElements(box);
  Dims str = stridesOf(box);
  std::vector<Dims> r(size_t(n), Dims(box.size(), 0));
  for (int64_t i = 0; i < n; ++i)
    for (size_t d = 0; d < box.size(); ++d)
      r[size_t(i)][d] = i / str[d] % box[d];
  return r;
}

template <Pool Kind> void poolChannelsFirst(const Op &op, const Ins &ins, Outs &outs) {
  constexpr bool max = Kind == Pool::Max || Kind == Pool::MaxGrad;
  expectArity(ins, Kind == Pool::MaxGrad ? 2 : 1, outs,
              outs.size() == 2 && Kind == Pool::Max ? 2 : 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  HostTensor *indices = outs.size() == 2 ? &outs[1] : nullptr;
  const Dims &xs = x.shape(), &ys = Kind == Pool::MaxGrad ? ins[1]->shape() : y.shape();
  if (xs.size() < 3 || ys.size() != xs.size() || ys[0] != xs[0] || ys[1] != xs[1])
    fail("internal: unexpected shapes ", x.typeStr(), " -> ", y.typeStr());
  size_t sp = xs.size() - 2;
  Dims kernel = op.getInts("kernel_shape");
  if (kernel.size() != sp)
    fail("kernel_shape has ", kernel.size(), " values, expected ", sp);
  Dims strides = perAxis(op, "strides", 1, sp), dil = perAxis(op, "dilations", 1, sp);
  Dims pads = perAxis(op, "pads", 0, 2 * sp);
  const std::string &autoPad = op.getString("auto_pad");
  bool ceil = op.getInt("ceil_mode") != 0;
  // A real window is small; a hostile one must not exhaust memory below.
  int64_t taps = 1;
  for (int64_t k : kernel)
    if (k < 1 || (taps *= k) > (int64_t(1) << 24))
      fail("kernel_shape must be >= 1 with at most 2^24 taps in all");
  Dims in(xs.begin() + 2, xs.end()), out(ys.begin() + 2, ys.end());
  Dims padBegin(sp), padEnd(sp);
  for (size_t d = 0; d < sp; ++d) {
    nn::WindowAxis w =
        nn::poolWindow(in[d], kernel[d], strides[d], dil[d], pads[d], pads[d + sp], autoPad, ceil);
    if (w.out != out[d])
      fail("internal: spatial axis ", d, " has ", out[d], " windows, expected ", w.out);
    padBegin[d] = w.padBegin;
    int64_t effK = dil[d] * (kernel[d] - 1) + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      padEnd[d] = std::max<int64_t>(0, (out[d] - 1) * strides[d] + effK - in[d]) - padBegin[d];
    else
      padEnd[d] = autoPad == "VALID" ? 0 : pads[d + sp];
  }
  bool includePad = Kind == Pool::Average && op.getInt("count_include_pad") != 0;
  bool colMajor = Kind == Pool::Max && op.getInt("storage_order") != 0;
  std::vector<double> dy = Kind == Pool::MaxGrad ? loadDoubles(*ins[1]) : std::vector<double>{};
  std::vector<double> dx(Kind == Pool::MaxGrad ? size_t(x.numElements()) : 0, 0.0);
  int64_t p = Kind == Pool::Lp ? op.getInt("p") : 1;
  int64_t NC = xs[0] * xs[1], IS = numElements(in), P = numElements(out);
  Dims iStr = stridesOf(in), cStr(sp, 1); // row-major and column-major strides
  for (size_t d = 1; d < sp; ++d)
    cStr[d] = cStr[d - 1] * in[d - 1];
  std::vector<Dims> kPos = positions(kernel), oPos = positions(out);
  bool fp = isFloat(x.dtype());
  std::vector<double> xv = fp ? loadDoubles(x) : std::vector<double>{};
  std::vector<int64_t> xi = fp ? std::vector<int64_t>{} : loadInts(x);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t o = 0; o < P; ++o) {
      double acc = 0, best = -INFINITY;
      int64_t ibest = 0, bestAt = -1, bestCol = -1, count = 0;
      for (const Dims &k : kPos) {
        int64_t off = 0, col = 0;
        bool inside = true, inPadded = true;
        for (size_t d = 0; d < sp; ++d) {
          int64_t pos = oPos[size_t(o)][d] * strides[d] - padBegin[d] + k[d] * dil[d];
          inside &= pos >= 0 && pos < in[d];
          inPadded &= pos >= -padBegin[d] && pos < in[d] + padEnd[d];
          off += pos * iStr[d];
          col += pos * cStr[d];
        }
        if (!inside) {
          count += includePad && inPadded;
          continue;
        }
        ++count;
        int64_t at = nc * IS + off;
        if constexpr (max) {
          bool better = fp ? bestAt < 0 || xv[size_t(at)] > best
                           : bestAt < 0 || (x.dtype() == DType::U64
                                                ? uint64_t(xi[size_t(at)]) > uint64_t(ibest)
                                                : xi[size_t(at)] > ibest);
          if (better) {
            if (fp)
              best = xv[size_t(at)];
            else
              ibest = xi[size_t(at)];
            bestAt = at;
            bestCol = nc * IS + col;
          }
        } else if constexpr (Kind == Pool::Average) {
          acc += xv[size_t(at)];
        } else {
          acc += std::pow(std::fabs(xv[size_t(at)]), double(p));
        }
      }
      int64_t yi = nc * P + o;
      if constexpr (Kind == Pool::MaxGrad) {
        if (bestAt >= 0)
          dx[size_t(bestAt)] += dy[size_t(yi)];
      } else if constexpr (Kind == Pool::Max) {
        // A window wholly in the padding has no maximum: the lowest value.
        if (fp || bestAt < 0)
          y.setDouble(yi, best);
        else
          y.setInt(yi, ibest);
        if (indices)
          indices->setInt(yi, bestAt < 0 ? -1 : colMajor ? bestCol : bestAt);
      } else if constexpr (Kind == Pool::Average) {
        y.setDouble(yi, acc / double(count));
      } else {
        y.setDouble(yi, std::pow(acc, 1.0 / double(p)));
      }
    }
  if constexpr (Kind == Pool::MaxGrad)
    for (size_t i = 0; i < dx.size(); ++i)
      y.setDouble(int64_t(i), dx[i]);
}

template <Pool Kind> void poolKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (op.getInt("channels_last"))
    runChannelsFirst(poolChannelsFirst<Kind>, op, ins, outs, Kind == Pool::MaxGrad ? 2 : 1);
  else
    poolChannelsFirst<Kind>(op, ins, outs);
}

template <bool Max> void globalPoolKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  if (xs.size() < 2 || y.numElements() != xs[0] * xs[1])
    fail("internal: unexpected shapes ", x.typeStr(), " -> ", y.typeStr());
  int64_t NC = xs[0] * xs[1], IS = numElements(Dims(xs.begin() + 2, xs.end()));
  std::vector<double> v = loadDoubles(x);
  for (int64_t nc = 0; nc < NC; ++nc) {
    double acc = Max ? -INFINITY : 0;
    for (int64_t i = 0; i < IS; ++i) {
      double e = v[size_t(nc * IS + i)];
      if (Max)
        acc = e > acc || std::isnan(e) ? e : acc;
      else
        acc += e;
    }
    y.setDouble(nc, Max ? acc : acc / double(IS));
  }
}

} // namespace

void registerPoolingKernels(KernelTable &t) {
  t[size_t(OpKind::MaxPool)] = poolKernel<Pool::Max>;
  t[size_t(OpKind::MaxPoolGrad)] = poolKernel<Pool::MaxGrad>;
  t[size_t(OpKind::AveragePool)] = poolKernel<Pool::Average>;
  t[size_t(OpKind::LpPool)] = poolKernel<Pool::Lp>;
  t[size_t(OpKind::GlobalAveragePool)] = globalPoolKernel<false>;
  t[size_t(OpKind::GlobalMaxPool)] = globalPoolKernel<true>;
}

} // namespace tc::ref
