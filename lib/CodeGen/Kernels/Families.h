// The family emitters, one file each in this folder, and what two or more
// of them share. A family emitter gets the group's context and its class
// (tc/CodeGen/KernelEmitter.h: classifyKernel) and returns the kernel, or
// nullopt with the context's `why` set when it does not handle the group.
#pragma once
#include "ElementAccess.h"
#include "OpExpressions.h"
#include <unordered_set>

namespace tc::kernels {

using FamilyEmitter = std::optional<EmittedKernel> (*)(const KernelContext &c,
                                                       const KernelClass &cls);

std::optional<EmittedKernel> emitPointwise(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitRowReduction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitReduction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitContraction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitPool(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitTranspose(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitDataMovement(const KernelContext &c, const KernelClass &cls);
// The DataMovement family's index moves, both dialects (IndexMove.cpp).
std::optional<EmittedKernel> emitIndexMove(const KernelContext &c, const KernelClass &cls);
// A Reduce* reading its axes from an operand (known only at run time): an
// index move (RuntimeAxesReduce.cpp), not the Reduction family's.
bool isRuntimeAxesReduce(const Op &op);
// A one-operand float Einsum (what lower-einsum leaves is a diagonal or a
// trace): an index move too (UnaryEinsum.cpp).
bool isUnaryEinsum(const Op &op);
std::optional<EmittedKernel> emitAttention(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitDepthwiseConv(const KernelContext &c, const KernelClass &cls);
// NonZero / Compress: count, then scatter (Compaction.cpp, both dialects).
std::optional<EmittedKernel> emitCompaction(const KernelContext &c, const KernelClass &cls);

// A group of several ops some of which are moves with an index map
// (tc/IR/MoveMap.h) the fuse pass inlined: a Pointwise kernel that reads
// through them (InlinedLoads.cpp), a scalar loop computing every load's
// position from the element's index.
bool inlinesMoves(const Function &f);
std::optional<EmittedKernel> emitInlinedPointwise(const KernelContext &c);

// The classifier over a built context (classifyKernel's body).
std::optional<KernelClass> classify(const KernelContext &c);

// What the Reduction family computes for its anchor (ReducePlans.cpp): the
// row statistics s0, s1, ..., each one pass over the row (`term` of x, the
// element's reduced input, and the earlier statistics, combined by a
// prelude functor from `init`, then `finish` of acc and the row length L;
// A is the accumulator type), and the anchor's value (`value`: of the
// statistics, per element also of x and the parameters p<k>). Rows are
// the elements of X (or of X viewed as `viewDims`) that share their index
// over the axes not `reduced`. ArgMax / ArgMin (`arg` 1 / -1) keep an
// index instead, TopK the k best values and their indices.
struct ReduceStat {
  std::string term, combine, init, finish;
};
struct ReducePlan {
  std::vector<ReduceStat> stats;
  std::string value = "s0";
  bool perElement = false; // the anchor's result has X's shape
  std::vector<std::string> viewDims;
  std::vector<bool> reduced;
  // Operands read per element: p<k> = operand at an index (of o, j, i).
  std::vector<std::pair<const Value *, std::string>> params;
  int arg = 0;
  bool selectLast = false;
  int64_t topK = 0;      // TopK: its k (`arg` 1: largest, -1: smallest)
  bool runTimeK = false; // TopK: topK bounds k, the result's extent along the axis
  // stats[0] is the mean (sum / L) and stats[1] the sum of (x - s0)^2,
  // finished: a kernel may compute both in one pass (SplitRows.cpp).
  bool centered = false;
  // stats[0] is a max M and stats[1] the sum of exp(x - s0) (ReduceLogSumExp):
  // a kernel may compute both in one pass, the sum relative to the running
  // max and rescaled when it grows (SplitRows.cpp, onlinePass).
  bool online = false;
  // The anchor's results after the first, one value per row, of the
  // statistics (LayerNormalization's Mean and InvStdDev: s0, s1).
  std::vector<std::string> rowValues;
};
inline constexpr int64_t kMaxTopK = 64;
bool isReduceAnchor(const Op &op);
// `v` is a row statistic its anchor writes beside its per-element result
// (LayerNormalization's Mean / InvStdDev: one value per normalized row).
bool isRowStatistic(const Value *v);
std::optional<ReducePlan> reducePlan(const KernelContext &c, const Op &op);

// The CPU kernel every family with per-element code shares: rows
// [begin, end) of the domain, the last axis the inner (vectorized) loop
// running the prologue `pro` and the `body`. A family adds per-call
// `setup` (after the broadcast strides) and per-row code (after the row's
// broadcast bases, before the inner loop); with both it owns a malloc'ed
// `acc` the kernel frees. `prologue`: the results stored by the row code.
struct CpuRowParts {
  std::function<void(std::ostream &)> setup, row;
  std::unordered_set<const Value *> prologue;
};
std::optional<EmittedKernel> emitCpuRows(const KernelContext &c, const ElementAccess &access,
                                         const Expressions &ex, const std::string &pro,
                                         const std::string &body, const CpuRowParts &parts);

} // namespace tc::kernels
