// THE kernel emitter: a fusion group (the callee of a Fused op) becomes one
// C-like kernel function. classifyKernel decides the group's kind
// (tc/CodeGen/KernelKind.h) once; the kind's family emits it, one file each
// in lib/CodeGen/Kernels/ (Pointwise, RowReduction, Reduction, Contraction,
// Pool, Transpose, DataMovement, Attention, DepthwiseConv), over one per-op expression table
// (Kernels/OpExpressions.cpp) and one dialect table (Kernels/Dialect.cpp,
// Kernels/Prelude.cpp): the dialect differences (CPU C++ and CUDA C++) are
// data plus the loop around the shared per-element code, not forked code.
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
// last dim. Launch rule, by the launch kind in the kernel table
// (tc/Runtime/CudaLaunch.h):
//   pointwise: blockDim.x = `block` (256); gridDim.x = clamp(ceil(n / (block
//     * vec)), 1, 2^31 - 1). Any grid is correct (grid-stride loop); `vec`
//     elements per thread and step is what fills the machine.
//   rows: one block per row (the row-reduction family: Softmax, LogSoftmax,
//     LayerNormalization over the last axis): gridDim.x = clamp(rows, 1,
//     2^31 - 1) (blocks stride over rows); blockDim.x = clamp(32 * ceil(inner
//     / 128), 32, `block`) (1024): any multiple of 32 up to `block` is
//     correct; each thread keeps `vec` elements of its row in registers, so
//     rows up to blockDim.x * vec elements are read from memory once.
//   lanes: `vec` lanes (a power of two up to 32) per row, `block` threads
//     (block / vec rows) per block (the row-reduction family over short
//     static rows: RowReduction.cpp's laneRows): gridDim.x = clamp(ceil(rows
//     / (block / vec)), 1, 2^31 - 1) (blocks stride over groups of rows).
//     Every lane of a warp runs the same row loop (its shuffles need them
//     all): a group past the last row computes nothing it stores.
//   reduce: one block per element of result 0 (the reduction family over
//     trailing axes: Reduce*, GlobalAverage/MaxPool): gridDim.x = clamp(n,
//     1, 2^31 - 1) (blocks stride); blockDim.x = `block`, which the emitter
//     sizes from the reduced count when it is static (any multiple of 32 up
//     to 1024 is correct).
//   columns: a fixed grid (the reduction family over non-trailing axes,
//     single-statistic: SE blocks' ReduceMean over H, W of NHWC; the
//     attention family's split-key kernel for few queries over many keys,
//     AttentionDecode.cpp): gridDim.x
//     = `vec` (blocks stride over work items; spare ones return),
//     blockDim.x = `block`. One more buffer after the results: the runtime's
//     scratch of columnsScratchBytes(grid, block) (tc/Runtime/CudaLaunch.h),
//     gridDim.x * blockDim.x 8-byte partials then gridDim.x u32 counters,
//     zero before the first launch; each launch leaves the counters zero.
//   split: long rows across blocks (the reduction family's per-element
//     normalizations over long static rows: InstanceNormalization as
//     GroupNorm(1) exports; reduce::takesSplit): `vec` passes, one per
//     statistic and then the elements, each a launch of gridDim.x =
//     kSplitGrid, blockDim.x = `block`. The parameter has one more field
//     after dims, `int64_t pass` (0 .. vec - 1), and one more buffer after
//     the results: the scratch of columnsScratchBytes(grid, block) as for
//     `columns` (the blocks' partials and the rows' statistics, then the
//     counters: zero before the first launch; each pass leaves them zero).
//     The data-movement family's ScatterND by update slices (IndexMove.cpp)
//     is `split` too, `vec` = 2: pass 0 copies the data (or runs the
//     inverted gather), pass 1 a block per index tuple; no scratch read.
//   compact: a result sized by the data (the compaction family: NonZero,
//     Compress, NonMaxSuppression; Compaction.cpp): one block of `block`
//     threads, two launches. One more buffer after the results: the
//     runtime's count (one i64), then one byte per element of the group's
//     arguments, the kernel's own (NonMaxSuppression's kept flags). The
//     parameter has `int64_t pass` after dims: pass 0 writes the count (-1:
//     inputs the reference rejects); the runtime reads it back (a
//     device-to-host copy: a sync) and sets the results' `?` dims in dims
//     to it; pass 1 writes the results. The CPU kernel is the same two
//     passes, called once each with `begin` the pass (end = begin + 1).
//   The pool, transpose and data-movement families (Gather, Concat, Slice,
//   Split, Expand, Pad, Tile) and reductions over other axes are
//   `pointwise` over result 0 (Split: each result in turn, the grid sized
//   for result 0). The attention family is `pointwise` too: its blocks
//   stride over the (batch, head, query tile)s, `vec` = tile * Dv / block
//   makes the grid about one block per tile (the tensor-core kernel's `vec`
//   rounds down so that every tile gets its own block where Sq is static).
//   The depthwise-conv family is `pointwise` too: its threads stride over
//   (pixel tile, channel vector) items, `vec` = pixels x channels per item.
//   multi-tensor: a pointwise kernel over a table of members (a run of
//     steps, tc/CodeGen/MultiTensor.h): blockDim.x = `block`; each member
//     gets the grid `pointwise` gives its n, gridDim.x their sum. Its
//     parameter is { const entry *table; int64_t count; } (MultiTensor.h).
//     A reduction family's one (full `split` reductions, `vec` = 1): each
//     member gets multiTensorSplitBlocks(n, block) blocks and its own scratch.
// No dynamic shared memory; skip the launch when n is 0.
#pragma once
#include "tc/CodeGen/KernelKind.h"
#include "tc/IR/IR.h"
#include <optional>
#include <string>
#include <vector>

namespace tc {

enum class KernelDialect { Cpu, Cuda };

// How the CUDA runtime launches a kernel (see the launch rule above).
enum class LaunchKind { Pointwise, Rows, Reduce, Columns, Lanes, Split, Compact, MultiTensor };
// `split` launches (see the launch rule above): the grid of every pass.
inline constexpr unsigned kSplitGrid = 1024;
// `split`: the fewest elements a thread reduces before another block takes
// part. One row of L elements takes splitBlocks(L, block) blocks (the
// kernel's S; a multi-tensor reduction member's: multiTensorSplitBlocks).
inline constexpr int64_t kSplitMinPerThread = 16;
inline int64_t splitBlocks(int64_t L, unsigned block) {
  int64_t per = int64_t(block) * kSplitMinPerThread;
  int64_t s = (L + per - 1) / per;
  return s < 1 ? 1 : s > int64_t(kSplitGrid) ? int64_t(kSplitGrid) : s;
}

struct EmittedKernel {
  std::string group;                       // the Fused callee
  std::string symbol;                      // tc_<group>
  std::string source;                      // the function definition
  KernelKind kind = KernelKind::Pointwise; // the family that emitted it
  // CUDA: the launch kind, block size and elements per thread; `halfTypes`:
  // the kernel uses __half / __nv_bfloat16 (the prelude includes their headers).
  LaunchKind launch = LaunchKind::Pointwise;
  unsigned block = 0, vec = 1;
  bool halfTypes = false;
  bool mayFault = false;  // some op records a fault (OpExpressions.h)
  std::string slowPath{}; // why its work outgrows its data (KernelContext), or ""

  // Geometry variants (tc-codegen --tune; docs/cuda-backend.md, "Measured
  // algorithm choice"): this kernel's name among the variants its family
  // offers for the group ("": it offers none), how many it offers (variant
  // 0 is the default; variant i's symbol ends "__v<i>"), and, where the
  // driver asked for them, variants 1 .. variantCount - 1 themselves.
  std::string variant{};
  unsigned variantCount = 1;
  std::vector<EmittedKernel> variants{};
};

// A kernel's source without its name (and the comment naming its group):
// groups whose kernels are equal up to the name share one (both backends'
// assemble: every layer's LayerNorm, an unrolled RNN's steps).
std::string anonymousSource(const EmittedKernel &k);

// "pointwise" / "rows" / "reduce" / "columns" / "lanes" / "split" / "compact" /
// "multi-tensor" (the kernel table's spelling).
const char *launchKindName(LaunchKind k);

// A group's kind and the op that decides it: the MatMul/Gemm/Conv, the
// row reduction, the Reduce*, the pool or the moved op (nullptr for a
// pointwise group).
struct KernelClass {
  KernelKind kind = KernelKind::Pointwise;
  const Op *anchor = nullptr;
};

// Which family emits group `callee` on `dialect`, or nullopt with `why`
// ("@group: ...") set when no family covers it. The family may still turn
// the group down (a shape or attribute it does not handle): emitKernel.
std::optional<KernelClass> classifyKernel(const Function &callee, KernelDialect dialect,
                                          std::string &why);

// The kernel of group `callee`: classifyKernel, then its family's emitter.
// nullopt with `why` set when it holds an op or dtype no family handles
// (that step then runs on the reference kernels: a fallback, labelled as
// such).
std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect dialect,
                                        std::string &why);

// Variant `index` (0 .. variantCount - 1) of group `callee`'s kernel:
// the same op in another launch geometry or code shape (its family's
// variant table: the Reduction family's `columns` kernels, the
// RowReduction family), its symbol "tc_<group>__v<index>".
std::optional<EmittedKernel> emitKernelVariant(const Function &callee, KernelDialect dialect,
                                               unsigned index, std::string &why);

// The kernel of a group already classified `cls` (by classifyKernel); the
// family turns down a group that is not of its kind, `why` saying so.
std::optional<EmittedKernel> emitKernelOfKind(const Function &callee, KernelDialect dialect,
                                              const KernelClass &cls, std::string &why);

// The kernel of a run's members (tc/CodeGen/MultiTensor.h) from `erased`,
// a member's group with its sizes erased: CUDA the multi-tensor kernel
// (launch `multi-tensor`), CPU the erased group's ordinary kernel; nullopt
// with `why` set unless the Pointwise family emits it, or on CUDA the
// Reduction family's `split` (a full reduction of one statistic).
std::optional<EmittedKernel> emitMultiTensorKernel(const Function &erased, KernelDialect dialect,
                                                   std::string &why);

// What every kernel source starts with: helpers and math declarations;
// `halfTypes` (CUDA): include the fp16/bf16 headers; `faults` (CUDA): define
// the fault record, some kernel may fault (the CPU's is always there).
std::string kernelPrelude(KernelDialect dialect, bool halfTypes = false, bool faults = false);

} // namespace tc
