// The Transpose family: a lone Transpose, any element type.
#include "Families.h"
#include <sstream>

namespace tc::kernels {

namespace {

// The tile's side: a warp's row of the tile reads and writes at least 64
// contiguous bytes (two full sectors); 256 threads, so each moves
// side * side / 256 elements.
size_t tileSide(size_t bytes) { return bytes >= 4 ? 32 : 64; }

// A Transpose whose last axis changes (NCHW <-> NHWC): read both ways one
// element per thread would touch a cache line per thread on one side.
// Output axes that stay adjacent and in order are merged first (NCHW ->
// NHWC is [N,C,HW] -> [N,HW,C]). Each block moves side x side tiles of the
// two axes that swap innermost (output axis q, which ends with the input's
// last, and the output's last) through shared memory, so the global reads
// run along the input's last axis and the writes along the output's. The
// other axes (the batch) and the tiles come from the tile index, divided
// once per tile. The smem row is padded to an odd number of 4-byte words:
// a column walk hits every bank once.
void emitTiledTranspose(const KernelContext &c, std::ostream &os, const Value *y,
                        const std::vector<int64_t> &perm, const char *T, size_t bytes) {
  size_t r = perm.size(), side = tileSide(bytes), pad = bytes >= 4 ? 1 : 4 / bytes;
  // Merged output axes: their extent, and the strides of their innermost
  // member in the input and the output.
  struct Axis {
    std::string extent, in, out;
  };
  std::vector<Axis> axes;
  size_t q = 0;
  for (size_t d = 0; d < r; ++d) {
    if (d == 0 || perm[d] != perm[d - 1] + 1)
      axes.push_back({c.dim(y, d), "", ""});
    else
      axes.back().extent += " * " + c.dim(y, d);
    axes.back().in = "st[" + std::to_string(perm[d]) + "]";
    axes.back().out = "ost[" + std::to_string(d) + "]";
    if (perm[d] == int64_t(r - 1))
      q = axes.size() - 1;
  }
  size_t last = axes.size() - 1;
  std::string S = std::to_string(side), R = std::to_string(kPointwiseBlock / side);
  c.emitRowMajorStrides(os, "ost", y);
  os << "  const int64_t Q = " << axes[q].extent << ", L = " << axes[last].extent
     << ", inL = " << axes[last].in << ", outQ = " << axes[q].out << ";\n"
     << "  const int64_t tilesQ = (Q + " << S << " - 1) / " << S << ", tilesL = (L + " << S
     << " - 1) / " << S << ", tiles = tilesQ * tilesL";
  for (size_t d = 0; d < last; ++d)
    if (d != q)
      os << " * " << axes[d].extent;
  os << ";\n  __shared__ " << T << " tile[" << S << "][" << side + pad << "];\n"
     << "  const int tx = threadIdx.x % " << S << ", ty = threadIdx.x / " << S << ";\n"
     << "  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
     << "    int64_t rem = t / tilesL;\n"
     << "    const int64_t l0 = (t - rem * tilesL) * " << S << ", q0 = rem % tilesQ * " << S
     << ";\n    rem /= tilesQ;\n    int64_t inBase = 0, outBase = 0;\n";
  for (size_t d = last; d-- > 0;)
    if (d != q)
      os << "    { const int64_t e = " << axes[d].extent
         << ", k = rem % e; rem /= e; inBase += k * " << axes[d].in << "; outBase += k * "
         << axes[d].out << "; }\n";
  // Reads: tile row = output last axis (l), column = q (the input's last).
  os << "    for (int k = ty; k < " << S << "; k += " << R << ")\n"
     << "      if (l0 + k < L && q0 + tx < Q)\n"
     << "        tile[k][tx] = in[inBase + (l0 + k) * inL + q0 + tx];\n"
     << "    __syncthreads();\n"
     << "    for (int k = ty; k < " << S << "; k += " << R << ")\n"
     << "      if (q0 + k < Q && l0 + tx < L)\n"
     << "        out[outBase + (q0 + k) * outQ + l0 + tx] = tile[tx][k];\n"
     << "    __syncthreads(); // the next tile overwrites `tile`\n  }\n";
}

} // namespace

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
  size_t bytes = dtypeSize(x->type.dtype);
  bool tiled = c.cuda() && perm[r - 1] != int64_t(r - 1) && bytes;
  if (tiled) {
    emitTiledTranspose(c, os, y, perm, T, bytes);
    os << "}\n";
  } else if (c.cuda()) { // one thread per output element
    os << "  const int64_t n = " << c.rowsExpr() << " * inner;\n" << kGridHead;
    // The last axis stays last (attention's head permutes): 16 bytes per
    // thread, so the row's divisions are paid once per 16 bytes, not per
    // element (they, not memory, bound the scalar loop: 0.13 ms for vit's
    // qkv permute at batch 32). Row starts are multiples of `inner`.
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
  if (tiled) // about one block per tile
    k.vec = unsigned(tileSide(bytes) * tileSide(bytes) / kPointwiseBlock);
  else if (c.cuda() && perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16)
    k.vec = unsigned(16 / bytes); // the grid the 16-byte path needs
  return k;
}

} // namespace tc::kernels
