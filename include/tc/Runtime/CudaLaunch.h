// What the CUDA runtime decides without a GPU, from the artifact alone:
// the kernel table's entries, each launch's grid and block (the launch rule
// of include/tc/CodeGen/KernelEmitter.h), and which cubin a device runs.
#pragma once
#include "tc/CodeGen/KernelEmitter.h"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

// One line of a CUDA artifact's "kernels" section (written by
// lib/CodeGen/CudaCodegen.cpp), THE description of the format:
//   <group> <symbol> <kind> <launch> <block> <vec> [<library>]
// Without <library>: group <group> runs as generated kernel <symbol> of
// family <kind> (tc/CodeGen/KernelKind.h: "pointwise", "row-reduction",
// ...), launched per <launch> ("pointwise", "rows", "lanes", "reduce", "columns", "split",
// "compact" or "multi-tensor": the group is a member of a multi-tensor run,
// tc/CodeGen/MultiTensor.h), <block> and <vec> (the launch rule in tc/CodeGen/KernelEmitter.h);
// equal groups share a symbol. With <library> ("cublaslt": MatMul/Gemm, "cudnn": Conv): the group's
// anchor is a library call writing the group's result, and <symbol> etc. are its epilogue's kernel
// (tc/CodeGen/LibraryCall.h), run in place over that result; "- - - 0 0" when it has none (the
// anchor is the whole group, or the epilogue has no kernel: then only a library taking the whole
// epilogue runs the group off the host).
struct CudaKernelEntry {
  std::string group, symbol; // symbol "-": none (a library group without epilogue)
  LaunchKind launch = LaunchKind::Pointwise;
  unsigned block = 0, vec = 1;
  std::string library;                     // "" (a generated kernel), "cublaslt" or "cudnn"
  KernelKind kind = KernelKind::Pointwise; // the family that emitted the kernel

  bool hasKernel() const { return symbol != "-"; }
};

// The "kernels" section's lines, as above. Throws tc::Error naming `file`
// for a malformed line.
std::vector<CudaKernelEntry> parseCudaKernelTable(std::string_view text, const std::string &file);

// One line of a CUDA artifact's "kernel-variants" section (tc-codegen
// --tune; written by lib/CodeGen/CudaCodegen.cpp), THE description:
//   <key> <index> <name> <group> <symbol> <kind> <launch> <block> <vec>
// Variant <index> (0 .. n - 1, in order; 0 is the kernel table's own
// entry) of group <group>'s kernel, named <name> in the tuning record
// ("grid=264,rows=16,unroll=8,blocks=2,block=256"); the rest as a kernel
// table line. <key> ("reduction:<16 hex digits>": the family and a hash of
// the default kernel's source) names the kernel for the tuning record,
// which the runtime completes with the step's shapes (kernelTuningKey).
struct CudaKernelVariant {
  std::string key, name;
  unsigned index = 0;
  CudaKernelEntry entry;
};
// The section's lines; a tc::Error naming `file` for a malformed one.
std::vector<CudaKernelVariant> parseCudaKernelVariants(std::string_view text,
                                                       const std::string &file);
// The tuning record's key of a kernel with variants at one shape:
// "kernel <key> <dims of each argument and result>", e.g.
// "kernel reduction:3f2a... [32,56,56,64] [32,1,1,64]".
std::string kernelTuningKey(const std::string &key, const std::vector<std::vector<int64_t>> &dims);

struct LaunchDims {
  unsigned grid = 0, block = 0;
  unsigned passes = 1; // `split`: launches, the parameter's `pass` 0 .. passes - 1
  // `split`: the parameter ends with the pass (one pass too: a split kernel
  // of row results only, SplitRows.cpp).
  bool passField = false;
};

// The scratch buffer a `columns` or `split` launch of `l` reads after its results
// (the launch rule in tc/CodeGen/KernelEmitter.h): partials, then counters.
inline uint64_t columnsScratchBytes(const LaunchDims &l) {
  return uint64_t(l.grid) * l.block * 8 + uint64_t(l.grid) * 4;
}

// Grid and block for a kernel whose domain (result 0) has dims `domain`;
// nullopt when the domain is empty (no launch).
std::optional<LaunchDims> launchDims(const CudaKernelEntry &k, const std::vector<int64_t> &domain);

// The launch reads the runtime's scratch (`columns`, `split`).
inline bool readsScratch(LaunchKind k) {
  return k == LaunchKind::Columns || k == LaunchKind::Split;
}

// A kernel's by-value parameter (the ABI's `{ void *bufs[B]; int64_t
// dims[max(D, 1)]; }`): the B device pointers, then the D dims, 8 bytes
// each; what cuLaunchKernel's kernelParams[0] points at.
std::vector<uint64_t> packKernelParams(const std::vector<uint64_t> &bufs,
                                       const std::vector<int64_t> &dims);

// Of `arches` ("sm_80", ...), the cubin a device of compute capability
// major.minor runs: the same major, the highest minor not above its own.
std::optional<std::string> pickCubinArch(const std::vector<std::string> &arches, int major,
                                         int minor);

} // namespace tc
