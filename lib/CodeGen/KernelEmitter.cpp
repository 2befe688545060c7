// The kernel emitter's entry: classify the group (Kernels/Classify.cpp),
// then hand it to its family's emitter, one file per family in Kernels/.
#include "tc/CodeGen/KernelEmitter.h"
#include "Kernels/Families.h"
#include <cstdlib>
#include <string_view>

namespace tc {

namespace {

using namespace kernels;

// KernelKind -> its family's emitter, in enum order. A kind without one
// is classified but gets no kernel (`missing` says why).
struct KernelFamily {
  KernelKind kind;
  FamilyEmitter emit;
  const char *missing;
};
constexpr KernelFamily kFamilies[] = {
    {KernelKind::Pointwise, emitPointwise, nullptr},         // Pointwise.cpp
    {KernelKind::RowReduction, emitRowReduction, nullptr},   // RowReduction.cpp
    {KernelKind::Reduction, emitReduction, nullptr},         // Reduction.cpp (CUDA)
    {KernelKind::Contraction, emitContraction, nullptr},     // Contraction.cpp (CPU)
    {KernelKind::Pool, emitPool, nullptr},                   // Pool.cpp
    {KernelKind::Transpose, emitTranspose, nullptr},         // Transpose.cpp
    {KernelKind::DataMovement, emitDataMovement, nullptr},   // DataMovement.cpp (CUDA)
    {KernelKind::Attention, emitAttention, nullptr},         // Attention.cpp
    {KernelKind::DepthwiseConv, emitDepthwiseConv, nullptr}, // DepthwiseConv.cpp (CUDA)
    {KernelKind::Compaction, emitCompaction, nullptr},       // Compaction.cpp
};
constexpr bool inKindOrder() {
  for (size_t i = 0; i < std::size(kFamilies); ++i)
    if (size_t(kFamilies[i].kind) != i)
      return false;
  return std::size(kFamilies) == std::size(kKernelKindNames);
}
static_assert(inKindOrder(), "kFamilies: one entry per KernelKind, in enum order");

std::optional<EmittedKernel> emitFamily(const KernelContext &c, const KernelClass &cls) {
  const KernelFamily &family = kFamilies[size_t(cls.kind)];
  if (!family.emit)
    return c.reject(std::string("no kernel: ") + family.missing);
  std::optional<EmittedKernel> k = family.emit(c, cls);
  if (k) {
    k->kind = cls.kind;
    k->mayFault = kernels::groupMayFault(c.f);
    k->slowPath = c.slowPath;
  }
  return k;
}

// TC_KERNEL_VARIANT=I (or "last"): every kernel whose family offers a
// variant I emitted as that variant (the host tests check each variant
// against the reference so; a sweep can time one); nullopt: unset.
std::optional<unsigned> forcedVariant(unsigned count) {
  const char *e = std::getenv("TC_KERNEL_VARIANT");
  if (!e || !*e)
    return std::nullopt;
  unsigned i = std::string_view(e) == "last" ? count - 1 : unsigned(std::atoi(e));
  return i < count ? std::optional(i) : std::nullopt;
}

} // namespace

std::optional<KernelClass> classifyKernel(const Function &callee, KernelDialect dialect,
                                          std::string &why) {
  return classify(KernelContext(callee, dialect, why));
}

std::optional<EmittedKernel> emitKernelOfKind(const Function &callee, KernelDialect dialect,
                                              const KernelClass &cls, std::string &why) {
  return emitFamily(KernelContext(callee, dialect, why), cls);
}

std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect dialect,
                                        std::string &why) {
  KernelContext c(callee, dialect, why);
  std::optional<KernelClass> cls = classify(c);
  std::optional<EmittedKernel> k = cls ? emitFamily(c, *cls) : std::nullopt;
  if (std::optional<unsigned> v = k ? forcedVariant(k->variantCount) : std::nullopt; v && *v) {
    c.variant = *v;
    return emitFamily(c, *cls);
  }
  return k;
}

std::optional<EmittedKernel> emitKernelVariant(const Function &callee, KernelDialect dialect,
                                               unsigned index, std::string &why) {
  KernelContext c(callee, dialect, why);
  c.variant = index;
  std::optional<KernelClass> cls = classify(c);
  return cls ? emitFamily(c, *cls) : std::nullopt;
}

std::optional<EmittedKernel> emitMultiTensorKernel(const Function &erased, KernelDialect dialect,
                                                   std::string &why) {
  KernelContext c(erased, dialect, why, /*multiTensor=*/true);
  std::optional<KernelClass> cls = classify(c);
  if (!cls)
    return std::nullopt;
  if (cls->kind != KernelKind::Pointwise && cls->kind != KernelKind::Reduction)
    return c.reject("a multi-tensor kernel is a pointwise or reduction one");
  // (The CPU runs a run as one loop over its members' elements concatenated.)
  if (cls->kind == KernelKind::Reduction && !c.multiTensor)
    return c.reject("a multi-tensor reduction is a CUDA kernel");
  std::optional<EmittedKernel> k = emitFamily(c, *cls);
  if (k && c.multiTensor) {
    k->launch = LaunchKind::MultiTensor;
    k->source += "}\n"; // the function; the family's last brace closed the blocks' loop
  }
  return k;
}

std::string anonymousSource(const EmittedKernel &k) {
  std::string s = k.source.substr(k.source.find('\n') + 1);
  for (size_t at = s.find(k.symbol); at != std::string::npos; at = s.find(k.symbol, at))
    s.replace(at, k.symbol.size(), "tc_");
  return s;
}

const char *launchKindName(LaunchKind k) {
  return k == LaunchKind::Rows          ? "rows"
         : k == LaunchKind::Reduce      ? "reduce"
         : k == LaunchKind::Columns     ? "columns"
         : k == LaunchKind::Lanes       ? "lanes"
         : k == LaunchKind::Split       ? "split"
         : k == LaunchKind::Compact     ? "compact"
         : k == LaunchKind::MultiTensor ? "multi-tensor"
                                        : "pointwise";
}

} // namespace tc
