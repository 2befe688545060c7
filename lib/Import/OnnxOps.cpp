// The per-op import table: which ONNX op types tc imports and how. Every op
// of Ops.def imports through convertGeneric (ONNX op type == IR op name,
// inputs map 1:1 to operands, attributes convert to the declared kind); the
// table below lists only the ops that need more than that.
#include "OnnxOps.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>

namespace tc::onnximport {

namespace {

using onnx::AttributeProto;

// Attributes of older opsets that later ones dropped and that do not change
// what a valid model computes at inference time: skipped, not rejected.
struct LegacyAttr {
  std::string_view opType; // "*": any op
  std::string_view attr;
  int beforeOpset; // skipped only when the model's opset is below this
};
constexpr LegacyAttr kLegacyAttrs[] = {
    // Opset 1 memory-reuse hint, meaningless to a compiler.
    {"*", "consumed_inputs", 6},
    // Opset < 7 explicit-broadcast flag (Add, Mul, Gemm, ...): a valid model
    // using it computes the same under the numpy broadcasting the IR uses.
    // The companion `axis` attribute changes semantics: legacyBroadcast().
    {"*", "broadcast", 7},
};

bool isLegacyAttr(std::string_view opType, std::string_view attr, int opset) {
  return std::any_of(std::begin(kLegacyAttrs), std::end(kLegacyAttrs), [&](const LegacyAttr &l) {
    return (l.opType == "*" || l.opType == opType) && l.attr == attr && opset < l.beforeOpset;
  });
}

const char *attrTypeName(int t) {
  switch (t) {
  case AttributeProto::FLOAT: return "float";
  case AttributeProto::INT: return "int";
  case AttributeProto::STRING: return "string";
  case AttributeProto::TENSOR: return "tensor";
  case AttributeProto::GRAPH: return "graph";
  case AttributeProto::SPARSE_TENSOR: return "sparse tensor";
  case AttributeProto::TYPE_PROTO: return "type";
  case AttributeProto::FLOATS: return "floats";
  case AttributeProto::INTS: return "ints";
  case AttributeProto::STRINGS: return "strings";
  case AttributeProto::TENSORS: return "tensors";
  case AttributeProto::GRAPHS: return "graphs";
  case AttributeProto::SPARSE_TENSORS: return "sparse tensors";
  case AttributeProto::TYPE_PROTOS: return "types";
  default: return "undefined";
  }
}

// IR version 1 models may leave AttributeProto.type unset; the field that
// holds the data says what it is.
int effectiveType(const AttributeProto &a) {
  if (a.type() != AttributeProto::UNDEFINED)
    return a.type();
  if (a.has_f())
    return AttributeProto::FLOAT;
  if (a.has_i())
    return AttributeProto::INT;
  if (a.has_s())
    return AttributeProto::STRING;
  if (a.has_t())
    return AttributeProto::TENSOR;
  if (a.has_g())
    return AttributeProto::GRAPH;
  if (a.floats_size())
    return AttributeProto::FLOATS;
  if (a.ints_size())
    return AttributeProto::INTS;
  if (a.strings_size())
    return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

// ---- Generic conversion ------------------------------------------------------

// The node's attributes converted to the kinds `info` declares. Unknown
// attributes are an error unless legacy-harmless or listed in `skip` (those a
// converter reads itself).
// Attributes tc's passes set that ONNX does not have: a model may not set
// them (channels_last on Conv, ConvTranspose or a pool would reinterpret the data's layout;
// gemm-views' transA/transB/alpha on MatMul its operands and product;
// lower-quantize's exact on Conv would promise integer operands).
bool isCompilerAttr(std::string_view opType, std::string_view name) {
  if (opType == "MatMul")
    return name == "transA" || name == "transB" || name == "alpha";
  if (opType == "Conv" && name == "exact")
    return true;
  return name == "channels_last" &&
         (opType == "Conv" || opType == "ConvTranspose" || opType == "MaxPool" ||
          opType == "AveragePool" || opType == "LpPool");
}

AttrList collectAttrs(const NodeContext &ctx, const OpInfo &info,
                      std::initializer_list<std::string_view> skip = {}) {
  AttrList out;
  const onnx::NodeProto &n = ctx.node();
  for (int i = 0; i < n.attribute_size(); ++i) {
    const AttributeProto &a = n.attribute(i);
    for (int j = 0; j < i; ++j)
      if (n.attribute(j).name() == a.name())
        ctx.fail("attribute ", quoteName(a.name()), " given twice");
    if (std::find(skip.begin(), skip.end(), a.name()) != skip.end())
      continue;
    const AttrSpec *spec = info.findAttr(a.name());
    if (spec && !isCompilerAttr(n.op_type(), a.name())) {
      out.emplace_back(a.name(), convertAttribute(ctx, a, spec->kind));
      continue;
    }
    if (isLegacyAttr(n.op_type(), a.name(), ctx.opset()))
      continue;
    ctx.fail("unsupported attribute ", quoteName(a.name()));
  }
  return out;
}

const AttributeProto *findAttr(const NodeContext &ctx, std::string_view name) {
  for (const AttributeProto &a : ctx.node().attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::vector<Value *> inputs(const NodeContext &ctx) {
  std::vector<Value *> v;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    v.push_back(ctx.input(i));
  return v;
}

std::vector<std::string> outputs(const NodeContext &ctx) {
  return {ctx.node().output().begin(), ctx.node().output().end()};
}

// Opset < 7 broadcasts numpy's rule does not cover, made numpy's by an
// Unsqueeze of the second operand with trailing 1s: a binary op's
// `broadcast` = 1 with `axis` (B's dims line up with A's from `axis`), and
// PRelu-6's slope of A's channel count (per channel, axis 1). Returns
// whether the node's `axis` was one of these (not an attribute of the op).
bool legacyBroadcast(NodeContext &ctx, std::vector<Value *> &in) {
  const AttributeProto *bcast = findAttr(ctx, "broadcast"), *axisAttr = findAttr(ctx, "axis");
  bool prelu = ctx.node().op_type() == "PRelu";
  if (ctx.opset() >= 7 || in.size() != 2 || !in[0] || !in[1] ||
      !(prelu || (bcast && bcast->i() == 1 && axisAttr)))
    return false;
  const Shape &a = in[0]->type.shape, &b = in[1]->type.shape;
  int64_t axis = prelu ? 1 : axisAttr->i();
  if (prelu &&
      !(b.size() == 1 && a.size() >= 2 && b[0].isStatic() && b[0].size != 1 && a[1] == b[0]))
    return false;
  if (axis < 0)
    axis += int64_t(a.size());
  if (axis < 0 || axis + int64_t(b.size()) > int64_t(a.size()))
    ctx.fail("legacy broadcast of ", in[1]->type.str(), " into ", in[0]->type.str(), " at axis ",
             axis);
  std::vector<int64_t> trailing; // B's rank up to A's from `axis`: axes past B's own
  for (int64_t d = int64_t(b.size()); d < int64_t(a.size()) - axis; ++d)
    trailing.push_back(d);
  if (!trailing.empty())
    in[1] =
        ctx.emit(OpKind::Unsqueeze, {in[1], intsConstant(ctx, "legacy_axes", trailing)}, {}, {""})
            ->result();
  return !prelu;
}

void convertGeneric(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  std::vector<Value *> in = inputs(ctx);
  if (legacyBroadcast(ctx, in)) {
    ctx.emit(info.kind, in, collectAttrs(ctx, info, {"axis"}), outputs(ctx));
    return;
  }
  ctx.emit(info.kind, in, collectAttrs(ctx, info), outputs(ctx));
}

// ---- Special cases -------------------------------------------------------------

// Constant node → a constant value (no op).
void convertConstant(NodeContext &ctx) {
  const onnx::NodeProto &n = ctx.node();
  if (n.input_size() != 0)
    ctx.fail("takes no inputs, got ", n.input_size());
  if (n.output_size() < 1 || n.output(0).empty())
    ctx.fail("has no output");
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty())
      ctx.fail("has one output, got ", n.output_size());
  if (n.attribute_size() != 1)
    ctx.fail("expects exactly one value attribute, got ", n.attribute_size());
  const AttributeProto &a = n.attribute(0);
  int t = effectiveType(a);
  auto expect = [&](int want) {
    if (t != want)
      ctx.fail("attribute ", quoteName(a.name()), " must be ", attrTypeName(want), ", got ",
               attrTypeName(t));
  };
  TensorType type;
  TensorData data;
  auto fromVector = [&](DType dt, Shape shape, const auto &values, auto convert) {
    std::vector<uint8_t> bytes(values.size() * dtypeSize(dt));
    for (size_t i = 0; i < size_t(values.size()); ++i) {
      auto x = convert(values[int(i)]);
      std::memcpy(bytes.data() + i * sizeof x, &x, sizeof x);
    }
    type = TensorType{dt, std::move(shape)};
    data = TensorData::fromVector(std::move(bytes));
  };
  auto f32 = [](float x) { return x; };
  auto i64 = [](int64_t x) { return x; };
  const std::string &name = a.name();
  if (name == "value") {
    expect(AttributeProto::TENSOR);
    data = ctx.loadTensor(a.t(), type, "attribute 'value'");
  } else if (name == "value_float") {
    expect(AttributeProto::FLOAT);
    fromVector(DType::F32, {}, std::vector<float>{a.f()}, f32);
  } else if (name == "value_floats") {
    expect(AttributeProto::FLOATS);
    fromVector(DType::F32, {Dim::fixed(a.floats_size())}, a.floats(), f32);
  } else if (name == "value_int") {
    expect(AttributeProto::INT);
    fromVector(DType::I64, {}, std::vector<int64_t>{a.i()}, i64);
  } else if (name == "value_ints") {
    expect(AttributeProto::INTS);
    fromVector(DType::I64, {Dim::fixed(a.ints_size())}, a.ints(), i64);
  } else {
    // value_string(s) and sparse_value: no IR element type / representation.
    ctx.fail("unsupported attribute ", quoteName(name));
  }
  ctx.defineConstant(n.output(0), std::move(type), std::move(data));
}

// Inference Dropout (training_mode absent or a constant false) whose mask
// nobody reads is the identity on its data input; otherwise it imports as the
// IR's Dropout, which takes training_mode and ratio only when they can
// matter (the reference executor runs training mode with ratio 0 only).
void convertDropout(NodeContext &ctx) {
  AttrList attrs;
  for (const AttributeProto &a : ctx.node().attribute()) {
    // seed matters in training (tc-opt --train's PhiloxDropout takes it);
    // is_test (opset < 7) selected inference mode, which is what tc
    // compiles regardless.
    if (a.name() == "seed" && ctx.opset() >= 12) {
      attrs.emplace_back("seed", Attribute(std::vector<int64_t>{a.i()}));
      continue;
    }
    if (a.name() == "seed" || (a.name() == "ratio" && ctx.opset() < 12) ||
        (a.name() == "is_test" && ctx.opset() < 7) ||
        isLegacyAttr("Dropout", a.name(), ctx.opset()))
      continue;
    ctx.fail("unsupported attribute ", quoteName(a.name()));
  }
  if (ctx.numInputs() > 3)
    ctx.fail("expects 1 to 3 inputs, got ", ctx.numInputs());
  Value *train = ctx.input(2), *ratio = ctx.input(1);
  bool inference = !train || (train->isConstant() && train->type.dtype == DType::Bool &&
                              train->data->size == 1 && train->data->ptr[0] == 0);
  if (ctx.node().output_size() > 2)
    ctx.fail("expects at most 2 outputs, got ", ctx.node().output_size());
  std::vector<std::string> outs = outputs(ctx);
  bool maskUsed = ctx.outputUsed(1);
  outs.resize(maskUsed ? 2 : 1);
  if (inference && !maskUsed) {
    ctx.emit(OpKind::Identity, {ctx.input(0)}, {}, outs);
    return;
  }
  std::vector<Value *> ins{ctx.input(0)};
  if (!inference)
    ins.insert(ins.end(), {ratio, train});
  ctx.emit(OpKind::Dropout, ins, inference ? AttrList{} : attrs, outs);
}

// A shape operand longer than this cannot be real; it would make the IR's
// shape rule allocate one Dim per element.
constexpr int64_t kMaxRank = 1024;

void convertReshape(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Reshape);
  if (ctx.opset() < 5) {
    // Reshape-1 took the target shape as an attribute; the IR takes an operand.
    AttrList attrs = collectAttrs(ctx, info, {"shape"});
    const AttributeProto *shape = findAttr(ctx, "shape");
    if (!shape)
      ctx.fail("missing attribute 'shape' (opset ", ctx.opset(), ")");
    std::vector<int64_t> dims = convertAttribute(ctx, *shape, AttrKind::Ints).ints();
    if (ctx.numInputs() > 1)
      ctx.fail("expects 1 input before opset 5, got ", ctx.numInputs());
    ctx.emit(OpKind::Reshape, {ctx.input(0), intsConstant(ctx, "shape", dims)}, attrs,
             outputs(ctx));
    return;
  }
  if (Value *s = ctx.input(1)) {
    const TensorType &t = s->type;
    if (t.rank() == 1 && t.shape[0].isStatic() && t.shape[0].size > kMaxRank)
      ctx.fail("shape operand has ", t.shape[0].size, " elements; at most ", kMaxRank,
               " dimensions are supported");
  }
  convertGeneric(ctx);
}

// Softmax / LogSoftmax.
void convertSoftmax(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  AttrList attrs = collectAttrs(ctx, info);
  Value *x = ctx.input(0);
  const AttributeProto *axisAttr = findAttr(ctx, "axis");
  if (x) {
    int64_t r = int64_t(x->type.rank());
    // The IR's shape rule does not look at axis; check it here.
    bool legacy = ctx.opset() < 13;
    int64_t axis = axisAttr ? axisAttr->i() : legacy ? 1 : -1;
    if (r == 0)
      ctx.fail("input must have rank >= 1, got ", x->type.str());
    if (axis < -r || axis >= r)
      ctx.fail("axis ", axis, " is out of range for rank ", r);
    // Before opset 13 the op flattened the input to 2-D at `axis` and
    // normalized each row; that matches the IR's single-axis op only when
    // axis is the last dimension.
    if (legacy && (axis < 0 ? axis + r : axis) != r - 1)
      ctx.fail("opset ", ctx.opset(), " ", ctx.node().op_type(),
               " normalizes over all dimensions from axis ", axis,
               " on (flattened to 2-D); only axis = ", r - 1,
               " (the last) is supported for this rank-", r, " input");
  }
  ctx.emit(info.kind, inputs(ctx), attrs, outputs(ctx));
}

void convertConcat(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::Concat);
  AttrList attrs = collectAttrs(ctx, info);
  // Concat-1 had an optional axis defaulting to 1; it is required since 4.
  if (ctx.opset() < 4 && !findAttr(ctx, "axis"))
    attrs.emplace_back("axis", Attribute(int64_t(1)));
  std::vector<Value *> ins = inputs(ctx);
  // Scalars cannot be concatenated; reject before the shape rule sees them.
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] && ins[i]->type.rank() == 0)
      ctx.fail("input ", i, " is a scalar; Concat needs inputs of rank >= 1");
  ctx.emit(OpKind::Concat, ins, attrs, outputs(ctx));
}

struct Converter {
  std::string_view opType;
  ConvertFn convert;
};

// Op types that need more than convertGeneric. Ops without an entry import
// generically when Ops.def has an op of the same name.
constexpr Converter kConverters[] = {
    {"Constant", convertConstant}, {"Dropout", convertDropout},    {"Reshape", convertReshape},
    {"Softmax", convertSoftmax},   {"LogSoftmax", convertSoftmax}, {"Concat", convertConcat},
    {"Hardmax", convertSoftmax},
};

} // namespace

std::string onnxTypeName(int64_t t) {
  if (t >= INT_MIN && t <= INT_MAX && onnx::TensorProto_DataType_IsValid(int(t))) {
    std::string n = onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(t));
    for (char &c : n)
      c = char(std::tolower(static_cast<unsigned char>(c)));
    return n;
  }
  return "type " + std::to_string(t);
}

std::string printable(std::string_view s) {
  std::string r;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      r += "\\x";
      r += kHex[u >> 4];
      r += kHex[u & 15];
    } else {
      r += c;
    }
  }
  return r;
}

std::string quoteName(std::string_view s) { return "'" + printable(s) + "'"; }

bool isDefaultDomain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

ConvertFn findConverter(std::string_view domain, std::string_view opType) {
  if (!isDefaultDomain(domain))
    return findTrainingOpConverter(domain, opType);
  if (isNonOnnxIROp(opType))
    return nullptr;
  if (ConvertFn c = findTrainingOpConverter(domain, opType))
    return c;
  for (const Converter &c : kConverters)
    if (c.opType == opType)
      return c.convert;
  if (ConvertFn c = findTensorOpConverter(opType))
    return c;
  if (ConvertFn c = findNNOpConverter(opType))
    return c;
  if (ConvertFn c = findSignalOpConverter(opType))
    return c;
  if (ConvertFn c = findControlFlowOpConverter(opType))
    return c;
  return lookupOp(opType) ? convertGeneric : nullptr;
}

// Public faces of the helpers above, for converters in other files.
AttrList collectNodeAttrs(const NodeContext &ctx, const OpInfo &info,
                          std::initializer_list<std::string_view> skip) {
  return collectAttrs(ctx, info, skip);
}
const onnx::AttributeProto *findNodeAttr(const NodeContext &ctx, std::string_view name) {
  return findAttr(ctx, name);
}
std::vector<Value *> nodeInputs(const NodeContext &ctx) { return inputs(ctx); }
std::vector<std::string> nodeOutputs(const NodeContext &ctx) { return outputs(ctx); }

Attribute convertAttribute(const NodeContext &ctx, const AttributeProto &a, AttrKind kind) {
  if (!a.ref_attr_name().empty())
    ctx.fail("attribute ", quoteName(a.name()),
             " refers to a function attribute, which is not supported");
  int t = effectiveType(a);
  auto mismatch = [&]() {
    ctx.fail("attribute ", quoteName(a.name()), " must be ", attrKindName(kind), ", got ",
             attrTypeName(t));
  };
  switch (kind) {
  case AttrKind::Int:
    if (t != AttributeProto::INT)
      mismatch();
    return Attribute(int64_t(a.i()));
  case AttrKind::Float:
    // ONNX text syntax spells 1.0 as `1`, which parses as an INT attribute.
    if (t == AttributeProto::INT)
      return Attribute(double(a.i()));
    if (t != AttributeProto::FLOAT)
      mismatch();
    return Attribute(widenFloat(a.f()));
  case AttrKind::String:
    if (t != AttributeProto::STRING)
      mismatch();
    return Attribute(a.s());
  case AttrKind::Ints:
    if (t != AttributeProto::INTS)
      mismatch();
    return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case AttrKind::Floats: {
    std::vector<double> v;
    if (t == AttributeProto::INTS)
      for (int64_t x : a.ints())
        v.push_back(double(x));
    else if (t == AttributeProto::FLOATS)
      for (float x : a.floats())
        v.push_back(widenFloat(x));
    else
      mismatch();
    return Attribute(std::move(v));
  }
  case AttrKind::Strings:
    if (t != AttributeProto::STRINGS)
      mismatch();
    return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
  case AttrKind::Type: {
    int64_t code = 0;
    if (t == AttributeProto::INT) {
      code = a.i();
    } else if (t == AttributeProto::STRING) {
      // Opset < 6 spelled Cast's `to` as a DataType name ("FLOAT").
      onnx::TensorProto_DataType dt;
      if (!onnx::TensorProto_DataType_Parse(a.s(), &dt))
        ctx.fail("attribute ", quoteName(a.name()), ": unknown element type ", quoteName(a.s()));
      code = dt;
    } else {
      mismatch();
    }
    std::optional<DType> dt;
    if (code >= INT_MIN && code <= INT_MAX)
      dt = dtypeFromOnnx(int(code));
    if (!dt)
      ctx.fail("attribute ", quoteName(a.name()), ": element type ", onnxTypeName(code),
               " is not supported");
    return Attribute(*dt);
  }
  }
  ctx.fail("attribute ", quoteName(a.name()), " has an unknown kind");
}

double widenFloat(float f) {
  if (!std::isfinite(f))
    return double(f);
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  double d = double(f);
  if (ec == std::errc())
    std::from_chars(buf, end, d);
  return d;
}

Value *runtimeInput(const NodeContext &ctx, size_t i) {
  Value *v = ctx.input(i);
  return v && !v->isConstant() ? v : nullptr;
}

const OpInfo &infoOf(const NodeContext &ctx) {
  const OpInfo *info = lookupOp(ctx.node().op_type());
  if (!info) // findConverter only hands out convertGeneric for table ops
    ctx.fail("no IR op for this op type");
  return *info;
}

void expectInputs(const NodeContext &ctx, size_t lo, size_t hi) {
  size_t n = ctx.numInputs();
  if (n < lo || n > hi)
    ctx.fail("expects ",
             lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi),
             hi == 1 ? " input" : " inputs", " at opset ", ctx.opset(), ", got ", n);
}

} // namespace tc::onnximport
