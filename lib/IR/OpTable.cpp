// Materializes Ops.def into the OpInfo table.
#include "tc/IR/OpTable.h"
#include "Ops/OpInference.h"
#include "tc/IR/ElementMove.h"
#include <climits>
#include <cstdint>
#include <unordered_map>

namespace tc {

std::string_view fusionCategoryName(FusionCategory c) {
  switch (c) {
  case FusionCategory::Pointwise: return "pointwise";
  case FusionCategory::Reduction: return "reduction";
  case FusionCategory::Library: return "library";
  case FusionCategory::Shape: return "shape";
  case FusionCategory::Opaque: return "opaque";
  }
  return "?";
}

std::string_view precisionClassName(PrecisionClass c) {
  switch (c) {
  case PrecisionClass::Low: return "low";
  case PrecisionClass::F32: return "f32";
  case PrecisionClass::Follow: return "follow";
  case PrecisionClass::Keep: return "keep";
  }
  return "?";
}

std::string_view libraryClassName(LibraryClass c) {
  switch (c) {
  case LibraryClass::None: return "none";
  case LibraryClass::Contraction: return "contraction";
  case LibraryClass::Reduce: return "reduce";
  case LibraryClass::Pool: return "pool";
  }
  return "?";
}

std::string_view flopRuleName(FlopRule r) {
  switch (r) {
  case FlopRule::PerOutput: return "per-output";
  case FlopRule::PerInput: return "per-input";
  case FlopRule::None: return "none";
  case FlopRule::MatMul: return "matmul";
  case FlopRule::Gemm: return "gemm";
  case FlopRule::Conv: return "conv";
  case FlopRule::ConvTranspose: return "conv-transpose";
  case FlopRule::ConvWeightGrad: return "conv-weight-grad";
  case FlopRule::Window: return "window";
  case FlopRule::Attention: return "attention";
  case FlopRule::AttentionGrad: return "attention-grad";
  }
  return "?";
}

size_t OpInfo::minOperands() const {
  size_t n = 0;
  for (const auto &o : operands)
    if (!o.optional)
      ++n;
  return n;
}

size_t OpInfo::maxOperands() const {
  for (const auto &o : operands)
    if (o.variadic)
      return SIZE_MAX;
  return operands.size();
}

const AttrSpec *OpInfo::findAttr(std::string_view attr) const {
  for (const auto &a : attrs)
    if (a.name == attr)
      return &a;
  return nullptr;
}

const std::vector<OpInfo> &allOps() {
  using namespace infer;
#define IN(n)                                                                                      \
  OperandSpec { #n, false, false }
#define OPT(n)                                                                                     \
  OperandSpec { #n, true, false }
#define VAR(n)                                                                                     \
  OperandSpec { #n, false, true }
#define OPTVAR(n)                                                                                  \
  OperandSpec { #n, true, true }
#define OPERANDS(...)                                                                              \
  std::vector<OperandSpec> { __VA_ARGS__ }
#define ATTR(n, K, def, doc)                                                                       \
  AttrSpec { n, AttrKind::K, parseAttribute(def, AttrKind::K), doc }
#define REQ(n, K, doc)                                                                             \
  AttrSpec { n, AttrKind::K, std::nullopt, doc }
#define ATTRS(...)                                                                                 \
  std::vector<AttrSpec> { __VA_ARGS__ }
#define TC_OP(E, CAT, PREC, LIB, FLOPS, NRES, INFER, SUMMARY, OPS, ATTRS_)                         \
  OpInfo{.kind = OpKind::E,                                                                        \
         .name = #E,                                                                               \
         .category = FusionCategory::CAT,                                                          \
         .precision = PrecisionClass::PREC,                                                        \
         .library = LibraryClass::LIB,                                                             \
         .flops = FlopRule::FLOPS,                                                                 \
         .operands = OPS,                                                                          \
         .numResults = NRES,                                                                       \
         .attrs = ATTRS_,                                                                          \
         .infer = INFER,                                                                           \
         .summary = SUMMARY},
  static const std::vector<OpInfo> table = {
#include "tc/IR/Ops.def"
  };
#undef TC_OP
#undef IN
#undef OPT
#undef VAR
#undef OPTVAR
#undef OPERANDS
#undef ATTR
#undef REQ
#undef ATTRS
  return table;
}

const OpInfo &opInfo(OpKind k) { return allOps()[size_t(k)]; }

bool isCpuCopyMove(OpKind k) {
  return k == OpKind::Gather || k == OpKind::Concat || k == OpKind::Split || k == OpKind::Slice;
}

bool isElementMove(OpKind k) {
  switch (k) {
  case OpKind::Gather:
  case OpKind::Concat:
  case OpKind::Slice:
  case OpKind::Split:
  case OpKind::Expand:
  case OpKind::Pad:
  case OpKind::Tile: return true;
  default: return false;
  }
}

bool isIndexMove(OpKind k) {
  switch (k) {
  case OpKind::Trilu:
  case OpKind::DepthToSpace:
  case OpKind::SpaceToDepth:
  case OpKind::GatherElements:
  case OpKind::GatherND:
  case OpKind::ScatterElements:
  case OpKind::ScatterND:
  case OpKind::CumSum:
  case OpKind::Resize:
  case OpKind::ConstantOfShape:
  case OpKind::EyeLike:
  case OpKind::Range:
  case OpKind::OneHot:
  case OpKind::ReverseSequence:
  case OpKind::LRN:
  case OpKind::GridSample:
  case OpKind::RoiAlign:
  case OpKind::MaxUnpool:
  case OpKind::Det:
  case OpKind::Dropout:
  case OpKind::DFT:
  case OpKind::STFT:
  case OpKind::HannWindow:
  case OpKind::HammingWindow:
  case OpKind::BlackmanWindow:
  case OpKind::MelWeightMatrix: return true;
  default: return false;
  }
}

bool isWindowOp(OpKind k) {
  return k == OpKind::MaxPool || k == OpKind::MaxPoolGrad || k == OpKind::AveragePool ||
         k == OpKind::LpPool || k == OpKind::ConvTranspose || k == OpKind::ConvWeightGrad;
}

const OpInfo *lookupOp(std::string_view name) {
  static const auto index = [] {
    std::unordered_map<std::string_view, const OpInfo *> m;
    for (const OpInfo &i : allOps())
      m.emplace(i.name, &i);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

} // namespace tc
