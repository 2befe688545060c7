// A CUDA artifact loaded on this machine's first GPU: the cubin built for
// its arch loaded into the primary context, and a function per entry of the
// kernel table with its launch kind. Running (one device arena from the
// memory plan, launches in plan order, library calls, CUDA graphs) is the
// next step of the CUDA backend issue; nothing here has run on a GPU yet.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaLaunch.h"
#include <map>
#include <memory>
#include <string>

namespace tc {

class CudaModel {
public:
  // Checks the artifact (target, kernel table) before touching the driver,
  // then: "no CUDA device (...)", or a GPU it has no cubin for ("compiled
  // for sm_80,sm_90; this GPU (NAME) is sm_75: ..."), or the driver's error
  // loading the cubin. Every error is a tc::Error naming the file.
  static std::unique_ptr<CudaModel> load(std::shared_ptr<const MemoryBuffer> file);
  ~CudaModel();

  const Artifact &artifact() const { return artifact_; }
  const std::string &arch() const { return arch_; }     // the cubin loaded: "sm_90"
  const std::string &device() const { return device_; } // "NVIDIA H100 80GB HBM3"
  size_t kernelCount() const { return kernels_.size(); }

private:
  CudaModel() = default;
  struct Kernel {
    CudaKernelEntry entry;
    cuda::CUfunction fn = nullptr;
  };
  Artifact artifact_;
  std::string arch_, device_;
  cuda::CUdevice dev_ = 0;
  cuda::CUcontext ctx_ = nullptr;
  cuda::CUmodule module_ = nullptr;
  std::map<std::string, Kernel> kernels_; // by Fused callee
};

} // namespace tc
