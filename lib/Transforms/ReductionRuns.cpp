// A reduction over several runs of axes whose last run is trailing (batch
// norm's backward over N, H, W of NCHW: [0, 2, 3]), of few long rows,
// becomes two: over the trailing run first (contiguous rows: a block per
// row, or `split`), then over the rest (NCHW's [N, C, 1, 1] over N: the
// `columns` strategy). Codegen has no parallel strategy for rows that are
// several runs: it loops a row per thread, C threads over N*H*W elements
// each (resnet50 at batch 32: 64 threads over 401408 elements, seconds a
// train step on the H200). The fuse pass runs this first (Fusion.cpp), so
// a prologue joins the first reduction and an epilogue the second.
#include "ReductionRuns.h"
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <optional>

namespace tc {

namespace {

// A thread per row is fine for rows this short, or this many rows.
constexpr int64_t kThreadRowExtent = 256, kThreadRows = 16384;

// X's reduced axes by `op`'s axes attribute; nullopt when out of range
// (the verifier's to report).
std::optional<std::vector<bool>> reducedAxes(const Op &op) {
  const size_t r = op.operand(0)->type.rank();
  std::vector<bool> reduced(r, false);
  for (int64_t a : op.getInts("axes")) {
    int64_t d = a < 0 ? a + int64_t(r) : a;
    if (d < 0 || d >= int64_t(r))
      return std::nullopt;
    reduced[size_t(d)] = true;
  }
  return reduced;
}

// Reductions whose result over axes A then B is the one over A and B at
// once (a mean of equal-sized means is the mean).
bool splittable(const Op &op) {
  return (op.is(OpKind::ReduceSum) || op.is(OpKind::ReduceMean) || op.is(OpKind::ReduceMax) ||
          op.is(OpKind::ReduceMin)) &&
         op.operands.size() == 1 && op.operand(0) && op.findAttr("axes");
}

} // namespace

bool threadPerRowFits(const Op &op) {
  if (op.name().rfind("Reduce", 0) != 0 || !op.operand(0) || !op.findAttr("axes"))
    return true;
  std::optional<std::vector<bool>> reduced = reducedAxes(op);
  if (!reduced)
    return true;
  size_t d = reduced->size();
  while (d > 0 && (*reduced)[d - 1])
    --d;
  if (std::none_of(reduced->begin(), reduced->begin() + long(d), [](bool b) { return b; }))
    return true; // contiguous rows
  const Shape &xs = op.operand(0)->type.shape;
  int64_t rows = 1, extent = 1;
  for (size_t k = 0; k < xs.size(); ++k)
    ((*reduced)[k] ? extent : rows) *= xs[k].isStatic() ? xs[k].size : 1;
  return extent <= kThreadRowExtent || rows >= kThreadRows;
}

// Axes of extent 1 a keepdims reduction names change nothing: dropped, so
// [1, C, K] over [0, 2] (a weight's statistics, NFNet) is contiguous rows,
// not two runs split into a reduction over the size-1 axis whose epilogue
// reads [C, 1] operands no kernel family takes (a host step).
bool dropUnitAxes(Op &op) {
  int64_t keep = op.findAttr("keepdims") ? op.getInt("keepdims") : 1;
  std::optional<std::vector<bool>> reduced = reducedAxes(op);
  if (keep != 1 || !reduced)
    return false;
  const Shape &xs = op.operand(0)->type.shape;
  std::vector<int64_t> kept;
  for (size_t d = 0; d < reduced->size(); ++d)
    if ((*reduced)[d] && !(xs[d].isStatic() && xs[d].size == 1))
      kept.push_back(int64_t(d));
  if (kept.empty() || kept.size() == size_t(std::count(reduced->begin(), reduced->end(), true)))
    return false;
  op.setAttr("axes", Attribute(kept));
  return true;
}

bool splitReductionRuns(Function &f) {
  return rewriteOpsInPlace(f, [](Function &fn, Op &op) {
    std::optional<std::vector<bool>> axes;
    if (!splittable(op))
      return false;
    bool dropped = dropUnitAxes(op);
    if (threadPerRowFits(op) || !(axes = reducedAxes(op)))
      return dropped;
    const std::vector<bool> &reduced = *axes;
    const size_t r = reduced.size();
    size_t runs = 0;
    for (size_t d = 0; d < r; ++d)
      runs += reduced[d] && (d == 0 || !reduced[d - 1]);
    if (runs < 2 || !reduced[r - 1])
      return dropped;
    std::vector<int64_t> inner, outer;
    size_t d = r;
    while (d > 0 && reduced[d - 1])
      inner.insert(inner.begin(), int64_t(--d));
    for (size_t k = 0; k < d; ++k)
      if (reduced[k])
        outer.push_back(int64_t(k));
    // The inner run's dims kept or dropped as the op does: they trail, so
    // the outer axes' indices stay.
    int64_t keep = op.findAttr("keepdims") ? op.getInt("keepdims") : 1;
    Value *x = addInferredOp(fn, op.kind, {op.operand(0)},
                             {{"axes", Attribute(inner)}, {"keepdims", Attribute(keep)}},
                             op.result()->name, op.loc);
    op.operands[0] = x;
    op.setAttr("axes", Attribute(outer));
    return true;
  });
}

} // namespace tc
