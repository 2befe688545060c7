// The runtime half of the target registry (Targets.def): a loaded artifact
// as one typed interface, and each backend's loader. No compiler library:
// libtcrt (the C API) links it (tcTargetRuntime, lib/Target/RuntimeRegistry.cpp);
// the compile half (Target.h) extends each entry.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/Profile/DevicePeaks.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/RunBuffers.h"
#include "tc/Runtime/Trace.h"
#include "tc/Support/MemoryBuffer.h"
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class Module;

// A flag a target adds to a tool (tc-codegen: --cpu, --arch; tc-run and
// tc-prof: --threads, --cuda-graphs).
struct TargetOption {
  std::string flag;                 // "arch"
  std::string valueName;            // "sm_90|sm_80,sm_90"
  std::string help;                 //
  std::vector<std::string> choices; // the values it takes ({}: any; the tool checks)
  std::string implicitValue = "";   // the value of the bare flag ("": it needs one)
};
// The values given on the command line, by flag (absent: not given).
using TargetOptionValues = std::map<std::string, std::string>;

// Steps of the last run, by what ran them.
struct StepCounts {
  size_t kernel = 0, library = 0, copy = 0, host = 0;
};
// What the last run did with its input shape's plan (tc-run --decode counts
// them per cache bucket).
struct RunEvents {
  bool planned = false;       // planned the shape (a new plan, not the cache's)
  bool graphRecorded = false; // recorded the plan's CUDA graph
  bool graphLaunched = false; // ran the plan as one CUDA graph
};
struct StepTime {
  std::string step; // as stepReport()'s line
  double meanMs;
};

class Executable {
public:
  virtual ~Executable() = default;
  virtual const Module &module() const = 0;
  // Inputs in argument order, outputs on the host (the device synchronized).
  virtual std::vector<HostTensor> run(const std::vector<HostTensor> &inputs) = 0;
  // Untimed runs before timed ones at least (CUDA records its graph at the
  // second).
  virtual int minWarmup() const { return 0; }
  // The last run: one line per step saying what ran it (empty: unplanned).
  virtual std::vector<std::string> stepReport() const = 0;
  virtual void setProfiling(bool on) = 0;
  virtual std::vector<StepTime> stepProfile() const = 0;
  // Tracing for tc-prof (RunTrace in tc/Runtime/Trace.h; nullptr: off).
  virtual void setTrace(RunTrace *trace) = 0;
  virtual StepCounts steps() const = 0;
  virtual uint64_t arenaBytes() const = 0; // 0: ran without one
  // A note on the last run worth a line ("a CUDA graph of 12 nodes ..."), or "".
  virtual std::string runNote() const { return ""; }
  virtual RunEvents lastRun() const { return {}; }
  // Before the timed runs (CUDA: peak device bytes count from here).
  virtual void startMeasuring() {}
  // The last run's device time, ms (< 0: none), and how it was measured.
  virtual double deviceMs() const { return -1; }
  virtual std::string deviceTimeNote() const { return ""; }
  // tc-run: the latency line's note (", 2 threads"), its --report=json
  // fields (", \"threads\": 2, ..."), and its summary lines ("steps: ...").
  virtual std::string latencyNote() const = 0;
  virtual void printJson(std::ostream &os) const = 0;
  virtual void printSummary(std::ostream &os) const = 0;
  // The roofline of the machine it runs on (tc-prof).
  virtual DevicePeaks peaks() const = 0;

  // The C API's run: inputs and outputs where the caller has them (host or,
  // on a GPU target, device memory; RunBuffers.h), the work on `stream` (a
  // GPU target's; nullptr: the model's own). This default runs run() on host
  // tensors; the C API refuses device memory and streams for targets that
  // are not `gpu` before calling it.
  virtual void runOn(void *stream, const std::vector<RunInput> &inputs,
                     std::vector<RunOutput> &outputs);
  // Copies `bytes` of device memory at `from` (the model's device's: a
  // ModelDevice output of the last run) into host memory at `to`, on
  // `stream` (nullptr: the model's own), and waits for it: the C API's
  // trainer reads its device-resident state so. GPU targets; the default
  // fails.
  virtual void copyToHost(void *stream, DeviceAddress from, void *to, size_t bytes);
  // Copies `t` into device memory this model keeps until it is destroyed,
  // and returns its address (a device input of later runs: tc-run --train
  // uploads its batches once, as a PyTorch loop keeps them on the GPU).
  // GPU targets; the default keeps nothing and returns 0 (runs read host
  // tensors).
  virtual DeviceAddress keepOnDevice(const HostTensor &) { return 0; }
  // Device memory (GPU targets): what the model planned to hold, and the
  // most tc held at once; 0 on the host.
  // A multi-rank artifact's collectives run over `comm`, a communicator of
  // the caller's (GPU targets: an ncclComm_t it keeps alive); without one,
  // the target makes its own from the launcher's environment
  // (tc/Runtime/DeviceRanks.h). The default fails: no collectives.
  virtual void setCommunicator(void *comm);
  virtual uint64_t plannedDeviceBytes() const { return 0; }
  virtual uint64_t peakDeviceBytes() const { return 0; }
};

// A backend's runtime entry: Targets.def's name, title and gpu column and
// the functions of lib/Target/<Id>/ that load and run its artifacts.
struct RuntimeTarget {
  const char *name, *title;
  bool gpu;
  // tc-run/tc-prof flags of its artifacts, and loading a read (and
  // verified: readArtifact) one with their values on device `device` (GPU
  // targets: the ordinal; tools use 0).
  std::vector<TargetOption> (*runOptions)();
  std::unique_ptr<Executable> (*load)(Artifact artifact, const TargetOptionValues &runOptions,
                                      int device);
  std::string (*deviceName)(); // "NVIDIA H100 80GB HBM3", "" when unknown
  // Opens what running needs before anything else is read: a tc::Error
  // ("no CUDA device") on a machine that cannot run this target.
  void (*openDevice)();
};

const std::vector<RuntimeTarget> &runtimeTargets();
// The entry of an artifact's target (its header's name), or a tc::Error
// "<file>: the artifact's target 'x' is none of this runtime's (cpu, cuda)".
const RuntimeTarget &runtimeTargetOf(std::string_view name, const std::string &file);

// Backends' runtime functions (lib/Target/<Id>/) and names (kCpuTarget:
// "cpu", what its loader gives its runtime), declared from Targets.def.
#define TC_TARGET(Id, name, ...)                                                                   \
  inline constexpr const char *k##Id##Target = name;                                               \
  std::vector<TargetOption> Id##RunOptions();                                                      \
  std::unique_ptr<Executable> load##Id##Executable(                                                \
      Artifact artifact, const TargetOptionValues &runOptions, int device);                        \
  std::string Id##DeviceName();                                                                    \
  void Id##OpenDevice();
#include "tc/Target/Targets.def"

} // namespace tc
