// tc-codegen --target=cuda: every Fused group the emitter handles becomes a
// CUDA kernel; MatMul/Gemm/Conv groups are library calls (cuBLASLt/cuDNN at
// run time) plus their epilogue's kernel. All kernels go into ONE source
// compiled by NVRTC once per arch (the arches in parallel); the artifact
// carries the module, a cubin per arch, the kernel table with each kernel's
// launch kind, the source and the compile timeline. No GPU is needed.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/IR/IR.h"
#include <string>
#include <vector>

namespace tc {

struct CudaCodegenResult {
  Artifact artifact;
  std::string source;               // all kernels, as compiled
  std::vector<std::string> kernels; // groups with a kernel (epilogues: <group>__epilogue)
  // "@group: cublaslt, epilogue kernel tc_..." for MatMul/Gemm/Conv groups
  std::vector<std::string> library;
  std::vector<std::string> fallback; // "@group: why" for the other groups without a kernel
  std::vector<CompileStage> timeline;
};

// `withCubin` false stops after emitting the source (--emit=source/ptx).
CudaCodegenResult compileForCuda(const Module &m, const std::vector<std::string> &arches,
                                 bool withCubin = true);

} // namespace tc
