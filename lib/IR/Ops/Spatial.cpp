// Shape rules of sampling at computed positions and index-driven data
// movement: GridSample, RoiAlign, MaxUnpool, ReverseSequence, and Det.
#include "OpInference.h"
#include "tc/IR/NNMath.h"

namespace tc::infer {

static void requireFloatData(const TensorType &t, const char *what) {
  if (!isFloat(t.dtype))
    fail(what, " must be a float tensor, got ", t.str());
}

std::vector<TensorType> inferGridSample(const Op &op) {
  const TensorType &x = operandType(op, 0), &grid = operandType(op, 1);
  requireFloatData(x, "X");
  requireFloatData(grid, "grid");
  if (x.rank() < 3)
    fail("X must be at least 3-D (N, C, spatial...), got ", x.str());
  size_t sp = x.rank() - 2;
  if (grid.rank() != sp + 2)
    fail("grid must be ", sp + 2, "-D for ", x.str(), ", got ", grid.str());
  const Dim &last = grid.shape.back();
  if (last.isStatic() && last.size != int64_t(sp))
    fail("grid's last dim must be ", sp, " (one coordinate per spatial axis), got ", grid.str());
  if (x.shape[0].isStatic() && grid.shape[0].isStatic() && x.shape[0].size != grid.shape[0].size)
    fail("X ", x.str(), " and grid ", grid.str(), " differ in batch size");
  const std::string &mode = op.getString("mode"), &pad = op.getString("padding_mode");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    fail("unknown mode '", mode, "'");
  if (pad != "zeros" && pad != "border" && pad != "reflection")
    fail("unknown padding_mode '", pad, "'");
  if (op.getInt("align_corners") != 0 && op.getInt("align_corners") != 1)
    fail("align_corners must be 0 or 1, got ", op.getInt("align_corners"));
  Shape out{x.shape[0], x.shape[1]};
  out.insert(out.end(), grid.shape.begin() + 1, grid.shape.end() - 1);
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferRoiAlign(const Op &op) {
  const TensorType &x = operandType(op, 0), &rois = operandType(op, 1), &idx = operandType(op, 2);
  requireFloatData(x, "X");
  if (x.rank() != 4)
    fail("X must be 4-D [N, C, H, W], got ", x.str());
  if (rois.dtype != x.dtype || rois.rank() != 2 ||
      (rois.shape[1].isStatic() && rois.shape[1].size != 4))
    fail("rois must be [num_rois, 4] of X's type, got ", rois.str());
  if (idx.dtype != DType::I64 || idx.rank() != 1)
    fail("batch_indices must be 1-D i64, got ", idx.str());
  if (rois.shape[0].isStatic() && idx.shape[0].isStatic() &&
      rois.shape[0].size != idx.shape[0].size)
    fail("rois ", rois.str(), " and batch_indices ", idx.str(), " differ in length");
  const std::string &mode = op.getString("mode"),
                    &ctm = op.getString("coordinate_transformation_mode");
  if (mode != "avg" && mode != "max")
    fail("unknown mode '", mode, "'");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    fail("unknown coordinate_transformation_mode '", ctm, "'");
  int64_t oh = op.getInt("output_height"), ow = op.getInt("output_width");
  if (oh < 1 || ow < 1)
    fail("output_height and output_width must be >= 1, got ", oh, " and ", ow);
  if (op.getInt("sampling_ratio") < 0)
    fail("sampling_ratio must be >= 0, got ", op.getInt("sampling_ratio"));
  Dim n = rois.shape[0].isStatic() ? rois.shape[0] : idx.shape[0];
  return {TensorType{x.dtype, {n, x.shape[1], Dim::fixed(oh), Dim::fixed(ow)}}};
}

std::vector<TensorType> inferMaxUnpool(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1);
  if (x.dtype == DType::Bool)
    fail("X must be numeric, got ", x.str());
  if (x.rank() < 3)
    fail("X must be at least 3-D (N, C, spatial...), got ", x.str());
  if (ind.dtype != DType::I64 || ind.shape.size() != x.rank())
    fail("I must be i64 of X's shape, got ", ind.str(), " for ", x.str());
  for (size_t d = 0; d < x.rank(); ++d)
    if (x.shape[d].isStatic() && ind.shape[d].isStatic() && x.shape[d].size != ind.shape[d].size)
      fail("I ", ind.str(), " differs in shape from X ", x.str());
  size_t sp = x.rank() - 2;
  const std::vector<int64_t> &kernel = op.getInts("kernel_shape");
  std::vector<int64_t> strides = op.getInts("strides"), pads = op.getInts("pads");
  if (strides.empty())
    strides.assign(sp, 1);
  if (pads.empty())
    pads.assign(2 * sp, 0);
  if (kernel.size() != sp || strides.size() != sp || pads.size() != 2 * sp)
    fail("kernel_shape, strides and pads must have ", sp, ", ", sp, " and ", 2 * sp, " values for ",
         x.str());
  Shape out{x.shape[0], x.shape[1]};
  for (size_t d = 0; d < sp; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[d + sp] < 0)
      fail("kernel_shape and strides must be >= 1 and pads >= 0");
    const Dim &in = x.shape[2 + d];
    if (!in.isStatic()) {
      out.push_back(Dim::unknown());
      continue;
    }
    // (in - 1) * stride - pads + kernel, MaxPool's input size.
    int64_t n =
        nn::addChecked(nn::mulChecked(std::max<int64_t>(in.size - 1, 0), strides[d]), kernel[d]);
    n = nn::subChecked(n, nn::addChecked(pads[d], pads[d + sp]));
    if (n < 0)
      fail("pads remove more than spatial axis ", d, " holds");
    out.push_back(Dim::fixed(n));
  }
  if (const Value *s = op.operand(2)) {
    const TensorType &st = s->type;
    if (st.dtype != DType::I64 || st.rank() != 1 ||
        (st.shape[0].isStatic() && st.shape[0].size != int64_t(x.rank())))
      fail("output_shape must be 1-D i64 with ", x.rank(), " values, got ", st.str());
    std::optional<std::vector<int64_t>> v = constantInts(s);
    if (!v)
      return {TensorType{x.dtype, Shape(x.rank(), Dim::unknown())}};
    for (size_t d = 0; d < x.rank(); ++d) {
      int64_t want = (*v)[d];
      bool tooSmall = out[d].isStatic() && want < out[d].size;
      if (want < 0 || tooSmall || (d < 2 && out[d].isStatic() && want != out[d].size))
        fail("output_shape dim ", d, " (", want, ") must be ",
             d < 2 ? "X's" : "at least the unpooled size", " (",
             out[d].isStatic() ? std::to_string(out[d].size) : "?", ")");
      out[d] = Dim::fixed(want);
    }
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferReverseSequence(const Op &op) {
  const TensorType &x = operandType(op, 0), &lens = operandType(op, 1);
  if (x.rank() < 2)
    fail("input must be at least 2-D, got ", x.str());
  int64_t b = op.getInt("batch_axis"), t = op.getInt("time_axis");
  if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
    fail("batch_axis and time_axis must be 0 and 1 in some order, got ", b, " and ", t);
  const Dim &batch = x.shape[size_t(b)];
  if (lens.dtype != DType::I64 || lens.rank() != 1 ||
      (lens.shape[0].isStatic() && batch.isStatic() && lens.shape[0].size != batch.size))
    fail("sequence_lens must be 1-D i64 with one length per batch entry of ", x.str(), ", got ",
         lens.str());
  return {x};
}

std::vector<TensorType> inferDet(const Op &op) {
  const TensorType &x = operandType(op, 0);
  requireFloatData(x, "X");
  if (x.rank() < 2)
    fail("X must be at least 2-D, got ", x.str());
  const Dim &r = x.shape[x.rank() - 2], &c = x.shape.back();
  if (r.isStatic() && c.isStatic() && r.size != c.size)
    fail("X's trailing matrices must be square, got ", x.str());
  return {TensorType{x.dtype, Shape(x.shape.begin(), x.shape.end() - 2)}};
}

} // namespace tc::infer
