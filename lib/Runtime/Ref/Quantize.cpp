// Quantization kernels: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, and ConvInteger / MatMulInteger / QLinearConv /
// QLinearMatMul, which subtract the zero points into i64 tensors and run the
// Conv and MatMul kernels on them (exact integer accumulation). Rounding is
// half to even (nearbyint in the default rounding mode); quantized results
// saturate. Float steps that ONNX performs in f32 round to f32 here too.
#include "Kernels.h"
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

struct IntRange {
  double lo, hi;
};

IntRange rangeOf(DType t) {
  switch (t) {
  case DType::U8: return {0, 255};
  case DType::I8: return {-128, 127};
  case DType::U16: return {0, 65535};
  case DType::I16: return {-32768, 32767};
  default: fail("internal: ", dtypeName(t), " is no quantized type");
  }
}

// round(v) half to even, saturated to t's range (NaN gives 0).
int64_t saturateRound(double v, DType t) {
  IntRange r = rangeOf(t);
  if (std::isnan(v))
    return 0;
  return int64_t(std::clamp(std::nearbyint(v), r.lo, r.hi));
}

// The per-axis axis, read only for a parameter of more than one value.
int64_t axisOf(const Op &op, const HostTensor &x, const HostTensor &scale) {
  if (scale.numElements() == 1 || x.rank() == 0)
    return -1;
  return normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
}

// For each element of a tensor of dims `d`, the index into a parameter of
// `n` values: 0 when n == 1, else the element's index along `axis` (the
// parameter must then hold d[axis] values).
class ParamIndex {
public:
  ParamIndex(const Dims &d, int64_t axis, int64_t n, const char *what) {
    if (n == 1)
      return;
    if (axis < 0 || axis >= int64_t(d.size()) || n != d[size_t(axis)])
      fail(what, " has ", n, " values, expected 1",
           axis >= 0 && axis < int64_t(d.size()) ? " or " + std::to_string(d[size_t(axis)]) : "");
    stride_ = stridesOf(d)[size_t(axis)];
    size_ = n;
  }
  // Blocked: the parameter has d's rank and ceil(d[axis] / block) values
  // along axis; element i reads the one of its block.
  ParamIndex(const Dims &d, int64_t axis, int64_t block, const Dims &p, const char *what)
      : dims_(d), block_(block), axis_(axis) {
    if (p.size() != d.size() || axis < 0 || axis >= int64_t(d.size()))
      fail(what, " must have x's rank for block_size ", block);
    for (size_t k = 0; k < d.size(); ++k)
      if (p[k] != (int64_t(k) == axis ? (d[k] + block - 1) / block : d[k]))
        fail(what, " has ", p[k], " values along axis ", k, ", expected ",
             int64_t(k) == axis ? (d[k] + block - 1) / block : d[k]);
    paramStrides_ = stridesOf(p);
  }
  int64_t operator()(int64_t i) const {
    if (block_) {
      int64_t at = 0;
      for (size_t k = dims_.size(); k-- > 0;) {
        int64_t c = i % dims_[k];
        i /= dims_[k];
        at += (int64_t(k) == axis_ ? c / block_ : c) * paramStrides_[k];
      }
      return at;
    }
    return size_ ? i / stride_ % size_ : 0;
  }

private:
  int64_t stride_ = 1, size_ = 0;
  Dims dims_, paramStrides_;
  int64_t block_ = 0, axis_ = 0;
};

// The parameter index of `x`'s elements for scale `s` (blocked where op's
// block_size says so).
ParamIndex paramIndex(const Op &op, const HostTensor &x, const HostTensor &s, const char *what) {
  if (int64_t block = op.getInt("block_size"); block > 0)
    return ParamIndex(x.shape(), normalizeAxis(op.getInt("axis"), int64_t(x.rank())), block,
                      s.shape(), what);
  return ParamIndex(x.shape(), axisOf(op, x, s), s.numElements(), what);
}

void quantizeLinearKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &s = *ins[1];
  const HostTensor *z = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  ParamIndex at = paramIndex(op, x, s, "y_scale");
  if (z && z->numElements() != s.numElements())
    fail("y_zero_point has ", z->numElements(), " values, y_scale ", s.numElements());
  // x / scale is an f32 (or x's float type) division in ONNX.
  DType divType = isFloat(x.dtype()) ? x.dtype() : s.dtype();
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t p = at(i);
    double q = std::nearbyint(roundToFloatDType(x.getDouble(i) / s.getDouble(p), divType));
    y.setInt(i, saturateRound(q + (z ? double(z->getInt(p)) : 0.0), y.dtype()));
  }
}

void dequantizeLinearKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &s = *ins[1];
  const HostTensor *z = ins.size() > 2 ? ins[2] : nullptr;
  HostTensor &y = outs[0];
  ParamIndex at = paramIndex(op, x, s, "x_scale");
  if (z && z->numElements() != s.numElements())
    fail("x_zero_point has ", z->numElements(), " values, x_scale ", s.numElements());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t p = at(i);
    int64_t v = x.getInt(i) - (z ? z->getInt(p) : 0);
    y.setDouble(i, double(v) * s.getDouble(p));
  }
}

// ONNX's f32 arithmetic: each step rounds to f32.
double f32(double v) { return roundToFloatDType(v, DType::F32); }

void dynamicQuantizeLinearKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 3);
  const HostTensor &x = *ins[0];
  double maxx = 0, minx = 0; // the range always includes 0
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    double v = x.getDouble(i);
    if (std::isnan(v))
      fail("x holds NaN: no quantization range");
    maxx = std::max(maxx, v);
    minx = std::min(minx, v);
  }
  double scale = f32((maxx == minx ? 1.0 : f32(maxx - minx)) / 255.0);
  double zp = std::nearbyint(std::clamp(f32(0.0 - f32(minx / scale)), 0.0, 255.0));
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    outs[0].setInt(i, saturateRound(std::nearbyint(f32(x.getDouble(i) / scale)) + zp, DType::U8));
  outs[1].setDouble(0, scale);
  outs[2].setInt(0, int64_t(zp));
}

// d - z as i64, z one value or one per index along `axis` of d.
HostTensor shifted(const HostTensor &d, const HostTensor *z, int64_t axis, const char *what) {
  HostTensor r(DType::I64, d.shape());
  ParamIndex at(d.shape(), axis, z ? z->numElements() : 1, what);
  for (int64_t i = 0, n = d.numElements(); i < n; ++i)
    r.setInt(i, d.getInt(i) - (z ? z->getInt(at(i)) : 0));
  return r;
}

// The Conv / MatMul kernel on i64 operands; `op`'s attributes are Conv's.
HostTensor integerProduct(OpKind kind, const Op &op, const Ins &ins, const Dims &outDims) {
  Op scratch(kind);
  if (kind == OpKind::Conv)
    scratch.attrs = op.attrs;
  Outs r;
  r.emplace_back(DType::I64, outDims);
  lookupRefKernel(kind)(scratch, ins, r);
  return std::move(r[0]);
}

void storeI32(const HostTensor &acc, HostTensor &y) {
  for (int64_t i = 0, n = acc.numElements(); i < n; ++i)
    y.setInt(i, acc.getInt(i)); // wraps to i32 like ONNX's i32 accumulation
}

const HostTensor *opt(const Ins &ins, size_t i) { return i < ins.size() ? ins[i] : nullptr; }

void convIntegerKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  if (ins[1]->rank() < 1)
    fail("w must have rank >= 1");
  HostTensor x = shifted(*ins[0], opt(ins, 2), -1, "x_zero_point");
  HostTensor w = shifted(*ins[1], opt(ins, 3), 0, "w_zero_point");
  storeI32(integerProduct(OpKind::Conv, op, {&x, &w}, outs[0].shape()), outs[0]);
}

// Matrix rows of A (axis rank-2) and columns of B (axis rank-1), -1 for a vector.
int64_t rowAxis(const HostTensor &t) { return int64_t(t.rank()) - 2; }
int64_t colAxis(const HostTensor &t) { return t.rank() >= 2 ? int64_t(t.rank()) - 1 : -1; }

void matMulIntegerKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  HostTensor a = shifted(*ins[0], opt(ins, 2), rowAxis(*ins[0]), "a_zero_point");
  HostTensor b = shifted(*ins[1], opt(ins, 3), colAxis(*ins[1]), "b_zero_point");
  storeI32(integerProduct(OpKind::MatMul, op, {&a, &b}, outs[0].shape()), outs[0]);
}

// y = saturate(round(acc * (sa * sb[k] / sy)) + zy), the factor in the scales' type; k
// indexes sb (one value or one per `perIndex(i)`).
template <typename F>
void requantize(const HostTensor &acc, const HostTensor &sa, F scaleIndex, const HostTensor &sb,
                const HostTensor &sy, const HostTensor &zy, HostTensor &y) {
  if (sy.numElements() != 1 || zy.numElements() != 1)
    fail("y_scale and y_zero_point must hold one value");
  double ys = sy.getDouble(0), yz = double(zy.getInt(0));
  for (int64_t i = 0, n = acc.numElements(); i < n; ++i) {
    auto [ia, ib] = scaleIndex(i);
    DType t = sa.dtype();
    double factor =
        roundToFloatDType(roundToFloatDType(sa.getDouble(ia) * sb.getDouble(ib), t) / ys, t);
    y.setInt(i, saturateRound(std::nearbyint(double(acc.getInt(i)) * factor) + yz, y.dtype()));
  }
}

void qlinearConvKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 8, outs, 1);
  const HostTensor &xs = *ins[1], &ws = *ins[4];
  if (ins[3]->rank() < 1 || xs.numElements() != 1)
    fail("x_scale must hold one value and w have rank >= 1");
  HostTensor x = shifted(*ins[0], ins[2], -1, "x_zero_point");
  HostTensor w = shifted(*ins[3], ins[5], 0, "w_zero_point");
  Ins convIns{&x, &w};
  if (const HostTensor *bias = opt(ins, 8))
    convIns.push_back(bias);
  HostTensor acc = integerProduct(OpKind::Conv, op, convIns, outs[0].shape());
  const Dims &ys = outs[0].shape();
  ParamIndex channel(ys, 1, ws.numElements(), "w_scale");
  requantize(
      acc, xs, [&](int64_t i) { return std::pair<int64_t, int64_t>(0, channel(i)); }, ws, *ins[6],
      *ins[7], outs[0]);
}

void qlinearMatMulKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 8, outs, 1);
  const HostTensor &ah = *ins[0], &bh = *ins[3];
  HostTensor a = shifted(ah, ins[2], rowAxis(ah), "a_zero_point");
  HostTensor b = shifted(bh, ins[5], colAxis(bh), "b_zero_point");
  HostTensor acc = integerProduct(OpKind::MatMul, op, {&a, &b}, outs[0].shape());
  // Row m and column n of output element i (a vector operand has one).
  int64_t M = ah.rank() >= 2 ? ah.shape()[ah.rank() - 2] : 1;
  int64_t N = bh.rank() >= 2 ? bh.shape().back() : 1;
  const HostTensor &sa = *ins[1], &sb = *ins[4];
  for (auto [s, n, what] : {std::tuple(&sa, M, "a_scale"), std::tuple(&sb, N, "b_scale")})
    if (s->numElements() != 1 && s->numElements() != n)
      fail(what, " has ", s->numElements(), " values, expected 1 or ", n);
  requantize(
      acc, sa,
      [&](int64_t i) {
        return std::pair<int64_t, int64_t>(sa.numElements() == 1 ? 0 : i / N % M,
                                           sb.numElements() == 1 ? 0 : i % N);
      },
      sb, *ins[6], *ins[7], outs[0]);
}

} // namespace

void registerQuantizeKernels(KernelTable &t) {
  t[size_t(OpKind::QuantizeLinear)] = quantizeLinearKernel;
  t[size_t(OpKind::DequantizeLinear)] = dequantizeLinearKernel;
  t[size_t(OpKind::DynamicQuantizeLinear)] = dynamicQuantizeLinearKernel;
  t[size_t(OpKind::ConvInteger)] = convIntegerKernel;
  t[size_t(OpKind::MatMulInteger)] = matMulIntegerKernel;
  t[size_t(OpKind::QLinearConv)] = qlinearConvKernel;
  t[size_t(OpKind::QLinearMatMul)] = qlinearMatMulKernel;
}

} // namespace tc::ref
