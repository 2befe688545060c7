// Checkpoints of a train step's state (tc/IR/TrainSignature.h) in
// safetensors (Safetensors.h): what tc-run --train (lib/Tools/TrainLoop.cpp)
// and the C API's trainer (tc_runtime.h, tc_trainer_*) write and read, one
// implementation for both.
//
//   FILE                           the model's state (parameters, then buffers)
//                                  under its ONNX initializer names, metadata
//                                  format "pt" (safetensors.torch.load_file)
//   FILE's .optimizer.safetensors  the optimizer's (`<param>.exp_avg`, ...,
//                                  `optimizer.step`), metadata "tc-optimizer"
#pragma once
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/HostTensor.h"
#include <string>
#include <vector>

namespace tc {

// A train step's state: what the record says, each value's checkpoint key
// and declared type (main's trailing arguments), in state order.
struct TrainStateLayout {
  TrainSignature sig;
  std::vector<std::string> keys;
  std::vector<TensorType> types;
  // Derived state (TrainSignature.h derivedState): the index of each
  // value's source, or -1. A checkpoint skips derived values.
  std::vector<int64_t> derivedFrom;
  // The first `modelState()` values go into FILE, the rest into the
  // optimizer's file.
  size_t modelState() const { return sig.params + sig.buffers; }
};

// The layout of a training module (`sig`: trainSignature(m)).
TrainStateLayout trainStateLayout(const Module &m, const TrainSignature &sig);

// The optimizer state's file beside a model checkpoint: x.safetensors ->
// x.optimizer.safetensors (any other name: name.optimizer.safetensors).
std::string optimizerCheckpointPath(const std::string &checkpoint);

// Writes both files (each atomically, writeSafetensors); `state` in the
// layout's order. Throws tc::Error naming the file.
void writeTrainCheckpoint(const std::string &path, const TrainStateLayout &l,
                          const std::vector<HostTensor> &state);

// Reads both files (the model's only, for a state without optimizer values:
// an eval step's) and checks them against the layout before returning
// anything: a damaged file (readSafetensors' line), a tensor the state lacks
// ("FILE: no tensor 'fc.bias' (the model's state has N tensors)"), one it
// has not ("FILE: tensor 'stray' is not part of this model's state"), or of
// another type ("FILE: tensor 'fc.weight' is f32[32,10], the model's is
// f32[10,32]") is one tc::Error. Returns the state in the layout's order,
// derived values computed from their sources (a cast, as the step does).
std::vector<HostTensor> readTrainCheckpoint(const std::string &path, const TrainStateLayout &l);

// The state @init gives (the reference executor runs it), derived values
// computed from their sources.
std::vector<HostTensor> initialTrainState(const Module &m, const TrainStateLayout &l);

} // namespace tc
