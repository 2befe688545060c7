// A static summary of a module: what a person wants to know about a model
// before compiling it (ops, parameters, weight bytes, signature).
#pragma once
#include "tc/IR/IR.h"
#include <map>
#include <string>

namespace tc {

struct ModelSummary {
  std::string name;
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, std::string>> inputs, outputs; // name, type
  std::map<std::string, size_t> opsByKind;
  std::map<std::string, size_t> opsByCategory;
  size_t numOps = 0;
  size_t numConstants = 0;
  uint64_t parameters = 0;          // elements of all constants
  uint64_t weightBytes = 0;         // bytes of all constants
  std::vector<std::string> symbols; // symbolic dims in the signature

  std::string text() const;
  std::string json() const;
};

ModelSummary summarize(const Module &m);

} // namespace tc
