// If, Loop and Scan on the device in a step-by-step run (CudaStepByStep.cpp):
// ControlFlowRun.h's protocol over tensors in device memory. A callee runs
// op by op like the entry (its kernels launched at the sizes its operands
// give); the If cond, the Loop trip count and each iteration's cond are
// read back (one small device-to-host read and a sync each); carried values
// pass to the next iteration as they are (no copy); Scan slices along axis 0
// are views, others and every stacked output are device-to-device copies.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/CudaDriver.h"
#include <functional>
#include <memory>
#include <vector>

namespace tc::cuda {

// A tensor of the run in device memory.
struct DeviceTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  std::shared_ptr<DeviceMemory> memory; // null: not the run's (a device input, a weight)
  CUdeviceptr at = 0;
};

// What the step-by-step run lends the control flow.
struct StepByStepRun {
  CUstream stream = nullptr;
  // Runs `f` op by op with its arguments bound to `args`' bytes.
  std::function<std::vector<DeviceTensor>(const Function &f, const std::vector<DeviceTensor> &args)>
      runFunction;
  // Waits for the stream (a kernel's fault named).
  std::function<void()> sync;
  size_t *reads = nullptr; // counts the scalars read back
};

// `op`'s results from `ins` (nullptr: an absent optional operand).
std::vector<DeviceTensor> runControlFlowOnDevice(const Module &m, const Op &op,
                                                 const std::vector<const DeviceTensor *> &ins,
                                                 const StepByStepRun &run);

} // namespace tc::cuda
