// A CUDA artifact loaded on one GPU (the first unless told): the cubin built
// for its arch loaded into the device's primary context, a function per
// entry of the kernel table, a stream of its own, and running. Per distinct input shape
// (ShapePlan.h, shared with the CPU runtime): ONE device arena of the
// planned size plus room for the inputs, every generated kernel's parameter
// packed once, every library call (MatMul/Gemm: cuBLASLt, Conv: cuDNN, then
// the epilogue's kernel) set up once. Weights go to the device once. Steps
// with neither (what the emitter lacks, what the libraries are not given)
// run on the host's reference kernels, their operands and results copied,
// and count as fallbacks.
//
// Every copy, launch and library call of a run goes on one stream (the
// model's, or the caller's: runOn), and device steps neither allocate nor
// synchronize: a plan's steps are one stream of work (what a CUDA graph can
// capture).
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/LibraryTuning.h"
#include "tc/IR/IR.h"
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaLaunch.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/RunBuffers.h"
#include "tc/Runtime/ShapePlan.h"
#include "tc/Runtime/Trace.h"
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tc {

class NcclCommunicator;
namespace cuda {
struct CallTuning;
class CublasLt;
class Cudnn;
enum class CudnnApi;
} // namespace cuda

// How an Attention group runs (tc-run --attention): auto (the choice
// `tc-codegen --tune` recorded for its shape, else tc's kernel), tc's
// generated kernel, or cuDNN's fused flash attention where the group is
// one Attention op cuDNN takes (CudnnAttention.h; else the kernel, and a
// note says why).
enum class AttentionImpl { Auto, Kernel, Cudnn };
inline constexpr const char *kAttentionImplNames[] = {"auto", "kernel", "cudnn"};

class CudaModel {
public:
  // Checks the artifact (target, kernel table) before touching the driver,
  // then: "no CUDA device (...)", or a GPU it has no cubin for ("compiled
  // for sm_80,sm_90; this GPU (NAME) is sm_75: ..."), or the driver's error
  // loading the cubin. Every error is a tc::Error naming the file.
  // `libraries` false: MatMul/Gemm/Conv groups run on the host's reference
  // kernels (tc-run --cuda-libraries=off; no cuBLASLt/cuDNN needed).
  // `ordinal`: the device (cuDeviceGet's numbering); one the machine lacks
  // is "no CUDA device N (...)". Leaves the device's primary context current
  // on the calling thread.
  // `target`: the artifact target this runtime runs (Targets.def's name,
  // from the registry).
  static std::unique_ptr<CudaModel> load(Artifact artifact, const char *target,
                                         bool libraries = true, int ordinal = 0);
  ~CudaModel();

  const Artifact &artifact() const { return artifact_; }
  const Module &module() const { return *module_; }
  const std::string &arch() const { return arch_; }     // the cubin loaded: "sm_90"
  const std::string &device() const { return device_; } // "NVIDIA H100 80GB HBM3"
  size_t kernelCount() const { return kernels_.size(); }
  // The model's own stream: run()'s work goes on it; plans are captured on it.
  cuda::CUstream stream() const { return stream_; }

  // Runs the entry function: host tensors in (checked like the reference
  // executor checks them), host tensors out, the device synchronized. A
  // shape that cannot be planned (sizes known only at run time) runs op by
  // op, its kernels on the device at the sizes the run finds
  // (CudaStepByStep.cpp).
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs);

  // runOn's inputs and outputs (RunBuffers.h).
  using Input = RunInput;
  using Output = RunOutput;
  // Runs the entry with all its work on `stream` (any stream of this model's
  // context; the caller orders runs on different streams, as they share the
  // plan's arena; nullptr: the model's own, and the run waits for it).
  // Device inputs and outputs are copied into and out of the arena, so a
  // plan's CUDA graph (captured on the model's own stream) replays on any
  // stream. Waits for the stream only where it must: a Host output, a step
  // on the host (its operands downloaded), an unplanned shape (op by op: its
  // count read-backs, host steps), tracing or profiling; returns whether it waited. Otherwise the
  // work is only enqueued: its faults surface at the caller's next
  // synchronize, and deviceMs() is -1.
  bool runOn(cuda::CUstream stream, const std::vector<Input> &inputs, std::vector<Output> &outputs);
  // Copies `bytes` at `from` (device memory of this model's context: a
  // ModelDevice output) to host memory `to` on `stream` (nullptr: the
  // model's own) and waits for that stream.
  void copyToHost(cuda::CUstream stream, cuda::CUdeviceptr from, void *to, size_t bytes);
  // Copies `bytes` of host memory into device memory kept until the model is
  // destroyed (waits for the copy); returns its address.
  cuda::CUdeviceptr keepOnDevice(const void *data, size_t bytes);
  // The last run: steps by a generated kernel, by a library call and on the
  // host, the device arena's bytes (0: it ran without one), one line per step
  // saying what ran it (empty when unplanned).
  // CUDA graphs (on by default): a plan whose steps are all on the device
  // is captured once and replayed.
  void setGraphs(bool on) { graphs_ = on; }
  // A multi-rank artifact (tensor- or data-parallel: Ops.def "Distributed"):
  // the group size its collectives name (0: none), and the NCCL
  // communicator they run over: `comm` (an ncclComm_t the caller keeps
  // alive; its size must be ranks()), else, at the first plan, one made from
  // the launcher's environment (tc/Runtime/DeviceRanks.h; a 1-rank program
  // makes a 1-rank one). RankSlice'd weights are this rank's part, uploaded
  // once.
  int ranks() const { return ranks_; }
  void setCommunicator(void *comm);
  // Attention groups (AttentionImpl); for plans made after the call.
  void setAttention(AttentionImpl a) { attention_ = a; }
  // Profiling: runs go step by step (no graph) with an event after each
  // step; stepProfile() gives each step's mean device time over those runs.
  void setProfiling(bool on) { profile_ = on; }
  struct StepProfile {
    std::string step; // the step's report line
    double meanMs;
  };
  std::vector<StepProfile> stepProfile() const;
  // Tracing (tc-prof): runs record Host events (one per step enqueued, per
  // graph replay, per input/output copy) and, through CUPTI when it loads,
  // Api and Device events (every kernel and memcpy, graph replays included)
  // attributed to steps; without CUPTI, per-step CUDA events stand in for
  // the Device track (step by step). Sets trace->steps/device/deviceNote.
  // nullptr: off. Not owned. The caller records each run's "run" event.
  // A graph replay's kernels are attributed by the kernels a step-by-step
  // run of the plan launched under CUPTI. For the last run's plan, whose
  // graph warm-up runs recorded untraced, setTrace learns them with one
  // untraced step-by-step pass (the arena's last inputs; nothing recorded);
  // another such plan runs its first traced run step by step. CUPTI is per
  // process: trace one model at a time.
  void setTrace(RunTrace *trace);
  // The last run: whether it replayed a CUDA graph, and what it recorded
  // ("a CUDA graph of N nodes for batch=32"; empty: nothing new) or why a
  // plan runs step by step.
  bool ranGraph() const { return ranGraph_; }
  // The last run made its shape's plan / recorded the plan's graph.
  bool plannedShape() const { return planned_; }
  // The last run had a shape plan (its arena may be empty: every result in place).
  bool ranPlanned() const { return lastPlan_ != nullptr; }
  bool recordedGraph() const { return recorded_; }
  const std::string &graphNote() const { return graphNote_; }
  // The last run's device time from its first step to its last (CUDA
  // events; inputs and outputs copies excluded); < 0 without events.
  double deviceMs() const { return deviceMs_; }
  // The last plan's device bytes: predicted by the memory plan (arena and
  // inputs, weights, workspaces the plan sized).
  uint64_t plannedDeviceBytes() const;
  size_t kernelSteps() const { return kernelSteps_; }
  size_t librarySteps() const { return librarySteps_; }
  size_t hostSteps() const { return hostSteps_; }
  // Counts read back to size a compaction kernel's results (one i64 each:
  // a device-to-host sync, not a host step) in an unplanned run.
  size_t countReads() const { return countReads_; }
  // Control-flow scalars read back (an If's cond, a Loop's trip count and
  // each iteration's cond: one element each, a device-to-host sync) in an
  // unplanned run.
  size_t controlReads() const { return controlReads_; }
  uint64_t arenaBytes() const { return arenaBytes_; }
  std::vector<std::string> stepReport() const;

  // Library algorithm choice (LibraryTuning.h). This machine's key for
  // recorded choices: the GPU, its compute capability, cuDNN's and
  // cuBLASLt's versions (0 for one that does not load) and the driver's.
  // An artifact's choices recorded for another key are not used (one note);
  // one the library turns down leaves the heuristic's (one note per call).
  TuningEnv tuningEnv() const;
  // tc-codegen --tune: plans the static shape (every input dim static) on
  // an arena of random data, timing each library call's candidates (a call
  // `cache` holds for this machine is not timed: a hit); returns the
  // winners by call key, which `cache` gets too, and counts into `summary`.
  std::map<std::string, TunedCall> tune(TuningCache &cache, TuningSummary &summary);
  // The notes the runs made about recorded choices (and attention groups
  // cuDNN turned down), each once.
  const std::vector<std::string> &tuningNotes() const { return tuningNotes_; }

private:
  CudaModel() = default;
  struct Kernel {
    CudaKernelEntry entry;
    cuda::CUfunction fn = nullptr;
  };
  struct ShapePlan;
  struct Step;
  Artifact artifact_;
  const char *target_ = "";
  std::unique_ptr<Module> module_;
  std::string arch_, device_;
  int cc_ = 0; // compute capability: 90
  cuda::CUdevice dev_ = 0;
  cuda::CUcontext ctx_ = nullptr;
  std::vector<cuda::CUmodule> cubins_; // the arch's programs (Artifact.h: cubinSection)
  cuda::CUdeviceptr fault_ = 0;        // the first's fault record; 0: no kernel may fault
  cuda::CUstream stream_ = nullptr;    // the model's own
  cuda::CUstream work_ = nullptr;      // the stream the current run's work goes on
  bool libraries_ = true;
  // Made the first time a plan calls them (the libraries opened then).
  std::unique_ptr<cuda::CublasLt> cublasLt_;
  std::unique_ptr<cuda::Cudnn> cudnn_;
  cuda::CudnnApi cudnnApi_{};             // TC_CUDNN_API at load
  std::map<std::string, Kernel> kernels_; // by Fused callee
  // Kernels with geometry variants (tc-codegen --tune: the artifact's
  // "kernel-variants", CudaLaunch.h), by Fused callee: the tuning key's
  // start, and each variant's name and kernel (0: kernels_'s).
  struct Variants {
    std::string key;
    std::vector<std::string> names;
    std::vector<Kernel> kernels;
  };
  std::map<std::string, Variants> variants_;
  // The kernel `symbol` in the loaded programs.
  cuda::CUfunction functionOf(const std::string &symbol) const;
  // Reads the "kernel-variants" section (CudaKernelVariants.cpp).
  void loadVariants();
  // Which variant a plan's kernel step `s` of `op` (the default's launch
  // set) runs: the artifact's recorded one, or under tune() the fastest
  // (a cache hit: the cache's). Returns the report's words for it.
  std::string pickVariant(const Variants &v, const Op &op, const std::vector<int64_t> &domain,
                          Step &s);
  std::map<const uint8_t *, cuda::DeviceMemory> weights_; // the artifact's, by host address
  std::unique_ptr<ShapePlanCache<ShapePlan>> plans_;
  ShapePlan *lastPlan_ = nullptr;
  size_t kernelSteps_ = 0, librarySteps_ = 0, hostSteps_ = 0, countReads_ = 0, controlReads_ = 0;
  // The control-flow ops codegen compiled (ControlFlowSection.h): they run
  // on the device in an unplanned run; any other is a host step.
  std::map<const Op *, std::string> controlFlow_;
  cuda::DeviceMemory countBuffer_; // a compaction kernel's count and flags (CudaStepByStep.cpp)
  // The op-by-op run's scratch for `columns` and `split` kernels.
  cuda::ZeroedScratch stepScratch_;
  uint64_t arenaBytes_ = 0;
  AttentionImpl attention_ = AttentionImpl::Auto;
  bool graphs_ = true, ranGraph_ = false, profile_ = false, planned_ = false, recorded_ = false;
  std::string graphNote_;
  // ModelDevice outputs of an unplanned run (a planned one's are in its arena).
  std::vector<cuda::DeviceMemory> unplannedOutputs_;
  std::vector<cuda::DeviceMemory> kept_; // keepOnDevice's copies
  double deviceMs_ = -1;
  cuda::CUevent start_ = nullptr, stop_ = nullptr; // around a run's steps
  RunTrace *trace_ = nullptr;                      // nullptr: not tracing (all it costs then)
  bool cupti_ = false;             // trace_'s device events from CUPTI, else CUDA events
  std::vector<TraceEvent> traced_; // this run's events, until attributed
  double firstStepUs_ = 0;         // host time the run's first step began
  LibraryTuning tuning_;           // the artifact's "tuning" section
  std::string env_;                // tuningEnv().key(), when first needed
  struct TuneRun;
  TuneRun *tuneRun_ = nullptr; // tune() in progress
  int ranks_ = 0;              // the collectives' group size (0: none)
  void *comm_ = nullptr;       // ncclComm_t: the caller's or ownComm_'s
  int commRank_ = 0;
  std::unique_ptr<NcclCommunicator> ownComm_;
  // This rank's part of each RankSlice'd weight, by (its bytes, axis).
  std::map<std::pair<const uint8_t *, int64_t>, cuda::DeviceMemory> shards_;
  void *communicator();
  cuda::CUdeviceptr shardOnDevice(const Op &rankSlice);
  std::vector<std::string> tuningNotes_;
  void tuningNote(const std::string &note);
  // What library call `key` is handed (CudaModelTuning.cpp), and the report's
  // words for what it did with it (" tuned(<choice>)").
  cuda::CallTuning callTuning(const std::string &key);
  std::string tunedText(const std::string &key, const cuda::CallTuning &t);

  // Fails naming the op when a kernel of the run recorded a fault (reads and
  // clears the record; the stream drained).
  void checkFault();
  std::unique_ptr<ShapePlan> makePlan(const std::map<std::string, int64_t> &sizes);
  cuda::CUdeviceptr weightOnDevice(const Value &v,
                                   std::map<const uint8_t *, cuda::DeviceMemory> &folded);
  cuda::CUdeviceptr devicePtr(ShapePlan &plan, const Value *v);
  std::vector<uint64_t> kernelParams(ShapePlan &plan, const std::vector<const Value *> &values,
                                     const std::vector<cuda::CUdeviceptr> &at = {});
  std::string planLibraryStep(ShapePlan &plan, const Op &op, const Kernel &k, Step &s);
  // What a library step is handed, by a plan or by an unplanned run: the
  // group, its operands' types and its result 0's (static), their device
  // buffers, and the epilogue kernel's packed parameter given the buffer
  // the anchor writes.
  struct LibraryOperands {
    const Function *group = nullptr;
    std::vector<TensorType> args;
    TensorType result;
    std::function<cuda::CUdeviceptr(size_t)> operand;
    cuda::CUdeviceptr result0 = 0;
    std::function<std::vector<uint64_t>(cuda::CUdeviceptr anchor)> epilogueParams;
  };
  std::string makeLibraryStep(const LibraryOperands &o, const Kernel &k, Step &s);
  std::string planMultiTensorStep(ShapePlan &plan, const Function &f, size_t first, const Kernel &k,
                                  Step &s, uint64_t &scratchAt);
  std::string planAttentionStep(ShapePlan &plan, const Op &op, Step &s, std::string kernel);
  bool runPlanned(ShapePlan &plan, const std::vector<Input> &inputs, std::vector<Output> &outputs,
                  bool wait);
  bool runUnplanned(const std::vector<Input> &inputs, std::vector<Output> &outputs);
  void useStream(cuda::CUstream stream);
  void enqueueSteps(ShapePlan &plan, const std::function<HostTensor(const Value *)> &download,
                    const char *traceNote = nullptr);
  void capture(ShapePlan &plan);
  void traceHost(std::string name, std::string category, int step, double startUs,
                 std::string note = {});
  void finishTrace(ShapePlan &plan);
  void describeSteps(ShapePlan &plan);
  void learnStepWork(ShapePlan &plan);
};

} // namespace tc
