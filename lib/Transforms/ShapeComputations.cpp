#include "tc/Transforms/ShapeComputations.h"
#include "tc/Analysis/KernelCount.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Transforms/Pass.h"
#include <algorithm>

namespace tc {

std::unordered_set<const Op *> shapeComputations(const Function &f) {
  std::unordered_set<const Value *> known;
  auto isKnown = [&](const Value *v) { return !v || v->isConstant() || known.count(v); };
  // What the per-shape fold leaves an op rather than a constant.
  size_t maxFold = size_t(PassInvocation(PassId::FoldConstants).options.getInt("max-bytes"));
  std::unordered_set<const Op *> out;
  for (const auto &op : f.ops) {
    bool shape = op->is(OpKind::Shape) || op->is(OpKind::Size);
    // Folding evaluates the op on its reference kernel; a Fused group is
    // a kernel, not folded, and a rank op's value is each rank's own.
    bool folds = shape || (!op->is(OpKind::Fused) && !isRankOp(op->kind) && !op->operands.empty() &&
                           lookupRefKernel(op->kind) && !refKernelSetsOutputDims(op->kind) &&
                           std::all_of(op->operands.begin(), op->operands.end(), isKnown));
    bool small = std::all_of(op->results.begin(), op->results.end(), [&](const Value *r) {
      std::optional<size_t> bytes = byteSize(r->type);
      return (bytes && *bytes <= maxFold) || (!isFloat(r->type.dtype) && r->type.rank() <= 1);
    });
    if (folds && !op->results.empty() && (shape || small || isViewOp(*op))) {
      out.insert(op.get());
      known.insert(op->results.begin(), op->results.end());
    }
  }
  return out;
}

} // namespace tc
