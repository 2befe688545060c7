// The quantization ops become ops the kernel families compile (tc-opt right
// before fusion, AFTER mixed-precision: the arithmetic below must stay in the
// types it names; codegen's outlining runs it too, for IR that did not go
// through tc-opt -O1+). Scales and zero points broadcast against the data:
// one value as a scalar, per axis as [C, 1, ...], blocked (block_size) as
// the scale gathered along the axis (index d / block_size).
//
//   QuantizeLinear     y = Cast(Round(x / s) + z, T)   (Cast saturates, NaN -> 0)
//                      x / s in x's float type (f64 for i32 x, then rounded to
//                      s's type), as the reference kernel divides
//   DequantizeLinear   y = (Cast(x) - Cast(z)) * s     in f32 (8/16-bit x and an
//                      f32 scale: exact operands, one rounding), else in f64
//   DynamicQuantize    ReduceMax / ReduceMin (with 0), the scale and zero point
//   Linear             as the reference computes them in f32, then Quantize's
//                      pointwise chain
//   MatMulInteger,     (x - zx) and (w - zw) as f32 (integers of 9 bits at
//   ConvInteger        most), a float MatMul / Conv, Cast to i32. The float
//                      sums are exact while every partial sum stays within
//                      2^24: K * max|x - zx| * max|w - zw| <= 2^24, bounded at
//                      compile time from the dtypes and constant zero
//                      points. A larger K is split into chunks that each
//                      satisfy it (slices along K; a Conv's input channels),
//                      each chunk cast to i32 and the chunks added in i32:
//                      exact for every K (no float sum ever rounds).
//   QLinearMatMul,     the i32 product above (+ QLinearConv's i32 bias), then
//   QLinearConv        Cast(Round(f64(acc) * f64(sa * sb / sy)) + zy, T): the
//                      factor in the scales' type and the product in double,
//                      as the reference kernel computes them
//
// The integer products' Convs carry `exact` = 1: CUDA's cuDNN then runs
// only algorithms that sum the products themselves (no Winograd or FFT
// transforms, whose rounding would not be exact). What stays (a host step,
// named by codegen with quantizeObstacle's reason): a K that is not static
// where the bound needs it, a grouped conv too deep for one chunk.
#include "tc/IR/OpTable.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <cmath>

namespace tc {

namespace {

// Partial sums of integers stay exact in f32 up to this magnitude.
constexpr double kExactF32 = 16777216.0; // 2^24

bool isQuantizeOp(const Op &op) {
  switch (op.kind) {
  case OpKind::QuantizeLinear:
  case OpKind::DequantizeLinear:
  case OpKind::DynamicQuantizeLinear:
  case OpKind::MatMulInteger:
  case OpKind::ConvInteger:
  case OpKind::QLinearMatMul:
  case OpKind::QLinearConv: return true;
  default: return false;
  }
}

// The range of an integer type's values as doubles.
std::pair<double, double> rangeOf(DType t) {
  switch (t) {
  case DType::U8: return {0, 255};
  case DType::I8: return {-128, 127};
  case DType::U16: return {0, 65535};
  case DType::I16: return {-32768, 32767};
  default: return {-2147483648.0, 2147483647.0};
  }
}

// max |v - z| over the values v of `data`'s type and the zero points z
// (constant: their values; otherwise any value of the type; none: 0).
double maxShifted(const Value *data, const Value *zero) {
  auto [lo, hi] = rangeOf(data->type.dtype);
  if (!zero)
    return std::max(-lo, hi);
  if (!zero->isConstant())
    return hi - lo;
  HostTensor z = constantTensor(*zero);
  double m = 0;
  for (int64_t i = 0; i < z.numElements(); ++i)
    m = std::max({m, double(z.getInt(i)) - lo, hi - double(z.getInt(i))});
  return m;
}

// How many products one f32 sum may take and stay exact.
int64_t exactTerms(double maxA, double maxB) {
  double p = std::max(maxA * maxB, 1.0);
  return int64_t(std::floor(std::min(kExactF32 / p, 1e15)));
}

// The contraction depth of an integer MatMul (A's last dim) / Conv (input
// channels per group times the window), -1 when not static.
int64_t matmulDepth(const Value *a) {
  const Dim &k = a->type.shape.back();
  return k.isStatic() ? k.size : -1;
}
int64_t convWindow(const Value *w) {
  int64_t taps = 1;
  for (size_t i = 2; i < w->type.rank(); ++i) {
    if (!w->type.shape[i].isStatic())
      return -1;
    taps *= w->type.shape[i].size;
  }
  return taps;
}

// Operands of the integer product inside each op: data, its zero point.
struct IntegerOperands {
  Value *a, *za, *b, *zb;
};
IntegerOperands integerOperands(const Op &op) {
  if (op.is(OpKind::QLinearMatMul) || op.is(OpKind::QLinearConv))
    return {op.operand(0), op.operand(2), op.operand(3), op.operand(5)};
  return {op.operand(0), op.operand(2), op.operand(1), op.operand(3)};
}

bool isConvKind(const Op &op) { return op.is(OpKind::ConvInteger) || op.is(OpKind::QLinearConv); }

class QuantLowering {
public:
  QuantLowering(Function &f, const Op &q) : f_(f), q_(q), base_(q.result()->name) {}

  // Op `k` appended; evaluated into a constant right away when every
  // operand is one (scales, zero points and weights fold at compile time).
  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    bool constant =
        std::all_of(ins.begin(), ins.end(), [](Value *v) { return !v || v->isConstant(); });
    Value *v = addInferredOp(f_, k, std::move(ins), std::move(attrs), base_, q_.loc);
    if (constant)
      if (auto values = evaluateConstantOp(*v->def, size_t(1) << 26))
        replaceOpByConstants(f_, v->def, std::move(*values));
    return v;
  }

  Value *cast(Value *v, DType t) {
    return v->type.dtype == t ? v : op(OpKind::Cast, {v}, {{"to", Attribute(t)}});
  }

  Value *scalar(DType t, double v) {
    HostTensor h(t, {});
    isFloat(t) ? h.setDouble(0, v) : h.setInt(0, int64_t(v));
    return f_.addConstant(f_.uniqueName(base_ + "_c"), h.type(),
                          TensorData::copyOf(h.bytes(), h.byteSize()), q_.loc);
  }

  Value *reshape(Value *v, const std::vector<int64_t> &shape) {
    return op(OpKind::Reshape, {v, addIntsConstant(f_, base_ + "_shape", shape, q_.loc)});
  }

  // Parameter `p` (a scale or zero point of data `x`) shaped to broadcast
  // against x: one value as a scalar; 1-D along `axis` as [C, 1...]; blocked
  // (same rank as x) gathered along `axis` at d / block.
  Value *along(Value *p, const Value *x, int64_t axis, int64_t block) {
    if (!p)
      return nullptr;
    int64_t r = int64_t(x->type.rank());
    if (block > 0) {
      axis = axis < 0 ? axis + r : axis;
      int64_t d = x->type.shape[size_t(axis)].size;
      std::vector<int64_t> idx(static_cast<size_t>(d));
      for (int64_t i = 0; i < d; ++i)
        idx[size_t(i)] = i / block;
      return op(OpKind::Gather, {p, addIntsConstant(f_, base_ + "_blocks", idx, q_.loc)},
                {{"axis", Attribute(axis)}});
    }
    std::optional<int64_t> n = staticNumElements(p->type.shape);
    if (n && *n == 1)
      return p->type.rank() == 0 ? p : reshape(p, {});
    axis = axis < 0 ? axis + r : axis;
    std::vector<int64_t> shape(size_t(r - axis), 1);
    shape[0] = -1;
    return shape.size() == 1 ? p : reshape(p, shape);
  }

  // (v - z) as f32, z broadcast by `zb` (already shaped).
  Value *shifted(Value *v, Value *z) {
    Value *fv = cast(v, DType::F32);
    return z ? op(OpKind::Sub, {fv, cast(z, DType::F32)}) : fv;
  }

  Value *slice(Value *v, int64_t from, int64_t to, int64_t axis) {
    return op(OpKind::Slice, {v, addIntsConstant(f_, base_ + "_starts", {from}, q_.loc),
                              addIntsConstant(f_, base_ + "_ends", {to}, q_.loc),
                              addIntsConstant(f_, base_ + "_axes", {axis}, q_.loc)});
  }

  // The float product (MatMul, or Conv with q's attributes) of chunk
  // [from, to) of the contraction, cast to i32.
  Value *chunkProduct(const IntegerOperands &o, Value *za, Value *zb, int64_t from, int64_t to,
                      int64_t depth) {
    bool conv = isConvKind(q_);
    Value *a = o.a, *b = o.b;
    if (from > 0 || to < depth) { // Conv: input channels; MatMul: K
      a = slice(a, from, to, conv ? 1 : -1);
      b = slice(b, from, to, conv ? 1 : b->type.rank() == 1 ? 0 : -2);
    }
    Value *fa = shifted(a, za), *fb = shifted(b, zb);
    Value *p;
    if (conv) {
      std::vector<std::pair<std::string, Attribute>> attrs;
      for (const char *name : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
        if (const Attribute *at = q_.findAttr(name))
          attrs.emplace_back(name, *at);
      attrs.emplace_back("exact", Attribute(int64_t(1)));
      p = op(OpKind::Conv, {fa, fb}, std::move(attrs));
    } else {
      p = op(OpKind::MatMul, {fa, fb});
    }
    return cast(p, DType::I32);
  }

  // The exact i32 product of an integer MatMul / Conv (chunked along the
  // contraction where one f32 sum could round).
  Value *integerProduct() {
    IntegerOperands o = integerOperands(q_);
    bool conv = isConvKind(q_);
    // Zero points shaped for the data: one value as a scalar; a's per row
    // [M, 1] and b's per column [N] (MatMul); w's per output channel
    // [M, 1, ...] (Conv).
    Value *za = o.za, *zb = o.zb;
    if (za)
      za = hasOneElement(za) ? along(za, o.a, 0, 0) : reshape(za, {-1, 1});
    if (zb && (conv || hasOneElement(zb)))
      zb = along(zb, o.b, 0, 0);
    int64_t terms = exactTerms(maxShifted(o.a, o.za), maxShifted(o.b, o.zb));
    int64_t depth, unit = 1; // chunks are whole units of the depth
    if (conv) {
      unit = convWindow(o.b);
      const Dim &c = o.b->type.shape[1];
      depth = c.isStatic() ? c.size : -1; // input channels per group
    } else {
      depth = matmulDepth(o.a);
    }
    int64_t perChunk = terms / unit; // channels (Conv) or K (MatMul) per chunk
    Value *acc = nullptr;
    for (int64_t from = 0; from < depth; from += perChunk) {
      Value *part = chunkProduct(o, za, zb, from, std::min(depth, from + perChunk), depth);
      acc = acc ? op(OpKind::Add, {acc, part}) : part;
    }
    if (!acc) // K = 0: zeros of the product's shape
      acc = chunkProduct(o, za, zb, 0, 0, 0);
    return acc;
  }

  // Cast(Round(f64(acc) * factor) + zy, T) with factor f64.
  Value *requantize(Value *acc, Value *factor) {
    Value *v = op(OpKind::Mul, {cast(acc, DType::F64), cast(factor, DType::F64)});
    v = op(OpKind::Round, {v});
    v = op(OpKind::Add, {v, cast(along(q_.operand(7), acc, 0, 0), DType::F64)});
    return cast(v, q_.result()->type.dtype);
  }

  Value *quantize(Value *x, Value *s, Value *z, int64_t axis, int64_t block, DType to) {
    DType st = s->type.dtype;
    Value *sb = along(s, x, axis, block), *zb = along(z, x, axis, block);
    DType divType = isFloat(x->type.dtype) ? x->type.dtype : st;
    Value *q;
    if (x->type.dtype == divType && st == divType)
      q = op(OpKind::Div, {x, sb});
    else // exact operands, one f64 division, rounded to divType (the reference's)
      q = cast(op(OpKind::Div, {cast(x, DType::F64), cast(sb, DType::F64)}), divType);
    DType rt = divType == DType::F64 ? DType::F64 : DType::F32;
    q = op(OpKind::Round, {cast(q, rt)});
    if (zb)
      q = op(OpKind::Add, {q, cast(zb, rt)});
    return cast(q, to);
  }

  Value *dequantize(Value *x, Value *s, Value *z, int64_t axis, int64_t block) {
    DType st = s->type.dtype;
    DType ct = x->type.dtype == DType::I32 || st == DType::F64 ? DType::F64 : DType::F32;
    Value *v = cast(x, ct);
    if (Value *zb = along(z, x, axis, block))
      v = op(OpKind::Sub, {v, cast(zb, ct)});
    v = op(OpKind::Mul, {v, cast(along(s, x, axis, block), ct)});
    return cast(v, st);
  }

  // y, y_scale, y_zero_point of DynamicQuantizeLinear.
  std::vector<Value *> dynamicQuantize(Value *x) {
    std::vector<std::pair<std::string, Attribute>> all{{"keepdims", Attribute(int64_t(0))}};
    Value *zero = scalar(DType::F32, 0);
    Value *hi = op(OpKind::Max, {op(OpKind::ReduceMax, {x}, all), zero});
    Value *lo = op(OpKind::Min, {op(OpKind::ReduceMin, {x}, all), zero});
    Value *range = op(OpKind::Sub, {hi, lo});
    Value *span =
        op(OpKind::Where, {op(OpKind::Equal, {range, zero}), scalar(DType::F32, 1), range});
    Value *scale = op(OpKind::Div, {span, scalar(DType::F32, 255)});
    Value *zp = op(OpKind::Neg, {op(OpKind::Div, {lo, scale})});
    zp = op(OpKind::Round, {op(OpKind::Clip, {zp, zero, scalar(DType::F32, 255)})});
    Value *y = op(OpKind::Add, {op(OpKind::Round, {op(OpKind::Div, {x, scale})}), zp});
    return {cast(y, DType::U8), scale, cast(zp, DType::U8)};
  }

  // The lowered op's results.
  std::vector<Value *> lower() {
    auto axisOf = [&] { return q_.getInt("axis"); };
    auto blockOf = [&] { return q_.findAttr("block_size") ? q_.getInt("block_size") : 0; };
    switch (q_.kind) {
    case OpKind::QuantizeLinear:
      return {quantize(q_.operand(0), q_.operand(1), q_.operand(2), axisOf(), blockOf(),
                       q_.result()->type.dtype)};
    case OpKind::DequantizeLinear:
      return {dequantize(q_.operand(0), q_.operand(1), q_.operand(2), axisOf(), blockOf())};
    case OpKind::DynamicQuantizeLinear: return dynamicQuantize(q_.operand(0));
    case OpKind::MatMulInteger:
    case OpKind::ConvInteger: return {integerProduct()};
    case OpKind::QLinearMatMul: {
      // sa per row [M, 1], sb per column [N], sy one value.
      Value *sa = q_.operand(1), *sb = q_.operand(4);
      sa = hasOneElement(sa) ? along(sa, q_.operand(0), 0, 0) : reshape(sa, {-1, 1});
      sb = hasOneElement(sb) ? along(sb, q_.operand(3), 0, 0) : sb;
      Value *factor = op(OpKind::Div, {op(OpKind::Mul, {sa, sb}), along(q_.operand(6), sa, 0, 0)});
      return {requantize(integerProduct(), factor)};
    }
    case OpKind::QLinearConv: {
      Value *acc = integerProduct();
      Value *y = q_.result();
      if (Value *bias = q_.operand(8))
        acc = op(OpKind::Add, {acc, along(bias, y, 1, 0)});
      Value *ws = along(q_.operand(4), y, 1, 0);
      Value *factor = op(OpKind::Div, {op(OpKind::Mul, {along(q_.operand(1), y, 0, 0), ws}),
                                       along(q_.operand(6), y, 0, 0)});
      return {requantize(acc, factor)};
    }
    default: return {};
    }
  }

private:
  Function &f_;
  const Op &q_;
  std::string base_;
};

} // namespace

std::string quantizeObstacle(const Op &q) {
  if (!isQuantizeOp(q))
    return "not a quantization op";
  if (q.is(OpKind::QuantizeLinear) || q.is(OpKind::DequantizeLinear)) {
    int64_t block = q.findAttr("block_size") ? q.getInt("block_size") : 0;
    const Value *x = q.operand(0);
    if (block > 0) {
      int64_t r = int64_t(x->type.rank()), axis = q.getInt("axis");
      if (axis < -r || axis >= r || !x->type.shape[size_t(axis < 0 ? axis + r : axis)].isStatic())
        return "blocked scales along an axis of a size known only at run time";
    }
    return "";
  }
  if (!(q.is(OpKind::MatMulInteger) || q.is(OpKind::QLinearMatMul) || isConvKind(q)))
    return "";
  IntegerOperands o = integerOperands(q);
  int64_t terms = exactTerms(maxShifted(o.a, o.za), maxShifted(o.b, o.zb));
  if (isConvKind(q)) {
    const Dim &c = o.b->type.shape.size() > 1 ? o.b->type.shape[1] : Dim::unknown();
    int64_t taps = convWindow(o.b);
    if (taps < 0 || !c.isStatic())
      return "a window or input channel count known only at run time (an exact f32 sum needs "
             "the depth)";
    if (taps > terms)
      return "a window of " + std::to_string(taps) + " taps, more than one exact f32 sum takes (" +
             std::to_string(terms) + ")";
    if (c.size * taps > terms && q.getInt("group") != 1)
      return "a grouped conv with more products per output (" + std::to_string(c.size * taps) +
             ") than one exact f32 sum takes (" + std::to_string(terms) + ")";
    return "";
  }
  if (o.a->type.rank() == 0 || matmulDepth(o.a) < 0)
    return "a contraction depth known only at run time (an exact f32 sum needs it)";
  return "";
}

bool runLowerQuantizePass(Module &m, const PassOptions &) {
  bool changed = false;
  auto lowerable = [](const auto &o) { return isQuantizeOp(*o) && quantizeObstacle(*o).empty(); };
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(), lowerable))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      if (!lowerable(o)) {
        f.ops.push_back(std::move(o));
        continue;
      }
      std::vector<Value *> ys = QuantLowering(f, *o).lower();
      for (size_t i = 0; i < ys.size(); ++i) {
        Value *y = ys[i];
        if (!y->def) // folded to a constant (larger than fold-constants takes): an op keeps r's
                     // place
          y = addInferredOp(f, OpKind::Identity, {y}, {}, o->result(i)->name, o->loc);
        adoptValue(o->result(i), y, &f);
      }
      changed = true;
    }
  }
  return changed;
}

} // namespace tc
