#include "tc/IR/Printer.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace tc {

namespace {

// Constants are equal when type and bytes are. Buckets are keyed by the type
// and a hash of the first bytes only (a train step's weights are hundreds of
// MB: copying them into keys cost seconds a run); members of a bucket are
// compared whole.
// Replacements are recorded, not made at once (each replaceValue walks
// every op: seconds for a CNN's train step); the walk over the ops renames
// an op's operands when it reaches it, its producers' replacements known by
// then. A returned value is replaced at once (replaceValue moves its name,
// or declines).
using Renames = std::unordered_map<const Value *, Value *>;

bool replaceLater(Function &f, Renames &renames, Value *from, Value *to) {
  if (std::find(f.results.begin(), f.results.end(), from) != f.results.end())
    return replaceValue(f, from, to);
  renames[from] = to;
  return true;
}

bool mergeConstants(Function &f, Renames &renames) {
  constexpr size_t kPrefix = 4096;
  std::unordered_map<std::string, std::vector<Value *>> buckets;
  bool changed = false;
  for (Value *c : f.constants) {
    const TensorData &d = *c->data;
    std::string_view head(reinterpret_cast<const char *>(d.ptr), std::min(d.size, kPrefix));
    std::string key = c->type.str() + '\0' + std::to_string(d.size) + '\0' +
                      std::to_string(std::hash<std::string_view>{}(head));
    std::vector<Value *> &same = buckets[std::move(key)];
    auto equal = std::find_if(same.begin(), same.end(), [&](Value *o) { return *o->data == d; });
    if (equal == same.end())
      same.push_back(c);
    else
      changed |= replaceLater(f, renames, c, *equal);
  }
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
    Renames renames;
    bool mergedConstants = mergeConstants(f, renames);
    changed |= mergedConstants;
    std::unordered_map<std::string, Op *> seen;
    std::vector<const Op *> dead;
    for (auto &op : f.ops) {
      for (Value *&o : op->operands)
        if (auto r = o ? renames.find(o) : renames.end(); r != renames.end())
          o = r->second;
      auto [it, inserted] = seen.emplace(opKey(*op), op.get());
      if (inserted)
        continue;
      bool all = true;
      for (size_t i = 0; i < op->results.size(); ++i)
        all &= replaceLater(f, renames, op->result(i), it->second->result(i));
      if (all)
        dead.push_back(op.get());
      changed = true;
    }
    f.eraseOps(dead);
    if (mergedConstants)
      f.removeUnusedConstants();
  }
  return changed;
}

} // namespace tc
