// tc-codegen --target=cpu: every Fused group the emitter handles becomes a
// kernel; all kernels go into ONE translation unit compiled once in-process;
// the artifact carries the module, the object code, the kernel table, the
// sources and the compile timeline. What differs from the shared driver
// (Codegen.h: generateCode) is this backend.
#pragma once
#include "tc/CodeGen/Codegen.h"
#include "tc/CodeGen/CpuCompiler.h"

namespace tc {

// What Conv/MatMul/Gemm groups call: oneDNN (with its post-ops, else the
// group's epilogue kernel after it), or only generated kernels.
enum class CpuLibrary { OneDnn, None };

class CpuBackend : public CodegenBackend {
public:
  CpuBackend(CpuTarget target, CpuLibrary library)
      : target_(std::move(target)), library_(library) {}
  const CpuTarget &target() const { return target_; }

  KernelDialect dialect() const override { return KernelDialect::Cpu; }
  const char *name() const override { return "cpu"; }
  std::string libraryFor(const Function &group, bool hasKernel) const override;
  LibraryVerdict libraryVerdict(const GroupCode &g) const override;
  bool kernelBacksLibrary() const override { return true; } // oneDNN may turn sizes down
  void assemble(const std::vector<GroupCode> &groups, std::string &source, std::string &table,
                std::string &variants) const override;
  void compile(const std::string &source, Artifact &a,
               std::vector<CompileStage> &timeline) const override;

private:
  CpuTarget target_;
  CpuLibrary library_;
};

} // namespace tc
