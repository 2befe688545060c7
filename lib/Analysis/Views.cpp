#include "tc/Analysis/Views.h"
#include "tc/IR/ConstantInts.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/IndexMath.h"

namespace tc {

namespace {

// The sliced axes (normalized) with their starts, when starts, axes and
// steps are constants and every step is 1.
std::optional<std::vector<std::pair<int64_t, int64_t>>> unitStepStarts(const Op &op) {
  const Value *x = op.operand(0);
  auto starts = infer::constantInts(op.operand(1));
  if (!x || !starts)
    return std::nullopt;
  int64_t rank = int64_t(x->type.rank());
  std::vector<int64_t> axes;
  if (op.operand(3)) {
    auto a = infer::constantInts(op.operand(3));
    if (!a || a->size() != starts->size())
      return std::nullopt;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(int64_t(i));
  }
  if (op.operand(4)) {
    auto steps = infer::constantInts(op.operand(4));
    if (!steps || steps->size() != starts->size())
      return std::nullopt;
    for (int64_t s : *steps)
      if (s != 1)
        return std::nullopt;
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank)
      return std::nullopt;
    out.push_back({a, (*starts)[i]});
  }
  return out;
}

} // namespace

bool isContiguousSlice(const Op &op) {
  if (!op.is(OpKind::Slice) || op.results.size() != 1 || !op.operand(0) ||
      op.operand(0)->isConstant() || !unitStepStarts(op))
    return false;
  const Shape &in = op.operand(0)->type.shape, &out = op.result()->type.shape;
  if (in.size() != out.size())
    return false;
  // From the innermost axis out: whole axes, then at most one cut axis,
  // then only axes of size 1.
  size_t d = in.size();
  while (d > 0 && !in[d - 1].isUnknown() && in[d - 1] == out[d - 1])
    --d;
  if (d == 0)
    return true; // the whole operand
  for (size_t o = 0; o + 1 < d; ++o)
    if (!(out[o].isStatic() && out[o].size == 1))
      return false;
  // Every offset is a multiple of the cut axis's stride (times symbolic
  // dims): a multiple of 16 bytes keeps the vector loads of kernels and
  // libraries (cp.async's, cuBLASLt's) aligned at any size.
  uint64_t run = dtypeSize(op.result()->type.dtype);
  for (size_t k = d; k < in.size(); ++k)
    run *= in[k].isStatic() ? uint64_t(in[k].size) : 1;
  return run % kViewAlignment == 0;
}

std::optional<uint64_t> viewByteOffset(const Op &op, const std::map<std::string, int64_t> &dims) {
  if (!op.is(OpKind::Slice))
    return isViewOp(op) ? std::optional<uint64_t>(0) : std::nullopt;
  auto starts = unitStepStarts(op);
  if (!starts || !isContiguousSlice(op))
    return std::nullopt;
  const TensorType &x = op.operand(0)->type;
  std::vector<int64_t> size;
  for (const Dim &d : x.shape) {
    if (d.isUnknown())
      return std::nullopt;
    size.push_back(dimValue(d, dims).value_or(1));
  }
  uint64_t elements = 0;
  for (auto [axis, start] : *starts) {
    uint64_t stride = 1;
    for (size_t d = size_t(axis) + 1; d < size.size(); ++d)
      stride *= uint64_t(size[d]);
    elements += uint64_t(sliceRange(size[size_t(axis)], start, INT64_MAX, 1).start) * stride;
  }
  return elements * dtypeSize(x.dtype);
}

std::optional<DimExpr> viewByteOffsetExpr(const Op &op) {
  if (!op.is(OpKind::Slice))
    return isViewOp(op) ? std::optional<DimExpr>(DimExpr()) : std::nullopt;
  auto starts = unitStepStarts(op);
  if (!starts || !isContiguousSlice(op))
    return std::nullopt;
  const TensorType &x = op.operand(0)->type;
  DimExpr bytes;
  for (auto [axis, start] : *starts) {
    const Dim &n = x.shape[size_t(axis)];
    if (!n.isStatic())
      return std::nullopt;
    DimExpr stride = DimExpr::constant(int64_t(dtypeSize(x.dtype)));
    for (size_t d = size_t(axis) + 1; d < x.rank(); ++d) {
      if (x.shape[d].isUnknown())
        return std::nullopt;
      stride = stride * exprOf(x.shape[d]);
    }
    bytes = bytes + DimExpr::constant(sliceRange(n.size, start, INT64_MAX, 1).start) * stride;
  }
  return bytes;
}

bool isViewOp(const Op &op) {
  switch (op.kind) {
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: return true;
  case OpKind::Slice: return isContiguousSlice(op);
  default: return false;
  }
}

} // namespace tc
