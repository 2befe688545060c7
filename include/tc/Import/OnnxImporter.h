// ONNX → tc IR. Accepts the binary ModelProto and ONNX textual syntax
// (libonnx's parser), sniffed from the bytes.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Support/MemoryBuffer.h"
#include <memory>
#include <string>
#include <vector>

namespace tc {

struct ImportOptions {
  // Name recorded in every op's location (defaults to the buffer's name).
  std::string locationFile;
  // Folder that external-data tensor locations are relative to. Defaults to
  // the folder of the buffer's file; for "<stdin>" there is none and
  // external data is rejected.
  std::string externalDataDir;
  // False rejects every external-data tensor without touching the file
  // system (fuzzing, untrusted input).
  bool allowExternalData = true;
  // A safetensors checkpoint (tc-run --train's, or a PyTorch state_dict's)
  // whose tensors replace the initializers of the same names: the model
  // imports with its trained weights.
  std::string weightsFile;
};

// One ONNX node whose op type tc cannot import.
struct UnsupportedNode {
  std::string opType;
  std::string domain;
  std::string nodeName;
};

// Imports a model. Throws tc::Error with one line naming the file and node;
// if any op is unsupported, the message lists EVERY unsupported op type with
// a node name each.
std::unique_ptr<Module> importOnnx(const MemoryBuffer &buf, const ImportOptions &opts = {});

// Writes the model with `weightsFile`'s tensors as its initializers (as
// ImportOptions::weightsFile, checked the same way) to `outPath`, atomically:
// a failed export leaves `outPath` as it was. Initializers kept in external
// data stay there, so `outPath` must then be in the model's folder. Returns
// how many initializers were replaced.
size_t exportOnnxWithWeights(const MemoryBuffer &buf, const std::string &weightsFile,
                             const std::string &outPath);

// Every node of the model whose op tc cannot import (empty when all import).
std::vector<UnsupportedNode> listUnsupported(const MemoryBuffer &buf);

// True when the bytes look like ONNX text syntax rather than a binary proto.
bool looksLikeOnnxText(std::string_view bytes);

} // namespace tc
