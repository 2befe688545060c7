// Inputs and outputs of a run given by where their bytes are: host tensors,
// or device memory (GPU targets). What the C API hands a loaded model
// (Executable::runOn, tc/Target/Executable.h) and CudaModel::runOn takes.
#pragma once
#include "tc/Runtime/HostTensor.h"
#include <cstddef>
#include <vector>

namespace tc {

// A device address (CUdeviceptr's type).
using DeviceAddress = unsigned long long;

// An input: a host tensor, or `bytes` at `device` (memory of the model's
// context, i.e. the device's primary context: what cudaMalloc gives)
// holding dtype[shape], read on the run's stream.
struct RunInput {
  const HostTensor *host = nullptr; // set: on the host; the rest unused
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  DeviceAddress device = 0;
  size_t bytes = 0;
};

// An output, by where the caller wants it.
struct RunOutput {
  enum class To {
    Host,         // into `host` (the run waits for the device)
    ModelDevice,  // left in the model's device memory: `device` is set, valid
                  // until the next run (whose work may overwrite it, after it
                  // copied its device inputs: one may be this output)
    CallerDevice, // copied on the stream into `device`, `capacity` bytes of room
  } to = To::Host;
  DeviceAddress device = 0;
  size_t capacity = 0;        // CallerDevice: the buffer's bytes
  size_t bytes = 0;           // set by the run: the output's size
  std::vector<int64_t> shape; // set by the run
  HostTensor host;            // To::Host: set by the run
};

// A ModelDevice output given to the next run as its input of `dtype` (a
// train step's state, a decode step's caches: they stay on the device).
inline RunInput nextRunInput(const RunOutput &o, DType dtype) {
  return RunInput{nullptr, dtype, o.shape, o.device, o.bytes};
}

} // namespace tc
