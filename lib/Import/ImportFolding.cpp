// Import-time folding of shape computations: Shape (and Size) of static dims
// becomes a constant, and so does any op whose operands are all constants
// and whose results are small, evaluated by the reference kernels. A
// Shape -> Gather -> Concat -> Reshape chain over static dims thus leaves a
// Reshape with a constant shape; over symbolic dims the ops stay and run.
#include "OnnxOps.h"
#include "tc/Runtime/ConstantEval.h"
#include <algorithm>
#include <unordered_set>

namespace tc::onnximport {

namespace {

// Results larger than this stay ops: folding must not bloat the model.
constexpr size_t kMaxFoldedBytes = 64 * 1024;

} // namespace

bool foldAtImport(Function &f, Op *op, std::vector<Value *> &folded) {
  std::optional<std::vector<HostTensor>> outs = evaluateConstantOp(*op, kMaxFoldedBytes);
  if (!outs)
    return false;
  std::vector<Value *> results = op->results;
  replaceOpByConstants(f, op, std::move(*outs));
  folded.insert(folded.end(), results.begin(), results.end());
  return true;
}

void dropUnusedFolded(Function &f, const std::vector<Value *> &folded) {
  std::unordered_set<const Value *> dead(folded.begin(), folded.end());
  for (const Value *r : f.results)
    dead.erase(r);
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      dead.erase(v);
  std::erase_if(f.constants, [&](const Value *c) { return dead.count(c) != 0; });
}

} // namespace tc::onnximport
