// The ops that follow their data operand's layout in the channels-last pass
// (ChannelsLast.h): each is told which axes its NHWC operand has, so that
// pools, SE blocks, dense blocks, heads and decoders stay NHWC between
// convolutions instead of reading a Transpose back to NCHW.
#include "ChannelsLast.h"
#include "tc/IR/Layout.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>

namespace tc::channels_last {

namespace {

// Reduce*: the op table's reductions over `axes` with `keepdims`.
bool isReduce(const Op &op) {
  const OpInfo &info = op.info();
  return info.category == FusionCategory::Reduction && info.findAttr("axes") &&
         info.findAttr("keepdims");
}

// Operand i is absent: no run-time attribute operand stands for an
// attribute the rewrite changes.
bool absent(const Op &op, size_t i) { return op.operand(i) == nullptr; }

std::vector<int64_t> lastAxes(const std::vector<int64_t> &axes, size_t rank) {
  std::vector<int64_t> r;
  for (int64_t a : axes)
    r.push_back(lastAxis(a, rank));
  return r;
}

// LayerNormalization over a whole sample (axis 1) with one-element Scale
// and B (GroupNorm with one group, canonicalize's form): the statistics
// do not care about the element order, so it runs on the twin as it is.
bool sampleNorm(Walk &w, Op &op) {
  int64_t r = int64_t(op.operand(0)->type.rank()), axis = op.getInt("axis");
  if (op.results.size() != 1 || (axis < 0 ? axis + r : axis) != 1 ||
      !hasOneElement(op.operand(1)) || (op.operand(2) && !hasOneElement(op.operand(2))))
    return false;
  w.retypeAsTwins(op);
  return true;
}

// MaxPool (without indices), AveragePool, LpPool: channels_last = 1.
bool pool(Walk &w, Op &op) {
  if (op.results.size() != 1 || op.getInt("channels_last"))
    return false;
  op.setAttr("channels_last", Attribute(int64_t(1)));
  w.retypeAsTwins(op);
  return true;
}

// MaxPoolGrad: channels_last = 1, X and dY in NHWC (one that is not moved
// there: X is the forward pool's, a twin already, and dY comes from NHWC ops).
bool poolGrad(Walk &w, Op &op) {
  if (op.getInt("channels_last"))
    return false;
  for (Value *&v : op.operands)
    if (!w.isTwin(v))
      v = w.toLast(v);
  op.setAttr("channels_last", Attribute(int64_t(1)));
  w.retypeAsTwins(op);
  return true;
}

// A global pool is a Reduce over the spatial axes, [N, 1, 1, C] in NHWC.
bool globalPool(Walk &w, Op &op) {
  size_t r = op.operand(0)->type.rank();
  std::vector<int64_t> axes;
  for (size_t a = 1; a + 1 < r; ++a)
    axes.push_back(int64_t(a));
  op.kind = op.is(OpKind::GlobalMaxPool) ? OpKind::ReduceMax : OpKind::ReduceMean;
  op.attrs.clear();
  op.setAttr("axes", Attribute(axes));
  op.setAttr("keepdims", Attribute(int64_t(1)));
  w.retypeAsTwins(op);
  return true;
}

// Reduce*: the axes remapped. With keepdims the result is a twin; without,
// it is the same NCHW value when the kept axes keep their order (the
// spatial axes reduced, or C and N), else the op is left alone.
bool reduce(Walk &w, Op &op) {
  if (!absent(op, 1))
    return false;
  size_t r = op.operand(0)->type.rank();
  std::vector<int64_t> axes = op.getInts("axes");
  if (axes.empty())
    for (size_t a = 0; a < r; ++a)
      axes.push_back(int64_t(a));
  std::vector<int64_t> last = lastAxes(axes, r);
  std::sort(last.begin(), last.end());
  if (std::adjacent_find(last.begin(), last.end()) != last.end())
    return false;
  bool keep = op.getInt("keepdims") != 0;
  if (!keep) {
    int64_t prev = -1;
    for (int64_t a : toChannelsLastPerm(r)) {
      if (std::find(last.begin(), last.end(), lastAxis(a, r)) != last.end())
        continue;
      if (a < prev)
        return false;
      prev = a;
    }
  }
  op.setAttr("axes", Attribute(last));
  if (keep)
    w.retypeAsTwins(op);
  else
    w.markChanged(); // the same result type
  return true;
}

// Concat on any axis: every operand in NHWC (a twin already, or a constant).
bool concat(Walk &w, Op &op) {
  size_t r = op.operand(0)->type.rank();
  for (const Value *v : op.operands)
    if (!v || v->type.rank() != r || !(w.isTwin(v) || w.hasTwin(v) || v->isConstant()))
      return false;
  for (Value *&v : op.operands)
    v = w.toLast(v);
  op.setAttr("axis", Attribute(lastAxis(op.getInt("axis"), r)));
  w.retypeAsTwins(op);
  return true;
}

bool split(Walk &w, Op &op) {
  op.setAttr("axis", Attribute(lastAxis(op.getInt("axis"), op.operand(0)->type.rank())));
  w.retypeAsTwins(op);
  return true;
}

// Slice: a constant axes operand (or none: the first len(starts) axes)
// remapped.
bool slice(Walk &w, Op &op) {
  size_t r = op.operand(0)->type.rank();
  const Value *starts = op.operand(1), *axesIn = op.operand(3);
  std::vector<int64_t> axes;
  if (axesIn) {
    if (!axesIn->isConstant() || axesIn->type.dtype != DType::I64)
      return false;
    const int64_t *d = axesIn->data->as<int64_t>();
    axes.assign(d, d + axesIn->data->size / sizeof(int64_t));
  } else {
    if (starts->type.rank() != 1 || !starts->type.shape[0].isStatic())
      return false;
    for (int64_t a = 0; a < starts->type.shape[0].size; ++a)
      axes.push_back(a);
  }
  if (op.operands.size() < 4)
    op.operands.resize(4, nullptr);
  op.operands[3] = w.ints(op.result()->name + "_axes", lastAxes(axes, r), op.loc);
  w.retypeAsTwins(op);
  return true;
}

// The entries of a 1-D run-time tensor `v` at `indices` (a Gather).
Value *gather(Walk &w, Value *v, const std::vector<int64_t> &indices, const Location &loc) {
  Value *idx = w.ints(v->name + "_nhwc_idx", indices, loc);
  TensorType t{v->type.dtype, makeShape({int64_t(indices.size())})};
  Op *g = w.f().addOp(OpKind::Gather, {v, idx}, {w.f().uniqueName(v->name + "_nhwc")}, {t}, loc);
  w.markChanged();
  return g->result();
}

// Resize: per-axis scales / sizes permuted (a Gather of run-time ones), or
// its axes remapped. Not tf_crop_and_resize (its roi).
bool resize(Walk &w, Op &op) {
  if (!absent(op, 1) || op.getString("coordinate_transformation_mode") == "tf_crop_and_resize")
    return false;
  size_t r = op.operand(0)->type.rank();
  std::vector<int64_t> axes = op.getInts("axes");
  if (!absent(op, 2) || !absent(op, 3)) {
    if (!axes.empty())
      return false;
    for (size_t i : {size_t(2), size_t(3)}) {
      Value *v = op.operand(i);
      if (v && (v->type.rank() != 1 || !(v->type.shape[0] == Dim::fixed(int64_t(r)))))
        return false;
    }
    for (size_t i : {size_t(2), size_t(3)})
      if (Value *v = op.operand(i))
        op.operands[i] = gather(w, v, toChannelsLastPerm(r), op.loc);
  } else if (!axes.empty()) {
    op.setAttr("axes", Attribute(lastAxes(axes, r)));
  } else {
    std::vector<int64_t> perm = toChannelsLastPerm(r);
    const std::vector<double> &scales = op.attr("scales").floats();
    const std::vector<int64_t> &sizes = op.getInts("sizes");
    if ((!scales.empty() && scales.size() != r) || (!sizes.empty() && sizes.size() != r))
      return false;
    std::vector<double> s;
    std::vector<int64_t> z;
    for (int64_t a : perm) {
      if (!scales.empty())
        s.push_back(scales[size_t(a)]);
      if (!sizes.empty())
        z.push_back(sizes[size_t(a)]);
    }
    if (!s.empty())
      op.setAttr("scales", Attribute(s));
    if (!z.empty())
      op.setAttr("sizes", Attribute(z));
  }
  w.retypeAsTwins(op);
  return true;
}

// Pad: begins and ends permuted alike.
bool pad(Walk &w, Op &op) {
  size_t r = op.operand(0)->type.rank();
  const std::vector<int64_t> &pads = op.getInts("pads");
  if (!absent(op, 1) || pads.size() != 2 * r)
    return false;
  std::vector<int64_t> p(2 * r);
  for (size_t i = 0; i < r; ++i) {
    size_t a = size_t(lastAxis(int64_t(i), r));
    p[a] = pads[i];
    p[r + a] = pads[r + i];
  }
  op.setAttr("pads", Attribute(p));
  w.retypeAsTwins(op);
  return true;
}

// Shape: the NCHW dims from start to end, gathered from the twin's.
bool shape(Walk &w, Op &op) {
  int64_t r = int64_t(op.operand(0)->type.rank());
  auto clampAxis = [&](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t(0), r); };
  int64_t start = clampAxis(op.getInt("start")), end = clampAxis(op.getInt("end"));
  std::vector<int64_t> idx;
  for (int64_t a = start; a < end; ++a)
    idx.push_back(lastAxis(a, size_t(r)));
  TensorType all{DType::I64, makeShape({r})};
  Op *full = w.f().addOp(OpKind::Shape, {op.operand(0)},
                         {w.f().uniqueName(op.result()->name + "_nhwc")}, {all}, op.loc);
  op.kind = OpKind::Gather;
  op.attrs.clear();
  op.operands = {full->result(), w.ints(op.result()->name + "_idx", idx, op.loc)};
  w.markChanged(); // the same result
  return true;
}

} // namespace

bool followLayout(Walk &w, Op &op) {
  if (!op.operand(0) || op.operand(0)->type.rank() < 3)
    return false;
  bool done = false;
  switch (op.kind) {
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::LpPool: done = pool(w, op); break;
  case OpKind::MaxPoolGrad: done = poolGrad(w, op); break;
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool: done = globalPool(w, op); break;
  case OpKind::Concat: done = concat(w, op); break;
  case OpKind::Split: done = split(w, op); break;
  case OpKind::Slice: done = slice(w, op); break;
  case OpKind::Resize: done = resize(w, op); break;
  case OpKind::Pad: done = pad(w, op); break;
  case OpKind::Shape: done = shape(w, op); break;
  case OpKind::LayerNormalization: done = sampleNorm(w, op); break;
  default: done = isReduce(op) && reduce(w, op); break;
  }
  return done;
}

} // namespace tc::channels_last
