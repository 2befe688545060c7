// The CUDA backend's compile half in the registry: tc-codegen's --arch over
// CudaBackend (lib/CodeGen/CudaCodegen.cpp). Its runtime half:
// CudaExecutable.cpp.
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include "tc/Support/Error.h"
#include "tc/Target/Target.h"

namespace tc {

namespace {

// CudaBackend, knowing what the runtime's library plans take
// (CudaLibraryPlan.h): a library group's call planned at its static types,
// each symbolic dim at 2 (a size at which a partial broadcast shows). A dim
// shape inference lost (`?`) leaves the refusal to the run.
class CudaCompileBackend : public CudaBackend {
public:
  using CudaBackend::CudaBackend;
  LibraryVerdict libraryVerdict(const GroupCode &g) const override {
    bool known = true;
    auto concrete = [&](TensorType t) {
      for (Dim &d : t.shape) {
        known = known && !d.isUnknown();
        if (!d.isStatic())
          d = Dim::fixed(2);
      }
      return t;
    };
    std::vector<TensorType> args;
    for (const Value *v : g.call->operands)
      args.push_back(concrete(v->type));
    // The anchor's dtype, as the runtime gives it (a Cast epilogue writes
    // the call's own).
    TensorType result = concrete(g.call->result()->type);
    result.dtype = g.group->ops.front()->result()->type.dtype;
    if (!known)
      return {};
    std::string why;
    if (g.library == "cublaslt") {
      if (std::optional<GemmDesc> d = describeGemm(*g.group, args, result, why))
        return {"", d->epilogueFolded, d->epilogueText()};
    } else if (g.library == "cudnn") {
      // The graph API may still turn the fusion down at run time (the
      // epilogue kernel runs then): only the legacy API's fold is certain.
      if (std::optional<ConvDesc> d = describeConv(*g.group, args, result, why))
        return {"", d->epilogueFolded, d->fusedText()};
    } else {
      return {};
    }
    return {why, false, ""};
  }
};

class CudaCompileTarget : public CompileTarget {
public:
  std::vector<TargetOption> options() const override {
    return {{"arch",
             "sm_90|sm_80,sm_90",
             "CUDA arches to compile cubin for (default sm_90); several make one fat artifact",
             {}},
            {"conv-kernels",
             "depthwise|grouped|cudnn",
             "which grouped convs run a generated kernel (its epilogue fused) instead of cuDNN: "
             "depthwise ones (default), every grouped one, or none",
             {std::begin(kConvKernelsNames), std::end(kConvKernelsNames)}}};
  }
  std::vector<std::string> emitKinds() const override { return {"source", "ptx"}; }
  void configure(const TargetOptionValues &values, const std::string &emit) override {
    auto arch = values.find("arch");
    std::vector<std::string> arches = parseCudaArchs(arch == values.end() ? "sm_90" : arch->second);
    if (emit == "ptx" && arches.size() != 1)
      fail("--emit=ptx writes the PTX of one arch; --arch names ", arches.size());
    ConvKernels convKernels = ConvKernels::Depthwise;
    if (auto mode = values.find("conv-kernels"); mode != values.end())
      for (size_t i = 0; i < std::size(kConvKernelsNames); ++i)
        if (mode->second == kConvKernelsNames[i])
          convKernels = ConvKernels(i);
    backend_ = std::make_unique<CudaCompileBackend>(arches, convKernels);
  }
  CodegenResult compile(const Module &m, bool withBinary) const override {
    return generateCode(m, *backend_, withBinary);
  }
  std::string emitText(const CodegenResult &r, const std::string &) const override {
    return compileCuda(r.source, backend_->arches().front(), CudaOutput::Ptx);
  }
  const char *sourceFile() const override { return "kernels.cu"; }
  const char *libraries() const override { return "cuBLASLt/cuDNN"; }
  void printStats(const CodegenResult &r, std::ostream &os) const override {
    for (const std::string &a : r.artifact.arches)
      os << "  cubin " << a << ": " << r.artifact.require(cubinSection(a)).size() << " bytes\n";
  }

private:
  std::unique_ptr<CudaCompileBackend> backend_;
};

} // namespace

std::unique_ptr<CompileTarget> makeCudaCompileTarget() {
  return std::make_unique<CudaCompileTarget>();
}

} // namespace tc
