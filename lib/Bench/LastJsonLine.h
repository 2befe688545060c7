// The PyTorch side's answer (utils/bench-gpu.py, utils/bench-train.py): the
// last line of its stdout as JSON; PyTorch may print before it. Private to
// lib/Bench (it needs LLVM's JSON, which the public headers do not include).
#pragma once
#include "llvm/Support/JSON.h"
#include <optional>
#include <string>

namespace tc::bench {

inline std::optional<llvm::json::Value> lastJsonLine(const std::string &out) {
  std::string last = out.substr(0, out.find_last_not_of('\n') + 1);
  last = last.substr(last.find_last_of('\n') + 1);
  auto v = llvm::json::parse(last);
  if (!v) {
    llvm::consumeError(v.takeError());
    return std::nullopt;
  }
  return std::move(*v);
}

} // namespace tc::bench
