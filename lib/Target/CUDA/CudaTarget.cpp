// The CUDA backend in the registry: tc-codegen's --arch over CudaBackend
// (lib/CodeGen/CudaCodegen.cpp), and a loaded artifact as a thin adapter
// over CudaModel (lib/Runtime/CUDA).
#include "../ModelExecutable.h"
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Support/Error.h"

namespace tc {

namespace {

// CudaBackend, knowing what the runtime's library plans fold: a library
// group whose epilogue has no kernel stays off the host when cuBLASLt/cuDNN
// take the whole epilogue at the call's static types (CudaLibraryPlan.h).
class CudaCompileBackend : public CudaBackend {
public:
  using CudaBackend::CudaBackend;
  bool libraryTakesEpilogue(const GroupCode &g) const override {
    std::vector<TensorType> args;
    for (const Value *v : g.call->operands)
      args.push_back(v->type);
    const TensorType &result = g.call->result()->type;
    std::string why;
    if (g.library == "cublaslt")
      if (std::optional<GemmDesc> d = describeGemm(*g.group, args, result, why))
        return d->epilogueFolded;
    if (g.library == "cudnn")
      if (std::optional<ConvDesc> d = describeConv(*g.group, args, result, why))
        return d->epilogueFolded;
    return false;
  }
};

class CudaCompileTarget : public CompileTarget {
public:
  std::vector<TargetOption> options() const override {
    return {{"arch",
             "sm_90|sm_80,sm_90",
             "CUDA arches to compile cubin for (default sm_90); several make one fat artifact",
             {}}};
  }
  std::vector<std::string> emitKinds() const override { return {"source", "ptx"}; }
  void configure(const TargetOptionValues &values, const std::string &emit) override {
    auto arch = values.find("arch");
    std::vector<std::string> arches = parseCudaArchs(arch == values.end() ? "sm_90" : arch->second);
    if (emit == "ptx" && arches.size() != 1)
      fail("--emit=ptx writes the PTX of one arch; --arch names ", arches.size());
    backend_ = std::make_unique<CudaCompileBackend>(arches);
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

// The first GPU's roofline from its attributes (CudaModel runs on it).
DevicePeaks firstGpuPeaks() {
  const cuda::Driver &d = cuda::driver();
  cuda::CUdevice dev = 0;
  d.deviceGet(&dev, 0);
  auto attr = [&](int which) {
    int v = 0;
    return d.deviceGetAttribute(&v, which, dev) == 0 ? v : 0;
  };
  // CU_DEVICE_ATTRIBUTE_*: COMPUTE_CAPABILITY_MAJOR/MINOR 75/76,
  // MULTIPROCESSOR_COUNT 16, CLOCK_RATE 13, MEMORY_CLOCK_RATE 36,
  // GLOBAL_MEMORY_BUS_WIDTH 37 (kHz, kHz, bits).
  return gpuPeaks(attr(75), attr(76), attr(16), attr(13), attr(36), attr(37));
}

class CudaExecutable : public ModelExecutable<CudaModel> {
public:
  using ModelExecutable::ModelExecutable;
  int minWarmup() const override { return 2; } // the second run records the graph
  std::vector<StepTime> stepProfile() const override {
    std::vector<StepTime> out;
    for (const CudaModel::StepProfile &p : m_->stepProfile())
      out.push_back({p.step, p.meanMs});
    return out;
  }
  void setTrace(RunTrace *trace) override { // the host issues, the GPU runs alongside
    m_->setTrace(trace);
    if (trace)
      trace->asyncDevice = true;
  }
  StepCounts steps() const override {
    return {m_->kernelSteps(), m_->librarySteps(), 0, m_->hostSteps()};
  }
  std::string runNote() const override { return m_->graphNote(); }
  void startMeasuring() override { cuda::resetDeviceBytesPeak(); }
  double deviceMs() const override { return m_->deviceMs(); }
  std::string deviceTimeNote() const override {
    return std::string("CUDA events, ") + (m_->ranGraph() ? "one CUDA graph" : "step by step");
  }
  std::string latencyNote() const override {
    return ", " + m_->device() + ", host wall time incl. copies";
  }
  void printJson(std::ostream &os) const override {
    os << ", \"device\": \"" << m_->device() << "\", \"arch\": \"" << m_->arch()
       << "\", \"kernel_steps\": " << m_->kernelSteps()
       << ", \"library_steps\": " << m_->librarySteps()
       << ", \"fallback_steps\": " << m_->hostSteps() << ", \"arena_bytes\": " << m_->arenaBytes()
       << ", \"cuda_graph\": " << (m_->ranGraph() ? "true" : "false")
       << ", \"peak_device_bytes\": " << cuda::deviceBytesPeak()
       << ", \"planned_device_bytes\": " << m_->plannedDeviceBytes();
  }
  void printSummary(std::ostream &os) const override {
    os << "steps: " << m_->kernelSteps() << " generated kernels, " << m_->librarySteps()
       << " library calls, " << m_->hostSteps() << " on the host (reference kernels); "
       << (m_->arenaBytes() ? "one device arena of " + std::to_string(m_->arenaBytes()) + " bytes"
                            : std::string("no arena (sizes known only at run time)"))
       << "\n"
       << "device memory: peak " << cuda::deviceBytesPeak() << " bytes held by tc, "
       << m_->plannedDeviceBytes() << " planned (arena, inputs, weights, workspaces)\n";
  }
  DevicePeaks peaks() const override { return firstGpuPeaks(); }
};

} // namespace

std::unique_ptr<CompileTarget> makeCudaCompileTarget() {
  return std::make_unique<CudaCompileTarget>();
}

std::vector<TargetOption> CudaRunOptions() {
  return {{"cuda-libraries",
           "on|off",
           "CUDA artifacts: off runs MatMul/Gemm/Conv groups on the host's reference kernels "
           "instead of cuBLASLt/cuDNN (to bisect numerics; no library needed)",
           {"on", "off"}},
          {"cuda-graphs",
           "on|off",
           "CUDA artifacts: capture each input shape's plan into a CUDA graph at its second "
           "run and replay it (on); off launches step by step",
           {"on", "off"}}};
}

std::unique_ptr<Executable> loadCudaExecutable(Artifact artifact,
                                               const TargetOptionValues &runOptions) {
  auto off = [&](const char *flag) {
    auto v = runOptions.find(flag);
    return v != runOptions.end() && v->second == "off";
  };
  CudaOpenDevice();
  std::unique_ptr<CudaModel> m = CudaModel::load(std::move(artifact), !off("cuda-libraries"));
  m->setGraphs(!off("cuda-graphs"));
  return std::make_unique<CudaExecutable>(std::move(m));
}

void CudaOpenDevice() {
  cuda::driver(); // "no CUDA device" before anything else
}

std::string CudaDeviceName() {
  try {
    const cuda::Driver &d = cuda::driver();
    cuda::CUdevice dev = 0;
    char name[256] = {};
    if (d.deviceGet(&dev, 0) == 0 && d.deviceGetName(name, sizeof name - 1, dev) == 0)
      return name;
  } catch (const Error &) { // no driver or no device: the caller names the target
  }
  return "";
}

} // namespace tc
