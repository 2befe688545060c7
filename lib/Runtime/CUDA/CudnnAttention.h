// An Attention group through cuDNN's fused flash attention (SDPA forward,
// inference: no dropout, the statistics virtual), built as an operation graph of the
// graph API (CudnnGraph.cpp, beside the conv graphs): the composite graph
// cuDNN's frontend builds for SDPA -- matmul q k^T, a pass-by-value scale,
// the additive mask, the causal mask (row and column indices, a compare and
// a select of -inf), softmax as max/sub/exp/sum, log/add (the statistics,
// which the engines' matcher needs) and div, matmul with v -- which
// the engines recognize as one fused attention kernel. The generated kernel
// stays in the artifact: a graph no engine takes is a refusal, not an error.
#pragma once
#include "CudnnConv.h"
#include "tc/Runtime/CudaLibraryPlan.h"

namespace tc::cuda {

class CudnnAttention {
public:
  struct Pointers {
    std::vector<CUdeviceptr> args; // by group argument index (AttentionDesc's)
    CUdeviceptr o = 0;
  };
  // nullptr with `why` when no engine takes the graph; `tuning` as
  // CudnnConv::create's (the engine configs of the heuristics).
  static std::unique_ptr<CudnnAttention> create(Cudnn &lib, const AttentionDesc &a,
                                                const Pointers &p, CallTuning &tuning,
                                                std::string &why);
  ~CudnnAttention();
  size_t workspaceBytes() const;
  void setWorkspace(CUdeviceptr ws);
  void run() const;
  // "cudnn-graph attention f16 b=4 h=16/16 ... engine=N"
  const std::string &describe() const { return describe_; }

private:
  CudnnAttention();
  std::unique_ptr<CudnnConv::Graph> graph_;
  std::string describe_;
};

} // namespace tc::cuda
