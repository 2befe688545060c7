// fold-constants: ops whose operands are all constants (and Shape/Size of
// static dims) become constants, evaluated by the reference kernels, so the
// compiled code never recomputes what is known now. Results above the size
// limit stay ops: folding a broadcast of a scalar into a large tensor would
// trade a cheap kernel for weight bytes.
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"

namespace tc {

bool runFoldConstantsPass(Module &m, const PassOptions &opts) {
  int64_t maxBytes = opts.getInt("max-bytes");
  bool changed = false;
  for (auto &f : m.functions) {
    std::vector<Op *> candidates;
    for (auto &op : f->ops)
      candidates.push_back(op.get());
    // In order, so a folded result makes its users foldable in the same run.
    for (Op *op : candidates) {
      if (auto outs = evaluateConstantOp(*op, size_t(std::max<int64_t>(maxBytes, 0)))) {
        replaceOpByConstants(*f, op, std::move(*outs));
        changed = true;
      }
    }
    if (changed)
      f->removeUnusedConstants();
  }
  return changed;
}

} // namespace tc
