// Split -> Slices before fusion. A Split is one kernel writing every part;
// fusion inlines a Slice (a move with an index map, MoveMap.h) into the
// pointwise group that reads it, and then the pointwise producer of its data
// too (Fusion.cpp inlineMoves). RoPE's backward splits the rotated half's
// gradient, negates one part and concatenates them: as a Split that was
// three kernels a q or k of every layer (the product by sin, the Split, the
// Neg/Concat/Add), as Slices one. Only where every reader can take a
// Slice inlined (pointwise ops, Concats): elsewhere each part would be a
// copy of its own, one launch a part instead of one for all.
#include "SplitSlices.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>

namespace tc {

bool splitsAsSlices(Function &f) {
  ValueUses uses(f);
  auto axisOf = [](const Op &split) {
    int64_t rank = int64_t(split.operand(0)->type.rank()), axis = split.getInt("axis");
    return axis < 0 ? axis + rank : axis;
  };
  // Parts of static extents along the axis (other dims may be symbolic).
  auto inlinable = [&](const Op &split) {
    const Value *x = split.operand(0);
    if (!x || split.results.size() < 2)
      return false;
    int64_t axis = axisOf(split);
    if (axis < 0 || axis >= int64_t(x->type.rank()) || !x->type.shape[size_t(axis)].isStatic())
      return false;
    for (const Value *r : split.results) {
      if (uses.returned(r) || uses.readers(r).empty() || !r->type.shape[size_t(axis)].isStatic())
        return false;
      for (const Op *reader : uses.readers(r))
        if (reader->info().category != FusionCategory::Pointwise && !reader->is(OpKind::Concat))
          return false;
    }
    return true;
  };
  return rewriteOpsInPlace(f, [&](Function &fn, Op &op) {
    if (!op.is(OpKind::Split) || !inlinable(op))
      return false;
    Value *x = op.operand(0);
    int64_t axis = axisOf(op);
    std::vector<Value *> parts = op.results;
    int64_t start = 0;
    std::vector<std::pair<int64_t, int64_t>> bounds;
    for (Value *p : parts) {
      int64_t n = p->type.shape[size_t(axis)].size;
      bounds.emplace_back(start, start + n);
      start += n;
    }
    auto sliceOperands = [&](size_t i) {
      const std::string &base = parts[i]->name;
      return std::vector<Value *>{x,
                                  addIntsConstant(fn, base + "_start", {bounds[i].first}, op.loc),
                                  addIntsConstant(fn, base + "_end", {bounds[i].second}, op.loc),
                                  addIntsConstant(fn, base + "_axis", {axis}, op.loc)};
    };
    for (size_t i = 1; i < parts.size(); ++i) {
      Op *s = fn.addOp(OpKind::Slice, sliceOperands(i), {fn.uniqueName(parts[i]->name + "_slice")},
                       {parts[i]->type}, op.loc);
      // Its readers by hand: rewriteOpsInPlace has the later ops out of
      // fn.ops while it rebuilds them (replaceAllUsesWith would miss them).
      for (Op *reader : uses.readers(parts[i]))
        std::replace(reader->operands.begin(), reader->operands.end(), parts[i], s->result());
    }
    // The Split itself becomes part 0's Slice (its result value kept).
    op.operands = sliceOperands(0);
    op.kind = OpKind::Slice;
    op.attrs.clear();
    op.results.resize(1);
    return true;
  });
}

} // namespace tc
