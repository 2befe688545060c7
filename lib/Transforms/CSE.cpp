#include "tc/IR/Printer.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <string_view>
#include <unordered_map>

namespace tc {

namespace {

// Constants are equal when type and bytes are; hash the bytes once.
bool mergeConstants(Function &f) {
  std::unordered_map<std::string, Value *> seen;
  bool changed = false;
  for (Value *c : f.constants) {
    std::string key = c->type.str() + '\0' +
                      std::string(reinterpret_cast<const char *>(c->data->ptr), c->data->size);
    auto [it, inserted] = seen.emplace(std::move(key), c);
    if (!inserted)
      changed |= replaceValue(f, c, it->second);
  }
  if (changed)
    f.removeUnusedConstants();
  return changed;
}

// Ops are pure, so two ops with the same kind, operands, attributes and
// result types compute the same values.
std::string opKey(const Op &op) {
  std::string k(op.name());
  for (const Value *o : op.operands) {
    k += '|';
    k += std::to_string(reinterpret_cast<uintptr_t>(o));
  }
  for (const auto &[n, a] : op.attrs)
    k += '|' + n + '=' + a.str();
  for (const Value *r : op.results)
    k += '|' + r->type.str();
  return k;
}

} // namespace

bool runCSEPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    changed |= mergeConstants(f);
    std::unordered_map<std::string, Op *> seen;
    std::vector<const Op *> dead;
    for (auto &op : f.ops) {
      auto [it, inserted] = seen.emplace(opKey(*op), op.get());
      if (inserted)
        continue;
      bool all = true;
      for (size_t i = 0; i < op->results.size(); ++i)
        all &= replaceValue(f, op->result(i), it->second->result(i));
      if (all)
        dead.push_back(op.get());
      changed = true;
    }
    f.eraseOps(dead);
  }
  return changed;
}

} // namespace tc
