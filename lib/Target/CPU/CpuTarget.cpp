// The CPU backend's compile half in the registry: tc-codegen's CPU flags
// over CpuBackend (lib/CodeGen/CpuCodegen.cpp). Its runtime half:
// CpuExecutable.cpp.
#include "tc/CodeGen/CpuCodegen.h"
#include "tc/Target/Target.h"

namespace tc {

namespace {

class CpuCompileTarget : public CompileTarget {
public:
  std::vector<TargetOption> options() const override {
    return {{"cpu",
             "native|x86-64-v3|...",
             "CPU the kernels are compiled for (native: this machine's CPU and features)",
             {}},
            {"cpu-library",
             "onednn|none",
             "what Conv/MatMul/Gemm groups call on CPU: oneDNN (epilogues as post-ops where it "
             "has them) or only generated kernels",
             {"onednn", "none"}}};
  }
  std::vector<std::string> emitKinds() const override { return {"source", "asm"}; }
  void configure(const TargetOptionValues &values, const std::string &) override {
    auto cpu = values.find("cpu"), library = values.find("cpu-library");
    backend_ = std::make_unique<CpuBackend>(
        resolveCpuTarget(cpu == values.end() ? "native" : cpu->second),
        library != values.end() && library->second == "none" ? CpuLibrary::None
                                                             : CpuLibrary::OneDnn);
  }
  CodegenResult compile(const Module &m, bool withBinary) const override {
    return generateCode(m, *backend_, withBinary, driverOptions);
  }
  std::string emitText(const CodegenResult &r, const std::string &) const override {
    return compileCpp(r.source, backend_->target(), CompileOutput::Assembly);
  }
  const char *sourceFile() const override { return "kernels.cpp"; }
  const char *libraries() const override { return "oneDNN"; }

private:
  std::unique_ptr<CpuBackend> backend_;
};

} // namespace

std::unique_ptr<CompileTarget> makeCpuCompileTarget() {
  return std::make_unique<CpuCompileTarget>();
}

} // namespace tc
