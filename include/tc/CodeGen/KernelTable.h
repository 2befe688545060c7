// What the two targets' kernel tables (an artifact's "kernels" section)
// share: one line per group, fields separated by spaces, "-" for none, and
// the kernel's family spelled as in KernelKind.h. Each target's line format
// is described where it is parsed (CPU: CpuModel.cpp; CUDA: CudaLaunch.h).
#pragma once
#include "tc/CodeGen/KernelKind.h"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

struct KernelTableLine {
  std::string text;                // the line, for messages
  std::vector<std::string> fields; // split on spaces
};

// The lines of `text`, blank ones skipped.
std::vector<KernelTableLine> splitKernelTable(std::string_view text);

// A kernel's kind field as written: its family, "-" when there is no kernel.
inline const char *kernelKindField(const KernelKind *kind) {
  return kind ? kernelKindName(*kind) : "-";
}

// Reads a kind field next to the kernel's `symbol` field: a family when the
// symbol names a kernel, "-" when the symbol is "-" (no kernel; `kind` then
// nullopt). False for anything else (an unknown family, a kernel without
// one, a kind without a kernel).
bool parseKernelKindField(std::string_view field, std::string_view symbol,
                          std::optional<KernelKind> &kind);

// "<file>: malformed <target> kernel table line '<line>'" as a tc::Error.
[[noreturn]] void failKernelTableLine(const std::string &file, std::string_view target,
                                      const KernelTableLine &line);

} // namespace tc
