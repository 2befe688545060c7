// Resize as an index move (IndexMoveParts.h), both dialects: per resized
// axis the source coordinate of the result coordinate, its taps (nearest:
// 1, linear: 2, cubic: 4, edge-clamped) and weights, computed in double as
// the reference's axisTaps (lib/Runtime/Ref/Resample.cpp) does; then the
// weighted sum over the product of the axes' taps in its order, rounded
// once. Scales or sizes computed at run time (an operand, not an
// attribute) are read by the kernel: each listed axis's scale is worked out
// per call from them and the run's dims (nn::resizePlan's rules), the
// coordinates from that scale. tf_crop_and_resize reads its region (roi
// attribute or operand) per axis; an element whose coordinate on some axis
// falls outside the input is the extrapolation value. Antialiasing (a
// linear or cubic downscale by a scale known at compile time): the kernel
// stretched by 1 / scale over its taps, normalized, as the reference's
// coefficients(). Not here: antialiasing by run-time scales (their tap
// count is not known), resized axes of unknown input size.
#include "IndexMoveParts.h"
#include "tc/IR/NNMath.h"
#include <cmath>

namespace tc::kernels {

namespace {

// The source coordinate `x` of result position `y` on an axis of `in`
// elements resized to `out` by `scale` (the reference's formulas, in its
// order of operations).
std::optional<std::string> sourceCoordinate(const std::string &mode, int64_t in, int64_t out,
                                            double scale, KernelDialect d) {
  auto lit = [&](double v) { return floatLiteral(v, DType::F64, d); };
  double width = scale * double(in);
  std::string half = "(y + 0.5) / " + lit(scale) + " - 0.5";
  if (mode == "align_corners")
    return width == 1 ? lit(0) : "y * " + lit(double(in - 1)) + " / " + lit(width - 1);
  if (mode == "asymmetric")
    return "y / " + lit(scale);
  if (mode == "pytorch_half_pixel")
    return out > 1 ? half : lit(0);
  if (mode == "half_pixel")
    return half;
  if (mode == "half_pixel_symmetric") {
    double adjustment = double(out) / width, center = double(in) / 2;
    return lit(center) + " * (1 - " + lit(adjustment) + ") + (y + 0.5) / " + lit(scale) + " - 0.5";
  }
  if (mode == "tf_half_pixel_for_nn")
    return "(y + 0.5) / " + lit(scale);
  return std::nullopt;
}

// The same with the scale `s` and the result extent `out` known only at
// run time (double expressions; `in` static).
std::optional<std::string> runTimeSourceCoordinate(const std::string &mode, int64_t in,
                                                   const std::string &out, const std::string &s) {
  std::string I = std::to_string(in) + ".0", W = "(" + s + " * " + I + ")";
  std::string half = "(y + 0.5) / " + s + " - 0.5";
  if (mode == "align_corners")
    return "(" + W + " == 1 ? 0.0 : y * " + std::to_string(in - 1) + ".0 / (" + W + " - 1))";
  if (mode == "asymmetric")
    return "y / " + s;
  if (mode == "pytorch_half_pixel")
    return "(" + out + " > 1 ? " + half + " : 0.0)";
  if (mode == "half_pixel")
    return half;
  if (mode == "half_pixel_symmetric")
    return "(" + I + " / 2) * (1 - (double)" + out + " / " + W + ") + (y + 0.5) / " + s + " - 0.5";
  if (mode == "tf_half_pixel_for_nn")
    return "(y + 0.5) / " + s;
  return std::nullopt;
}

} // namespace

bool emitResize(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  const std::string &mode = op.getString("mode"),
                    &coord = op.getString("coordinate_transformation_mode");
  // Scales or sizes computed at run time (roi matters to tf_crop_and_resize
  // alone, read below).
  const Value *runScales = op.operands.size() > 2 ? op.operand(2) : nullptr,
              *runSizes = op.operands.size() > 3 ? op.operand(3) : nullptr;
  bool runTime = runScales || runSizes;
  for (const Value *v : {runScales, runSizes})
    if (v && (c.argIndex(v) == SIZE_MAX || v->type.rank() != 1))
      return c.noKernel("a Resize with constant scales or sizes not folded into attributes");
  if (runScales && runSizes)
    return c.noKernel("a Resize with both scales and sizes");
  bool antialias = op.getInt("antialias") != 0 && mode != "nearest";
  if (antialias && runTime)
    return c.noKernel("a Resize antialiasing by run-time scales or sizes");
  bool crop = coord == "tf_crop_and_resize";
  const Value *runRoi = crop && op.operands.size() > 1 ? op.operand(1) : nullptr;
  if (runRoi && (c.argIndex(runRoi) == SIZE_MAX || runRoi->type.rank() != 1 ||
                 !runRoi->type.shape[0].isStatic()))
    return c.noKernel("a Resize whose roi is not an argument of static length");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return c.noKernel("a Resize in mode " + mode);
  if (!m.computed())
    return false;
  const Shape &xs = m.x->type.shape, &ys = m.y->type.shape;
  size_t r = xs.size();
  if (ys.size() != r || r == 0)
    return c.noKernel("a Resize of rank 0");
  std::vector<int64_t> axes = nn::resizeAxes(op.getInts("axes"), r);
  // The plan over the static dims (an unknown one stands in as 1: it must
  // then be an axis that is not resized).
  std::vector<int64_t> in(r);
  for (size_t d = 0; d < r; ++d)
    in[d] = xs[d].isStatic() ? xs[d].size : 1;
  nn::ResizePlan plan;
  if (runTime) {
    // Every listed axis takes taps: its scale is known only per call.
    plan.scale.assign(r, NAN);
    for (size_t d = 0; d < r; ++d)
      if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end())
        plan.scale[d] = 1.0;
    const Value *v = runScales ? runScales : runSizes;
    if (v->type.shape[0] != Dim::fixed(int64_t(axes.size())))
      return c.noKernel("a Resize whose scales or sizes do not match its axes");
    for (int64_t a : axes)
      if (!xs[size_t(a)].isStatic() || xs[size_t(a)].size == 0)
        return c.noKernel("a Resize over an axis of unknown size");
    std::string vals = m.data(runScales ? 2 : 3);
    const std::string &policy = op.getString("keep_aspect_ratio_policy");
    if (runSizes && policy != "stretch") { // one scale: the least or greatest ratio
      m.setup << "  double rs = 0;\n";
      for (size_t i = 0; i < axes.size(); ++i)
        m.setup << "  { const double si = (double)" << vals << "[" << i << "] / "
                << xs[size_t(axes[i])].size << ".0; if (" << i << " == 0 || si "
                << (policy == "not_larger" ? "<" : ">") << " rs) rs = si; }\n";
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      std::string D = std::to_string(axes[i]);
      m.setup << "  const double rs" << D << " = ";
      if (runScales)
        m.setup << "(double)" << vals << "[" << i << "];\n";
      else if (policy == "stretch")
        m.setup << "(double)" << c.dim(m.y, size_t(axes[i])) << " / " << xs[size_t(axes[i])].size
                << ".0;\n";
      else
        m.setup << "rs;\n";
    }
  } else {
    try {
      plan = nn::resizePlan(in, axes, op.attr("scales").floats(), op.getInts("sizes"),
                            op.getString("keep_aspect_ratio_policy"));
    } catch (const Error &) {
      return c.noKernel("a Resize the plan rejects");
    }
  }
  double A = op.getFloat("cubic_coeff_a");
  bool exclude = op.getInt("exclude_outside") != 0;
  auto lit = [&](double v) { return floatLiteral(v, DType::F64, c.dialect); };
  // Axis d's region start and end (the reference's: roi lists every listed
  // axis's starts then its ends, else the whole axis).
  const std::vector<double> &roiAttr = op.attr("roi").floats();
  size_t roiLen = runRoi ? size_t(runRoi->type.shape[0].size) : roiAttr.size();
  std::string roiData = runRoi ? m.dataOf(runRoi) : "";
  auto roiAt = [&](size_t d, bool end) -> std::string {
    auto it = std::find(axes.begin(), axes.end(), int64_t(d));
    if (roiLen != 2 * axes.size() || it == axes.end())
      return lit(end ? 1.0 : 0.0);
    size_t k = size_t(it - axes.begin()) + (end ? axes.size() : 0);
    return runRoi ? "(double)" + c.load(runRoi->type.dtype, roiData + "[" + std::to_string(k) + "]")
                  : lit(roiAttr[k]);
  };
  std::string nearest = op.getString("nearest_mode");
  size_t plainTaps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  std::vector<size_t> taps(r, plainTaps); // per resized axis
  c.emitRowMajorStrides(m.setup, "xst", m.x);
  std::vector<size_t> resized;
  m.body << "    int64_t at = 0;\n";
  if (crop)
    m.body << "    bool outside = false;\n";
  for (size_t d = 0; d < r; ++d) {
    bool listed = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    bool same = !runTime && !crop && std::fabs(plan.scale[d] - 1.0) <= 1e-9 && xs[d] == ys[d];
    if (!listed || same) {
      if (xs[d] != ys[d] && !(runTime && ys[d].isUnknown())) // the rule keeps its size
        return c.noKernel("a Resize whose unresized axis changes size");
      m.body << "    at += " << m.cs(d) << " * xst[" << d << "];\n";
      continue;
    }
    if (!xs[d].isStatic() || (!runTime && !ys[d].isStatic()) || xs[d].size == 0)
      return c.noKernel("a Resize over an axis of unknown size");
    int64_t I = xs[d].size;
    auto x = runTime ? runTimeSourceCoordinate(coord, I, c.dim(m.y, d), "rs" + std::to_string(d))
                     : sourceCoordinate(coord, I, ys[d].size, plan.scale[d], c.dialect);
    if (crop) { // the region's start to end over the result (the reference's order)
      std::string W = runTime ? "(rs" + std::to_string(d) + " * " + std::to_string(I) + ".0)"
                              : lit(plan.scale[d] * double(I)),
                  I1 = std::to_string(I - 1) + ".0", rs = roiAt(d, false), re = roiAt(d, true);
      x = "((" + W + " == 1 ? (" + re + " - " + rs + ") * " + I1 + " / 2 : y * (" + re + " - " +
          rs + ") * " + I1 + " / (" + W + " - 1)) + " + rs + " * " + I1 + ")";
    }
    if (!x)
      return c.noKernel("a Resize with coordinate_transformation_mode " + coord);
    std::string D = std::to_string(d), idx = "ix" + D, w = "w" + D;
    resized.push_back(d);
    // Antialiasing a downscale: taps from `first` past the base, 2 - 2 first of them.
    bool stretched = antialias && plan.scale[d] < 1;
    int64_t first = 0;
    if (stretched) {
      double support = mode == "linear" ? 1 : 2;
      first = int64_t(std::floor(-support / plan.scale[d])) + 1;
      if (2 - 2 * first > 64)
        return c.noKernel("a Resize antialiasing a downscale by more than " +
                          std::to_string(int(16 / support)) + " (over 64 taps)");
      taps[d] = size_t(2 - 2 * first);
    }
    m.body << "    int64_t " << idx << "[" << taps[d] << "]; double " << w << "[" << taps[d]
           << "];\n"
           << "    {\n      const double y = (double)" << m.cs(d) << ", x = " << *x << ";\n"
           << "      double base = tc_floor(x);\n      if (base == x) base -= 1;\n"
           << "      const double ratio = x - base;\n";
    if (crop)
      m.body << "      outside |= x < 0 || x > " << I - 1 << ".0;\n";
    auto clamp = [&](const std::string &e) {
      return "(" + e + " < 0 ? 0 : " + e + " > " + std::to_string(I - 1) + " ? " +
             std::to_string(I - 1) + " : " + e + ")";
    };
    if (stretched) {
      // The reference's coefficients(): K(|scale (first + q - ratio)|) over
      // the taps, divided by their sum; exclude_outside then keeps the
      // taps inside, renormalized (when any weigh).
      std::string a = lit(A), n = std::to_string(taps[d]);
      m.body << "      const int64_t k = (int64_t)base + (" << first
             << ");\n      double sum = 0;\n"
             << "      for (int q = 0; q < " << n << "; ++q) {\n"
             << "        const double t = tc_abs(" << lit(plan.scale[d]) << " * ((double)(" << first
             << " + q) - ratio));\n"
             << "        const double v = "
             << (mode == "linear" ? "t < 1 ? 1 - t : 0.0" : cubicKernelCode("t", a)) << ";\n"
             << "        " << idx << "[q] = " << clamp("(k + q)") << "; " << w
             << "[q] = v; sum += v;\n      }\n"
             << "      for (int q = 0; q < " << n << "; ++q) " << w << "[q] /= sum;\n";
      if (exclude)
        m.body << "      double inside = 0;\n"
               << "      for (int q = 0; q < " << n << "; ++q)\n"
               << "        if (k + q >= 0 && k + q < " << I << ") inside += " << w << "[q];\n"
               << "      if (inside != 0)\n"
               << "        for (int q = 0; q < " << n << "; ++q)\n"
               << "          " << w << "[q] = k + q >= 0 && k + q < " << I << " ? " << w
               << "[q] / inside : 0.0;\n";
    } else if (mode == "nearest") {
      std::string hi = nearest == "ceil"                 ? "true"
                       : nearest == "round_prefer_floor" ? "ratio > 0.5"
                       : nearest == "round_prefer_ceil"  ? "ratio >= 0.5"
                       : nearest == "floor"              ? "false"
                                                         : "";
      if (hi.empty())
        return c.noKernel("a Resize with nearest_mode " + nearest);
      m.body << "      const int64_t k = (int64_t)base + (ratio == 1.0 || " << hi
             << " ? 1 : 0);\n      " << idx << "[0] = " << clamp("k") << "; " << w << "[0] = 1;\n";
    } else if (mode == "linear") {
      m.body << "      const int64_t k = (int64_t)base;\n      " << idx << "[0] = " << clamp("k")
             << "; " << idx << "[1] = " << clamp("(k + 1)") << ";\n      " << w
             << "[0] = 1 - ratio; " << w << "[1] = ratio;\n";
    } else {
      // nn::cubicKernel of ratio + 1, ratio, 1 - ratio, 2 - ratio.
      std::string a = lit(A);
      m.body << "      const int64_t k = (int64_t)base - 1;\n      double sum = 0;\n"
             << "      for (int q = 0; q < 4; ++q) {\n"
             << "        const double t = tc_abs(q == 0 ? ratio + 1 : q == 1 ? ratio : q == 2 ? 1 "
                "- ratio : 2 - ratio);\n"
             << "        double v = " << cubicKernelCode("t", a) << ";\n"
             << "        const int64_t j = k + q;\n";
      if (exclude)
        m.body << "        if (j < 0 || j >= " << I << ") v = 0;\n";
      m.body << "        " << idx << "[q] = " << clamp("j") << "; " << w
             << "[q] = v; sum += v;\n      }\n";
      if (exclude)
        m.body << "      if (sum != 0) for (int q = 0; q < 4; ++q) " << w << "[q] /= sum;\n";
      else
        m.body << "      (void)sum;\n";
    }
    m.body << "    }\n";
  }
  // The product of the axes' taps, the last axis fastest (the reference's
  // odometer), each weight the product of the axes' in axis order.
  m.body << "    double acc = 0;\n";
  std::string indent = "    ", w = "1.0", src = "at";
  for (size_t d : resized) {
    std::string D = std::to_string(d);
    m.body << indent << "for (int t" << D << " = 0; t" << D << " < " << taps[d] << "; ++t" << D
           << ")\n";
    indent += "  ";
    w = "(" + w + " * w" + D + "[t" + D + "])";
    src += " + ix" + D + "[t" + D + "] * xst[" + D + "]";
  }
  m.body << indent << "acc += " << w << " * (double)" << m.load(m.data(0) + "[" + src + "]")
         << ";\n    out0[i] = "
         << m.store(crop ? "outside ? " + lit(op.getFloat("extrapolation_value")) + " : acc"
                         : "acc")
         << ";\n";
  return true;
}

} // namespace tc::kernels
