// Gradient rules of the network ops: matrix products, convolution and
// pooling (as products, transposed convolutions and scatter-adds the
// backends already compile), normalizations, softmax and the losses.
#include "GradRules.h"
#include "tc/IR/Layout.h"
#include "tc/IR/NNMath.h"
#include <algorithm>
#include <cmath>
#include <numeric>

namespace tc::grad {

namespace {
Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }
int64_t normAxis(int64_t a, size_t rank) { return a < 0 ? a + int64_t(rank) : a; }
std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i)
    v.push_back(i);
  return v;
}
int64_t product(const std::vector<int64_t> &d, size_t from = 0) {
  return std::accumulate(d.begin() + std::ptrdiff_t(std::min(from, d.size())), d.end(), int64_t(1),
                         std::multiplies<int64_t>());
}
void requireNchw(GradBuilder &b) {
  if (const Attribute *cl = b.fwd.findAttr("channels_last"); cl && cl->i())
    fail(b.fwd.where(),
         ": gradients of channels_last ops are not supported (run autodiff before channels-last)");
}
} // namespace

// alpha op(A) op(B), numpy batching and 1-D promotion.
void matmul(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *A = in(b, 0), *B = in(b, 1);
  std::vector<int64_t> aD = b.dims(A), bD = b.dims(B);
  bool transA = b.fwd.getInt("transA"), transB = b.fwd.getInt("transB");
  if ((aD.size() == 1 && transA) || (bD.size() == 1 && transB))
    fail(b.fwd.where(), ": transA/transB on a 1-D operand");
  std::vector<int64_t> a2D = aD.size() == 1 ? std::vector<int64_t>{1, aD[0]} : aD;
  std::vector<int64_t> b2D = bD.size() == 1 ? std::vector<int64_t>{bD[0], 1} : bD;
  Value *A2 = b.reshape(A, a2D), *B2 = b.reshape(B, b2D);
  Value *opA = transA ? b.swapLastTwo(A2) : A2, *opB = transB ? b.swapLastTwo(B2) : B2;
  std::vector<int64_t> opAD = b.dims(opA), opBD = b.dims(opB);
  // The product's dims before 1-D promotion is undone.
  std::vector<int64_t> batch;
  size_t na = opAD.size() - 2, nb = opBD.size() - 2, n = std::max(na, nb);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + na >= n ? opAD[i + na - n] : 1, db = i + nb >= n ? opBD[i + nb - n] : 1;
    batch.push_back(std::max(da, db));
  }
  std::vector<int64_t> yD = batch;
  yD.push_back(opAD[na]);
  yD.push_back(opBD[nb + 1]);
  Value *g = b.scale(b.reshape(rg[0], yD), b.fwd.getFloat("alpha"));
  if (w[0]) {
    Value *dOpA = b.unbroadcast(b.op(OpKind::MatMul, {g, b.swapLastTwo(opB)}), opAD);
    og[0] = b.reshape(transA ? b.swapLastTwo(dOpA) : dOpA, aD);
  }
  if (w[1]) {
    Value *dOpB;
    if (opBD.size() == 2 && opAD.size() > 2) {
      // A weight shared by every row: one GEMM over the rows, no batch sum.
      int64_t rows = product(yD) / yD.back();
      Value *a = b.reshape(opA, {rows, opAD.back()}), *gg = b.reshape(g, {rows, yD.back()});
      dOpB = b.op(OpKind::MatMul, {b.swapLastTwo(a), gg});
    } else {
      dOpB = b.unbroadcast(b.op(OpKind::MatMul, {b.swapLastTwo(opA), g}), opBD);
    }
    og[1] = b.reshape(transB ? b.swapLastTwo(dOpB) : dOpB, bD);
  }
}

// alpha op(A) op(B) + beta C.
void gemm(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *A = in(b, 0), *B = in(b, 1);
  bool transA = b.fwd.getInt("transA"), transB = b.fwd.getInt("transB");
  Value *g = rg[0];
  Value *ga = b.scale(g, b.fwd.getFloat("alpha"));
  Value *opA = transA ? b.swapLastTwo(A) : A, *opB = transB ? b.swapLastTwo(B) : B;
  if (w[0]) {
    // op(A)' = g op(B)^T; A' = op(A)'^T = op(B) g^T when transposed.
    og[0] = transA ? b.op(OpKind::MatMul, {opB, b.swapLastTwo(ga)})
                   : b.op(OpKind::MatMul, {ga, b.swapLastTwo(opB)});
  }
  if (w[1]) {
    og[1] = transB ? b.op(OpKind::MatMul, {b.swapLastTwo(ga), opA})
                   : b.op(OpKind::MatMul, {b.swapLastTwo(opA), ga});
  }
  if (w.size() > 2 && w[2] && in(b, 2))
    og[2] = b.unbroadcast(b.scale(g, b.fwd.getFloat("beta")), b.dims(in(b, 2)));
}

namespace {
// A sliding window's geometry on every spatial axis, padding made explicit:
// the leading pad, and the trailing pad the last window actually reaches
// (negative where it stops short of the input's end).
struct Windows {
  std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd, out, in;
  // The trailing pad to state on axis a: the leading one where the
  // convolution with those symmetric pads has the same result size (as
  // every conv with symmetric pads does: what cuDNN's descriptors take),
  // else the one the last window reaches (>= 0).
  int64_t statedPadEnd(size_t a) const {
    int64_t effK = dilations[a] * (kernel[a] - 1) + 1, padded = in[a] + 2 * padBegin[a];
    if (padded >= effK && (padded - effK) / strides[a] + 1 == out[a])
      return padBegin[a];
    return std::max<int64_t>(padEnd[a], 0);
  }
};
Windows windowsOf(GradBuilder &b, const std::vector<int64_t> &xD,
                  const std::vector<int64_t> &kernel, bool ceilMode) {
  size_t ns = xD.size() - 2;
  auto perAxis = [&](const char *name, int64_t dflt) {
    std::vector<int64_t> v = b.fwd.getInts(name);
    if (v.empty())
      v.assign(ns, dflt);
    return v;
  };
  Windows wd;
  wd.kernel = kernel;
  wd.strides = perAxis("strides", 1);
  wd.dilations = perAxis("dilations", 1);
  std::vector<int64_t> pads = b.fwd.getInts("pads");
  if (pads.empty())
    pads.assign(2 * ns, 0);
  for (size_t a = 0; a < ns; ++a) {
    nn::WindowAxis wa =
        nn::poolWindow(xD[2 + a], kernel[a], wd.strides[a], wd.dilations[a], pads[a], pads[ns + a],
                       b.fwd.getString("auto_pad"), ceilMode);
    int64_t effK = wd.dilations[a] * (kernel[a] - 1) + 1;
    wd.out.push_back(wa.out);
    wd.in.push_back(xD[2 + a]);
    wd.padBegin.push_back(wa.padBegin);
    wd.padEnd.push_back((wa.out - 1) * wd.strides[a] + effK - xD[2 + a] - wa.padBegin);
  }
  return wd;
}
// ConvTranspose attributes that give back the forward input's size: the
// stated trailing pad, and output padding for the positions past the last
// window.
std::vector<std::pair<std::string, Attribute>> transposeAttrs(const Windows &wd, int64_t group) {
  size_t ns = wd.kernel.size();
  std::vector<int64_t> pads = wd.padBegin, outPad(ns, 0);
  for (size_t a = 0; a < ns; ++a) {
    int64_t end = wd.statedPadEnd(a), effK = wd.dilations[a] * (wd.kernel[a] - 1) + 1;
    pads.push_back(end);
    outPad[a] = wd.in[a] - (wd.strides[a] * (wd.out[a] - 1) + effK - wd.padBegin[a] - end);
  }
  return {{"dilations", Attribute(wd.dilations)},
          {"group", Attribute(group)},
          {"kernel_shape", Attribute(wd.kernel)},
          {"output_padding", Attribute(outPad)},
          {"pads", Attribute(pads)},
          {"strides", Attribute(wd.strides)}};
}
} // namespace

namespace {
// dW of y = Conv(X, W) (W's dims wD, windows wd) from dY = g: the op that
// says so, ConvWeightGrad (the libraries' backward-filter pass).
Value *convWeightGrad(GradBuilder &b, Value *X, Value *g, const std::vector<int64_t> &wD,
                      const Windows &wd, int64_t G) {
  size_t ns = wd.kernel.size();
  std::vector<int64_t> pads = wd.padBegin;
  for (size_t a = 0; a < ns; ++a)
    pads.push_back(wd.statedPadEnd(a));
  Value *r = b.op(OpKind::ConvWeightGrad, {X, g},
                  {{"dilations", Attribute(wd.dilations)},
                   {"group", Attribute(G)},
                   {"kernel_shape", Attribute(wd.kernel)},
                   {"pads", Attribute(pads)},
                   {"strides", Attribute(wd.strides)}});
  if (b.dims(r) != wD)
    fail(b.fwd.where(), ": internal: the weight gradient's dims differ from the weights'");
  return r;
}
} // namespace

// dX: the transposed convolution of dY with W (the backward-data pass).
// dW: ConvWeightGrad of X and dY (the backward-filter pass). dB: dY summed
// over all axes but 1.
void conv(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  requireNchw(b);
  Value *X = in(b, 0), *W = in(b, 1), *g = rg[0];
  std::vector<int64_t> xD = b.dims(X), wD = b.dims(W);
  size_t ns = xD.size() - 2;
  int64_t G = b.fwd.getInt("group");
  Windows wd = windowsOf(b, xD, std::vector<int64_t>(wD.begin() + 2, wD.end()), false);
  if (w[0])
    og[0] = b.op(OpKind::ConvTranspose, {g, W}, transposeAttrs(wd, G));
  if (w[1])
    og[1] = convWeightGrad(b, X, g, wD, wd, G);
  if (w.size() > 2 && w[2] && in(b, 2)) {
    std::vector<int64_t> axes{0};
    for (size_t a = 0; a < ns; ++a)
      axes.push_back(int64_t(2 + a));
    og[2] = b.reduceSum(g, axes, false);
  }
}

// ConvTranspose y = C^T(x, W), the adjoint of a convolution C(., W) with its
// strides, dilations and groups: dY seen in its full (unpadded) extent
// s (in - 1) + effective kernel (the padding's positions zero: C's pads;
// output padding past the extent cropped by a Pad first); dX = C(dY_full, W);
// dW from <dY_full, C^T(x, W)> = <C(dY_full, W), x>: a convolution's weight
// gradient (ConvWeightGrad) with dY_full as its input and x as its result's
// cotangent. dB: dY summed over all axes but 1.
void convTranspose(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  requireNchw(b);
  Value *X = in(b, 0), *W = in(b, 1), *g = rg[0];
  std::vector<int64_t> xD = b.dims(X), wD = b.dims(W), yD = b.dims(b.fwd.result());
  size_t ns = xD.size() - 2;
  int64_t G = b.fwd.getInt("group");
  auto perAxis = [&](const char *name, int64_t dflt) {
    std::vector<int64_t> v = b.fwd.getInts(name);
    if (v.empty())
      v.assign(ns, dflt);
    return v;
  };
  std::vector<int64_t> strides = perAxis("strides", 1), dil = perAxis("dilations", 1),
                       outPad = perAxis("output_padding", 0),
                       outShape = b.fwd.getInts("output_shape"), pads = b.fwd.getInts("pads");
  if (pads.empty())
    pads.assign(2 * ns, 0);
  if (!outShape.empty() && outShape.size() != ns)
    outShape.erase(outShape.begin(), outShape.end() - std::ptrdiff_t(ns));
  // dY's pads to its full extent; negative where the output padding reaches
  // past it (cropped by a Pad first).
  std::vector<int64_t> gPads(2 * ns + 4, 0);
  for (size_t a = 0; a < ns; ++a) {
    int64_t k = wD[2 + a];
    nn::WindowAxis wa =
        nn::convTransposeWindow(xD[2 + a], k, strides[a], dil[a], pads[a], pads[ns + a], outPad[a],
                                outShape.empty() ? -1 : outShape[a], b.fwd.getString("auto_pad"));
    int64_t extent = strides[a] * (xD[2 + a] - 1) + dil[a] * (k - 1) + 1;
    gPads[2 + a] = wa.padBegin;
    gPads[ns + 4 + a] = extent - wa.padBegin - yD[2 + a];
  }
  bool crops = std::any_of(gPads.begin(), gPads.end(), [](int64_t p) { return p < 0; });
  Value *gIn = crops ? b.op(OpKind::Pad, {g}, {{"pads", Attribute(gPads)}}) : g;
  // The convolution C over gIn, padded as the full extent is (or not at all
  // after the Pad), whose result has x's size.
  Windows wd;
  wd.strides = strides;
  wd.dilations = dil;
  std::vector<int64_t> gD = b.dims(gIn);
  for (size_t a = 0; a < ns; ++a) {
    wd.kernel.push_back(wD[2 + a]);
    wd.padBegin.push_back(crops ? 0 : gPads[2 + a]);
    wd.padEnd.push_back(crops ? 0 : gPads[ns + 4 + a]);
    wd.in.push_back(gD[2 + a]);
    wd.out.push_back(xD[2 + a]);
  }
  if (w[0]) {
    std::vector<int64_t> cPads = wd.padBegin;
    for (size_t a = 0; a < ns; ++a)
      cPads.push_back(wd.statedPadEnd(a));
    og[0] = b.op(OpKind::Conv, {gIn, W},
                 {{"dilations", Attribute(dil)},
                  {"group", Attribute(G)},
                  {"kernel_shape", Attribute(wd.kernel)},
                  {"pads", Attribute(cPads)},
                  {"strides", Attribute(strides)}});
  }
  if (w[1])
    og[1] = convWeightGrad(b, gIn, X, wD, wd, G);
  if (w.size() > 2 && w[2] && in(b, 2)) {
    std::vector<int64_t> axes{0};
    for (size_t a = 0; a < ns; ++a)
      axes.push_back(int64_t(2 + a));
    og[2] = b.reduceSum(g, axes, false);
  }
}

// MaxPool: each window's cotangent goes to the first of its taps (in window
// order, as the indices result counts) that holds the maximum: one
// MaxPoolGrad, which both backends generate as a gather over X's taps
// (each finds the windows that reach it and whether it is their maximum).
// Its earlier form, per-tap masks stacked and a grouped ConvTranspose by
// one-hot kernels, wrote nine copies of dY: 1.26 ms of resnet50's 12 ms AMP
// step on the H200.
void maxPool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  requireNchw(b);
  if (rg.size() > 1 && rg[1])
    fail(b.fwd.where(), ": MaxPool's indices have no gradient");
  std::vector<std::pair<std::string, Attribute>> attrs;
  for (const char *name : {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"})
    if (const Attribute *a = b.fwd.findAttr(name))
      attrs.emplace_back(name, *a);
  og[0] = b.op(OpKind::MaxPoolGrad, {in(b, 0), rg[0]}, std::move(attrs));
}

// AveragePool: dY over each window's divisor, spread back over the window
// (a depthwise transposed convolution by ones).
void averagePool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  requireNchw(b);
  Value *X = in(b, 0);
  std::vector<int64_t> xD = b.dims(X), k = b.fwd.getInts("kernel_shape");
  size_t ns = xD.size() - 2;
  Windows wd = windowsOf(b, xD, k, b.fwd.getInt("ceil_mode"));
  bool includePad = b.fwd.getInt("count_include_pad");
  std::vector<int64_t> pads = b.fwd.getInts("pads");
  if (pads.empty() || b.fwd.getString("auto_pad") != "NOTSET")
    pads.assign(2 * ns, 0);
  // Per axis, how many taps of each window fall in the counted range: the
  // input, or the input and its explicit padding.
  std::vector<std::vector<double>> counts(ns);
  for (size_t a = 0; a < ns; ++a) {
    int64_t lo = includePad ? -pads[a] : 0, hi = xD[2 + a] + (includePad ? pads[ns + a] : 0);
    for (int64_t o = 0; o < wd.out[a]; ++o) {
      int64_t c = 0;
      for (int64_t t = 0; t < k[a]; ++t) {
        int64_t pos = o * wd.strides[a] - wd.padBegin[a] + t * wd.dilations[a];
        c += pos >= lo && pos < hi;
      }
      counts[a].push_back(double(std::max<int64_t>(c, 1)));
    }
  }
  std::vector<int64_t> cD{1, 1};
  cD.insert(cD.end(), wd.out.begin(), wd.out.end());
  int64_t total = product(cD);
  std::vector<double> inv(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    double d = 1;
    int64_t rest = i;
    for (size_t a = ns; a-- > 0;) {
      d *= counts[a][size_t(rest % wd.out[a])];
      rest /= wd.out[a];
    }
    inv[size_t(i)] = 1.0 / d;
  }
  Value *invC = b.f.addConstant(b.f.uniqueName("avgpool_grad_inv_count"),
                                TensorType{DType::F64, makeShape(cD)},
                                TensorData::copyOf(inv.data(), inv.size() * 8), b.fwd.loc);
  Value *scaled = b.mul(rg[0], b.castTo(invC, rg[0]->type.dtype));
  int64_t C = xD[1];
  std::vector<int64_t> wDims{C, 1};
  wDims.insert(wDims.end(), k.begin(), k.end());
  Value *ones = b.expandTo(b.scalar(1, rg[0]), wDims);
  og[0] = b.op(OpKind::ConvTranspose, {scaled, ones}, transposeAttrs(wd, C));
}

// LpPool y = (sum |x|^p)^(1/p) per window: dx = |x|^(p-1) sign(x) times the
// sum of g y^(1-p) over the windows that read x (a depthwise transposed
// convolution by ones, as for AveragePool).
void lpPool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  requireNchw(b);
  Value *X = in(b, 0), *y = b.fwd.result(), *g = rg[0];
  std::vector<int64_t> xD = b.dims(X), k = b.fwd.getInts("kernel_shape");
  Windows wd = windowsOf(b, xD, k, b.fwd.getInt("ceil_mode"));
  double p = double(b.fwd.getInt("p"));
  Value *perWindow = p == 1 ? g : b.mul(g, b.op(OpKind::Pow, {y, b.scalar(1 - p, y)}));
  std::vector<int64_t> wDims{xD[1], 1};
  wDims.insert(wDims.end(), k.begin(), k.end());
  Value *ones = b.expandTo(b.scalar(1, g), wDims);
  Value *spread = b.op(OpKind::ConvTranspose, {perWindow, ones}, transposeAttrs(wd, xD[1]));
  Value *dxp = p == 1   ? b.op(OpKind::Sign, {X})
               : p == 2 ? X
                        : b.mul(b.op(OpKind::Sign, {X}),
                                b.op(OpKind::Pow, {b.op(OpKind::Abs, {X}), b.scalar(p - 1, X)}));
  og[0] = b.mul(spread, dxp);
}

// MaxUnpool wrote x[i] at flat position I[i] of the unpooled tensor (MaxPool's
// input size, at the start of each axis of the result): dx = g gathered there.
void maxUnpool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> xD = b.dims(in(b, 0)), yD = b.dims(b.fwd.result());
  size_t ns = xD.size() - 2;
  std::vector<int64_t> k = b.fwd.getInts("kernel_shape"), strides = b.fwd.getInts("strides"),
                       pads = b.fwd.getInts("pads");
  if (strides.empty())
    strides.assign(ns, 1);
  if (pads.empty())
    pads.assign(2 * ns, 0);
  std::vector<int64_t> full{xD[0], xD[1]};
  for (size_t d = 0; d < ns; ++d)
    full.push_back(std::max<int64_t>(xD[2 + d] - 1, 0) * strides[d] - pads[d] - pads[d + ns] +
                   k[d]);
  Value *g = rg[0];
  if (full != yD)
    g = b.op(OpKind::Slice, {g, b.ints(std::vector<int64_t>(full.size(), 0)), b.ints(full)});
  Value *idx = in(b, 1);
  if (idx->type.dtype != DType::I64)
    idx = b.op(OpKind::Cast, {idx}, {{"to", Attribute(DType::I64)}});
  og[0] = b.op(OpKind::Gather, {b.reshape(g, {product(full)}), idx});
}

// LRN y = x s^-beta, s = bias + alpha / size * (sum of x^2 over channels
// c - floor((size-1)/2) .. c + ceil((size-1)/2)): dx = g s^-beta - 2 alpha
// beta / size * x * (sum of g x s^(-beta-1) over the mirrored window). Both
// window sums: a Conv by ones along the channels of an [N, 1, C, rest] view.
void lrn(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  std::vector<int64_t> xD = b.dims(X);
  int64_t size = b.fwd.getInt("size"), before = (size - 1) / 2, after = size - 1 - before;
  double alpha = b.fwd.getFloat("alpha"), beta = b.fwd.getFloat("beta"),
         bias = b.fwd.getFloat("bias");
  std::vector<int64_t> view{xD[0], 1, xD[1], product(xD, 2)};
  Value *ones = b.expandTo(b.scalar(1, X), {1, 1, size, 1});
  auto windowSum = [&](Value *v, int64_t lo, int64_t hi) {
    Value *c = b.op(OpKind::Conv, {b.reshape(v, view), ones},
                    {{"kernel_shape", Attribute(std::vector<int64_t>{size, 1})},
                     {"pads", Attribute(std::vector<int64_t>{lo, 0, hi, 0})}});
    return b.reshape(c, xD);
  };
  Value *s = b.add(b.scalar(bias, X),
                   b.scale(windowSum(b.mul(X, X), before, after), alpha / double(size)));
  Value *sb = b.op(OpKind::Pow, {s, b.scalar(-beta, X)});
  Value *t = b.mul(b.mul(g, X), b.div(sb, s));
  Value *back = b.scale(b.mul(X, windowSum(t, after, before)), 2 * alpha * beta / double(size));
  og[0] = b.sub(b.mul(g, sb), back);
}

void globalAveragePool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> xD = b.dims(in(b, 0));
  og[0] = b.expandTo(b.scale(rg[0], 1.0 / double(product(xD, 2))), xD);
}

// Max reductions and pools: the cotangent to the elements equal to the result.
// Split evenly among ties (PyTorch's amax).
static Value *toMaxima(GradBuilder &b, Value *x, Value *yKeep, Value *gKeep) {
  std::vector<int64_t> xD = b.dims(x), yD = b.dims(yKeep), axes;
  for (size_t a = 0; a < xD.size(); ++a)
    if (yD[a] != xD[a])
      axes.push_back(int64_t(a));
  Value *hit = b.op(OpKind::Equal, {x, b.expandTo(yKeep, xD)});
  Value *count = b.reduceSum(b.castTo(hit, x->type.dtype), axes, true);
  return b.where(hit, b.expandTo(b.div(gKeep, count), xD), b.scalar(0, gKeep));
}

void globalMaxPool(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = toMaxima(b, in(b, 0), b.fwd.result(), rg[0]);
}

// x's batch statistics over `axes`: the mean, the variance around it and
// 1 / sqrt(var + eps).
Normalized statistics(GradBuilder &b, Value *x, const std::vector<int64_t> &axes, double eps) {
  Value *mean = b.reduceMean(x, axes, true);
  Value *xc = b.sub(x, mean);
  Value *var = b.reduceMean(b.mul(xc, xc), axes, true);
  Value *invStd = b.op(OpKind::Reciprocal, {b.op(OpKind::Sqrt, {b.add(var, b.scalar(eps, x))})});
  return {mean, xc, var, invStd, nullptr};
}

Normalized normalize(GradBuilder &b, Value *x, const std::vector<int64_t> &axes, double eps) {
  Normalized n = statistics(b, x, axes, eps);
  n.xhat = b.mul(n.centered, n.invStd);
  return n;
}

Value *affineNormalized(GradBuilder &b, Value *x, const Normalized &n) {
  return b.add(b.mul(x, n.invStd), b.op(OpKind::Neg, {b.mul(n.mean, n.invStd)}));
}
// dx of xhat = normalize(x) from dxhat: invstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)).
Value *normalizeBackward(GradBuilder &b, const Normalized &n, Value *dxhat,
                         const std::vector<int64_t> &axes) {
  Value *m1 = b.reduceMean(dxhat, axes, true);
  Value *m2 = b.reduceMean(b.mul(dxhat, n.xhat), axes, true);
  return b.mul(n.invStd, b.sub(b.sub(dxhat, m1), b.mul(n.xhat, m2)));
}

namespace {
// A per-channel [C] parameter as [1, C, 1, ...] against x's rank.
Value *perChannel(GradBuilder &b, Value *p, size_t rank) {
  std::vector<int64_t> d(rank, 1);
  d[1] = b.dims(p)[0];
  return b.reshape(p, d);
}
} // namespace

// Training batch norm (batch statistics over all axes but 1); the running
// statistics are state, not differentiated. With db = sum(g) and ds =
// sum(g xhat), the parameters' gradients, dx = s invStd (g - (db + xhat ds)
// / M): two sums a norm (normalizeBackward's mean(dxhat) and mean(dxhat
// xhat) are s db / M and s ds / M, as s is per channel).
void batchNormTraining(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  if (!g)
    return;
  std::vector<int64_t> xD = b.dims(X);
  size_t r = xD.size();
  std::vector<int64_t> axes{0};
  double m = double(xD[0]);
  for (size_t a = 2; a < r; ++a) {
    axes.push_back(int64_t(a));
    m *= double(xD[a]);
  }
  if (b.dims(in(b, 1)).size() != 1)
    fail(b.fwd.where(), ": gradients of a batch norm need [C] parameters");
  // xhat from X (affineNormalized): the lowering's forward never forms it.
  Normalized n = statistics(b, X, axes, b.fwd.getFloat("epsilon"));
  Value *xhat = affineNormalized(b, X, n);
  Value *db = b.reduceSum(g, axes, true);
  Value *ds = b.reduceSum(b.mul(g, xhat), axes, true);
  if (w[0]) {
    Value *k = b.mul(perChannel(b, in(b, 1), r), n.invStd);
    Value *sums = b.scale(b.add(db, b.mul(xhat, ds)), 1 / m);
    og[0] = b.mul(k, b.sub(g, sums));
  }
  if (w[1])
    og[1] = b.reshape(ds, {xD[1]});
  if (w[2])
    og[2] = b.reshape(db, {xD[1]});
}

// Inference batch norm: the statistics are constants, so it is affine in x.
void batchNorm(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  size_t r = X->type.rank();
  if (b.dims(in(b, 1)).size() != 1)
    fail(b.fwd.where(), ": gradients of a batch norm need [C] parameters");
  std::vector<int64_t> axes{0};
  for (size_t a = 2; a < r; ++a)
    axes.push_back(int64_t(a));
  Value *invStd =
      b.op(OpKind::Reciprocal,
           {b.op(OpKind::Sqrt,
                 {b.add(perChannel(b, in(b, 4), r), b.scalar(b.fwd.getFloat("epsilon"), X))})});
  if (w[0])
    og[0] = b.mul(g, b.mul(perChannel(b, in(b, 1), r), invStd));
  if (w[1])
    og[1] = b.reduceSum(b.mul(g, b.mul(b.sub(X, perChannel(b, in(b, 3), r)), invStd)), axes, false);
  if (w[2])
    og[2] = b.reduceSum(g, axes, false);
}

// LayerNormalization; its Mean and InvStdDev results (in stash_type, the
// normalized axes kept as 1) add dMean / M and -dInvStd invStd^3 (x - mean) / M.
//
// Normalized over the last axis, with no cotangent of Mean / InvStdDev (a
// train step's LayerNorm), dX is one LayerNormalizationGrad (a row kernel
// reading X and dY once) and Scale's gradient sums its second result,
// dY * xhat, over the rows.
void layerNorm(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  size_t r = X->type.rank();
  int64_t axis = normAxis(b.fwd.getInt("axis"), r);
  std::vector<int64_t> axes = range(axis, int64_t(r));
  bool statGrads = (rg.size() > 1 && rg[1]) || (rg.size() > 2 && rg[2]);
  if (w[0] && !statGrads && axis == int64_t(r) - 1) {
    double eps = b.fwd.getFloat("epsilon");
    std::vector<std::pair<std::string, Attribute>> attrs{{"axis", Attribute(axis)},
                                                         {"epsilon", Attribute(eps)}};
    Value *gx = b.castTo(g, X->type.dtype);
    // With Scale's gradient wanted, the same op's second result dY * xhat
    // (its rows summed here): the kernel has xhat in registers already.
    std::vector<Value *> r =
        b.ops(OpKind::LayerNormalizationGrad, {X, in(b, 1), gx}, w[1] ? 2 : 1, attrs);
    og[0] = r[0];
    if (w[1])
      og[1] = b.unbroadcast(r[1], b.dims(in(b, 1)));
    if (w.size() > 2 && w[2] && in(b, 2))
      og[2] = b.unbroadcast(g, b.dims(in(b, 2)));
    return;
  }
  Normalized n = normalize(b, X, axes, b.fwd.getFloat("epsilon"));
  if (w[0]) {
    Value *dx = normalizeBackward(b, n, b.mul(g, in(b, 1)), axes);
    std::vector<int64_t> xD = b.dims(X);
    double m = 1;
    for (int64_t a : axes)
      m *= double(xD[size_t(a)]);
    if (rg.size() > 1 && rg[1])
      dx = b.add(dx, b.scale(b.castTo(rg[1], X->type.dtype), 1 / m));
    if (rg.size() > 2 && rg[2]) {
      Value *inv3 = b.mul(n.invStd, b.mul(n.invStd, n.invStd));
      Value *xc = b.mul(n.xhat, b.op(OpKind::Reciprocal, {n.invStd}));
      Value *d = b.mul(b.castTo(rg[2], X->type.dtype), inv3);
      dx = b.sub(dx, b.scale(b.mul(d, xc), 1 / m));
    }
    og[0] = dx;
  }
  if (w[1])
    og[1] = b.unbroadcast(b.mul(g, n.xhat), b.dims(in(b, 1)));
  if (w.size() > 2 && w[2] && in(b, 2))
    og[2] = b.unbroadcast(g, b.dims(in(b, 2)));
}

void instanceNorm(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  Value *X = in(b, 0), *g = rg[0];
  size_t r = X->type.rank();
  std::vector<int64_t> axes = range(2, int64_t(r));
  Normalized n = normalize(b, X, axes, b.fwd.getFloat("epsilon"));
  std::vector<int64_t> outer{0};
  outer.insert(outer.end(), axes.begin(), axes.end());
  if (w[0])
    og[0] = normalizeBackward(b, n, b.mul(g, perChannel(b, in(b, 1), r)), axes);
  if (w[1])
    og[1] = b.reduceSum(b.mul(g, n.xhat), outer, false);
  if (w[2])
    og[2] = b.reduceSum(g, outer, false);
}

void softmax(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *y = b.fwd.result(), *g = rg[0];
  int64_t axis = normAxis(b.fwd.getInt("axis"), y->type.rank());
  og[0] = b.mul(y, b.sub(g, b.reduceSum(b.mul(g, y), {axis}, true)));
}

void logSoftmax(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *y = b.fwd.result(), *g = rg[0];
  int64_t axis = normAxis(b.fwd.getInt("axis"), y->type.rank());
  og[0] = b.sub(g, b.mul(b.op(OpKind::Exp, {y}), b.reduceSum(g, {axis}, true)));
}

namespace {
// Per-element scale of a loss's cotangent: the class weight of the label
// (0 where ignored), times dLoss, over the summed weights for `mean`; and
// the one-hot of the labels over axis 1 of `like` ([N, C, d...]).
struct LossBack {
  Value *scale;  // [N, 1, d...]
  Value *oneHot; // [N, C, d...]
};
LossBack lossBack(GradBuilder &b, Value *like, Value *labels, Value *weights, Value *dLoss) {
  std::vector<int64_t> xD = b.dims(like), lD = b.dims(labels);
  int64_t C = xD[1];
  // The labels compared as floats (exact below 2^24 classes): the kernel
  // families take float comparisons in a reduction's prologue or epilogue,
  // not integer ones.
  Value *labF = b.op(OpKind::Cast, {labels}, {{"to", Attribute(DType::F32)}});
  Value *zero = b.scalar(0, like);
  Value *keep = nullptr;
  if (std::vector<int64_t> ig = b.fwd.getInts("ignore_index"); !ig.empty())
    keep = b.op(OpKind::Not, {b.op(OpKind::Equal, {labF, b.scalar(double(ig[0]), labF)})});
  Value *wElem;
  if (weights) {
    Value *lab = labels->type.dtype == DType::I64
                     ? labels
                     : b.op(OpKind::Cast, {labels}, {{"to", Attribute(DType::I64)}});
    if (keep) // an ignored label may be out of range: gather class 0 for it
      lab = b.where(keep, lab, b.op(OpKind::Cast, {zero}, {{"to", Attribute(DType::I64)}}));
    wElem = b.op(OpKind::Gather, {weights, lab});
    if (keep)
      wElem = b.where(keep, wElem, zero);
  } else {
    wElem = keep ? b.castTo(keep, like->type.dtype) : b.expandTo(b.scalar(1, like), lD);
  }
  const std::string &red = b.fwd.getString("reduction");
  Value *s = b.mul(wElem, dLoss);
  if (red == "mean")
    s = b.div(s, b.op(OpKind::ReduceSum, {wElem}, {{"keepdims", Attribute(int64_t(0))}}));
  std::vector<double> classes(static_cast<size_t>(C));
  std::iota(classes.begin(), classes.end(), 0.0);
  std::vector<int64_t> cD(xD.size(), 1);
  cD[1] = C;
  Value *cls =
      b.f.addConstant(b.f.uniqueName("loss_grad_classes"), TensorType{DType::F64, makeShape(cD)},
                      TensorData::copyOf(classes.data(), classes.size() * 8), b.fwd.loc);
  Value *lab1 = b.op(OpKind::Unsqueeze, {labF}, {{"axes", Attribute(std::vector<int64_t>{1})}});
  Value *oneHot =
      b.castTo(b.op(OpKind::Equal, {lab1, b.castTo(cls, DType::F32)}), like->type.dtype);
  return {b.op(OpKind::Unsqueeze, {s}, {{"axes", Attribute(std::vector<int64_t>{1})}}), oneHot};
}
} // namespace

// d scores = (softmax - onehot) * scale; plus what flows into log_prob.
void softmaxCrossEntropy(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0])
    return;
  Value *scores = in(b, 0);
  // Without log_prob: scores - logsumexp(scores), the row statistic the
  // loss computes by rows (lower-losses), which takes this one's place: the
  // backward is then one pointwise pass over the scores, not a LogSoftmax
  // recomputed.
  Value *logp = b.fwd.results.size() > 1
                    ? b.fwd.result(1)
                    : b.sub(scores, b.op(OpKind::ReduceLogSumExp, {scores},
                                         {{"axes", Attribute(std::vector<int64_t>{1})},
                                          {"keepdims", Attribute(int64_t(1))}}));
  Value *p = b.op(OpKind::Exp, {logp});
  Value *d = nullptr;
  if (rg[0]) {
    LossBack lb = lossBack(b, scores, in(b, 1), in(b, 2), rg[0]);
    d = b.mul(b.sub(p, lb.oneHot), lb.scale);
  }
  if (rg.size() > 1 && rg[1]) {
    Value *dl = b.sub(rg[1], b.mul(p, b.reduceSum(rg[1], {1}, true)));
    d = d ? b.add(d, dl) : dl;
  }
  og[0] = d;
}

void negativeLogLikelihood(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0])
    return;
  LossBack lb = lossBack(b, in(b, 0), in(b, 1), in(b, 2), rg[0]);
  og[0] = b.neg(b.mul(lb.oneHot, lb.scale));
}

// Dropout in inference form: identity (train-state turns a training one into
// a PhiloxDropout, Random.cpp).
void dropout(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *mode = in(b, 2);
  bool training = mode && !(mode->isConstant() && mode->data->size >= 1 && mode->data->ptr[0] == 0);
  if (training)
    fail(b.fwd.where(), ": a training-mode Dropout is differentiated as the PhiloxDropout that "
                        "train-state makes of it (tc-opt --train)");
  og[0] = rg[0];
}

} // namespace tc::grad
