// MatMul/Gemm groups through cuBLASLt (opened at first use, never linked).
// Everything is made at plan time (descriptors, layouts, the heuristic's
// algorithm for the plan's pointers); run() only enqueues the GEMM.
#pragma once
#include "LibraryTuner.h"
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include <memory>
#include <string>

namespace tc::cuda {

// cuBLASLt for one model: a handle and the workspace every GEMM shares
// (runs are serial on the model's one stream). Throws "cuBLASLt not found
// (libcublasLt.so.13: ...)" without the library.
class CublasLt {
public:
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;
  CublasLt();
  ~CublasLt();
  // cublasLtGetVersion() of the library loaded (loading it).
  static size_t version();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

private:
  friend class CublasLtCall;
  void *handle_ = nullptr; // cublasLtHandle_t
  DeviceMemory workspace_;
};

class CublasLtCall {
public:
  struct Pointers {
    CUdeviceptr a = 0, b = 0, c = 0, bias = 0, d = 0; // c, bias: 0 when the GEMM has none
  };
  // nullptr with `why` when cuBLASLt has no algorithm for this GEMM. The
  // algorithm: the heuristic's first, or (`tuning`) the recorded one of its
  // top kTopK ("heuristic=I") or the fastest of them.
  static std::unique_ptr<CublasLtCall> create(CublasLt &lib, const GemmDesc &g, const Pointers &p,
                                              CallTuning &tuning, std::string &why);
  ~CublasLtCall();
  void run(CUstream stream) const;

private:
  CublasLtCall() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tc::cuda
