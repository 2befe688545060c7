// CudaModel's plan for one input shape: the planned module (ShapePlan.h),
// its device arena, and every step resolved once: a kernel launch with its
// grid and packed parameter, or the host's reference kernels.
#pragma once
#include "tc/Runtime/CudaModel.h"

namespace tc {

struct CudaModel::ShapePlan {
  std::unique_ptr<PlannedModule> planned;
  // The planned intermediates, then each input at inputOffsets[arg].
  cuda::DeviceMemory arena;
  std::vector<uint64_t> inputOffsets;
  // Constants that folded for this shape (the artifact's own are weights_).
  std::map<const uint8_t *, cuda::DeviceMemory> folded;
  struct Step {
    const Op *op = nullptr;
    enum class Kind { Nothing, Kernel, Host } kind = Kind::Host;
    cuda::CUfunction fn = nullptr;
    LaunchDims launch;
    std::vector<uint64_t> params; // the kernel's by-value parameter
  };
  std::vector<Step> steps;
  std::vector<std::string> report; // CudaModel::stepReport
};

} // namespace tc
