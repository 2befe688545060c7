// The kernel families: which kind of kernel a fusion group becomes. The
// classifier (classifyKernel, tc/CodeGen/KernelEmitter.h) decides it once,
// before emission; the kind then travels with the kernel (EmittedKernel,
// both targets' kernel tables, KernelTable.h). Header-only, so the runtime
// reads the table's spelling without linking the compiler.
#pragma once
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

namespace tc {

// One emitter file per kind under lib/CodeGen/Kernels/ (Families.cpp maps
// kind -> emitter).
enum class KernelKind {
  Pointwise,     // elementwise ops over one domain (broadcast operands)
  RowReduction,  // Softmax/LogSoftmax/LayerNormalization over the last axis
  Reduction,     // Reduce*, global pools, with prologue and epilogue (CUDA)
  Contraction,   // MatMul/Gemm/Conv loop nest and its pointwise epilogue (CPU)
  Pool,          // a lone N-D MaxPool/AveragePool/LpPool/ConvTranspose
  Transpose,     // a lone Transpose
  DataMovement,  // a lone Gather/Concat/Slice/Split/Expand/Pad/Tile (CUDA)
  Attention,     // tc's fused Attention op (flash-attention style)
  DepthwiseConv, // a grouped/depthwise Conv and its pointwise epilogue (CUDA)
  Compaction,    // NonZero/Compress: a count pass, then a scatter pass (sizes from data)
};

// The table's spelling, in enum order.
inline constexpr const char *kKernelKindNames[] = {
    "pointwise", "row-reduction", "reduction", "contraction",    "pool",
    "transpose", "data-movement", "attention", "depthwise-conv", "compaction"};

inline const char *kernelKindName(KernelKind k) { return kKernelKindNames[size_t(k)]; }

inline std::optional<KernelKind> parseKernelKind(std::string_view name) {
  for (size_t i = 0; i < std::size(kKernelKindNames); ++i)
    if (name == kKernelKindNames[i])
      return KernelKind(i);
  return std::nullopt;
}

} // namespace tc
