// tc-codegen --target=cuda: every Fused group the emitter handles becomes a
// CUDA kernel; MatMul/Gemm/Conv groups are library calls (cuBLASLt/cuDNN at
// run time) plus their epilogue's kernel, except the convs convTakesKernel gives their generated
// kernel. All kernels go into one source, split into programs NVRTC compiles side by side (every
// program for every arch in parallel); the artifact carries the module, the cubins of each arch,
// the kernel table with each kernel's launch
// kind, the source and the compile timeline. No GPU is needed. What differs from the shared driver
// (Codegen.h: generateCode) is this backend.
#pragma once
#include "tc/CodeGen/Codegen.h"
#include <string>
#include <vector>

namespace tc {

// Which grouped convs run the generated kernel (the DepthwiseConv family)
// rather than cuDNN: tc-codegen --conv-kernels=depthwise|grouped|cudnn.
enum class ConvKernels { Depthwise, Grouped, Cudnn };
inline constexpr const char *kConvKernelsNames[] = {"depthwise", "grouped", "cudnn"};
// THE rule: whether `conv` (a Conv with a generated kernel) runs it under `mode`.
bool convTakesKernel(const Op &conv, ConvKernels mode);

// Where a convolution's backward passes (ConvTranspose, ConvWeightGrad) run:
// cuDNN's calls but where the rule below says the generated gather kernel
// (auto, the default), cuDNN's always, or the generated kernels always (A/B
// timing, the kernels' host tests): tc-codegen --conv-backward.
enum class ConvBackward { Auto, Cudnn, Kernel };
inline constexpr const char *kConvBackwardNames[] = {"auto", "cudnn", "kernel"};
// THE rule: whether a ConvTranspose / ConvWeightGrad with a generated kernel runs it.
bool convBackwardTakesKernel(const Op &op, ConvBackward mode);

class CudaBackend : public CodegenBackend {
public:
  explicit CudaBackend(std::vector<std::string> arches,
                       ConvKernels convKernels = ConvKernels::Depthwise,
                       ConvBackward convBackward = ConvBackward::Auto)
      : arches_(std::move(arches)), convKernels_(convKernels), convBackward_(convBackward) {}
  const std::vector<std::string> &arches() const { return arches_; }

  KernelDialect dialect() const override { return KernelDialect::Cuda; }
  const char *name() const override { return "cuda"; }
  bool outlineMoves() const override { return true; } // CUDA generates data movement
  bool collectives() const override { return true; }  // NCCL steps (Runtime/CUDA/Nccl.cpp)
  std::string libraryFor(const Function &group, bool hasKernel) const override;
  // cuDNN groups: the conv's bias goes to the epilogue (moveConvBiasToEpilogue),
  // where the legacy API's call would add it in a pass of its own; the graph
  // API fuses it back with the rest (CudaLibraryPlan.h: ConvDesc).
  void prepareLibraryGroup(Function &group, const std::string &library) const override;
  void assemble(const std::vector<GroupCode> &groups, std::string &source, std::string &table,
                std::string &variants) const override;
  void compile(const std::string &source, Artifact &a,
               std::vector<CompileStage> &timeline) const override;

private:
  std::vector<std::string> arches_;
  ConvKernels convKernels_;
  ConvBackward convBackward_;
};

} // namespace tc
