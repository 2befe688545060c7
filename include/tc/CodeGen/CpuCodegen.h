// tc-codegen --target=cpu: every Fused group the emitter handles becomes a
// kernel; all kernels go into ONE translation unit compiled once in-process;
// the artifact carries the module, the object code, the kernel table, the
// sources and the compile timeline.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/CodeGen/CpuCompiler.h"
#include "tc/IR/IR.h"
#include <string>
#include <vector>

namespace tc {

// What Conv/MatMul/Gemm groups call: oneDNN (with its post-ops, else the
// group's epilogue kernel after it), or only generated kernels.
enum class CpuLibrary { OneDnn, None };

struct CpuCodegenResult {
  Artifact artifact;
  std::string source;                // all kernels, as compiled
  std::vector<std::string> kernels;  // groups with a kernel
  std::vector<std::string> library;  // groups marked for a library call
  std::vector<std::string> fallback; // "@group: why" for groups without one
  std::vector<CompileStage> timeline;
};

// `withObject` false stops after emitting the source (tc-codegen --emit=source).
CpuCodegenResult compileForCpu(const Module &m, const CpuTarget &target, bool withObject = true,
                               CpuLibrary library = CpuLibrary::OneDnn);

} // namespace tc
