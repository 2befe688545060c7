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

// Every node of the model whose op tc cannot import (empty when all import).
std::vector<UnsupportedNode> listUnsupported(const MemoryBuffer &buf);

// True when the bytes look like ONNX text syntax rather than a binary proto.
bool looksLikeOnnxText(std::string_view bytes);

} // namespace tc
