// THE kernel emitter: a fusion group (the callee of a Fused op) becomes one
// C-like kernel function. The dialect differences (CPU C++ and CUDA C++) are
// a table plus the loop around the shared per-element code, not forked code.
//
// CPU kernel ABI:
//   extern "C" void tc_<group>(void *const *bufs, const int64_t *dims,
//                              int64_t begin, int64_t end)
// `bufs`: the group's arguments, then its results. `dims`: the dims of every
// argument, then of every result, concatenated (ranks are fixed at compile
// time, sizes are not: one kernel serves every batch size). The kernel
// computes rows [begin, end) of its iteration domain (all dims but the last),
// so a thread pool can split it.
//
// CUDA kernel ABI: one by-value parameter holding the same two arrays,
//   struct tc_<group>_params { void *bufs[B]; int64_t dims[max(D, 1)]; };
//   extern "C" __global__ void tc_<group>(const __grid_constant__ tc_<group>_params p)
// i.e. B device pointers then the D dims, 8 bytes each, packed (what
// cuLaunchKernel's kernelParams[0] points at). The kernel computes the whole
// domain; n is the element count of result 0, rows = n / inner, inner its
// last dim. Launch rule, by the launch kind in the kernel table:
//   pointwise: blockDim.x = `block` (256); gridDim.x = clamp(ceil(n / (block
//     * vec)), 1, 2^31 - 1). Any grid is correct (grid-stride loop); `vec`
//     elements per thread and step is what fills the machine.
//   rows: one block per row (Softmax, LogSoftmax, LayerNormalization over the
//     last axis): gridDim.x = clamp(rows, 1, 2^31 - 1) (blocks stride over
//     rows); blockDim.x = clamp(32 * ceil(inner / 128), 32, `block`) (1024): any
//     multiple of 32 up to `block` is correct; each thread keeps `vec`
//     elements of its row in registers, so rows up to blockDim.x * vec
//     elements are read from memory once.
//   reduce: one block per element of result 0 (Reduce*, GlobalAverage/MaxPool
//     over trailing axes): gridDim.x = clamp(n, 1, 2^31 - 1) (blocks stride);
//     blockDim.x = `block`, which the emitter sizes from the reduced count
//     when it is static (any multiple of 32 up to 1024 is correct).
//   Pools, data movement (Gather, Concat, Slice, Split, Expand, Pad, Tile)
//   and reductions over other axes are `pointwise` over result 0 (Split:
//   each result in turn, the grid sized for result 0).
// No dynamic shared memory; skip the launch when n is 0.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <string>

namespace tc {

enum class KernelDialect { Cpu, Cuda };

// How the CUDA runtime launches a kernel (see the launch rule above).
enum class LaunchKind { Pointwise, Rows, Reduce };

struct EmittedKernel {
  std::string group;  // the Fused callee
  std::string symbol; // tc_<group>
  std::string source; // the function definition
  // CUDA: the launch kind, block size and elements per thread; `halfTypes`:
  // the kernel uses __half / __nv_bfloat16 (the prelude includes their headers).
  LaunchKind launch = LaunchKind::Pointwise;
  unsigned block = 0, vec = 1;
  bool halfTypes = false;
};

// "pointwise" / "rows" / "reduce" (the kernel table's spelling).
const char *launchKindName(LaunchKind k);

// The kernel of group `callee`, or nullopt with `why` set when it holds an
// op or dtype the emitter does not handle (that step then runs on the
// reference kernels: a fallback, labelled as such).
std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect dialect,
                                        std::string &why);

// What every kernel source starts with: helpers and math declarations;
// `halfTypes` (CUDA): include the fp16/bf16 headers.
std::string kernelPrelude(KernelDialect dialect, bool halfTypes = false);

} // namespace tc
