// Shape rules of resampling and padding (Resize, Pad) and Einsum.
#include "OpInference.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/NNMath.h"
#include <set>

namespace tc::infer {

static bool oneOf(const std::string &s, std::initializer_list<const char *> options) {
  for (const char *o : options)
    if (s == o)
      return true;
  return false;
}

// Resize's axes normalized against rank `r`; [] means every axis.
static std::vector<int64_t> resizeAxes(const Op &op, int64_t r) {
  std::vector<int64_t> axes;
  std::set<int64_t> seen;
  for (int64_t a : op.getInts("axes")) {
    int64_t n = normalizeAxis(a, r);
    if (!seen.insert(n).second)
      fail("axis ", a, " is listed twice");
    axes.push_back(n);
  }
  if (op.getInts("axes").empty())
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  return axes;
}

std::vector<TensorType> inferResize(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.dtype == DType::Bool)
    fail("expects a numeric tensor, got ", x.str());
  const std::string &mode = op.getString("mode"),
                    &coord = op.getString("coordinate_transformation_mode"),
                    &nearest = op.getString("nearest_mode");
  if (!oneOf(mode, {"nearest", "linear", "cubic"}))
    fail("unknown mode '", mode, "'");
  if (!oneOf(coord, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                     "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}))
    fail("unknown coordinate_transformation_mode '", coord, "'");
  if (!oneOf(nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    fail("unknown nearest_mode '", nearest, "'");
  for (const char *flag : {"antialias", "exclude_outside"})
    if (op.getInt(flag) != 0 && op.getInt(flag) != 1)
      fail(flag, " must be 0 or 1, got ", op.getInt(flag));
  int64_t r = int64_t(x.rank());
  std::vector<int64_t> axes = resizeAxes(op, r);
  if (op.operand(2) || op.operand(3)) {
    // Scales or sizes computed at run time: the resized dims are unknown.
    if (bool(op.operand(2)) == bool(op.operand(3)) || !op.getInts("sizes").empty() ||
        !op.attr("scales").floats().empty())
      fail("exactly one of scales and sizes must be given");
    if (op.operand(3) && runtimeIntsLength(op, 3) != int64_t(axes.size()))
      fail("sizes operand has ", operandType(op, 3).str(), " for ", axes.size(), " axes");
    if (op.operand(2) && !isFloat(operandType(op, 2).dtype))
      fail("scales operand must be a float tensor, got ", operandType(op, 2).str());
    Shape out = x.shape;
    for (int64_t a : axes)
      out[size_t(a)] = Dim::unknown();
    return {TensorType{x.dtype, out}};
  }
  const std::vector<double> &roi = op.attr("roi").floats();
  if (coord == "tf_crop_and_resize" && !op.operand(1) && roi.size() != 2 * axes.size())
    fail("tf_crop_and_resize needs roi with ", 2 * axes.size(), " values, got ", roi.size());
  std::vector<int64_t> in;
  for (const Dim &d : x.shape)
    in.push_back(d.isStatic() ? d.size : -1);
  const std::vector<double> &scales = op.attr("scales").floats();
  nn::ResizePlan plan = nn::resizePlan(in, axes, scales, op.getInts("sizes"),
                                       op.getString("keep_aspect_ratio_policy"));
  Shape out = x.shape;
  for (int64_t a : axes) {
    if (plan.out[size_t(a)] >= 0)
      out[size_t(a)] = Dim::fixed(plan.out[size_t(a)]);
    else if (!(scales.size() && plan.scale[size_t(a)] == 1.0))
      out[size_t(a)] = Dim::unknown(); // a scale of 1 keeps the (symbolic) size
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferPad(const Op &op) {
  const TensorType &x = operandType(op, 0);
  const std::string &mode = op.getString("mode");
  if (!oneOf(mode, {"constant", "reflect", "edge", "wrap"}))
    fail("unknown mode '", mode, "'");
  size_t r = x.rank();
  if (op.operand(2) && operandType(op, 2).dtype != x.dtype)
    fail("value operand ", operandType(op, 2).str(), " differs from the data type ", x.str());
  if (op.operand(1)) { // pads computed at run time: every size may change
    if (runtimeIntsLength(op, 1) != int64_t(2 * r))
      fail("pads operand ", operandType(op, 1).str(), " must hold ", 2 * r, " values for ",
           x.str());
    return {TensorType{x.dtype, Shape(r, Dim::unknown())}};
  }
  const std::vector<int64_t> &pads = op.getInts("pads");
  if (pads.size() != 2 * r)
    fail("pads has ", pads.size(), " values, expected ", 2 * r, " for ", x.str());
  Shape out;
  for (size_t d = 0; d < r; ++d) {
    const Dim &in = x.shape[d];
    int64_t extra = checkedAdd(pads[d], pads[d + r]);
    if (!in.isStatic()) {
      if (extra == 0)
        out.push_back(in);
      else if (in.isSymbolic() && extra > 0) // grown by the pads (a crop could go negative)
        out.push_back(dimOf(exprOf(in) + DimExpr::integer(extra)));
      else
        out.push_back(Dim::unknown());
      continue;
    }
    int64_t n = checkedAdd(in.size, extra);
    if (n < 0)
      fail("pads ", pads[d], ", ", pads[d + r], " remove more than axis ", d, " (", in.size,
           ") holds");
    if (mode != "constant" && in.size == 0 && n > 0)
      fail(mode, " padding of the empty axis ", d, " has nothing to copy from");
    out.push_back(Dim::fixed(n));
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferEinsum(const Op &op) {
  std::vector<size_t> ranks;
  const TensorType &first = operandType(op, 0);
  if (first.dtype == DType::Bool)
    fail("expects numeric tensors, got ", first.str());
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TensorType &t = operandType(op, i);
    if (t.dtype != first.dtype)
      fail("operand types differ: ", first.str(), " vs ", t.str());
    ranks.push_back(t.rank());
  }
  nn::EinsumSpec spec = nn::parseEinsum(op.getString("equation"), ranks);
  // The size of each label: letters must agree; ellipsis dims broadcast.
  std::vector<std::optional<Dim>> size(size_t(spec.numLabels));
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Shape &sh = operandType(op, i).shape;
    for (size_t d = 0; d < sh.size(); ++d) {
      int l = spec.inputs[i][d];
      std::optional<Dim> &cur = size[size_t(l)];
      if (!cur) {
        cur = sh[d];
      } else if (l >= 52) {
        cur = broadcast({*cur}, {sh[d]})[0];
      } else if (cur->isStatic() && sh[d].isStatic() && cur->size != sh[d].size) {
        fail("equation '", op.getString("equation"), "': a label has sizes ", cur->size, " and ",
             sh[d].size);
      } else if (!cur->isStatic()) {
        cur = sh[d];
      }
    }
  }
  Shape out;
  for (int l : spec.output)
    out.push_back(*size[size_t(l)]);
  return {TensorType{first.dtype, out}};
}

} // namespace tc::infer
