// Det as an index move (IndexMoveParts.h), both dialects: result element i
// is the determinant of the i-th trailing n x n matrix, LU with partial
// pivoting in a local copy, in double as the reference's detKernel
// (lib/Runtime/Ref/Spatial.cpp, the same pivots and order), rounded once.
// n must be static and small: the copy lives in registers or the stack.
#include "IndexMoveParts.h"

namespace tc::kernels {

bool emitDet(MoveCode &m) {
  const Shape &xs = m.x->type.shape;
  size_t rx = xs.size();
  if (rx < 2 || m.r != rx - 2 || !xs[rx - 1].isStatic() || xs[rx - 1] != xs[rx - 2])
    return m.c.noKernel("a Det of matrices of unknown size");
  int64_t n = xs[rx - 1].size;
  if (n > 16)
    return m.c.noKernel("a Det of matrices larger than 16 x 16");
  if (!m.computed())
    return false;
  std::string N = std::to_string(n), x = m.data(0);
  m.body << "    double a[" << std::max<int64_t>(n * n, 1) << "];\n"
         << "    for (int k = 0; k < " << n * n << "; ++k) a[k] = (double)"
         << m.load(x + "[i * " + std::to_string(n * n) + " + k]") << ";\n"
         << "    double det = 1;\n"
         << "    for (int c = 0; c < " << N << " && det != 0; ++c) {\n"
         << "      int piv = c;\n"
         << "      for (int r = c + 1; r < " << N << "; ++r)\n"
         << "        if (tc_abs(a[r * " << N << " + c]) > tc_abs(a[piv * " << N
         << " + c])) piv = r;\n"
         << "      if (piv != c) {\n"
         << "        for (int k = 0; k < " << N << "; ++k) { const double t = a[piv * " << N
         << " + k]; a[piv * " << N << " + k] = a[c * " << N << " + k]; a[c * " << N
         << " + k] = t; }\n"
         << "        det = -det;\n      }\n"
         << "      const double p = a[c * " << N << " + c];\n"
         << "      det *= p;\n      if (p == 0) break;\n"
         << "      for (int r = c + 1; r < " << N << "; ++r) {\n"
         << "        const double f = a[r * " << N << " + c] / p;\n"
         << "        for (int k = c; k < " << N << "; ++k) a[r * " << N << " + k] -= f * a[c * "
         << N << " + k];\n      }\n    }\n"
         << "    out0[i] = " << m.store("det") << ";\n";
  return true;
}

} // namespace tc::kernels
