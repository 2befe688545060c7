#include "tc/CodeGen/ShapeGuards.h"
#include "tc/IR/ConstantInts.h"
#include "tc/Transforms/ShapeContents.h"
#include "tc/Transforms/ShapeInference.h"
#include <algorithm>

namespace tc {

namespace {

// ONNX's "to the end" (INT64_MAX) and "from the start, backwards" (INT64_MIN)
// sentinels, and anything else past every real size.
constexpr int64_t kPastEvery = int64_t(1) << 62;

struct SliceAssumptions {
  const Op &op;
  std::vector<StoredGuard> &guards;
  std::vector<DimGuard> axis; // what the axis being refined assumes

  // Records `lhs <= rhs` unless it holds at every size.
  void assume(const DimExpr &lhs, const DimExpr &rhs) {
    if (DimGuard g = DimGuard::of(lhs, rhs); !g.always())
      axis.push_back(g);
  }
  // Keeps what the axis assumed; false (nothing kept) where an assumption
  // holds at no size (a constant difference below 0: bounds out of order).
  bool commit(const std::string &origin) {
    for (const DimGuard &g : axis)
      if ((g.rhs - g.lhs).isConstant())
        return false;
    for (const DimGuard &g : axis)
      if (std::none_of(guards.begin(), guards.end(), [&](auto &s) { return s.bound == g; }))
        guards.push_back({g, origin});
    return true;
  }

  // A bound on an axis of size `d`, as ONNX reads it walking forwards: a
  // negative one counts from the end (a constant, or an expression that is
  // never positive, `-seq`: assumed negative then); the result is assumed
  // in [0, d].
  DimExpr bound(const DimExpr &v, const DimExpr &d) {
    DimExpr at = v;
    if (v.isConstant() && v.constantValue() >= kPastEvery)
      return d;
    if (v.isConstant() && v.constantValue() <= -kPastEvery)
      return DimExpr();
    if (v.isConstant() && v.constantValue() < 0)
      at = d + v;
    if (DimExpr minus = DimExpr() - v; !v.isConstant() && minus.nonNegative()) {
      assume(DimExpr::constant(1), minus);
      at = d + v;
    }
    assume(DimExpr(), at);
    assume(at, d);
    return at;
  }

  // Types the op's `?` dims that step 1 over tracked bounds; whether any.
  bool refine(const ShapeTracker &tracker) {
    TensorType &out = op.results[0]->type;
    const TensorType &x = op.operand(0)->type;
    auto starts = tracker.contents(op.operand(1)), ends = tracker.contents(op.operand(2));
    if (!starts || !ends || starts->size() != ends->size() || out.rank() != x.rank())
      return false;
    std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
    for (size_t i = 0; i < axes.size(); ++i)
      axes[i] = int64_t(i);
    for (auto [index, to] : {std::pair{3, &axes}, {4, &steps}})
      if (op.operand(index)) {
        auto c = infer::constantInts(op.operand(index));
        if (!c || c->size() != to->size())
          return false;
        *to = *c;
      }
    bool changed = false;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + int64_t(x.rank()) : axes[i];
      if (a < 0 || a >= int64_t(x.rank()) || !out.shape[a].isUnknown() || x.shape[a].isUnknown() ||
          steps[i] != 1 || !(*starts)[i] || !(*ends)[i])
        continue;
      DimExpr d = exprOf(x.shape[a]);
      std::string origin = "Slice %" + op.results[0]->name +
                           (op.loc.node.empty() ? "" : " (node " + op.loc.node + ")") + " reads [" +
                           (*starts)[i]->str() + ", " + (*ends)[i]->str() + ") of axis " +
                           std::to_string(a) + " of %" + op.operand(0)->name + " (" + x.str() + ")";
      axis.clear();
      DimExpr s = bound(*(*starts)[i], d), e = bound(*(*ends)[i], d);
      assume(s, e);
      if (!commit(origin))
        continue;
      out.shape[a] = dimOf(e - s);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::vector<StoredGuard> assumeSliceBounds(Module &m) {
  std::vector<StoredGuard> guards;
  // A refined Slice can give a later one a known axis (gpt2's mask: a slice
  // of a concat of a slice), which shape inference carries there: rounds.
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    ShapeTracker tracker;
    for (const auto &op : m.main().ops) {
      if (op->is(OpKind::Slice) && op->results.size() == 1 && op->operands.size() >= 3)
        changed |= SliceAssumptions{*op, guards, {}}.refine(tracker);
      tracker.visit(*op);
    }
    if (!changed)
      break;
    inferShapes(m);
  }
  return guards;
}

} // namespace tc
