// The Transpose family: a lone Transpose, any element type.
#include "Families.h"
#include <sstream>

namespace tc::kernels {

// A lone Transpose: each output row reads the input with the stride of
// the axis that became the last one; any element type (bytes are moved).
std::optional<EmittedKernel> emitTranspose(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  const Value *x = op.operand(0), *y = op.result();
  if (c.f.ops.size() != 1 || c.f.results.size() != 1 || c.f.results[0] != y ||
      c.argIndex(x) == SIZE_MAX)
    return c.reject("a Transpose with other ops in its group");
  const char *T = movedType(x->type.dtype);
  if (!T)
    return c.reject("a Transpose of " + x->type.str());
  size_t r = x->type.rank();
  std::vector<int64_t> perm = op.getInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < r; ++i)
      perm.push_back(int64_t(r - 1 - i));
  if (r == 0 || perm.size() != r)
    return c.reject("a Transpose of rank 0");
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  os << "// group @" << c.f.name << ": Transpose, perm";
  for (int64_t p : perm)
    os << " " << p;
  os << "\n";
  c.emitSignature(os, symbol, kPointwiseBlock);
  os << "  const " << T << " *__restrict in = (const " << T << " *)bufs[0];\n  " << T
     << " *__restrict out = (" << T << " *)bufs[1];\n";
  c.emitRowMajorStrides(os, "st", x);
  os << "  const int64_t inner = " << c.dim(y, r - 1) << ", step = st[" << perm[r - 1] << "];\n";
  // The input offset of a row's first element.
  auto rowBase = [&](const std::string &index) {
    std::string cast = index == "int64_t" ? "" : "(" + index + ")";
    os << "    int64_t base = 0"
       << (cast.empty() ? ", rem = row;\n" : ";\n    " + index + " rem = row;\n");
    for (size_t d = r - 1; d-- > 0;)
      os << "    { const " << index << " c = rem % " << cast << c.dim(y, d) << "; rem /= " << cast
         << c.dim(y, d) << "; base += c * st[" << perm[d] << "]; }\n";
  };
  if (c.cuda()) { // one thread per output element
    os << "  const int64_t n = " << c.rowsExpr() << " * inner;\n" << kGridHead;
    // The last axis stays last (attention's head permutes): 16 bytes per
    // thread, so the row's divisions are paid once per 16 bytes, not per
    // element (they, not memory, bound the scalar loop: 0.13 ms for vit's
    // qkv permute at batch 32). Row starts are multiples of `inner`.
    size_t bytes = dtypeSize(x->type.dtype);
    if (perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16) {
      std::string V = std::to_string(16 / bytes), vt = "tc_vec<" + std::string(T) + ", " + V + ">";
      os << "  if (inner % " << V << " == 0 && tc_aligned(in, 16) && tc_aligned(out, 16)) {\n"
         << "    const int64_t innerV = inner / " << V << ", nv = n / " << V << ";\n";
      for (std::string index : {"unsigned", "int64_t"}) { // 32-bit division where nv allows
        std::string cast = index == "unsigned" ? "(unsigned)" : "";
        os << (index == "unsigned" ? "    if (nv <= 0x7fffffff) {\n" : "    } else {\n")
           << "    for (int64_t v = tid; v < nv; v += stride) {\n"
           << "    const int64_t row = " << cast << "v / " << cast
           << "innerV, jv = v - row * innerV;\n";
        rowBase(index);
        os << "    ((" << vt << " *)out)[v] = *(const " << vt << " *)(in + base + jv * " << V
           << ");\n    }\n";
      }
      os << "    }\n    return;\n  }\n";
    }
    c.emitGridLoops(os, "0", true, [&](const std::string &index) {
      rowBase(index);
      os << "    out[i] = in[base + j * step];\n";
    });
    os << "}\n";
  } else {
    os << "  for (int64_t row = begin; row < end; ++row) {\n";
    rowBase("int64_t");
    os << "    for (int64_t j = 0; j < inner; ++j) out[row * inner + j] = in[base + j * step];\n"
       << "  }\n}\n";
  }
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = c.cuda() ? kPointwiseBlock : 0;
  size_t bytes = dtypeSize(x->type.dtype);
  if (c.cuda() && perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16)
    k.vec = unsigned(16 / bytes); // the grid the 16-byte path needs
  return k;
}

} // namespace tc::kernels
