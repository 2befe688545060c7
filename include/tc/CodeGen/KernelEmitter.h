// THE kernel emitter: a fusion group (the callee of a Fused op) becomes one
// C-like kernel function. The dialect differences (CPU C++ today; the CUDA
// dialect shares this file) are a table, not forked code.
//
// Kernel ABI (both dialects):
//   extern "C" void tc_<group>(void *const *bufs, const int64_t *dims,
//                              int64_t begin, int64_t end)
// `bufs`: the group's arguments, then its results. `dims`: the dims of every
// argument, then of every result, concatenated (ranks are fixed at compile
// time, sizes are not: one kernel serves every batch size). The kernel
// computes rows [begin, end) of its iteration domain (all dims but the last),
// so a thread pool can split it.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <string>

namespace tc {

enum class KernelDialect { Cpu, Cuda };

struct EmittedKernel {
  std::string group;  // the Fused callee
  std::string symbol; // tc_<group>
  std::string source; // the function definition
};

// The kernel of group `callee`, or nullopt with `why` set when it holds an
// op or dtype the emitter does not handle (that step then runs on the
// reference kernels: a fallback, labelled as such).
std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect dialect,
                                        std::string &why);

// What every kernel source starts with: helpers and math declarations.
std::string kernelPrelude(KernelDialect dialect);

} // namespace tc
