// expand-into-gathers: a GatherElements kernel reads its indices through
// the Expand that broadcast them (stride 0 on the expanded axes), so the
// expanded indices are never written. DeBERTa's relative-position indices
// i64[1,S,S] are Expanded to [B*H,S,S] and read by 12 GatherElements each:
// the Expand wrote and every gather read B*H times the index bytes.
//
// Runs after outlining (every op its own group): a Fused op whose callee is
// a lone GatherElements, with indices made by a Fused lone Expand, takes the
// Expand into its callee (its input replaces the indices operand; the
// shape, an argument or constant of the Expand's callee, comes along). The
// Expand's group goes once no other op reads it.
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <set>

namespace tc {

namespace {

// The lone op of the callee of Fused op `f`, if it has exactly one.
Op *loneOp(const Module &m, const Op &f) {
  if (!f.is(OpKind::Fused))
    return nullptr;
  Function *callee = m.lookup(f.getString("callee"));
  return callee && callee->ops.size() == 1 ? callee->ops[0].get() : nullptr;
}

size_t argPosition(const Function &f, const Value *v) {
  for (size_t i = 0; i < f.args.size(); ++i)
    if (f.args[i] == v)
      return i;
  return SIZE_MAX;
}

// Moves Expand (lone op of `e`'s callee) into the callee of `g`, whose
// lone GatherElements reads it as operand 1 through argument `j`.
bool absorb(Module &m, Op &g, size_t j, const Op &e) {
  Function &gc = *m.lookup(g.getString("callee")), &ec = *m.lookup(e.getString("callee"));
  const Op &ex = *ec.ops[0];
  size_t xin = argPosition(ec, ex.operand(0));
  if (xin == SIZE_MAX || ec.results.size() != 1 || ec.results[0] != ex.result())
    return false;
  Value *shape = ex.operand(1), *inner = nullptr;
  if (shape && shape->isConstant()) {
    inner = gc.addConstant(gc.uniqueName(shape->name), shape->type, *shape->data, shape->loc);
  } else if (size_t s = argPosition(ec, shape); s != SIZE_MAX) {
    inner = gc.addArgument(gc.uniqueName(shape->name), shape->type);
    g.operands.push_back(e.operands[s]);
  } else {
    return false;
  }
  // Argument j now holds the Expand's input; the Expand, first in the
  // callee, makes the indices the gather read.
  Value *idx = gc.args[j];
  Value *expanded = gc.newValue(gc.uniqueName(idx->name), idx->type);
  idx->type = ex.operand(0)->type;
  auto op = std::make_unique<Op>(OpKind::Expand);
  op->operands = {idx, inner};
  op->attrs = ex.attrs;
  op->loc = ex.loc;
  op->results = {expanded};
  expanded->def = op.get();
  gc.ops[0]->operands[1] = expanded;
  gc.insertOp(0, std::move(op));
  g.operands[j] = e.operands[xin];
  return true;
}

} // namespace

bool runExpandIntoGathersPass(Module &m, const PassOptions &) {
  bool changed = false;
  std::set<std::string> absorbed; // the Expands' callees
  for (const auto &fn : m.functions) {
    Function &f = *fn;
    bool here = false;
    for (const auto &op : f.ops) {
      Op *gather = loneOp(m, *op);
      if (!gather || !gather->is(OpKind::GatherElements) || op->results.size() != 1)
        continue;
      Function &gc = *m.lookup(op->getString("callee"));
      size_t j = argPosition(gc, gather->operand(1));
      const Value *ind = j == SIZE_MAX ? nullptr : op->operands[j];
      const Op *e = ind ? ind->def : nullptr;
      Op *ex = e ? loneOp(m, *e) : nullptr;
      if (ex && ex->is(OpKind::Expand) && e->results.size() == 1 && absorb(m, *op, j, *e)) {
        absorbed.insert(e->getString("callee"));
        here = true;
      }
    }
    if (here)
      eraseDeadOps(f);
    changed |= here;
  }
  // An Expand's callee nothing calls any more goes with its group.
  for (const auto &fn : m.functions)
    for (const auto &op : fn->ops)
      if (op->is(OpKind::Fused))
        absorbed.erase(op->getString("callee"));
  std::erase_if(m.functions, [&](const auto &fn) { return absorbed.count(fn->name) != 0; });
  return changed;
}

} // namespace tc
