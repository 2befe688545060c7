// fold-constants: ops whose operands are all constants (and Shape/Size of
// static dims) become constants, evaluated by the reference kernels, so the
// compiled code never recomputes what is known now. Results above the size
// limit stay ops: folding a broadcast of a scalar into a large tensor would
// trade a cheap kernel for weight bytes.
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeInference.h"

namespace tc {

namespace {

bool foldOnce(Module &m, size_t maxBytes) {
  bool changed = false;
  for (auto &f : m.functions) {
    std::vector<Op *> candidates;
    for (auto &op : f->ops)
      candidates.push_back(op.get());
    // In order, so a folded result makes its users foldable in the same run.
    bool here = false;
    for (Op *op : candidates) {
      if (auto outs = evaluateConstantOp(*op, maxBytes)) {
        replaceOpByConstants(*f, op, std::move(*outs));
        here = true;
      }
    }
    if (here)
      f->removeUnusedConstants();
    changed |= here;
  }
  return changed;
}

} // namespace

bool runFoldConstantsPass(Module &m, const PassOptions &opts) {
  size_t maxBytes = size_t(std::max<int64_t>(opts.getInt("max-bytes"), 0));
  bool changed = false;
  // Folding makes shapes known (a Reshape's shape becomes a constant), and
  // known shapes make more folding possible (Shape of a now-static value):
  // alternate with shape inference until neither learns anything. Each
  // round can settle one more link of a chain (a transformer layer's
  // Shape -> Concat -> Reshape feeds the next layer's), so no round limit:
  // every round that goes on removed an op.
  for (;;) {
    bool folded = foldOnce(m, maxBytes);
    changed |= folded;
    if (!folded || !inferShapes(m))
      break;
  }
  return changed;
}

} // namespace tc
