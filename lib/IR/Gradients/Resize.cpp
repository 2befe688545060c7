// Gradient rule of Resize. Resize is linear in X and separable: along each
// resized axis an output position is a weighted sum of a few input
// positions, the same weights for every other index. The backward is the
// transposed interpolation, axis by axis:
//  - in general, a product by the axis's interpolation matrix, computed in
//    the IR by the forward Resize itself (the same attributes, along that
//    one axis) applied to an identity matrix: every mode (nearest, linear,
//    cubic), coordinate transformation, antialiasing, exclude_outside and
//    tf_crop_and_resize's region come out exactly as the forward computes
//    them (an extrapolated output takes no weight, so no gradient);
//  - nearest by an integer factor k where output o reads input floor(o / k)
//    (asymmetric with floor, half_pixel or pytorch_half_pixel rounding to
//    nearest: PyTorch's nearest and nearest-exact upsampling), a sum over
//    the k copies (a ReduceSum over a reshape).
#include "GradRules.h"
#include "tc/IR/NNMath.h"
#include <cmath>

namespace tc::grad {

namespace {

Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }

// An n x n identity in dtype t.
Value *identity(GradBuilder &b, int64_t n, DType t) {
  std::vector<float> v(size_t(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i * n + i)] = 1.0f;
  Value *eye =
      b.f.addConstant(b.f.uniqueName("resize_grad_eye"), TensorType{DType::F32, makeShape({n, n})},
                      TensorData::copyOf(v.data(), v.size() * sizeof(float)), b.fwd.loc);
  return b.castTo(eye, t);
}

// Whether output o of a nearest Resize by integer factor k reads input floor(o / k).
bool nearestBlocks(const Op &op, double scale, int64_t in, int64_t out) {
  if (op.getString("mode") != "nearest" || scale < 1 || scale != std::floor(scale) ||
      out != in * int64_t(scale))
    return false;
  const std::string &coord = op.getString("coordinate_transformation_mode"),
                    &nearest = op.getString("nearest_mode");
  if (coord == "asymmetric")
    return nearest == "floor";
  if (coord == "half_pixel" || (coord == "pytorch_half_pixel" && out > 1))
    return nearest == "round_prefer_floor" || nearest == "round_prefer_ceil";
  return false;
}

} // namespace

void resize(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0])
    return;
  for (size_t i = 1; i < b.fwd.operands.size(); ++i)
    if (in(b, i))
      fail(b.fwd.where(), ": the gradient of a Resize needs constant roi, scales and sizes");
  Value *X = in(b, 0);
  std::vector<int64_t> xD = b.dims(X), yD = b.dims(b.fwd.result());
  size_t r = xD.size();
  std::vector<int64_t> axes = nn::resizeAxes(b.fwd.getInts("axes"), r);
  const std::vector<double> &scales = b.fwd.attr("scales").floats();
  const std::vector<int64_t> &sizes = b.fwd.getInts("sizes");
  const std::string &policy = b.fwd.getString("keep_aspect_ratio_policy");
  nn::ResizePlan plan = nn::resizePlan(xD, axes, scales, sizes, policy);
  const std::vector<double> &roi = b.fwd.attr("roi").floats();
  Value *g = rg[0];
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t d = size_t(axes[i]);
    double rs = roi.size() == 2 * axes.size() ? roi[i] : 0.0;
    double re = roi.size() == 2 * axes.size() ? roi[i + axes.size()] : 1.0;
    // The identity (as the reference kernel has it): a scale of 1 keeping the size and region.
    auto near = [](double a, double v) { return std::fabs(a - v) <= 1e-9 * std::fabs(v); };
    if (near(plan.scale[d], 1.0) && yD[d] == xD[d] && std::fabs(rs) <= 1e-9 && near(re, 1.0))
      continue;
    std::vector<int64_t> gD = b.dims(g);
    int64_t inner = 1, outer = 1;
    for (size_t a = 0; a < d; ++a)
      outer *= gD[a];
    for (size_t a = d + 1; a < r; ++a)
      inner *= gD[a];
    std::vector<int64_t> to = gD;
    to[d] = xD[d];
    if (nearestBlocks(b.fwd, plan.scale[d], xD[d], yD[d])) {
      int64_t k = yD[d] / std::max<int64_t>(xD[d], 1);
      g = b.reshape(b.reduceSum(b.reshape(g, {outer, xD[d], k, inner}), {2}, false), to);
      continue;
    }
    // The last axis: one GEMM, g [outer, out] by M [out, in] (the identity
    // resized along its axis 0: row o holds output o's weights over the
    // inputs). Else a batched product M^T [in, out] by g [outer, out, inner]
    // (the identity resized along its axis 1).
    bool last = inner == 1;
    std::vector<std::pair<std::string, Attribute>> attrs;
    for (const char *name : {"antialias", "coordinate_transformation_mode", "cubic_coeff_a",
                             "exclude_outside", "mode", "nearest_mode"})
      if (const Attribute *a = b.fwd.findAttr(name))
        attrs.emplace_back(name, *a);
    attrs.emplace_back("axes", Attribute(std::vector<int64_t>{last ? 0 : 1}));
    if (roi.size() == 2 * axes.size())
      attrs.emplace_back("roi", Attribute(std::vector<double>{rs, re}));
    if (!scales.empty() || policy != "stretch") {
      if (std::floor(double(xD[d]) * plan.scale[d]) != double(yD[d]))
        fail(b.fwd.where(), ": the gradient of a Resize with keep_aspect_ratio_policy '", policy,
             "' whose scale ", plan.scale[d], " does not give size ", yD[d], " is not supported");
      attrs.emplace_back("scales", Attribute(std::vector<double>{plan.scale[d]}));
    } else {
      attrs.emplace_back("sizes", Attribute(std::vector<int64_t>{yD[d]}));
    }
    Value *m = b.op(OpKind::Resize, {identity(b, xD[d], X->type.dtype)}, attrs);
    Value *prod = last ? b.op(OpKind::MatMul, {b.reshape(g, {outer, yD[d]}), m})
                       : b.op(OpKind::MatMul, {m, b.reshape(g, {outer, yD[d], inner})});
    g = b.reshape(prod, to);
  }
  og[0] = g;
}

} // namespace tc::grad
