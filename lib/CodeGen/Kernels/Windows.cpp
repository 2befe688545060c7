// The signal fills as index moves, both dialects: HannWindow, HammingWindow,
// BlackmanWindow and MelWeightMatrix. Their sizes are run-time operands; the
// kernels read them from the result's extents (the CPU runtime sizes a lone
// op's result by its shape rule at the run's values), so they compute each
// element from its coordinate alone, in double as the reference
// (lib/Runtime/Ref/Signal.cpp) and rounded once.
#include "IndexMoveParts.h"

namespace tc::kernels {

// w(n) = sum_j a_j cos(2 pi j n / N), N = size when periodic, size - 1 when
// symmetric (a symmetric window of size 1 is [1]).
bool emitWindow(MoveCode &m) {
  if (m.r != 1 || !m.computed())
    return m.ok && m.c.noKernel(std::string(m.op.name()) + " of rank other than 1");
  std::string size = m.c.dim(m.y, 0);
  m.setup << "  const int64_t denom = " << (m.op.getInt("periodic") ? size : size + " - 1")
          << ";\n";
  m.body << "    const double t = denom > 0 ? 2.0 * 3.14159265358979323846 * (double)i / "
            "(double)denom : 0.0;\n";
  std::string v;
  if (m.op.is(OpKind::HannWindow))
    v = "0.5 - 0.5 * tc_cos(t)";
  else if (m.op.is(OpKind::HammingWindow)) // the reference's 25 / 46
    v = "25.0 / 46.0 - (1.0 - 25.0 / 46.0) * tc_cos(t)";
  else
    v = "0.42 - 0.5 * tc_cos(t) + 0.08 * tc_cos(2.0 * t)";
  m.body << "    out0[i] = " << m.store(v) << ";\n";
  return true;
}

// Triangular bands on the mel scale (the reference's melWeightMatrixKernel):
// element (j, m) needs band m's three edges only, so each element computes
// them; an edge outside the DFT bins is an index fault (the reference
// refuses it).
bool emitMelWeightMatrix(MoveCode &m) {
  if (m.r != 2 || !m.computed())
    return m.ok && m.c.noKernel("a MelWeightMatrix of rank other than 2");
  std::string dft = m.scalar(m.op.operand(1)), rate = m.scalar(m.op.operand(2)),
              lo = m.scalar(m.op.operand(3)), hi = m.scalar(m.op.operand(4)),
              bins = m.c.dim(m.y, 0), mels = m.c.dim(m.y, 1);
  m.setup << "  const double dft = " << dft << ", rate = " << rate
          << ", lo = 2595.0 * tc_log10(1.0 + " << lo << " / 700.0)"
          << ", hi = 2595.0 * tc_log10(1.0 + " << hi << " / 700.0);\n"
          << "  const double step = (hi - lo) / (double)(" << mels << " + 2);\n";
  m.body << "    int64_t e[3];\n"
         << "    for (int k = 0; k < 3; ++k) {\n"
         << "      const double hz = 700.0 * (tc_pow(10.0, ((double)(c1 + k) * step + lo) / "
            "2595.0) - 1.0);\n"
         << "      e[k] = (int64_t)tc_floor((dft + 1.0) * hz / rate);\n"
         << "    }\n"
         << "    int bad = -1;\n"
         << "    for (int k = 0; k < 3; ++k) if (bad < 0 && (e[k] < 0 || e[k] >= " << bins
         << ")) bad = k;\n"
         << "    if (bad >= 0) " << m.indexFault("e[bad]", bins) << "\n"
         << "    const int64_t left = e[0], center = e[1], right = e[2];\n"
         << "    double w = 0.0;\n"
         << "    if (c0 >= center && c0 < right) w = (double)(right - c0) / (double)(right - "
            "center);\n"
         << "    else if (center > left && c0 >= left && c0 <= center) w = (double)(c0 - left) / "
            "(double)(center - left);\n"
         << "    else if (center == left && c0 == center) w = 1.0;\n"
         << "    out0[i] = " << m.store("w") << ";\n";
  return true;
}

} // namespace tc::kernels
