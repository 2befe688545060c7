// Converters of elementwise and shape/data-movement ops whose ONNX form
// changed across opsets. The IR keeps one form per op: values that ONNX
// moved from attributes to inputs are attributes in the IR when they must be
// known at compile time (Squeeze/Unsqueeze axes, Split sizes), so a constant
// input becomes an attribute and a computed one is an error; values that can
// legitimately be computed at run time (Slice starts/ends, Clip bounds) are
// operands, and the legacy attributes become constant operands.
#include "OnnxOps.h"
#include "tc/Runtime/HostTensor.h"
#include <cfloat>
#include <charconv>
#include <cmath>

namespace tc::onnximport {

namespace {

using onnx::AttributeProto;

// The values of input `i`, which tc needs at compile time: a 0-D or 1-D
// i32/i64 constant (an initializer, a Constant node, or a folded
// subgraph).
std::vector<int64_t> constantInput(const NodeContext &ctx, size_t i, const char *what) {
  Value *v = ctx.input(i);
  const TensorType &t = v->type;
  if (t.rank() > 1 || (t.dtype != DType::I64 && t.dtype != DType::I32))
    ctx.fail("input '", what, "' must be a 1-D i64 tensor, got ", t.str());
  if (!v->isConstant())
    ctx.fail("input '", what, "' (", quoteName(ctx.node().input(int(i))),
             ") must be a constant: tc needs it at compile time, but it is computed at run time");
  auto n = staticNumElements(t.shape);
  HostTensor h = HostTensor::fromBytes(t.dtype, staticDims(t.shape), v->data->ptr, v->data->size);
  std::vector<int64_t> r;
  for (int64_t k = 0; k < *n; ++k)
    r.push_back(h.getInt(k));
  return r;
}

void rejectAttrSince(const NodeContext &ctx, const char *attr, int opset) {
  if (ctx.opset() >= opset && findNodeAttr(ctx, attr))
    ctx.fail("unsupported attribute '", attr, "' (an input since opset ", opset, ")");
}

Value *scalarConstant(NodeContext &ctx, const char *what, DType dt, double value) {
  HostTensor h(dt, {});
  h.setDouble(0, value);
  return ctx.helperConstant(ctx.nodeName() + "_" + what, TensorType{dt, {}},
                            TensorData::copyOf(h.bytes(), h.byteSize()));
}

// Squeeze and Unsqueeze: axes attribute before opset 13, input from 13.
void convertAxesOp(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  rejectAttrSince(ctx, "axes", 13);
  AttrList attrs = collectNodeAttrs(ctx, info);
  std::vector<Value *> operands{ctx.input(0)};
  if (ctx.opset() >= 13) {
    expectInputs(ctx, 1, 2);
    if (Value *axes = runtimeInput(ctx, 1))
      operands.push_back(axes); // a run-time attribute operand (Ops.def)
    else if (ctx.input(1))
      attrs.emplace_back("axes", Attribute(constantInput(ctx, 1, "axes")));
  } else {
    expectInputs(ctx, 1, 1);
  }
  if (info.kind == OpKind::Unsqueeze && operands.size() == 1 &&
      std::none_of(attrs.begin(), attrs.end(), [](auto &a) { return a.first == "axes"; }))
    ctx.fail(ctx.opset() >= 13 ? "input 'axes' is required" : "missing attribute 'axes'");
  ctx.emit(info.kind, operands, attrs, nodeOutputs(ctx));
}

// Split: `split` attribute before opset 13, input from 13; num_outputs from
// 18 (parts of ceil(dim / n), the last smaller). Before 18 equal parts must
// divide the axis.
void convertSplit(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Split);
  rejectAttrSince(ctx, "split", 13);
  if (ctx.opset() < 18 && findNodeAttr(ctx, "num_outputs"))
    ctx.fail("unsupported attribute 'num_outputs' (new in opset 18)");
  AttrList attrs = collectNodeAttrs(ctx, info, {"num_outputs"});
  size_t numOutputs = size_t(ctx.node().output_size());
  if (numOutputs == 0)
    ctx.fail("has no outputs");
  bool hasSplit = findNodeAttr(ctx, "split");
  Value *runtimeSplit = nullptr; // a run-time attribute operand (Ops.def)
  if (ctx.opset() >= 13) {
    expectInputs(ctx, 1, 2);
    if ((runtimeSplit = runtimeInput(ctx, 1))) {
      hasSplit = true;
    } else if (ctx.input(1)) {
      attrs.emplace_back("split", Attribute(constantInput(ctx, 1, "split")));
      hasSplit = true;
    }
  } else {
    expectInputs(ctx, 1, 1);
  }
  if (const AttributeProto *n = findNodeAttr(ctx, "num_outputs")) {
    int64_t k = convertAttribute(ctx, *n, AttrKind::Int).i();
    if (hasSplit)
      ctx.fail("takes either the 'split' input or 'num_outputs', not both");
    if (k != int64_t(numOutputs))
      ctx.fail("num_outputs is ", k, " but the node has ", numOutputs, " outputs");
  }
  Value *x = ctx.input(0);
  if (!hasSplit && ctx.opset() < 18 && x) {
    int64_t axis = 0;
    if (const AttributeProto *a = findNodeAttr(ctx, "axis"))
      axis = convertAttribute(ctx, *a, AttrKind::Int).i();
    int64_t r = int64_t(x->type.rank());
    if (axis >= -r && axis < r) {
      const Dim &d = x->type.shape[axis < 0 ? axis + r : axis];
      if (d.isStatic() && d.size % int64_t(numOutputs) != 0)
        ctx.fail("axis ", axis, " of size ", d.size, " does not split into ", numOutputs,
                 " equal parts (uneven parts need opset 18)");
    }
  }
  std::vector<Value *> operands{x};
  if (runtimeSplit)
    operands.push_back(runtimeSplit);
  ctx.emit(OpKind::Split, operands, attrs, nodeOutputs(ctx));
}

// Slice: starts/ends/axes attributes before opset 10, inputs from 10.
void convertSlice(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Slice);
  if (ctx.opset() >= 10) {
    ctx.emit(OpKind::Slice, nodeInputs(ctx), collectNodeAttrs(ctx, info), nodeOutputs(ctx));
    return;
  }
  collectNodeAttrs(ctx, info, {"starts", "ends", "axes"}); // rejects others
  expectInputs(ctx, 1, 1);
  auto ints = [&](const char *name, bool required) -> std::optional<std::vector<int64_t>> {
    const AttributeProto *a = findNodeAttr(ctx, name);
    if (!a) {
      if (required)
        ctx.fail("missing attribute '", name, "' (opset ", ctx.opset(), ")");
      return std::nullopt;
    }
    return convertAttribute(ctx, *a, AttrKind::Ints).ints();
  };
  std::vector<Value *> ops{ctx.input(0), intsConstant(ctx, "starts", *ints("starts", true)),
                           intsConstant(ctx, "ends", *ints("ends", true))};
  if (auto axes = ints("axes", false))
    ops.push_back(intsConstant(ctx, "axes", *axes));
  ctx.emit(OpKind::Slice, ops, {}, nodeOutputs(ctx));
}

// Clip: min/max attributes before opset 11 (from opset 6 defaulting to the
// f32 range), optional inputs from 11.
void convertClip(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Clip);
  if (ctx.opset() >= 11) {
    ctx.emit(OpKind::Clip, nodeInputs(ctx), collectNodeAttrs(ctx, info), nodeOutputs(ctx));
    return;
  }
  collectNodeAttrs(ctx, info, {"min", "max"});
  expectInputs(ctx, 1, 1);
  Value *x = ctx.input(0);
  if (!x)
    ctx.fail("input 0 (input) is required");
  std::vector<Value *> ops{x};
  for (const char *name : {"min", "max"}) {
    const AttributeProto *a = findNodeAttr(ctx, name);
    if (!a && ctx.opset() < 6) {
      ops.push_back(nullptr);
      continue;
    }
    double v = a ? convertAttribute(ctx, *a, AttrKind::Float).f()
                 : double(name[1] == 'i' ? -FLT_MAX : FLT_MAX);
    ops.push_back(scalarConstant(ctx, name, x->type.dtype, v));
  }
  ctx.emit(OpKind::Clip, ops, {}, nodeOutputs(ctx));
}

// ConstantOfShape: the `value` tensor attribute (one element, default f32
// 0) becomes the dtype and value attributes.
void convertConstantOfShape(NodeContext &ctx) {
  AttrList attrs;
  for (const AttributeProto &a : ctx.node().attribute()) {
    if (a.name() != "value")
      ctx.fail("unsupported attribute ", quoteName(a.name()));
    if (a.type() != AttributeProto::TENSOR && !a.has_t())
      ctx.fail("attribute 'value' must be a tensor");
    TensorType type;
    TensorData data = ctx.loadTensor(a.t(), type, "attribute 'value'");
    if (staticNumElements(type.shape) != 1)
      ctx.fail("attribute 'value' must have one element, got ", type.str());
    HostTensor h = HostTensor::fromBytes(type.dtype, {}, data.ptr, data.size);
    double v = h.getDouble(0);
    if (type.dtype == DType::F32 || type.dtype == DType::F16 || type.dtype == DType::BF16)
      v = widenFloat(float(v));
    // The IR holds the value as a double: integers must survive that.
    bool exact = true;
    if (type.dtype == DType::I64)
      exact = v >= -0x1p63 && v < 0x1p63 && int64_t(v) == h.getInt(0);
    else if (type.dtype == DType::U64)
      exact = v < 0x1p64 && uint64_t(v) == uint64_t(h.getInt(0));
    if (!exact)
      ctx.fail("attribute 'value' ",
               type.dtype == DType::I64 ? std::to_string(h.getInt(0))
                                        : std::to_string(uint64_t(h.getInt(0))),
               " cannot be represented exactly (tc keeps fill values as doubles)");
    attrs.emplace_back("dtype", Attribute(type.dtype));
    attrs.emplace_back("value", Attribute(v));
  }
  ctx.emit(OpKind::ConstantOfShape, nodeInputs(ctx), attrs, nodeOutputs(ctx));
}

// EyeLike: an absent dtype means the input's.
void convertEyeLike(NodeContext &ctx) {
  AttrList attrs = collectNodeAttrs(ctx, opInfo(OpKind::EyeLike));
  Value *x = ctx.input(0);
  if (x && std::none_of(attrs.begin(), attrs.end(), [](auto &a) { return a.first == "dtype"; }))
    attrs.emplace_back("dtype", Attribute(x->type.dtype));
  ctx.emit(OpKind::EyeLike, nodeInputs(ctx), attrs, nodeOutputs(ctx));
}

// Scatter (opsets 9-10, deprecated since 11) is ScatterElements without
// reduction.
void convertScatter(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::ScatterElements);
  ctx.emit(OpKind::ScatterElements, nodeInputs(ctx), collectNodeAttrs(ctx, info, {}),
           nodeOutputs(ctx));
}

// Compress and Unique: the optional int `axis` is an Ints attribute in the IR
// ([] when absent: the flattened input); Unique's results are all four.
void convertOptionalAxisOp(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  AttrList attrs = collectNodeAttrs(ctx, info, {"axis"});
  if (const onnx::AttributeProto *a = findNodeAttr(ctx, "axis"))
    attrs.emplace_back(
        "axis", Attribute(std::vector<int64_t>{convertAttribute(ctx, *a, AttrKind::Int).i()}));
  std::vector<std::string> outs = nodeOutputs(ctx);
  if (info.numResults > 0 && outs.size() < size_t(info.numResults))
    outs.resize(size_t(info.numResults));
  ctx.emit(info.kind, nodeInputs(ctx), attrs, outs);
}

struct TensorConverter {
  std::string_view opType;
  ConvertFn convert;
};

constexpr TensorConverter kTensorConverters[] = {
    {"Squeeze", convertAxesOp},
    {"Unsqueeze", convertAxesOp},
    {"Split", convertSplit},
    {"Slice", convertSlice},
    {"Clip", convertClip},
    {"ConstantOfShape", convertConstantOfShape},
    {"EyeLike", convertEyeLike},
    {"Scatter", convertScatter},
    {"Compress", convertOptionalAxisOp},
    {"Unique", convertOptionalAxisOp},
};

} // namespace

Value *intsConstant(NodeContext &ctx, const std::string &what, const std::vector<int64_t> &v) {
  return ctx.helperConstant(ctx.nodeName() + "_" + what,
                            TensorType{DType::I64, {Dim::fixed(int64_t(v.size()))}},
                            TensorData::copyOf(v.data(), v.size() * sizeof(int64_t)));
}

ConvertFn findTensorOpConverter(std::string_view opType) {
  for (const TensorConverter &c : kTensorConverters)
    if (c.opType == opType)
      return c.convert;
  return nullptr;
}

} // namespace tc::onnximport
