// Converters of the normalization, pooling, reduction and resampling ops
// whose ONNX form changed across opsets. The IR keeps one form per op: what
// ONNX moved from attributes to inputs and what fixes a result's shape
// (Reduce* axes, Pad pads and value, TopK k, CumSum axis, Resize scales,
// sizes and roi) is an attribute, so a constant input becomes an attribute;
// a computed one becomes the op's run-time attribute operand (Ops.def).
// BatchNormalization with training_mode = 1 imports as
// BatchNormalizationTraining; the statistics outputs of inference mode and
// of opsets before 14 are rejected; optional outputs nobody reads are
// dropped.
#include "OnnxOps.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include <algorithm>
#include <cstring>

namespace tc::onnximport {

namespace {

using onnx::AttributeProto;

// IR attributes that are ONNX inputs at this opset: given as attributes,
// they are an error (collectNodeAttrs would take them).
void rejectAttrs(const NodeContext &ctx, std::initializer_list<const char *> names,
                 const std::string &why) {
  for (const char *n : names)
    if (findNodeAttr(ctx, n))
      ctx.fail("unsupported attribute '", n, "' (", why, ")");
}

// True when input i is absent or statically holds no elements (ONNX passes
// "no scales" as an empty tensor).
bool absentOrEmpty(const NodeContext &ctx, size_t i) {
  Value *v = ctx.input(i);
  if (!v)
    return true;
  auto n = staticNumElements(v->type.shape);
  return n && *n == 0;
}

// The data of constant input i, which tc needs at compile time.
HostTensor constantData(const NodeContext &ctx, size_t i, const char *what) {
  Value *v = ctx.input(i);
  if (!v)
    ctx.fail("input '", what, "' is required");
  if (!v->isConstant())
    ctx.fail(what, " must be a constant: tc needs it at compile time, but input ",
             quoteName(ctx.node().input(int(i))), " is computed at run time");
  return constantTensor(*v);
}

// A constant 0-D or 1-D i32/i64 input.
std::vector<int64_t> constantInts(const NodeContext &ctx, size_t i, const char *what) {
  const TensorType &t = ctx.input(i) ? ctx.input(i)->type : TensorType{};
  if (ctx.input(i) && (t.rank() > 1 || (t.dtype != DType::I64 && t.dtype != DType::I32)))
    ctx.fail("input '", what, "' must be a 1-D i64 tensor, got ", t.str());
  HostTensor h = constantData(ctx, i, what);
  std::vector<int64_t> r;
  for (int64_t k = 0; k < h.numElements(); ++k)
    r.push_back(h.getInt(k));
  return r;
}

// A constant 1-D float input, exactly (f32 values widen without rounding).
std::vector<double> constantFloats(const NodeContext &ctx, size_t i, const char *what) {
  const TensorType &t = ctx.input(i)->type;
  if (t.rank() > 1 || !isFloat(t.dtype))
    ctx.fail("input '", what, "' must be a 1-D float tensor, got ", t.str());
  HostTensor h = constantData(ctx, i, what);
  std::vector<double> r;
  for (int64_t k = 0; k < h.numElements(); ++k)
    r.push_back(h.getDouble(k));
  return r;
}

int64_t intAttr(const NodeContext &ctx, const char *name, int64_t dflt) {
  const AttributeProto *a = findNodeAttr(ctx, name);
  return a ? convertAttribute(ctx, *a, AttrKind::Int).i() : dflt;
}

// The node's output names without trailing ones that are empty or unread
// (optional outputs cost work in the IR); at least one stays.
std::vector<std::string> usedOutputs(const NodeContext &ctx) {
  std::vector<std::string> outs = nodeOutputs(ctx);
  while (outs.size() > 1 && !ctx.outputUsed(outs.size() - 1))
    outs.pop_back();
  return outs;
}

// ---- Reductions ------------------------------------------------------------------

// Reduce*: axes attribute until ReduceSum-13 / the others' 18, then an
// optional input with noop_with_empty_axes (no axes then means reducing over
// none: the pointwise op each reduction applies to one element).
void convertReduce(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  int since = info.kind == OpKind::ReduceSum ? 13 : 18;
  if (ctx.opset() < since) {
    expectInputs(ctx, 1, 1);
    ctx.emit(info.kind, {ctx.input(0)}, collectNodeAttrs(ctx, info), nodeOutputs(ctx));
    return;
  }
  expectInputs(ctx, 1, 2);
  rejectAttrs(ctx, {"axes"}, "an input since opset " + std::to_string(since));
  AttrList attrs = collectNodeAttrs(ctx, info, {"noop_with_empty_axes"});
  int64_t noop = intAttr(ctx, "noop_with_empty_axes", 0);
  std::vector<int64_t> axes;
  Value *runtimeAxes = absentOrEmpty(ctx, 1) ? nullptr : runtimeInput(ctx, 1);
  if (runtimeAxes) {
    // Computed at run time: an empty value would switch to the noop or
    // reduce-all form, which the IR decides at compile time.
    auto n = staticNumElements(runtimeAxes->type.shape);
    if (!n)
      ctx.fail("axes computed at run time must have a static, non-zero length, got ",
               runtimeAxes->type.str());
    ctx.emit(info.kind, {ctx.input(0), runtimeAxes}, attrs, nodeOutputs(ctx));
    return;
  }
  if (!absentOrEmpty(ctx, 1))
    axes = constantInts(ctx, 1, "axes");
  if (axes.empty() && noop) {
    // Reducing over no axes: each element on its own.
    Value *x = ctx.input(0);
    switch (info.kind) {
    case OpKind::ReduceSumSquare: ctx.emit(OpKind::Mul, {x, x}, {}, nodeOutputs(ctx)); return;
    case OpKind::ReduceL1:
    case OpKind::ReduceL2: ctx.emit(OpKind::Abs, {x}, {}, nodeOutputs(ctx)); return;
    case OpKind::ReduceLogSum: ctx.emit(OpKind::Log, {x}, {}, nodeOutputs(ctx)); return;
    default: // sum, mean, max, min, product, log-sum-exp of one element
      ctx.emit(OpKind::Identity, {x}, {}, nodeOutputs(ctx));
      return;
    }
  }
  if (!axes.empty()) // none: all of them
    attrs.emplace_back("axes", Attribute(axes));
  ctx.emit(info.kind, {ctx.input(0)}, attrs, nodeOutputs(ctx));
}

// CumSum: the axis is an input (0-D or 1-D of one element).
void convertCumSum(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::CumSum);
  expectInputs(ctx, 2, 2);
  rejectAttrs(ctx, {"axis"}, "an input in ONNX");
  AttrList attrs = collectNodeAttrs(ctx, info);
  if (Value *axis = runtimeInput(ctx, 1)) {
    ctx.emit(OpKind::CumSum, {ctx.input(0), axis}, attrs, nodeOutputs(ctx));
    return;
  }
  std::vector<int64_t> axis = constantInts(ctx, 1, "axis");
  if (axis.size() != 1)
    ctx.fail("axis must hold one value, got ", axis.size());
  attrs.emplace_back("axis", Attribute(axis[0]));
  ctx.emit(OpKind::CumSum, {ctx.input(0)}, attrs, nodeOutputs(ctx));
}

// TopK: k attribute before opset 10, a 1-D input of one element from 10.
void convertTopK(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::TopK);
  if (ctx.opset() < 10) {
    expectInputs(ctx, 1, 1);
    ctx.emit(OpKind::TopK, {ctx.input(0)}, collectNodeAttrs(ctx, info), nodeOutputs(ctx));
    return;
  }
  expectInputs(ctx, 2, 2);
  rejectAttrs(ctx, {"k"}, "an input since opset 10");
  AttrList attrs = collectNodeAttrs(ctx, info);
  if (Value *k = runtimeInput(ctx, 1)) {
    ctx.emit(OpKind::TopK, {ctx.input(0), k}, attrs, nodeOutputs(ctx));
    return;
  }
  std::vector<int64_t> k = constantInts(ctx, 1, "k");
  if (k.size() != 1)
    ctx.fail("k must hold one value, got ", k.size());
  attrs.emplace_back("k", Attribute(k[0]));
  ctx.emit(OpKind::TopK, {ctx.input(0)}, attrs, nodeOutputs(ctx));
}

// ---- Padding and resampling --------------------------------------------------

// Pad: pads/value attributes before opset 11; then pads and constant_value
// inputs, and from 18 an axes input that the pads refer to.
void convertPad(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Pad);
  if (ctx.opset() < 11) {
    expectInputs(ctx, 1, 1);
    ctx.emit(OpKind::Pad, {ctx.input(0)}, collectNodeAttrs(ctx, info), nodeOutputs(ctx));
    return;
  }
  expectInputs(ctx, 2, ctx.opset() >= 18 ? 4 : 3);
  rejectAttrs(ctx, {"pads", "value"}, "inputs since opset 11");
  AttrList attrs = collectNodeAttrs(ctx, info);
  Value *x = ctx.input(0);
  int64_t r = int64_t(x->type.rank());
  std::vector<Value *> operands{x};
  Value *runtimePads = runtimeInput(ctx, 1);
  if (runtimePads && !absentOrEmpty(ctx, 3))
    ctx.fail("pads computed at run time with the axes input is not supported");
  std::vector<int64_t> pads = runtimePads ? std::vector<int64_t>{} : constantInts(ctx, 1, "pads");
  if (runtimePads) {
    operands.push_back(runtimePads);
  } else if (!absentOrEmpty(ctx, 3)) {
    std::vector<int64_t> axes = constantInts(ctx, 3, "axes");
    size_t n = axes.size();
    if (pads.size() != 2 * n)
      ctx.fail("pads has ", pads.size(), " values for ", n, " axes");
    std::vector<int64_t> full(size_t(2 * r), 0);
    std::vector<bool> seen(static_cast<size_t>(r));
    for (size_t i = 0; i < n; ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < 0 || a >= r || seen[size_t(a)])
        ctx.fail("axes ", axes[i], " is out of range for rank ", r, " or repeated");
      seen[size_t(a)] = true;
      full[size_t(a)] = pads[i];
      full[size_t(a + r)] = pads[i + n];
    }
    pads = full;
  }
  if (!runtimePads)
    attrs.emplace_back("pads", Attribute(pads));
  if (Value *value = absentOrEmpty(ctx, 2) ? nullptr : runtimeInput(ctx, 2)) {
    operands.resize(2);
    operands.push_back(value);
  } else if (!absentOrEmpty(ctx, 2)) {
    HostTensor v = constantData(ctx, 2, "constant_value");
    if (v.numElements() != 1)
      ctx.fail("constant_value must be a scalar, got ", v.typeStr());
    if (v.dtype() != x->type.dtype)
      ctx.fail("constant_value ", v.typeStr(), " differs from the data type ", x->type.str());
    attrs.emplace_back("value", Attribute(v.getDouble(0)));
  }
  ctx.emit(OpKind::Pad, operands, attrs, nodeOutputs(ctx));
}

// Resize-10 and Upsample: scales only, the source coordinate is
// output / scale (asymmetric); nearest rounds down when upsampling and up
// when downsampling (what ONNX Runtime does for these forms).
void emitLegacyResize(NodeContext &ctx, const std::string &mode, std::vector<double> scales);

// The same with scales computed at run time (the Resize takes them as its
// run-time attribute operand). Nearest rounds down, which is right only
// when no axis downsamples: Upsample's scales must be >= 1 (ONNX), and
// Resize-10 in nearest mode keeps needing constant scales.
void emitLegacyResize(NodeContext &ctx, const std::string &mode, Value *scales) {
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    ctx.fail("unsupported mode '", mode, "'");
  AttrList attrs{{"coordinate_transformation_mode", Attribute(std::string("asymmetric"))},
                 {"mode", Attribute(std::string(mode == "nearest" ? "nearest" : "linear"))}};
  if (mode == "nearest")
    attrs.emplace_back("nearest_mode", Attribute(std::string("floor")));
  ctx.emit(OpKind::Resize, {ctx.input(0), nullptr, scales}, attrs, nodeOutputs(ctx));
}

void emitLegacyResize(NodeContext &ctx, const std::string &mode, std::vector<double> scales) {
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    ctx.fail("unsupported mode '", mode, "'");
  bool up = false, down = false;
  for (double s : scales) {
    up |= s > 1;
    down |= s < 1;
  }
  if (mode == "nearest" && up && down)
    ctx.fail("nearest mode upsampling some axes and downsampling others is not supported at "
             "opset ",
             ctx.opset(), " (it rounds differently per axis)");
  AttrList attrs{{"coordinate_transformation_mode", Attribute(std::string("asymmetric"))},
                 {"mode", Attribute(std::string(mode == "nearest" ? "nearest" : "linear"))},
                 {"scales", Attribute(std::move(scales))}};
  if (mode == "nearest")
    attrs.emplace_back("nearest_mode", Attribute(std::string(down ? "ceil" : "floor")));
  ctx.emit(OpKind::Resize, {ctx.input(0)}, attrs, nodeOutputs(ctx));
}

std::string modeAttr(const NodeContext &ctx) {
  const AttributeProto *m = findNodeAttr(ctx, "mode");
  return m ? convertAttribute(ctx, *m, AttrKind::String).s() : "nearest";
}

void rejectAttrsBut(const NodeContext &ctx, std::initializer_list<std::string_view> allowed) {
  for (const AttributeProto &a : ctx.node().attribute())
    if (std::find(allowed.begin(), allowed.end(), a.name()) == allowed.end())
      ctx.fail("unsupported attribute ", quoteName(a.name()), " (opset ", ctx.opset(), ")");
}

// Upsample (deprecated): scales attribute before opset 9, an input from 9.
void convertUpsample(NodeContext &ctx) {
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    expectInputs(ctx, 1, 1);
    rejectAttrsBut(ctx, {"mode", "scales"});
    const AttributeProto *s = findNodeAttr(ctx, "scales");
    if (!s)
      ctx.fail("missing attribute 'scales'");
    // Exact f32 values (ONNX text syntax writes whole numbers as ints).
    if (s->type() == AttributeProto::INTS)
      for (int64_t i : s->ints())
        scales.push_back(double(i));
    else if (s->type() == AttributeProto::FLOATS)
      for (float f : s->floats())
        scales.push_back(double(f));
    else
      ctx.fail("attribute 'scales' must be floats");
  } else {
    expectInputs(ctx, 2, 2);
    rejectAttrsBut(ctx, {"mode"});
    if (Value *v = runtimeInput(ctx, 1)) // ONNX: every scale is >= 1
      return emitLegacyResize(ctx, modeAttr(ctx), v);
    scales = constantFloats(ctx, 1, "scales");
  }
  emitLegacyResize(ctx, modeAttr(ctx), scales);
}

// Resize: opset 10 takes (X, scales); from 11 (X, roi, scales, sizes) with
// roi and scales optional from 13; opset 18 adds axes, antialias and
// keep_aspect_ratio_policy.
void convertResize(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Resize);
  if (ctx.opset() < 11) {
    expectInputs(ctx, 2, 2);
    rejectAttrsBut(ctx, {"mode"});
    // Computed scales: linear only (nearest rounds by whether an axis
    // downsamples, which is not known before run time).
    Value *v = runtimeInput(ctx, 1);
    if (v && modeAttr(ctx) != "nearest")
      return emitLegacyResize(ctx, modeAttr(ctx), v);
    emitLegacyResize(ctx, modeAttr(ctx), constantFloats(ctx, 1, "scales"));
    return;
  }
  expectInputs(ctx, 1, 4);
  rejectAttrs(ctx, {"roi", "scales", "sizes"}, "inputs in ONNX");
  if (ctx.opset() < 18)
    rejectAttrs(ctx, {"antialias", "axes", "keep_aspect_ratio_policy"}, "new in opset 18");
  AttrList attrs = collectNodeAttrs(ctx, info);
  bool hasScales = !absentOrEmpty(ctx, 2), hasSizes = !absentOrEmpty(ctx, 3);
  if (hasScales == hasSizes)
    ctx.fail("exactly one of the inputs scales and sizes must be given (non-empty)");
  // Computed roi, scales or sizes become run-time attribute operands.
  std::vector<Value *> operands{ctx.input(0), nullptr, nullptr, nullptr};
  size_t which = hasScales ? 2 : 3;
  if (Value *v = runtimeInput(ctx, which))
    operands[which] = v;
  else if (hasScales)
    attrs.emplace_back("scales", Attribute(constantFloats(ctx, 2, "scales")));
  else
    attrs.emplace_back("sizes", Attribute(constantInts(ctx, 3, "sizes")));
  // roi only matters to tf_crop_and_resize; elsewhere it is dropped.
  const AttributeProto *coord = findNodeAttr(ctx, "coordinate_transformation_mode");
  if (coord && coord->s() == "tf_crop_and_resize") {
    if (absentOrEmpty(ctx, 1))
      ctx.fail("tf_crop_and_resize needs the roi input");
    if (Value *v = runtimeInput(ctx, 1))
      operands[1] = v;
    else
      attrs.emplace_back("roi", Attribute(constantFloats(ctx, 1, "roi")));
  }
  while (!operands.back())
    operands.pop_back();
  ctx.emit(OpKind::Resize, operands, attrs, nodeOutputs(ctx));
}

// ---- Pooling and normalization -------------------------------------------------

// MaxPool: the Indices output (opset 8+) is computed only when read.
void convertMaxPool(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::MaxPool);
  expectInputs(ctx, 1, 1);
  ctx.emit(OpKind::MaxPool, {ctx.input(0)}, collectNodeAttrs(ctx, info), usedOutputs(ctx));
}

// LayerNormalization: Mean and InvStdDev are computed only when read.
void convertLayerNorm(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::LayerNormalization);
  expectInputs(ctx, 2, 3);
  ctx.emit(OpKind::LayerNormalization, nodeInputs(ctx), collectNodeAttrs(ctx, info),
           usedOutputs(ctx));
}

// BatchNormalization in inference mode. Opset < 7 is_test and opset < 9
// spatial (0: per-activation statistics, which the IR takes as parameters
// shaped like X after N) are read; momentum only matters in training;
// training_mode = 1 (14+) imports as BatchNormalizationTraining; otherwise
// the running statistics outputs must be unread.
void convertBatchNorm(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::BatchNormalization);
  expectInputs(ctx, 5, 5);
  if (ctx.opset() >= 7)
    rejectAttrs(ctx, {"is_test"}, "removed in opset 7");
  if (ctx.opset() >= 9)
    rejectAttrs(ctx, {"spatial"}, "removed in opset 9");
  if (ctx.opset() < 14)
    rejectAttrs(ctx, {"training_mode"}, "new in opset 14");
  int64_t training = ctx.opset() >= 14 ? intAttr(ctx, "training_mode", 0) : 0;
  if (training != 0 && training != 1)
    ctx.fail("training_mode must be 0 or 1, got ", training);
  if (training) {
    // Opset 14+: Y, running_mean, running_var (optional).
    const OpInfo &tinfo = opInfo(OpKind::BatchNormalizationTraining);
    std::vector<std::string> outs = nodeOutputs(ctx);
    if (outs.size() > 3)
      ctx.fail("expects at most 3 outputs in training mode, got ", outs.size());
    outs.resize(3);
    ctx.emit(OpKind::BatchNormalizationTraining, nodeInputs(ctx),
             collectNodeAttrs(ctx, tinfo, {"training_mode"}), outs);
    return;
  }
  AttrList attrs = collectNodeAttrs(ctx, info, {"momentum", "is_test", "spatial", "training_mode"});
  Value *x = ctx.input(0);
  if (ctx.opset() < 9 && intAttr(ctx, "spatial", 1) == 0 && x) {
    // Per-activation parameters must be shaped like X after N.
    Shape want(x->type.shape.begin() + (x->type.rank() ? 1 : 0), x->type.shape.end());
    for (size_t i = 1; i < 5; ++i)
      if (Value *p = ctx.input(i); p && p->type.rank() != want.size())
        ctx.fail("spatial = 0 needs parameters shaped like X after N, got ", p->type.str());
  }
  std::vector<std::string> outs = nodeOutputs(ctx);
  for (size_t i = 1; i < outs.size(); ++i)
    if (ctx.outputUsed(i))
      ctx.fail("output ", i, " (", quoteName(outs[i]),
               ") is used; only inference BatchNormalization, without the training "
               "statistics outputs, is supported");
  outs.resize(1);
  ctx.emit(OpKind::BatchNormalization, nodeInputs(ctx), attrs, outs);
}

// GroupNormalization: opset 18 has one scale and bias per group, 21 one per
// channel (the IR's form): per-group values are repeated by ops (a Reshape,
// an Expand), not folded into a copy, so a train step trains the ONNX
// initializer itself (inference folds them: fold-constants).
void convertGroupNorm(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::GroupNormalization);
  expectInputs(ctx, 3, 3);
  if (ctx.opset() >= 21) {
    ctx.emit(OpKind::GroupNormalization, nodeInputs(ctx), collectNodeAttrs(ctx, info),
             nodeOutputs(ctx));
    return;
  }
  rejectAttrs(ctx, {"stash_type"}, "new in opset 21");
  AttrList attrs = collectNodeAttrs(ctx, info);
  Value *x = ctx.input(0);
  int64_t g = intAttr(ctx, "num_groups", 0);
  if (x->type.rank() < 2 || !x->type.shape[1].isStatic())
    ctx.fail("opset ", ctx.opset(), " GroupNormalization needs a static channel count, got ",
             x->type.str());
  int64_t c = x->type.shape[1].size;
  if (g < 1 || c % g != 0)
    ctx.fail("num_groups ", g, " does not divide the ", c, " channels");
  auto shape = [&](const std::vector<int64_t> &d) { return intsConstant(ctx, "shape", d); };
  std::vector<Value *> operands{x};
  for (size_t i = 1; i < 3; ++i) {
    const char *what = i == 1 ? "scale" : "bias";
    Value *p = ctx.input(i);
    if (p->type.rank() != 1 || !isFloat(p->type.dtype) || p->type.shape[0] != Dim::fixed(g))
      ctx.fail(what, " must be a 1-D float tensor of num_groups (", g, ") values at opset ",
               ctx.opset(), ", got ", p->type.str());
    Value *col = ctx.emit(OpKind::Reshape, {p, shape({g, 1})}, {}, {""})->result();
    Value *wide = ctx.emit(OpKind::Expand, {col, shape({g, c / g})}, {}, {""})->result();
    operands.push_back(ctx.emit(OpKind::Reshape, {wide, shape({c})}, {}, {""})->result());
  }
  ctx.emit(OpKind::GroupNormalization, operands, attrs, nodeOutputs(ctx));
}

// RMSNormalization (opset 23) has no IR op: it becomes the ops PyTorch
// exports for RMSNorm, x / sqrt(mean(x^2) + epsilon) over the axes from
// `axis` on, in stash_type (f32 unless f64), cast to scale's type, times
// scale. Those ops fuse like any pointwise-and-reduction chain and have
// gradient rules, so a train step goes through it too.
void convertRMSNorm(NodeContext &ctx) {
  expectInputs(ctx, 2, 2);
  Value *x = ctx.input(0), *scale = ctx.input(1);
  if (!isFloat(x->type.dtype) || !isFloat(scale->type.dtype))
    ctx.fail("X and scale must be float tensors, got ", x->type.str(), " and ", scale->type.str());
  int64_t r = int64_t(x->type.rank()), axis = intAttr(ctx, "axis", -1);
  if (axis < -r || axis >= r)
    ctx.fail("axis ", axis, " is out of range for rank ", r);
  if (axis < 0)
    axis += r;
  const onnx::AttributeProto *epsAttr = findNodeAttr(ctx, "epsilon");
  double eps = epsAttr ? double(epsAttr->f()) : 1e-5;
  std::optional<DType> stash = dtypeFromOnnx(int(intAttr(ctx, "stash_type", 1)));
  if (!stash || (*stash != DType::F32 && *stash != DType::F64))
    ctx.fail("stash_type must be float or double");
  auto one = [&](OpKind k, std::vector<Value *> ins, AttrList attrs = {}) {
    return ctx.emit(k, std::move(ins), attrs, {""})->result();
  };
  auto castTo = [&](Value *v, DType t) {
    return v->type.dtype == t ? v : one(OpKind::Cast, {v}, {{"to", Attribute(t)}});
  };
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < r; ++a)
    axes.push_back(a);
  Value *xs = castTo(x, *stash);
  Value *ms = one(OpKind::ReduceMean, {one(OpKind::Mul, {xs, xs})},
                  {{"axes", Attribute(axes)}, {"keepdims", Attribute(int64_t(1))}});
  HostTensor e(*stash, {});
  e.setDouble(0, eps);
  Value *epsC = ctx.helperConstant(ctx.nodeName() + "_epsilon", e.type(),
                                   TensorData::copyOf(e.bytes(), e.byteSize()));
  Value *inv = one(OpKind::Reciprocal, {one(OpKind::Sqrt, {one(OpKind::Add, {ms, epsC})})});
  Value *normed = castTo(one(OpKind::Mul, {xs, inv}), scale->type.dtype);
  ctx.emit(OpKind::Mul, {normed, scale}, {}, nodeOutputs(ctx));
}

// GridSample: opset 16 spells the modes bilinear and bicubic (default
// bilinear), opset 20 linear and cubic, the IR's spelling.
void convertGridSample(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::GridSample);
  expectInputs(ctx, 2, 2);
  AttrList attrs = collectNodeAttrs(ctx, info);
  for (auto &[name, value] : attrs) {
    if (name != "mode" || ctx.opset() >= 20)
      continue;
    const std::string &m = value.s();
    if (m != "bilinear" && m != "bicubic" && m != "nearest")
      ctx.fail("unknown mode '", printable(m), "' at opset ", ctx.opset(),
               " (bilinear, bicubic or nearest)");
    value = Attribute(std::string(m == "bilinear" ? "linear" : m == "bicubic" ? "cubic" : m));
  }
  ctx.emit(OpKind::GridSample, nodeInputs(ctx), attrs, nodeOutputs(ctx));
}

// RoiAlign: before opset 16 there is no coordinate_transformation_mode and
// the regions are not shifted by half a pixel (output_half_pixel).
void convertRoiAlign(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::RoiAlign);
  expectInputs(ctx, 3, 3);
  if (ctx.opset() < 16)
    rejectAttrs(ctx, {"coordinate_transformation_mode"}, "new in opset 16");
  AttrList attrs = collectNodeAttrs(ctx, info);
  if (ctx.opset() < 16)
    attrs.emplace_back("coordinate_transformation_mode",
                       Attribute(std::string("output_half_pixel")));
  ctx.emit(OpKind::RoiAlign, nodeInputs(ctx), attrs, nodeOutputs(ctx));
}

struct NNConverter {
  std::string_view opType;
  ConvertFn convert;
};

constexpr NNConverter kNNConverters[] = {
    {"ReduceSum", convertReduce},
    {"ReduceMean", convertReduce},
    {"ReduceMax", convertReduce},
    {"ReduceMin", convertReduce},
    {"ReduceProd", convertReduce},
    {"ReduceL1", convertReduce},
    {"ReduceL2", convertReduce},
    {"ReduceLogSum", convertReduce},
    {"ReduceLogSumExp", convertReduce},
    {"ReduceSumSquare", convertReduce},
    {"CumSum", convertCumSum},
    {"TopK", convertTopK},
    {"Pad", convertPad},
    {"Resize", convertResize},
    {"Upsample", convertUpsample},
    {"MaxPool", convertMaxPool},
    {"LayerNormalization", convertLayerNorm},
    {"BatchNormalization", convertBatchNorm},
    {"GroupNormalization", convertGroupNorm},
    {"RMSNormalization", convertRMSNorm},
    {"GridSample", convertGridSample},
    {"RoiAlign", convertRoiAlign},
};

} // namespace

ConvertFn findNNOpConverter(std::string_view opType) {
  for (const NNConverter &c : kNNConverters)
    if (c.opType == opType)
      return c.convert;
  return nullptr;
}

} // namespace tc::onnximport
