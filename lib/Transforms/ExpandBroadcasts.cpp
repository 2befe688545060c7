// Expands a broadcasting reader makes unnecessary, dropped before fusion.
// A reduction's gradient (ReduceMean's, RMSNorm's backward: the row sum
// over dY * x, then dX = dxhat + 2x * Expand(d mean)) expands its row
// values to the rows' shape; the Expand is a Shape op, a group of its own
// between the reduction and the pointwise ops reading it, so dX was a
// kernel apart from the row sum (llama: 17 a step). Read as [B, T, 1] by
// the Mul that broadcasts it, dX joins the sum's kernel as its epilogue back
// over the rows. A Cast of the expanded values (mixed precision's) moves
// before the Expand first, so the Mul reads the Expand itself.
#include "ExpandBroadcasts.h"
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>

namespace tc {

namespace {

bool isExpand(const Op *op) {
  return op && op->is(OpKind::Expand) && op->operand(0) &&
         isStaticShape(op->result()->type.shape) && isStaticShape(op->operand(0)->type.shape);
}

} // namespace

bool dropBroadcastExpands(Function &f) {
  bool changed = false;
  // Cast(Expand(x)), the Expand read by the Cast alone: Expand(Cast(x)).
  ValueUses uses(f);
  for (const auto &op : f.ops) {
    Op *e = op->is(OpKind::Cast) && op->operand(0) ? op->operand(0)->def : nullptr;
    if (!isExpand(e) || uses.sole(e->result()) != op.get())
      continue;
    // Swap the two ops' roles in place (their positions stay: the new Cast
    // where the Expand was, reading x; the new Expand where the Cast was).
    Value *x = e->operand(0), *mid = e->result();
    DType to = op->result()->type.dtype;
    std::swap(e->kind, op->kind);
    std::swap(e->attrs, op->attrs);
    op->operands = {mid, e->operand(1)};
    e->operands = {x};
    mid->type = TensorType{to, x->type.shape};
    changed = true;
  }
  // Expands whose readers broadcast: each reads x instead.
  uses = ValueUses(f);
  std::vector<const Op *> dead;
  for (const auto &op : f.ops) {
    if (!isExpand(op.get()))
      continue;
    const Value *e = op->result();
    if (uses.returned(e) || uses.readers(e).empty())
      continue;
    bool broadcast = true;
    for (const Op *reader : uses.readers(e)) {
      bool full = false;
      for (const Value *v : reader->operands)
        full |= v && v != e && v->type.shape == e->type.shape;
      broadcast &= reader->info().category == FusionCategory::Pointwise &&
                   reader->results.size() == 1 && reader->result()->type.shape == e->type.shape &&
                   full;
    }
    if (!broadcast)
      continue;
    for (Op *reader : uses.readers(e))
      std::replace(reader->operands.begin(), reader->operands.end(), op->result(), op->operand(0));
    dead.push_back(op.get());
    changed = true;
  }
  f.eraseOps(dead);
  return changed;
}

} // namespace tc
