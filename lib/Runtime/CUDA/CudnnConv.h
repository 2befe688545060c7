// Conv groups through cuDNN (opened at first use, never linked). The graph
// API (CudnnGraph.cpp) first: the convolution with its bias and, where the
// ConvDesc says the whole epilogue fuses, the epilogue's pointwise ops as
// ONE operation graph, its plan from the heuristics (mode A, then fallback);
// if no engine takes the fused graph, the convolution and bias alone (the
// epilogue kernel runs after). Then, or with TC_CUDNN_API=legacy, the legacy
// API: the convolution with v7's algorithm, then cudnnAddTensor for the
// bias. Descriptors and plans are made at plan time; run() enqueues.
#pragma once
#include "LibraryTuner.h"
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tc::cuda {

// cuDNN for one model: a handle bound to the stream of the model's run. Throws "cuDNN
// not found (libcudnn.so.9: ...)" without the library.
// Which cuDNN API conv steps try first: TC_CUDNN_API=graph (the default:
// half types, and f32's backward passes; f32 forward convs on the legacy
// API), all-graph (every f32 pass too) or legacy, read when a model loads;
// another value is an error naming them. On the graph API, f32 without TF32
// takes no engine that rounds its operands.
enum class CudnnApi { Graph, AllGraph, Legacy };
CudnnApi cudnnApiFromEnv();

class Cudnn {
public:
  explicit Cudnn(CUstream stream);
  ~Cudnn();
  // cudnnGetVersion() of the library loaded (loading it).
  static size_t version();
  // The stream the next calls go on (a run on a caller's stream).
  void setStream(CUstream stream);
  Cudnn(const Cudnn &) = delete;
  Cudnn &operator=(const Cudnn &) = delete;

  // Graph-API plans by what they compute (CudnnGraph.cpp): equal convs of a
  // model share one plan (a runtime-fused engine compiles at finalize);
  // nullptr: no engine took it.
  struct GraphPlan;
  std::map<std::string, std::shared_ptr<GraphPlan>> &graphPlans() { return graphPlans_; }

private:
  friend class CudnnConv;
  friend class CudnnAttention;
  void *handle_ = nullptr; // cudnnHandle_t
  std::map<std::string, std::shared_ptr<GraphPlan>> graphPlans_;
};

class CudnnConv {
public:
  struct Pointers {
    std::vector<CUdeviceptr> args; // by group argument index (ConvDesc's indices)
    CUdeviceptr y = 0;
  };
  // nullptr with `why` when cuDNN has no algorithm for it (or sizes differ).
  // `tuning`: the recorded choice, or the tuner timing the candidates of the
  // path taken (graph: the heuristics' first kTopK engine configs that
  // finalize, "graph-fused cfg=A:2 engine=12"; legacy: v7's algorithms,
  // "legacy algo=1 math=1"), and what f32 may do (TF32 when tuning.tf32 is
  // conv or all: the default math type, else FMA).
  static std::unique_ptr<CudnnConv> create(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                           CudnnApi api, CallTuning &tuning, std::string &why);
  ~CudnnConv();
  // The workspace the chosen algorithm needs; the plan gives every conv one
  // buffer of the largest size.
  size_t workspaceBytes() const;
  void setWorkspace(CUdeviceptr ws);
  void run() const;
  // Whether the call computed the group's whole epilogue (no epilogue kernel).
  bool takesEpilogue() const { return takesEpilogue_; }
  // "cudnn conv ... algo=1" or "cudnn-graph conv ... epilogue=bias,add,relu engine=12"
  const std::string &describe() const { return describe_; }

private:
  friend class CudnnAttention; // shares the graph call (Graph)
  CudnnConv();
  struct Impl;  // the legacy API's call
  struct Graph; // the graph API's (CudnnGraph.cpp)
  static std::unique_ptr<CudnnConv> createLegacy(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                                 CallTuning &tuning, std::string &why);
  // `withEpilogue`: c.fused too; nullptr with `why` when no engine takes it.
  static std::unique_ptr<CudnnConv> createGraph(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                                bool withEpilogue, CallTuning &tuning,
                                                std::string &why);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Graph> graph_;
  bool takesEpilogue_ = false;
  std::string describe_;
};

} // namespace tc::cuda
