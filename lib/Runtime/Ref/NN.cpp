// Library kernels: MatMul (numpy batched), Gemm, N-D grouped/dilated Conv
// and ConvTranspose, Einsum. Float products accumulate in double and round
// once to the result dtype; integer ones accumulate exactly (wrapping) in 64
// bits.
#include "Kernels.h"
#include "tc/IR/NNMath.h"
#include "tc/IR/OpAttrs.h"
#include <cmath>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

std::string dimsStr(const Dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// ---- MatMul ----------------------------------------------------------------

void matmulKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  Dims as = a.shape(), bs = b.shape();
  if (as.empty() || bs.empty())
    fail("operands must have rank >= 1");
  // tc's views (gemm-views): A stored [..., K, M], B stored [..., N, K].
  bool ta = attr<OpKind::MatMul, "transA">(op), tb = attr<OpKind::MatMul, "transB">(op);
  double alpha = attr<OpKind::MatMul, "alpha">(op);
  if ((ta && as.size() < 2) || (tb && bs.size() < 2))
    fail("a transposed operand must have rank >= 2");
  if (ta)
    std::swap(as[as.size() - 2], as.back());
  if (tb)
    std::swap(bs[bs.size() - 2], bs.back());
  // 1-D promotion: a vector A is a row [1,K], a vector B a column [K,1]; the
  // added dims are not in the result, which leaves its row-major layout as is.
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), Kb = bs[bs.size() - 2], N = bs.back();
  if (K != Kb)
    fail("contraction dimension mismatch: ", K, " vs ", Kb);
  Dims ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  size_t br = std::max(ba.size(), bb.size());
  Dims bo(br);
  for (size_t i = 0; i < br; ++i) {
    int64_t da = i < br - ba.size() ? 1 : ba[i - (br - ba.size())];
    int64_t db = i < br - bb.size() ? 1 : bb[i - (br - bb.size())];
    if (da != db && da != 1 && db != 1)
      fail("batch dimensions ", dimsStr(ba), " and ", dimsStr(bb), " do not broadcast");
    bo[i] = da == 1 ? db : da;
  }
  if (numElements(bo) * M * N != y.numElements())
    fail("internal: result ", y.typeStr(), " does not hold the product");
  BroadcastWalk walk(bo, {ba, bb});
  if (isFloat(y.dtype())) {
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b);
    walk.run([&](int64_t o, const int64_t *i) {
      const double *A = av.data() + i[0] * M * K, *B = bv.data() + i[1] * K * N;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += A[ta ? k * M + m : m * K + k] * B[tb ? n * K + k : k * N + n];
          y.setDouble((o * M + m) * N + n, alpha * acc);
        }
    });
  } else {
    if (ta || tb || alpha != 1)
      fail("transA, transB and alpha are for float operands");
    std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
    walk.run([&](int64_t o, const int64_t *i) {
      const int64_t *A = av.data() + i[0] * M * K, *B = bv.data() + i[1] * K * N;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          int64_t acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc = wrapAdd(acc, wrapMul(A[m * K + k], B[k * N + n]));
          y.setInt((o * M + m) * N + n, acc);
        }
    });
  }
}

// ---- Gemm ------------------------------------------------------------------

// An int64 equal to v when v is an integer that fits, else nullopt.
std::optional<int64_t> exactInt(double v) {
  if (std::trunc(v) != v || std::fabs(v) >= 9.2e18)
    return std::nullopt;
  return int64_t(v);
}

void gemmKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  const HostTensor *c = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  if (a.rank() != 2 || b.rank() != 2)
    fail("A and B must be 2-D, got ", a.typeStr(), " and ", b.typeStr());
  bool ta = op.getInt("transA") != 0, tb = op.getInt("transB") != 0;
  double alpha = op.getFloat("alpha"), beta = op.getFloat("beta");
  int64_t M = a.shape()[ta ? 1 : 0], K = a.shape()[ta ? 0 : 1];
  int64_t Kb = b.shape()[tb ? 1 : 0], N = b.shape()[tb ? 0 : 1];
  if (K != Kb)
    fail("contraction dimension mismatch: ", K, " vs ", Kb);
  if (y.shape() != Dims{M, N})
    fail("internal: result ", y.typeStr(), " is not [", M, ",", N, "]");
  // C broadcasts one way only: to [M,N], never the other way round.
  std::vector<int64_t> cIndex;
  if (c) {
    const Dims &cs = c->shape();
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      int64_t want = y.shape()[2 - cs.size() + i];
      ok = cs[i] == 1 || cs[i] == want;
    }
    if (!ok)
      fail("C ", c->typeStr(), " does not broadcast to [", M, ",", N, "]");
    cIndex.resize(size_t(M * N));
    BroadcastWalk(y.shape(), {cs}).run([&](int64_t o, const int64_t *i) {
      cIndex[size_t(o)] = i[0];
    });
  }
  // beta = 0 leaves C out entirely (as BLAS does), so inf/NaN in C do not leak.
  bool useC = c && beta != 0;
  auto aAt = [&](int64_t m, int64_t k) { return ta ? k * M + m : m * K + k; };
  auto bAt = [&](int64_t k, int64_t n) { return tb ? n * K + k : k * N + n; };
  std::optional<int64_t> ia = exactInt(alpha), ib = exactInt(beta);
  if (isFloat(y.dtype()) || !ia || !ib) {
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b);
    std::vector<double> cv = useC ? loadDoubles(*c) : std::vector<double>{};
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += av[size_t(aAt(m, k))] * bv[size_t(bAt(k, n))];
        double r = alpha * acc;
        if (useC)
          r += beta * cv[size_t(cIndex[size_t(m * N + n)])];
        y.setDouble(m * N + n, r);
      }
    return;
  }
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  std::vector<int64_t> cv = useC ? loadInts(*c) : std::vector<int64_t>{};
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc = wrapAdd(acc, wrapMul(av[size_t(aAt(m, k))], bv[size_t(bAt(k, n))]));
      int64_t r = wrapMul(*ia, acc);
      if (useC)
        r = wrapAdd(r, wrapMul(*ib, cv[size_t(cIndex[size_t(m * N + n)])]));
      y.setInt(m * N + n, r);
    }
}

// ---- Conv ------------------------------------------------------------------

// A convolution's window geometry over X's spatial dims `in` (NCHW), the
// kernel and the result's spatial dims `out`: strides, dilations and the
// leading pads (auto_pad resolved as ONNX does), each kernel and output
// position decoded per axis. Conv and ConvWeightGrad walk the same taps.
struct ConvGeometry {
  size_t sp = 0;
  Dims in, out, kernel, strides, dil, padBegin;
  std::vector<Dims> kPos, oPos;
  int64_t P = 0, KS = 0, IS = 0;
  Dims iStr;

  ConvGeometry(const Op &op, Dims in_, Dims kernel_, Dims out_)
      : sp(in_.size()), in(std::move(in_)), out(std::move(out_)), kernel(std::move(kernel_)) {
    auto perAxis = [&](const char *name, int64_t dflt, size_t n) {
      Dims v = op.getInts(name);
      if (v.empty())
        v.assign(n, dflt);
      if (v.size() != n)
        fail(name, " has ", v.size(), " values, expected ", n);
      return v;
    };
    strides = perAxis("strides", 1, sp), dil = perAxis("dilations", 1, sp);
    Dims pads = perAxis("pads", 0, 2 * sp);
    const Dims &kattr = op.getInts("kernel_shape");
    if (!kattr.empty() && kattr != kernel)
      fail("kernel_shape ", dimsStr(kattr), " differs from W's spatial dims ", dimsStr(kernel));
    static const std::string notSet = "NOTSET";
    const std::string &autoPad = op.info().findAttr("auto_pad") ? op.getString("auto_pad") : notSet;
    padBegin.assign(sp, 0);
    for (size_t d = 0; d < sp; ++d) {
      if (strides[d] < 1 || dil[d] < 1 || pads[d] < 0 || pads[d + sp] < 0)
        fail("strides and dilations must be >= 1 and pads >= 0");
      const int64_t big = int64_t(1) << 40; // keeps every product below in int64
      if (strides[d] > big || dil[d] > big || pads[d] > big || pads[d + sp] > big)
        fail("strides, dilations and pads must be at most 2^40");
      int64_t effK = dil[d] * (kernel[d] - 1) + 1;
      if (autoPad == "NOTSET") {
        if (in[d] + pads[d] + pads[d + sp] < effK)
          fail("spatial axis ", d, ": the kernel (", effK, " with dilation) is larger than the ",
               "padded input (", in[d] + pads[d] + pads[d + sp], ")");
        padBegin[d] = pads[d];
      } else if (autoPad == "VALID") {
        if (in[d] < effK)
          fail("spatial axis ", d, ": the kernel (", effK, " with dilation) is larger than the ",
               "input (", in[d], ")");
        padBegin[d] = 0;
      } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        // ONNX: total = (out - 1) * stride + effK - in, the odd one at the end
        // for SAME_UPPER and at the beginning for SAME_LOWER.
        int64_t total = std::max<int64_t>(0, (out[d] - 1) * strides[d] + effK - in[d]);
        padBegin[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      } else {
        fail("unknown auto_pad '", autoPad, "'");
      }
    }
    P = numElements(out), KS = numElements(kernel), IS = numElements(in);
    Dims kStr = stridesOf(kernel), oStr = stridesOf(out);
    iStr = stridesOf(in);
    kPos.assign(size_t(KS), Dims(sp, 0));
    oPos.assign(size_t(P), Dims(sp, 0));
    for (int64_t k = 0; k < KS; ++k)
      for (size_t d = 0; d < sp; ++d)
        kPos[size_t(k)][d] = k / kStr[d] % kernel[d];
    for (int64_t p = 0; p < P; ++p)
      for (size_t d = 0; d < sp; ++d)
        oPos[size_t(p)][d] = p / oStr[d] % out[d];
  }
  // The offset in one channel of X that output position p reads through
  // tap k, or -1 in the padding.
  int64_t tap(int64_t p, int64_t k) const {
    int64_t xOff = 0;
    for (size_t d = 0; d < sp; ++d) {
      int64_t pos = oPos[size_t(p)][d] * strides[d] - padBegin[d] + kPos[size_t(k)][d] * dil[d];
      if (pos < 0 || pos >= in[d])
        return -1;
      xOff += pos * iStr[d];
    }
    return xOff;
  }
};

void convChannelsFirst(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &w = *ins[1];
  const HostTensor *bias = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  size_t sp = xs.size() < 2 ? 0 : xs.size() - 2;
  if (sp == 0 || ws.size() != xs.size() || ys.size() != xs.size())
    fail("internal: unexpected ranks ", x.typeStr(), ", ", w.typeStr(), " -> ", y.typeStr());
  int64_t N = xs[0], C = xs[1], M = ws[0], Cg = ws[1], group = op.getInt("group");
  if (group < 1 || C != Cg * group || M % group != 0 || ys[0] != N || ys[1] != M)
    fail("X ", x.typeStr(), ", W ", w.typeStr(), " and group ", group, " do not agree");
  if (bias && (bias->rank() != 1 || bias->shape()[0] != M))
    fail("B must be 1-D of size ", M, ", got ", bias->typeStr());
  ConvGeometry geo(op, Dims(xs.begin() + 2, xs.end()), Dims(ws.begin() + 2, ws.end()),
                   Dims(ys.begin() + 2, ys.end()));
  int64_t Mg = M / group, P = geo.P, KS = geo.KS, IS = geo.IS;
  bool fp = isFloat(y.dtype());
  std::vector<double> xv, wv, bv;
  std::vector<int64_t> xi, wi, bi;
  if (fp) {
    xv = loadDoubles(x), wv = loadDoubles(w);
    if (bias)
      bv = loadDoubles(*bias);
  } else {
    xi = loadInts(x), wi = loadInts(w);
    if (bias)
      bi = loadInts(*bias);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / Mg;
      for (int64_t p = 0; p < P; ++p) {
        double acc = 0;
        int64_t iacc = 0;
        for (int64_t c = 0; c < Cg; ++c) {
          int64_t xBase = (n * C + g * Cg + c) * IS, wBase = (m * Cg + c) * KS;
          for (int64_t k = 0; k < KS; ++k) {
            int64_t xOff = geo.tap(p, k);
            if (xOff < 0)
              continue; // zero padding
            if (fp)
              acc += xv[size_t(xBase + xOff)] * wv[size_t(wBase + k)];
            else
              iacc = wrapAdd(iacc, wrapMul(xi[size_t(xBase + xOff)], wi[size_t(wBase + k)]));
          }
        }
        int64_t o = (n * M + m) * P + p;
        if (fp)
          y.setDouble(o, bias ? acc + bv[size_t(m)] : acc);
        else
          y.setInt(o, bias ? wrapAdd(iacc, bi[size_t(m)]) : iacc);
      }
    }
}

// channels_last = 1: NHWC data and OHWI weights.
void convKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (op.getInt("channels_last"))
    runChannelsFirst(convChannelsFirst, op, ins, outs, 2);
  else
    convChannelsFirst(op, ins, outs);
}

// ---- ConvWeightGrad ----------------------------------------------------------

// dW[m, c, k] = sum over n, p of dY[n, m, p] * X[n, g * Cg + c, tap(p, k)]:
// Conv's taps, accumulated into the weights instead of the result.
void convWeightGradChannelsFirst(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &dy = *ins[1];
  HostTensor &dw = outs[0];
  const Dims &xs = x.shape(), &ys = dy.shape(), &ws = dw.shape();
  if (xs.size() < 3 || ys.size() != xs.size() || ws.size() != xs.size())
    fail("internal: unexpected ranks ", x.typeStr(), ", ", dy.typeStr(), " -> ", dw.typeStr());
  int64_t N = xs[0], C = xs[1], M = ys[1], group = op.getInt("group");
  if (group < 1 || C % group != 0 || M % group != 0 || ys[0] != N || ws[0] != M ||
      ws[1] != C / group)
    fail("X ", x.typeStr(), ", dY ", dy.typeStr(), " and group ", group, " do not agree");
  int64_t Cg = C / group, Mg = M / group;
  ConvGeometry geo(op, Dims(xs.begin() + 2, xs.end()), Dims(ws.begin() + 2, ws.end()),
                   Dims(ys.begin() + 2, ys.end()));
  int64_t P = geo.P, KS = geo.KS, IS = geo.IS;
  if (!isFloat(dw.dtype()))
    fail("ConvWeightGrad on ", dw.typeStr(), ": float only");
  std::vector<double> xv = loadDoubles(x), gv = loadDoubles(dy), acc(size_t(M * Cg * KS), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / Mg;
      for (int64_t p = 0; p < P; ++p) {
        double gy = gv[size_t((n * M + m) * P + p)];
        if (gy == 0)
          continue;
        for (int64_t k = 0; k < KS; ++k) {
          int64_t xOff = geo.tap(p, k);
          if (xOff < 0)
            continue;
          for (int64_t c = 0; c < Cg; ++c)
            acc[size_t((m * Cg + c) * KS + k)] += gy * xv[size_t((n * C + g * Cg + c) * IS + xOff)];
        }
      }
    }
  for (size_t i = 0; i < acc.size(); ++i)
    dw.setDouble(int64_t(i), acc[i]);
}

void convWeightGradKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (op.getInt("channels_last"))
    runChannelsFirst(convWeightGradChannelsFirst, op, ins, outs, 2);
  else
    convWeightGradChannelsFirst(op, ins, outs);
}

// ---- ConvTranspose ---------------------------------------------------------

// Scatters every input element through the kernel into the full result
// (stride * (in - 1) + output_padding + effective kernel per axis) and keeps
// the window [padBegin, padBegin + out) of it.
void convTransposeChannelsFirst(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &w = *ins[1];
  const HostTensor *bias = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  size_t sp = xs.size() < 3 ? 0 : xs.size() - 2;
  if (sp == 0 || ws.size() != xs.size() || ys.size() != xs.size())
    fail("internal: unexpected ranks ", x.typeStr(), ", ", w.typeStr(), " -> ", y.typeStr());
  int64_t N = xs[0], C = xs[1], group = op.getInt("group");
  if (group < 1 || ws[0] != C || C % group != 0)
    fail("X ", x.typeStr(), ", W ", w.typeStr(), " and group ", group, " do not agree");
  int64_t Cg = C / group, Mg = ws[1], M = Mg * group;
  if (ys[0] != N || ys[1] != M)
    fail("internal: result ", y.typeStr(), " for ", M, " output channels");
  if (bias && (bias->rank() != 1 || bias->shape()[0] != M))
    fail("B must be 1-D of size ", M, ", got ", bias->typeStr());
  auto perAxis = [&](const char *name, int64_t dflt, size_t n) {
    Dims v = op.getInts(name);
    if (v.empty())
      v.assign(n, dflt);
    if (v.size() != n)
      fail(name, " has ", v.size(), " values, expected ", n);
    return v;
  };
  Dims strides = perAxis("strides", 1, sp), dil = perAxis("dilations", 1, sp);
  Dims pads = perAxis("pads", 0, 2 * sp), outPad = perAxis("output_padding", 0, sp);
  const Dims &outShape = op.getInts("output_shape");
  Dims kernel(ws.begin() + 2, ws.end());
  Dims in(xs.begin() + 2, xs.end()), out(ys.begin() + 2, ys.end()), padBegin(sp);
  for (size_t d = 0; d < sp; ++d) {
    const int64_t big = int64_t(1) << 40; // keeps every product below in int64
    if (strides[d] > big || dil[d] > big || pads[d] > big || pads[d + sp] > big)
      fail("strides, dilations and pads must be at most 2^40");
    nn::WindowAxis win = nn::convTransposeWindow(
        in[d], kernel[d], strides[d], dil[d], pads[d], pads[d + sp], outPad[d],
        outShape.empty() ? -1 : outShape[d], op.getString("auto_pad"));
    if (win.out != out[d])
      fail("internal: spatial axis ", d, " has size ", out[d], ", expected ", win.out);
    padBegin[d] = win.padBegin;
  }
  int64_t P = numElements(out), KS = numElements(kernel), IS = numElements(in);
  Dims kStr = stridesOf(kernel), oStr = stridesOf(out), iStr = stridesOf(in);
  bool fp = isFloat(y.dtype());
  std::vector<double> xv, wv, acc(size_t(N * M * P), 0.0);
  std::vector<int64_t> xi, wi, iacc(fp ? 0 : size_t(N * M * P), 0);
  if (fp)
    xv = loadDoubles(x), wv = loadDoubles(w);
  else
    xi = loadInts(x), wi = loadInts(w);
  Dims ipos(sp), kpos(sp);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t g = c / Cg;
      for (int64_t i = 0; i < IS; ++i) {
        for (size_t d = 0; d < sp; ++d)
          ipos[d] = i / iStr[d] % in[d];
        int64_t xAt = (n * C + c) * IS + i;
        for (int64_t k = 0; k < KS; ++k) {
          int64_t oOff = 0;
          bool inside = true;
          for (size_t d = 0; d < sp && inside; ++d) {
            int64_t pos = ipos[d] * strides[d] + (k / kStr[d] % kernel[d]) * dil[d] - padBegin[d];
            inside = pos >= 0 && pos < out[d];
            oOff += pos * oStr[d];
          }
          if (!inside)
            continue;
          for (int64_t m = 0; m < Mg; ++m) {
            int64_t yAt = (n * M + g * Mg + m) * P + oOff, wAt = (c * Mg + m) * KS + k;
            if (fp)
              acc[size_t(yAt)] += xv[size_t(xAt)] * wv[size_t(wAt)];
            else
              iacc[size_t(yAt)] =
                  wrapAdd(iacc[size_t(yAt)], wrapMul(xi[size_t(xAt)], wi[size_t(wAt)]));
          }
        }
      }
    }
  for (int64_t o = 0; o < N * M * P; ++o) {
    int64_t m = o / P % M;
    if (fp)
      y.setDouble(o, acc[size_t(o)] + (bias ? bias->getDouble(m) : 0.0));
    else
      y.setInt(o, wrapAdd(iacc[size_t(o)], bias ? bias->getInt(m) : 0));
  }
}

// channels_last = 1: NHWC data, weights [C, k..., M/group].
void convTransposeKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (op.getInt("channels_last"))
    runChannelsFirst(convTransposeChannelsFirst, op, ins, outs, 2);
  else
    convTransposeChannelsFirst(op, ins, outs);
}

// ---- Einsum ----------------------------------------------------------------

// Walks every assignment of values to the equation's labels and adds the
// product of the operands' elements into the result element it selects.
void einsumKernel(const Op &op, const Ins &ins, Outs &outs) {
  if (ins.empty() || outs.size() != 1)
    fail("internal: Einsum with ", ins.size(), " operands");
  std::vector<size_t> ranks;
  for (const HostTensor *t : ins) {
    if (!t)
      fail("internal: missing operand");
    ranks.push_back(t->rank());
  }
  nn::EinsumSpec spec = nn::parseEinsum(op.getString("equation"), ranks);
  std::vector<int64_t> size(size_t(spec.numLabels), -1);
  for (size_t i = 0; i < ins.size(); ++i)
    for (size_t d = 0; d < ranks[i]; ++d) {
      int l = spec.inputs[i][d];
      int64_t &s = size[size_t(l)], v = ins[i]->shape()[d];
      if (s < 0 || (l >= 52 && s == 1)) // ellipsis dims broadcast
        s = v;
      else if (v != s && !(l >= 52 && v == 1))
        fail("equation '", op.getString("equation"), "': sizes ", s, " and ", v, " disagree");
    }
  std::vector<int> used;
  for (int l = 0; l < spec.numLabels; ++l)
    if (size[size_t(l)] >= 0)
      used.push_back(l);
  HostTensor &y = outs[0];
  bool fp = isFloat(y.dtype());
  std::vector<std::vector<double>> dv;
  std::vector<std::vector<int64_t>> iv;
  std::vector<Dims> strides;
  for (const HostTensor *t : ins) {
    if (fp)
      dv.push_back(loadDoubles(*t));
    else
      iv.push_back(loadInts(*t));
    strides.push_back(stridesOf(t->shape()));
  }
  Dims yStr = stridesOf(y.shape());
  std::vector<double> acc(size_t(y.numElements()), 0.0);
  std::vector<int64_t> iacc(size_t(y.numElements()), 0);
  std::vector<int64_t> value(size_t(spec.numLabels), 0);
  bool empty = false; // a label of size 0: nothing to add
  for (int l : used)
    empty |= size[size_t(l)] == 0;
  if (!empty) {
    while (true) {
      double prod = 1;
      int64_t iprod = 1;
      for (size_t i = 0; i < ins.size(); ++i) {
        int64_t at = 0;
        for (size_t d = 0; d < ranks[i]; ++d) {
          // A broadcast (size-1) dim reads index 0.
          int64_t v = ins[i]->shape()[d] == 1 ? 0 : value[size_t(spec.inputs[i][d])];
          at += v * strides[i][d];
        }
        if (fp)
          prod *= dv[i][size_t(at)];
        else
          iprod = wrapMul(iprod, iv[i][size_t(at)]);
      }
      int64_t o = 0;
      for (size_t d = 0; d < spec.output.size(); ++d)
        o += value[size_t(spec.output[d])] * yStr[d];
      if (fp)
        acc[size_t(o)] += prod;
      else
        iacc[size_t(o)] = wrapAdd(iacc[size_t(o)], iprod);
      size_t j = used.size();
      while (j-- > 0) {
        int l = used[j];
        if (++value[size_t(l)] < size[size_t(l)])
          break;
        value[size_t(l)] = 0;
      }
      if (j == size_t(-1))
        break;
    }
  }
  for (int64_t o = 0; o < y.numElements(); ++o) {
    if (fp)
      y.setDouble(o, acc[size_t(o)]);
    else
      y.setInt(o, iacc[size_t(o)]);
  }
}

} // namespace

void registerNNKernels(KernelTable &t) {
  t[size_t(OpKind::MatMul)] = matmulKernel;
  t[size_t(OpKind::Gemm)] = gemmKernel;
  t[size_t(OpKind::Conv)] = convKernel;
  t[size_t(OpKind::ConvTranspose)] = convTransposeKernel;
  t[size_t(OpKind::ConvWeightGrad)] = convWeightGradKernel;
  t[size_t(OpKind::Einsum)] = einsumKernel;
  registerPoolingKernels(t);
  registerNormalizationKernels(t);
  registerResampleKernels(t);
  registerAttentionKernels(t);
}

} // namespace tc::ref
