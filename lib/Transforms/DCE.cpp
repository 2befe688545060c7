#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <unordered_set>

namespace tc {

bool replaceValue(Function &f, Value *from, Value *to) {
  bool returned = std::find(f.results.begin(), f.results.end(), from) != f.results.end();
  if (returned) {
    bool toIsPublic =
        to->isArgument() || std::find(f.results.begin(), f.results.end(), to) != f.results.end();
    if (toIsPublic)
      return false;
    std::swap(to->name, from->name);
  }
  f.replaceAllUsesWith(from, to);
  return true;
}

bool eraseDeadOps(Function &f) {
  std::unordered_set<const Value *> live(f.results.begin(), f.results.end());
  std::vector<const Op *> dead;
  // Reverse order: an op's users come after it, so liveness is final when
  // the op is reached. All ops are side-effect free.
  for (auto it = f.ops.rbegin(); it != f.ops.rend(); ++it) {
    const Op &op = **it;
    bool used = std::any_of(op.results.begin(), op.results.end(),
                            [&](const Value *r) { return live.count(r) != 0; });
    if (!used) {
      dead.push_back(&op);
      continue;
    }
    live.insert(op.operands.begin(), op.operands.end());
  }
  size_t nConsts = f.constants.size();
  f.eraseOps(dead);
  f.removeUnusedConstants();
  return !dead.empty() || f.constants.size() != nConsts;
}

bool runDCEPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &f : m.functions)
    changed |= eraseDeadOps(*f);
  return changed;
}

} // namespace tc
