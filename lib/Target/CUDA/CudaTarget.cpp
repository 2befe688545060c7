// The CUDA backend's compile half in the registry: tc-codegen's --arch over
// CudaBackend (lib/CodeGen/CudaCodegen.cpp). Its runtime half:
// CudaExecutable.cpp.
#include "CudaTuning.h"
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/Runtime/CudaLaunch.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include "tc/Support/Error.h"
#include "tc/Target/Target.h"
#include <chrono>

namespace tc {

namespace {

// CudaBackend, knowing what the runtime's library plans take
// (CudaLibraryPlan.h): a library group's call planned at its static types,
// each symbolic dim at 2 (a size at which a partial broadcast shows). A dim
// shape inference lost (`?`) leaves the refusal to the run.
class CudaCompileBackend : public CudaBackend {
public:
  using CudaBackend::CudaBackend;
  // A ConvTranspose or ConvWeightGrad that cuDNN turns down at its static
  // types keeps its generated kernel (the Pool family's) instead of a host step.
  std::string libraryFor(const Function &group, bool hasKernel) const override {
    std::string lib = CudaBackend::libraryFor(group, hasKernel);
    const Op &anchor = *group.ops.front();
    if (lib != "cudnn" || !hasKernel || anchor.is(OpKind::Conv))
      return lib;
    std::vector<const Value *> args(group.args.begin(), group.args.end());
    return verdictAt(group, args, group.results[0]->type, lib).refusal.empty() ? lib : "";
  }
  LibraryVerdict libraryVerdict(const GroupCode &g) const override {
    std::vector<const Value *> args(g.call->operands.begin(), g.call->operands.end());
    return verdictAt(*g.group, args, g.call->result()->type, g.library);
  }

private:
  // What `library` makes of `group` at its arguments' and result's static types.
  static LibraryVerdict verdictAt(const Function &group, const std::vector<const Value *> &operands,
                                  const TensorType &resultType, const std::string &library) {
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
    for (const Value *v : operands)
      args.push_back(concrete(v->type));
    // The anchor's dtype, as the runtime gives it (a Cast epilogue writes
    // the call's own).
    TensorType result = concrete(resultType);
    result.dtype = group.ops.front()->result()->type.dtype;
    if (!known)
      return {};
    std::string why;
    if (library == "cublaslt") {
      if (std::optional<GemmDesc> d = describeGemm(group, args, result, why))
        return {"", d->epilogueFolded, d->epilogueText()};
    } else if (library == "cudnn") {
      // The graph API may still turn the fusion down at run time (the
      // epilogue kernel runs then): only the legacy API's fold is certain.
      if (std::optional<ConvDesc> d = describeConv(group, args, result, why))
        return {"", d->epilogueFolded, d->fusedText()};
    } else {
      return {};
    }
    return {why, false, ""};
  }
};

// The tuning stage's name's end where kernels carry variants: " and
// kernel variants (2 kernels, 9 variants)".
std::string variantsNote(const Artifact &a) {
  const MemoryBuffer *section = a.section(kSectionKernelVariants);
  if (!section)
    return "";
  std::vector<CudaKernelVariant> lines = parseCudaKernelVariants(section->str(), a.file);
  size_t kernels = 0;
  for (const CudaKernelVariant &v : lines)
    kernels += v.index == 0;
  return " and kernel variants (" + std::to_string(kernels) + " kernels, " +
         std::to_string(lines.size()) + " variants)";
}

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
             {std::begin(kConvKernelsNames), std::end(kConvKernelsNames)}},
            {"conv-backward",
             "auto|cudnn|kernel",
             "where a convolution's backward passes (ConvTranspose, ConvWeightGrad) run: "
             "cuDNN's backward-data / backward-filter calls but a depthwise backward-data pass "
             "on the generated kernel (auto, the default), cuDNN always, or the generated "
             "kernels always",
             {std::begin(kConvBackwardNames), std::end(kConvBackwardNames)}},
            {"tune",
             "",
             "time each cuDNN conv's and cuBLASLt GEMM's candidate algorithms and each "
             "reduction kernel's geometry variants (compiled too) on this machine's GPU (the "
             "static shape) and record the fastest in the artifact; without a GPU the "
             "heuristics' choice and default variants stay",
             {},
             "on"},
            {"tuning-cache",
             "FILE",
             "with --tune: timings by GPU, library versions and op, read before tuning (a hit "
             "is not timed) and written after",
             {}},
            {"allow-tf32",
             "conv|all|none",
             "which fp32 library calls may use TF32 tensor cores: convs (the default, as "
             "PyTorch's cuDNN), convs and GEMMs, or none",
             {std::begin(kTf32Names), std::end(kTf32Names)}}};
  }
  std::vector<std::string> emitKinds() const override { return {"source", "ptx"}; }
  void configure(const TargetOptionValues &values, const std::string &emit) override {
    auto arch = values.find("arch");
    std::vector<std::string> arches = parseCudaArchs(arch == values.end() ? "sm_90" : arch->second);
    if (emit == "ptx" && arches.size() != 1)
      fail("--emit=ptx writes the PTX of one arch; --arch names ", arches.size());
    // An enum option's value by its name (the option's choices were checked).
    auto choice = [&](const char *flag, const auto &names, auto dflt) {
      if (auto it = values.find(flag); it != values.end())
        for (size_t i = 0; i < std::size(names); ++i)
          if (it->second == names[i])
            return decltype(dflt)(i);
      return dflt;
    };
    backend_ = std::make_unique<CudaCompileBackend>(
        arches, choice("conv-kernels", kConvKernelsNames, ConvKernels::Depthwise),
        choice("conv-backward", kConvBackwardNames, ConvBackward::Auto));
    auto value = [&](const char *flag) {
      auto it = values.find(flag);
      return it == values.end() ? std::string() : it->second;
    };
    tune_ = value("tune") == "on";
    cachePath_ = value("tuning-cache");
    if (!cachePath_.empty() && !tune_)
      fail("--tuning-cache is read and written by --tune");
    tf32_ = parseTf32(value("allow-tf32")).value_or(Tf32::Conv);
  }
  // The driver's artifact, then (--tune) its library calls timed; the
  // "tuning" section records the TF32 switch and the winners.
  CodegenResult compile(const Module &m, bool withBinary) const override {
    DriverOptions options = driverOptions;
    options.variants = tune_; // only --tune times them: no cost otherwise
    CodegenResult r = generateCode(m, *backend_, withBinary, options);
    if (!withBinary)
      return r;
    LibraryTuning t;
    t.tf32 = tf32_;
    summary_ = {};
    r.artifact.setSection(kSectionTuning, writeTuningSection(t)); // the TF32 switch, for tuning
    if (tune_) {
      auto start = std::chrono::steady_clock::now();
      tuneLibraryCalls(r.artifact, cachePath_, t, summary_, r.notes);
      r.timeline.push_back(
          {"tune library calls" + variantsNote(r.artifact),
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
      r.artifact.setSection(kSectionTimeline, artifactTimeline(m, r.timeline));
    }
    r.artifact.setSection(kSectionTuning, writeTuningSection(t));
    return r;
  }
  std::string emitText(const CodegenResult &r, const std::string &) const override {
    return compileCuda(r.source, backend_->arches().front(), CudaOutput::Ptx);
  }
  const char *sourceFile() const override { return "kernels.cu"; }
  const char *libraries() const override { return "cuBLASLt/cuDNN"; }
  void printStats(const CodegenResult &r, std::ostream &os) const override {
    for (const std::string &a : r.artifact.arches) {
      std::vector<const MemoryBuffer *> parts = r.artifact.cubins(a);
      size_t bytes = 0;
      for (const MemoryBuffer *p : parts)
        bytes += p->size();
      os << "  cubin " << a << ": " << bytes << " bytes";
      if (parts.size() > 1)
        os << " in " << parts.size() << " programs";
      os << "\n";
    }
    if (summary_.requested)
      os << summary_.statsLine() << "\n";
  }

private:
  std::unique_ptr<CudaCompileBackend> backend_;
  bool tune_ = false;
  std::string cachePath_;
  Tf32 tf32_ = Tf32::Conv;
  mutable TuningSummary summary_; // the last compile's
};

} // namespace

std::unique_ptr<CompileTarget> makeCudaCompileTarget() {
  return std::make_unique<CudaCompileTarget>();
}

} // namespace tc
