// Converters of the loss ops (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss: ONNX's int ignore_index, which has no default, is
// the IR's list of at most one value) and of the optimizers of the
// ai.onnx.preview.training domain (Adagrad, Adam, Momentum), which import
// 1:1 but only from that domain.
#include "OnnxOps.h"

namespace tc::onnximport {

namespace {

constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";
constexpr std::string_view kOptimizers[] = {"Adagrad", "Adam", "Momentum"};

void convertLoss(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  expectInputs(ctx, 2, 3);
  AttrList attrs = collectNodeAttrs(ctx, info, {"ignore_index"});
  if (const onnx::AttributeProto *ii = findNodeAttr(ctx, "ignore_index"))
    attrs.emplace_back("ignore_index",
                       std::vector<int64_t>{convertAttribute(ctx, *ii, AttrKind::Int).i()});
  std::vector<std::string> outs = nodeOutputs(ctx);
  size_t maxOuts = info.kind == OpKind::SoftmaxCrossEntropyLoss ? 2 : 1;
  if (outs.size() > maxOuts)
    ctx.fail("expects at most ", maxOuts, " outputs, got ", outs.size());
  // log_prob is computed only when read.
  if (outs.size() > 1 && !ctx.outputUsed(1))
    outs.resize(1);
  ctx.emit(info.kind, nodeInputs(ctx), attrs, outs);
}

void convertOptimizer(NodeContext &ctx) {
  const OpInfo &info = infoOf(ctx);
  ctx.emit(info.kind, nodeInputs(ctx), collectNodeAttrs(ctx, info), nodeOutputs(ctx));
}

bool isOptimizer(std::string_view opType) {
  for (std::string_view o : kOptimizers)
    if (o == opType)
      return true;
  return false;
}

} // namespace

ConvertFn findTrainingOpConverter(std::string_view domain, std::string_view opType) {
  if (domain == kTrainingDomain)
    return isOptimizer(opType) ? convertOptimizer : nullptr;
  if (opType == "NegativeLogLikelihoodLoss" || opType == "SoftmaxCrossEntropyLoss")
    return convertLoss;
  return nullptr;
}

bool isNonOnnxIROp(std::string_view opType) {
  // Attention: tc's own op (Ops.def); ONNX's opset-23 Attention is not mapped.
  return isOptimizer(opType) || opType == "BatchNormalizationTraining" || opType == "Attention";
}

} // namespace tc::onnximport
