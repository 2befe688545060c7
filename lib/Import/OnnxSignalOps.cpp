// Converters of the signal-processing ops (DFT, STFT, the window functions,
// MelWeightMatrix) and of the recurrent ops (RNN, GRU, LSTM). The ONNX
// inputs that fix result shapes (DFT dft_length and axis, STFT frame_step
// and frame_length, a window's size, all of MelWeightMatrix's) are IR
// attributes: a constant input becomes the attribute, a computed one the
// op's run-time attribute operand (Ops.def). DFT-17 has an axis attribute
// defaulting to 1, DFT-20 an axis input defaulting to -2. Recurrent ops drop
// trailing outputs nobody reads; their opset-1 output_sequence attribute is
// ignored (every output is computed anyway).
#include "OnnxOps.h"
#include "tc/IR/RuntimeAttrs.h"
#include <algorithm>

namespace tc::onnximport {

namespace {

// Converts ONNX input `input` into IR operand slot `slot` of `info`, an
// optional operand standing for the attribute of the same name: a constant
// is appended to `attrs` (and the slot stays empty), a computed value fills
// the slot.
void attrOrOperand(const NodeContext &ctx, const OpInfo &info, size_t input, size_t slot,
                   std::vector<Value *> &operands, AttrList &attrs) {
  const AttrSpec *spec = runtimeAttrSpec(info, slot);
  if (!spec)
    ctx.fail("internal: operand ", slot, " stands for no attribute");
  if (findNodeAttr(ctx, spec->name))
    ctx.fail("unsupported attribute '", spec->name, "' (an input in ONNX)");
  Value *v = ctx.input(input);
  if (!v)
    return;
  if (operands.size() <= slot)
    operands.resize(slot + 1, nullptr);
  if (!v->isConstant()) {
    operands[slot] = v;
    return;
  }
  try {
    attrs.emplace_back(spec->name, attributeFromConstant(*spec, *v));
  } catch (const Error &e) {
    ctx.error(e.what());
  }
}

void emitTrimmed(NodeContext &ctx, const OpInfo &info, std::vector<Value *> operands,
                 const AttrList &attrs, std::vector<std::string> outputs) {
  while (!operands.empty() && !operands.back())
    operands.pop_back();
  ctx.emit(info.kind, std::move(operands), attrs, outputs);
}

void convertDFT(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::DFT);
  bool axisInput = ctx.opset() >= 20;
  expectInputs(ctx, 1, axisInput ? 3 : 2);
  AttrList attrs = collectNodeAttrs(ctx, info, {"axis", "dft_length"});
  std::vector<Value *> operands{ctx.input(0)};
  attrOrOperand(ctx, info, 1, 1, operands, attrs);
  if (axisInput) {
    attrOrOperand(ctx, info, 2, 2, operands, attrs);
  } else {
    const onnx::AttributeProto *a = findNodeAttr(ctx, "axis");
    attrs.emplace_back("axis",
                       a ? convertAttribute(ctx, *a, AttrKind::Int) : Attribute(int64_t(1)));
  }
  emitTrimmed(ctx, info, operands, attrs, nodeOutputs(ctx));
}

void convertSTFT(NodeContext &ctx) {
  const OpInfo &info = opInfo(OpKind::STFT);
  expectInputs(ctx, 2, 4);
  AttrList attrs = collectNodeAttrs(ctx, info, {"frame_step", "frame_length"});
  std::vector<Value *> operands{ctx.input(0), nullptr, ctx.input(2)};
  attrOrOperand(ctx, info, 1, 1, operands, attrs);
  attrOrOperand(ctx, info, 3, 3, operands, attrs);
  emitTrimmed(ctx, info, operands, attrs, nodeOutputs(ctx));
}

// The window functions and MelWeightMatrix: every input is a run-time
// attribute operand.
void convertAllAttrs(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  size_t n = info.operands.size();
  expectInputs(ctx, n, n);
  std::vector<std::string_view> inputs;
  for (const OperandSpec &o : info.operands)
    inputs.push_back(o.name);
  for (const onnx::AttributeProto &a : ctx.node().attribute())
    if (std::find(inputs.begin(), inputs.end(), a.name()) != inputs.end())
      ctx.fail("unsupported attribute '", a.name(), "' (an input in ONNX)");
  AttrList attrs = collectNodeAttrs(ctx, info);
  std::vector<Value *> operands;
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.input(i))
      ctx.fail("input '", info.operands[i].name, "' is required");
    attrOrOperand(ctx, info, i, i, operands, attrs);
  }
  emitTrimmed(ctx, info, operands, attrs, nodeOutputs(ctx));
}

void convertRecurrent(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  expectInputs(ctx, 3, info.operands.size());
  if (const onnx::AttributeProto *clip = findNodeAttr(ctx, "clip"))
    if (!(convertAttribute(ctx, *clip, AttrKind::Float).f() > 0))
      ctx.fail("clip must be > 0, got ", convertAttribute(ctx, *clip, AttrKind::Float).f());
  AttrList attrs = collectNodeAttrs(ctx, info, {"output_sequence"});
  std::vector<std::string> outs = nodeOutputs(ctx);
  while (outs.size() > 1 && !ctx.outputUsed(outs.size() - 1))
    outs.pop_back();
  emitTrimmed(ctx, info, nodeInputs(ctx), attrs, outs);
}

} // namespace

ConvertFn findSignalOpConverter(std::string_view opType) {
  if (opType == "DFT")
    return convertDFT;
  if (opType == "STFT")
    return convertSTFT;
  if (opType == "HannWindow" || opType == "HammingWindow" || opType == "BlackmanWindow" ||
      opType == "MelWeightMatrix")
    return convertAllAttrs;
  if (opType == "RNN" || opType == "GRU" || opType == "LSTM")
    return convertRecurrent;
  return nullptr;
}

} // namespace tc::onnximport
