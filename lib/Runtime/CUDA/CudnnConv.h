// Conv groups through cuDNN's legacy convolution API (opened at first use,
// never linked): descriptors and the algorithm made at plan time; run()
// enqueues the convolution, then the bias add, on the handle's stream.
#pragma once
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaLibraryPlan.h"
#include <memory>
#include <string>

namespace tc::cuda {

// cuDNN for one model: a handle bound to the stream of the model's run. Throws "cuDNN
// not found (libcudnn.so.9: ...)" without the library.
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

private:
  friend class CudnnConv;
  void *handle_ = nullptr; // cudnnHandle_t
};

class CudnnConv {
public:
  struct Pointers {
    CUdeviceptr x = 0, w = 0, bias = 0, y = 0; // bias: 0 without one
  };
  // nullptr with `why` when cuDNN has no algorithm for it (or sizes differ).
  static std::unique_ptr<CudnnConv> create(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                           std::string &why);
  ~CudnnConv();
  // The workspace the chosen algorithm needs; the plan gives every conv one
  // buffer of the largest size.
  size_t workspaceBytes() const;
  void setWorkspace(CUdeviceptr ws);
  void run() const;
  // "conv ... algo=1"
  const std::string &describe() const { return describe_; }

private:
  CudnnConv() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string describe_;
};

} // namespace tc::cuda
