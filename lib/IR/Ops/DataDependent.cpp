// Shape rules of the ops whose output sizes depend on operand values
// (NonZero, Compress, Unique, NonMaxSuppression): the sizes that depend on
// data are `?`; the reference kernels set them at run time (Ops.def).
#include "OpInference.h"

namespace tc::infer {

static void requireNumericOrBool(const TensorType &t, const char *what) {
  if (!isFloat(t.dtype) && !isInteger(t.dtype) && t.dtype != DType::Bool)
    fail(what, " must be a numeric or bool tensor, got ", t.str());
}

// The optional one-axis attribute `axis` ([] or [a]), normalized; -1 for [].
static int64_t optionalAxis(const Op &op, size_t rank) {
  const std::vector<int64_t> &axis = op.attr("axis").ints();
  if (axis.size() > 1)
    fail("axis must be [] or one axis, got ", axis.size(), " values");
  return axis.empty() ? -1 : normalizeAxis(axis[0], int64_t(rank));
}

std::vector<TensorType> inferNonZero(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumericOrBool(x, "X");
  return {TensorType{DType::I64, {Dim::fixed(int64_t(x.rank())), Dim::unknown()}}};
}

std::vector<TensorType> inferCompress(const Op &op) {
  const TensorType &x = operandType(op, 0), &c = operandType(op, 1);
  requireNumericOrBool(x, "input");
  if (c.dtype != DType::Bool || c.rank() != 1)
    fail("condition must be a 1-D bool tensor, got ", c.str());
  int64_t axis = optionalAxis(op, x.rank());
  if (axis < 0)
    return {TensorType{x.dtype, {Dim::unknown()}}};
  const Dim &d = x.shape[size_t(axis)];
  if (d.isStatic() && c.shape[0].isStatic() && c.shape[0].size > d.size)
    fail("condition has ", c.shape[0].size, " elements, more than axis ", axis, " (", d.size, ")");
  Shape out = x.shape;
  out[size_t(axis)] = Dim::unknown();
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferUnique(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireNumericOrBool(x, "X");
  int64_t sorted = op.getInt("sorted");
  if (sorted != 0 && sorted != 1)
    fail("sorted must be 0 or 1, got ", sorted);
  int64_t axis = optionalAxis(op, x.rank());
  Shape y{Dim::unknown()};
  Dim n = product(x.shape, 0, x.rank()); // one inverse index per element or slice
  if (axis >= 0) {
    y = x.shape;
    y[size_t(axis)] = Dim::unknown();
    n = x.shape[size_t(axis)];
  }
  TensorType unknown1{DType::I64, {Dim::unknown()}};
  return {TensorType{x.dtype, y}, unknown1, TensorType{DType::I64, {n}}, unknown1};
}

std::vector<TensorType> inferNonMaxSuppression(const Op &op) {
  const TensorType &boxes = operandType(op, 0), &scores = operandType(op, 1);
  if (!isFloat(boxes.dtype) || boxes.rank() != 3 || !boxes.shape[2].isStatic() ||
      boxes.shape[2].size != 4)
    fail("boxes must be a float [batch, boxes, 4] tensor, got ", boxes.str());
  if (scores.dtype != boxes.dtype || scores.rank() != 3)
    fail("scores must be a [batch, classes, boxes] tensor of the boxes' type, got ", scores.str());
  for (auto [b, s, what] : {std::tuple{0, 0, "batch"}, std::tuple{1, 2, "box count"}}) {
    const Dim &db = boxes.shape[size_t(b)], &ds = scores.shape[size_t(s)];
    if (db.isStatic() && ds.isStatic() && db.size != ds.size)
      fail("boxes ", boxes.str(), " and scores ", scores.str(), " differ in the ", what);
  }
  auto scalar = [&](size_t i, bool isInt, const char *name) {
    const Value *v = op.operand(i);
    if (!v)
      return;
    auto n = staticNumElements(v->type.shape);
    bool typeOk = isInt ? v->type.dtype == DType::I64 : isFloat(v->type.dtype);
    if (!typeOk || v->type.rank() > 1 || (n && *n != 1))
      fail(name, " must be one ", isInt ? "i64" : "float", " value, got ", v->type.str());
  };
  scalar(2, true, "max_output_boxes_per_class");
  scalar(3, false, "iou_threshold");
  scalar(4, false, "score_threshold");
  int64_t center = op.getInt("center_point_box");
  if (center != 0 && center != 1)
    fail("center_point_box must be 0 or 1, got ", center);
  return {TensorType{DType::I64, {Dim::unknown(), Dim::fixed(3)}}};
}

} // namespace tc::infer
