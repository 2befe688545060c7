#include "tc/IR/MoveMap.h"
#include "tc/IR/ConstantInts.h"
#include "tc/IR/IndexMath.h"

namespace tc {

namespace {

std::optional<MoveMap> sliceMap(const Op &op) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  auto opt = [&](size_t k) {
    return k < op.operands.size() && op.operand(k) ? infer::constantInts(op.operand(k))
                                                   : std::optional<std::vector<int64_t>>();
  };
  auto starts = infer::constantInts(op.operand(1)), ends = infer::constantInts(op.operand(2));
  auto axes = opt(3), steps = opt(4);
  if (!starts || !ends || ends->size() != starts->size() ||
      (op.operands.size() > 3 && op.operand(3) && !axes) ||
      (op.operands.size() > 4 && op.operand(4) && !steps))
    return std::nullopt;
  MoveMap m;
  m.start.assign(r, 0);
  m.step.assign(r, 1);
  for (size_t k = 0; k < starts->size(); ++k) {
    int64_t a = axes ? axes->at(k) : int64_t(k), step = steps ? steps->at(k) : 1;
    a += a < 0 ? int64_t(r) : 0;
    if (a < 0 || a >= int64_t(r) || step == 0 || !x->type.shape[size_t(a)].isStatic())
      return std::nullopt;
    m.start[size_t(a)] =
        sliceRange(x->type.shape[size_t(a)].size, starts->at(k), ends->at(k), step).start;
    m.step[size_t(a)] = step;
  }
  return m;
}

std::optional<MoveMap> concatMap(const Op &op) {
  int64_t r = int64_t(op.result()->type.rank()), axis = op.getInt("axis");
  axis += axis < 0 ? r : 0;
  if (axis < 0 || axis >= r)
    return std::nullopt;
  MoveMap m;
  m.axis = size_t(axis);
  m.offsets = {0};
  for (const Value *v : op.operands) {
    if (!v || v->type.rank() != size_t(r) || !v->type.shape[m.axis].isStatic())
      return std::nullopt;
    m.offsets.push_back(m.offsets.back() + v->type.shape[m.axis].size);
  }
  return m;
}

// Zeros around static axes: autodiff's gradient of a Slice (the padded
// cotangent a cast or a sum reads in place).
std::optional<MoveMap> padMap(const Op &op) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  for (size_t k = 1; k < op.operands.size(); ++k) // run-time pads or fill
    if (op.operand(k))
      return std::nullopt;
  if (!op.findAttr("pads") || op.getString("mode") != "constant" || op.getFloat("value") != 0)
    return std::nullopt;
  const std::vector<int64_t> &pads = op.getInts("pads");
  if (pads.size() != 2 * r)
    return std::nullopt;
  MoveMap m;
  for (size_t d = 0; d < r; ++d) {
    if (pads[d] < 0 || pads[r + d] < 0 ||
        ((pads[d] || pads[r + d]) && !x->type.shape[d].isStatic()))
      return std::nullopt;
    m.before.push_back(pads[d]);
  }
  return m;
}

} // namespace

std::optional<MoveMap> moveMap(const Op &op) {
  if (op.results.size() != 1 || op.result()->type.rank() == 0 || op.operands.empty() ||
      !op.operand(0))
    return std::nullopt;
  size_t r = op.result()->type.rank();
  switch (op.kind) {
  case OpKind::Slice: return sliceMap(op);
  case OpKind::Concat: return concatMap(op);
  case OpKind::Pad: return padMap(op);
  case OpKind::Transpose: {
    MoveMap m;
    m.perm = op.getInts("perm");
    if (m.perm.empty())
      for (size_t d = r; d-- > 0;)
        m.perm.push_back(int64_t(d));
    if (m.perm.size() != r || m.perm.back() != int64_t(r) - 1)
      return std::nullopt;
    return m;
  }
  case OpKind::Expand: {
    // A '?' result dim must be the operand's: the shape operand's values
    // are known only at run time.
    const Shape &x = op.operand(0)->type.shape, &y = op.result()->type.shape;
    if (x.size() > r)
      return std::nullopt;
    for (size_t d = 0; d < r; ++d)
      if (y[d].isUnknown() &&
          (d + x.size() < r || (x[d + x.size() - r].isStatic() && x[d + x.size() - r].size == 1)))
        return std::nullopt;
    return MoveMap{};
  }
  case OpKind::Tile: {
    MoveMap m;
    auto reps = infer::constantInts(op.operand(1));
    if (op.operand(0)->type.rank() != r || !reps || reps->size() != r)
      return std::nullopt;
    m.repeats = *reps;
    return m;
  }
  default: return std::nullopt;
  }
}

} // namespace tc
