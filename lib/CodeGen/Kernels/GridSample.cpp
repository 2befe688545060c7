// GridSample as an index move (IndexMoveParts.h), both dialects: result
// element (n, c, o...) samples X's plane (n, c) at the grid's point (n, o...)
// (its coordinates innermost axis first). Per spatial axis the point's taps
// (nearest: 1, linear: 2, cubic: 4) and weights, with the padding mode's
// index for a tap outside the input (zeros: none, read as 0; border:
// clamped; reflection: reflected), computed in double as the reference's
// GridAxis (lib/Runtime/Ref/Spatial.cpp) does; then the weighted sum over
// the product of the axes' taps in its order, rounded once.
#include "IndexMoveParts.h"

namespace tc::kernels {

bool emitGridSample(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  const std::string &mode = op.getString("mode"), &padding = op.getString("padding_mode");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return c.noKernel("a GridSample in mode " + mode);
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return c.noKernel("a GridSample with padding_mode " + padding);
  if (m.r < 3 || m.x->type.rank() != m.r || !m.computed())
    return m.ok && c.noKernel("a GridSample of rank below 3");
  size_t sp = m.r - 2, taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  bool align = op.getInt("align_corners") != 0;
  std::string grid = m.data(1), points = "(int64_t)1";
  for (size_t d = 2; d < m.r; ++d)
    points += " * " + c.dim(m.y, d);
  c.emitRowMajorStrides(m.setup, "xst", m.x);
  // x reflected into [lo, hi] by the nearer border, repeatedly.
  m.setup << "  const auto reflect = [](double x, double lo, double hi) -> double {\n"
          << "    const double range = hi - lo;\n    if (range <= 0) return lo;\n"
          << "    if (x < lo || x > hi) {\n"
          << "      const double dx = x < lo ? lo - x : x - hi, n = tc_floor(dx / range), r = dx - "
             "n * range;\n"
          << "      x = (x < lo) == (tc_fmod(n, 2.0) == 0) ? lo + r : hi - r;\n    }\n"
          << "    return x;\n  };\n  (void)reflect;\n";
  m.body << "    int64_t p = 0;\n";
  for (size_t d = 2; d < m.r; ++d)
    m.body << "    p = p * " << c.dim(m.y, d) << " + " << m.cs(d) << ";\n";
  m.body << "    const int64_t gb = (c0 * " << points << " + p) * " << sp << ";\n";
  for (size_t d = 0; d < sp; ++d) {
    std::string D = std::to_string(d), S = "S" + D, ix = "ix" + D, w = "w" + D;
    m.body << "    const int64_t " << S << " = " << c.dim(m.x, 2 + d) << ";\n"
           << "    if (" << S << " == 0) " << m.indexFault("0", S) << "\n"
           << "    int64_t " << ix << "[" << taps << "]; double " << w << "[" << taps << "];\n"
           << "    {\n"
           << "      const double lo = " << (align ? "0.0" : "-0.5")
           << ", hi = " << (align ? "(double)(" + S + " - 1)" : "(double)" + S + " - 0.5") << ";\n"
           << "      const double g = (double)"
           << c.load(op.operand(1)->type.dtype, grid + "[gb + " + std::to_string(sp - 1 - d) + "]")
           << ";\n"
           << "      double x = "
           << (align ? "(g + 1) / 2 * (double)(" + S + " - 1)"
                     : "((g + 1) * (double)" + S + " - 1) / 2")
           << ";\n";
    if (mode == "nearest") // half to even, as PyTorch
      m.body << "      x = tc_rint(x);\n";
    if (padding == "border")
      m.body << "      if (x < lo || x > hi) x = x < 0 ? 0.0 : x > (double)(" << S
             << " - 1) ? (double)(" << S << " - 1) : x;\n";
    else if (padding == "reflection")
      m.body << "      if (x < lo || x > hi) x = reflect(x, lo, hi);\n";
    // The input index sampled for integer position j (-1: none, reads 0).
    std::string clamp = "(j < 0 ? 0 : j > " + S + " - 1 ? " + S + " - 1 : j)";
    m.body << "      const auto source = [&](int64_t j) -> int64_t { "
           << (padding == "zeros" ? "return j >= 0 && j < " + S + " ? j : -1;"
               : padding == "border"
                   ? "return " + clamp + ";"
                   : "j = (int64_t)reflect((double)j, lo, hi); return " + clamp + ";")
           << " };\n";
    if (mode == "nearest")
      m.body << "      " << ix << "[0] = source((int64_t)x); " << w << "[0] = 1;\n";
    else
      m.body << "      const double f = tc_floor(x), t = x - f;\n"
             << "      const int64_t i0 = (int64_t)f;\n";
    if (mode == "linear")
      m.body << "      " << ix << "[0] = source(i0); " << w << "[0] = 1 - t;\n      " << ix
             << "[1] = source(i0 + 1); " << w << "[1] = t;\n";
    if (mode == "cubic")
      m.body << "      for (int q = 0; q < 4; ++q) {\n"
             << "        const double u = tc_abs(q == 0 ? t + 1 : q == 1 ? t : q == 2 ? 1 - t : 2 "
                "- t);\n"
             << "        " << ix << "[q] = source(i0 - 1 + q); " << w
             << "[q] = " << cubicKernelCode("u", floatLiteral(-0.75, DType::F64, c.dialect))
             << ";\n      }\n";
    m.body << "    }\n";
  }
  // The product of the axes' taps, the last axis fastest (the reference's
  // odometer), each weight the product of the axes' in axis order; a tap
  // outside the input weighs 0.
  m.body << "    double acc = 0;\n";
  std::string indent = "    ", wt = "1.0", off = "c0 * xst[0] + c1 * xst[1]", none = "false";
  for (size_t d = 0; d < sp; ++d) {
    std::string D = std::to_string(d);
    m.body << indent << "for (int t" << D << " = 0; t" << D << " < " << taps << "; ++t" << D
           << ")\n";
    indent += "  ";
    wt = "(" + wt + " * w" + D + "[t" + D + "])";
    off += " + ix" + D + "[t" + D + "] * xst[" + std::to_string(d + 2) + "]";
    none += " || ix" + D + "[t" + D + "] < 0";
  }
  m.body << indent << "if (!(" << none << ") && " << wt << " != 0) acc += " << wt << " * (double)"
         << m.load(m.data(0) + "[" + off + "]") << ";\n    out0[i] = " << m.store("acc") << ";\n";
  return true;
}

} // namespace tc::kernels
