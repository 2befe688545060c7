// Weights from a safetensors checkpoint into an ONNX model's initializers
// (tc-import --weights: the trained weights of `tc-run --train`).
#pragma once
#include "onnx/onnx_pb.h"
#include <string>

namespace tc {

// Replaces each initializer the checkpoint names by the checkpoint's tensor
// (raw_data; external data and typed fields dropped). Every checkpoint tensor
// must name an initializer of the same dtype and shape: otherwise one
// tc::Error naming the checkpoint and the tensor. Returns how many were
// replaced. `modelFile` names the model in errors.
size_t applyWeights(onnx::ModelProto &model, const std::string &weightsPath,
                    const std::string &modelFile);

} // namespace tc
