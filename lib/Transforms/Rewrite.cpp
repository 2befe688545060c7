// Helpers shared by rewriting passes (tc/Transforms/Rewrite.h); replaceValue
// and eraseDeadOps live with DCE.
#include "tc/Transforms/Rewrite.h"

namespace tc {

bool rewriteOpsInPlace(Module &m, const std::function<bool(Function &, Op &)> &rewrite) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &op : old) {
      changed |= rewrite(f, *op); // appends its new ops first
      f.ops.push_back(std::move(op));
    }
  }
  return changed;
}

Value *addIntsConstant(Function &f, const std::string &base, const std::vector<int64_t> &values,
                       Location loc) {
  return f.addConstant(f.uniqueName(base),
                       TensorType{DType::I64, makeShape({int64_t(values.size())})},
                       TensorData::copyOf(values.data(), values.size() * sizeof(int64_t)), loc);
}

} // namespace tc
