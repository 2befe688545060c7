// The CUDA backend's runtime half in the registry: a loaded artifact as a
// thin adapter over CudaModel (lib/Runtime/CUDA). In tcTargetRuntime: no
// compiler library.
#include "../ModelExecutable.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Support/Error.h"
#include <algorithm>

namespace tc {

namespace {

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
  RunEvents lastRun() const override {
    return {m_->plannedShape(), m_->recordedGraph(), m_->ranGraph()};
  }
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
    if (m_->ranks()) // a multi-rank artifact's group
      os << ", \"ranks\": " << m_->ranks();
  }
  void printSummary(std::ostream &os) const override {
    os << "steps: " << m_->kernelSteps() << " generated kernels, " << m_->librarySteps()
       << " library calls" << (m_->ranks() ? " (NCCL collectives among them)" : "") << ", "
       << m_->hostSteps() << " on the host (reference kernels)"
       << (m_->countReads() ? ", " + std::to_string(m_->countReads()) +
                                  " counts read back (device-to-host syncs sizing results)"
                            : std::string())
       << (m_->controlReads() ? ", " + std::to_string(m_->controlReads()) +
                                    " control-flow scalars read back (If cond, Loop trip count "
                                    "and cond: device-to-host syncs)"
                              : std::string())
       << "; "
       << (m_->arenaBytes() || m_->ranPlanned()
               ? "one device arena of " + std::to_string(m_->arenaBytes()) + " bytes"
               : std::string("no arena (sizes known only at run time)"))
       << "\n"
       << "device memory: peak " << cuda::deviceBytesPeak() << " bytes held by tc, "
       << m_->plannedDeviceBytes() << " planned (arena, inputs, weights, workspaces)\n";
    for (const std::string &note : m_->tuningNotes())
      os << "note: " << note << "\n";
  }
  DevicePeaks peaks() const override { return firstGpuPeaks(); }
  void runOn(void *stream, const std::vector<RunInput> &inputs,
             std::vector<RunOutput> &outputs) override {
    m_->runOn(static_cast<cuda::CUstream>(stream), inputs, outputs);
  }
  void copyToHost(void *stream, DeviceAddress from, void *to, size_t bytes) override {
    m_->copyToHost(static_cast<cuda::CUstream>(stream), from, to, bytes);
  }
  DeviceAddress keepOnDevice(const HostTensor &t) override {
    return m_->keepOnDevice(t.bytes(), t.byteSize());
  }
  void setCommunicator(void *comm) override { m_->setCommunicator(comm); }
  uint64_t plannedDeviceBytes() const override { return m_->plannedDeviceBytes(); }
  uint64_t peakDeviceBytes() const override { return cuda::deviceBytesPeak(); }
};

} // namespace

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
           {"on", "off"}},
          {"attention",
           "auto|kernel|cudnn",
           "CUDA artifacts: how Attention groups run: tc's generated kernel, cuDNN's fused flash "
           "attention where cuDNN takes the group (else the kernel, with a note), or auto (the "
           "winner tc-codegen --tune recorded for the shape, else the kernel)",
           {"auto", "kernel", "cudnn"}}};
}

std::unique_ptr<Executable> loadCudaExecutable(Artifact artifact,
                                               const TargetOptionValues &runOptions, int device) {
  auto off = [&](const char *flag) {
    auto v = runOptions.find(flag);
    return v != runOptions.end() && v->second == "off";
  };
  // tc-run checks its flags against their choices; the C API's
  // tc_load_options.attention is checked here, before the device is touched.
  AttentionImpl attention = AttentionImpl::Auto;
  if (auto a = runOptions.find("attention"); a != runOptions.end()) {
    const char *const *names = std::begin(kAttentionImplNames);
    const char *const *it = std::find(names, std::end(kAttentionImplNames), a->second);
    if (it == std::end(kAttentionImplNames))
      fail("unknown attention '", a->second, "' (auto, kernel or cudnn)");
    attention = AttentionImpl(it - names);
  }
  CudaOpenDevice();
  std::unique_ptr<CudaModel> m =
      CudaModel::load(std::move(artifact), kCudaTarget, !off("cuda-libraries"), device);
  m->setGraphs(!off("cuda-graphs"));
  m->setAttention(attention);
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
