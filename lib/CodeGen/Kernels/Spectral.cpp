// DFT and STFT as index moves (IndexMoveParts.h), both dialects: result
// element (..., m, ..., part) is the real or imaginary part of bin m, the
// naive sum over the transformed axis in the reference's order
// (lib/Runtime/Ref/Signal.cpp: complex products in double, twiddles reduced
// mod n and exact at quarter turns), rounded once. Each element recomputes
// its bin's sum for both parts: O(n) per element, as the reference's O(n^2)
// per line.
#include "IndexMoveParts.h"

namespace tc::kernels {

namespace {

// Declares tw_c, tw_s: e^(sign * 2 pi i k m / n), the reference's twiddle.
std::string twiddleCode(const std::string &k, const std::string &m, const std::string &n,
                        const char *sign, const std::string &indent) {
  return indent + "double tw_c, tw_s;\n" + indent + "{\n" + indent + "  const int64_t r = (" + k +
         " % " + n + ") * (" + m + " % " + n + ") % " + n + ";\n" + indent + "  if (4 * r % " + n +
         " == 0) {\n" + indent + "    const int64_t q = 4 * r / " + n + ";\n" + indent +
         "    tw_c = q == 0 ? 1.0 : q == 2 ? -1.0 : 0.0;\n" + indent + "    tw_s = " + sign +
         "(q == 1 ? 1.0 : q == 3 ? -1.0 : 0.0);\n" + indent + "  } else {\n" + indent +
         "    const double a = " + sign + "2.0 * 3.14159265358979323846 * (double)r / (double)" +
         n + ";\n" + indent + "    tw_c = tc_cos(a); tw_s = tc_sin(a);\n" + indent + "  }\n" +
         indent + "}\n";
}

// sum += (sr + i si) * (tw_c + i tw_s), as std::complex<double> multiplies.
const char *kAccumulate = "      sum_r += sr * tw_c - si * tw_s; sum_i += sr * tw_s + si * tw_c;\n";

} // namespace

bool emitDFT(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  size_t r = m.r;
  if (op.operands.size() > 1 && (op.operand(1) || (op.operands.size() > 2 && op.operand(2))))
    return c.noKernel("a DFT whose length or axis is known only at run time");
  int64_t a = op.getInt("axis");
  a += a < 0 ? int64_t(r) : 0;
  if (r < 2 || m.x->type.rank() != r || a < 0 || a >= int64_t(r) - 1)
    return c.noKernel("a DFT over an axis out of range");
  if (!m.computed())
    return false;
  size_t ax = size_t(a);
  bool inverse = op.getInt("inverse") != 0, onesided = op.getInt("onesided") != 0;
  std::string in = c.dim(m.x, ax), C = c.dim(m.x, r - 1), x = m.data(0);
  int64_t len = op.getInt("dft_length");
  std::string n =
      len ? std::to_string(len) + "LL" : (inverse && onesided ? "2 * (" + in + " - 1)" : in);
  c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.setup << "  const int64_t dn = " << n << ", in = " << in << ";\n"
          << "  const int64_t kept = " << (inverse && onesided ? "dn / 2 + 1" : "dn") << " < in ? "
          << (inverse && onesided ? "dn / 2 + 1" : "dn") << " : in;\n";
  m.body << "    if (dn <= 0) " << m.indexFault("dn", "(int64_t)1") << "\n"
         << "    int64_t base = 0;\n";
  for (size_t d = 0; d + 1 < r; ++d)
    if (d != ax)
      m.body << "    base += " << m.cs(d) << " * xst[" << d << "];\n";
  std::string re = m.load(x + "[at]"),
              im = C + " == 2 ? (double)" + m.load(x + "[at + 1]") + " : 0.0";
  m.body << "    double sum_r = 0, sum_i = 0;\n"
         << "    for (int64_t k = 0; k < dn; ++k) {\n"
         // Inverse onesided: bins past n/2 by conjugate symmetry.
         << "      int64_t src = k;\n      double conj = 1.0;\n";
  if (inverse && onesided)
    m.body << "      if (k >= dn / 2 + 1) { src = dn - k; conj = -1.0; }\n";
  m.body << "      double sr = 0, si = 0;\n"
         << "      if (src < kept) {\n        const int64_t at = base + src * xst[" << ax
         << "];\n        sr = (double)" << re << "; si = conj * (" << im << ");\n      }\n"
         << twiddleCode("k", m.cs(ax), "dn", inverse ? "" : "-", "      ") << kAccumulate
         << "    }\n";
  if (inverse)
    m.body << "    sum_r /= (double)dn; sum_i /= (double)dn;\n";
  m.body << "    out0[i] = " << m.store(m.cs(r - 1) + " == 0 ? sum_r : sum_i") << ";\n";
  return true;
}

bool emitSTFT(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  if (m.r != 4 || m.x->type.rank() != 3 || !m.computed())
    return m.ok && c.noKernel("an STFT of a signal of rank other than 3");
  auto operand = [&](size_t k) { return op.operands.size() > k ? op.operand(k) : nullptr; };
  const Value *stepV = operand(1), *window = operand(2), *flV = operand(3);
  std::string step = stepV ? m.scalar(stepV) : std::to_string(op.getInt("frame_step")) + ".0",
              len = c.dim(m.x, 1), C = c.dim(m.x, 2), x = m.data(0), fl;
  if (flV)
    fl = "(int64_t)" + m.scalar(flV);
  else if (op.getInt("frame_length"))
    fl = std::to_string(op.getInt("frame_length")) + "LL";
  else if (window)
    fl = c.dim(window, 0);
  else
    fl = len;
  std::string win = window ? m.stored(window) : "";
  c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.setup << "  const int64_t step = (int64_t)" << step << ", fl = " << fl << ";\n";
  // The reference's checks: a frame that does not fit, a window of another
  // length.
  m.body << "    if (fl <= 0 || fl > " << len << ") " << m.indexFault("fl", len + " + 1") << "\n"
         << "    if (step <= 0) " << m.indexFault("step", "(int64_t)1") << "\n";
  if (window)
    m.body << "    if (" << c.dim(window, 0) << " != fl) " << m.indexFault(c.dim(window, 0), "fl")
           << "\n";
  std::string re = m.load(x + "[at]"),
              im = C + " == 2 ? (double)" + m.load(x + "[at + 1]") + " : 0.0";
  m.body << "    double sum_r = 0, sum_i = 0;\n"
         << "    for (int64_t k = 0; k < fl; ++k) {\n"
         << "      const int64_t at = c0 * xst[0] + (c1 * step + k) * xst[1];\n"
         << "      const double w = "
         << (window ? "(double)" + c.load(window->type.dtype, win + "[k]") : std::string("1.0"))
         << ";\n"
         << "      const double sr = (double)" << re << " * w, si = (" << im << ") * w;\n"
         << twiddleCode("k", "c2", "fl", "-", "      ") << kAccumulate << "    }\n"
         << "    out0[i] = " << m.store("c3 == 0 ? sum_r : sum_i") << ";\n";
  return true;
}

} // namespace tc::kernels
