// CudaModel's plan for one input shape: the planned module (ShapePlan.h),
// its device arena, and every step resolved once: a kernel launch with its
// grid and packed parameter, a library call (with its epilogue's launch),
// or the host's reference kernels.
#pragma once
#include "CublasLtCall.h"
#include "CudnnAttention.h"
#include "CudnnConv.h"
#include "NcclCall.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Runtime/CudaTraceAttribution.h"
#include <optional>
#include <unordered_map>

namespace tc {

struct CudaModel::Step {
  const Op *op = nullptr;
  enum class Kind { Nothing, Kernel, Library, Collective, Host } kind = Kind::Host;
  // Kernel: the group's kernel; Library: its epilogue's (nullptr: folded or none).
  cuda::CUfunction fn = nullptr;
  LaunchDims launch;
  std::vector<uint64_t> params;             // the kernel's by-value parameter
  std::unique_ptr<cuda::CublasLtCall> gemm; // Library: one of these three
  std::unique_ptr<cuda::CudnnConv> conv;
  std::unique_ptr<cuda::CudnnAttention> sdpa;     // an Attention group (its kernel not launched)
  std::optional<cuda::CollectiveCall> collective; // Collective: NCCL's call
  cuda::DeviceMemory scratch; // the anchor's result where the epilogue changes its dtype
  std::string what;           // what runs it: the report line's end, a trace's detail
  // A multi-tensor run's later member (Nothing): the index of the step that
  // launches the run; -1 otherwise.
  int64_t launchedBy = -1;
  // Enqueues the kernel (fn, launch, params) on `stream`: each pass of a
  // `split` launch, its pass the parameter's last field.
  void launchKernel(cuda::CUstream stream) const;
};

// tune() in progress: the timer, the cache, the winners by call key and
// the keys the cache gave.
struct CudaModel::TuneRun {
  explicit TuneRun(cuda::CUstream stream, TuningCache &cache) : tuner(stream), cache(cache) {}
  cuda::Tuner tuner;
  TuningCache &cache;
  std::map<std::string, TunedCall> winners;
  std::set<std::string> hits;
};

struct CudaModel::ShapePlan {
  std::unique_ptr<PlannedModule> planned;
  // The planned intermediates, then each input at inputOffsets[arg].
  cuda::DeviceMemory arena;
  std::vector<uint64_t> inputOffsets;
  // Results written in place of an input (inPlaceResults): a KV cache's
  // present.N into past.N's slot, so the next step's input is already there.
  std::unordered_map<const Value *, size_t> inPlace;
  // Constants that folded for this shape (the artifact's own are weights_).
  std::map<const uint8_t *, cuda::DeviceMemory> folded;
  // RankSlice results: this rank's part of a weight (CudaModel::shards_), not the arena.
  std::unordered_map<const Value *, cuda::CUdeviceptr> shards;
  cuda::DeviceMemory convWorkspace;   // shared by the plan's cuDNN calls (convs, attention)
  cuda::ZeroedScratch columnsScratch; // shared by its `columns` and `split` kernels
  // Each multi-tensor launch's table (tc/CodeGen/MultiTensor.h) and the
  // words it was copied from (an async copy's source).
  std::vector<cuda::DeviceMemory> tables;
  std::vector<std::vector<uint64_t>> tableWords;
  std::vector<Step> steps;
  std::vector<std::string> report; // CudaModel::stepReport
  std::string shape;               // "batch=32", for messages
  uint64_t deviceBytes = 0;        // arena, inputs, workspaces, scratch
  size_t runs = 0;
  // The steps captured once as a CUDA graph (at the plan's second run: the
  // first lets the libraries finish their lazy set-up outside a capture),
  // replayed as one launch; or why the plan runs step by step.
  cuda::CUgraphExec graph = nullptr;
  size_t graphNodes = 0;
  std::string noGraph;
  // Profiling: an event after each step, summed device ms and runs.
  std::vector<cuda::CUevent> stepEvents;
  std::vector<double> stepMs;
  size_t profiledRuns = 0;
  // Tracing: the steps described (made at the first traced run), and the
  // device work each step launched in a step-by-step run (CUPTI), which
  // attributes a graph replay's kernels (CudaTraceAttribution.h).
  std::vector<StepInfo> info;
  std::optional<StepWork> work;
  ~ShapePlan();
};

} // namespace tc
