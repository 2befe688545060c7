// The Transpose family: a lone Transpose, any element type.
#include "Families.h"
#include <sstream>

namespace tc::kernels {

namespace {

// The tile's side: a warp's row of the tile reads and writes at least 64
// contiguous bytes (two full sectors); 256 threads, so each moves
// side * side / 256 elements.
size_t tileSide(size_t bytes) { return bytes >= 4 ? 32 : 64; }

// Output axes that stay adjacent and in order merged (NCHW -> NHWC is
// [N,C,HW] -> [N,HW,C]): their extent, and the strides of their innermost
// member in the input and the output.
struct MergedAxis {
  std::string extent, in, out;
  std::optional<int64_t> size; // the extent when static
};

std::vector<MergedAxis> mergedAxes(const KernelContext &c, const Value *y,
                                   const std::vector<int64_t> &perm, size_t &q) {
  std::vector<MergedAxis> axes;
  const Shape &s = y->type.shape;
  for (size_t d = 0; d < perm.size(); ++d) {
    std::optional<int64_t> n = s[d].isStatic() ? std::optional(s[d].size) : std::nullopt;
    if (d == 0 || perm[d] != perm[d - 1] + 1) {
      axes.push_back({c.extent(y, d), "", "", n});
    } else {
      axes.back().extent += " * " + c.extent(y, d);
      axes.back().size =
          axes.back().size && n ? std::optional(*axes.back().size * *n) : std::nullopt;
    }
    axes.back().in = "st[" + std::to_string(perm[d]) + "]";
    axes.back().out = "ost[" + std::to_string(d) + "]";
    if (perm[d] == int64_t(perm.size() - 1))
      q = axes.size() - 1;
  }
  return axes;
}

// The merged axis of at most kSmallAxis elements that swaps innermost (the
// output's last, or q: the one ending with the input's last), if any: NCHW
// <-> NHWC with C = 3. A tile would be mostly empty there.
constexpr int64_t kSmallAxis = 8;
std::optional<size_t> smallAxis(const std::vector<MergedAxis> &axes, size_t q) {
  for (size_t d : {axes.size() - 1, q})
    if (axes[d].size && *axes[d].size <= kSmallAxis)
      return d;
  return std::nullopt;
}

// One thread per position of the other merged axes, moving the small
// axis's K elements: neighbouring threads read and write neighbouring
// positions (the input's last axis and the output's last are both among
// the other axes or are the small one itself), so both sides are coalesced.
void emitSmallAxisTranspose(const KernelContext &c, std::ostream &os, const Value *y,
                            const std::vector<MergedAxis> &axes, size_t small) {
  c.emitRowMajorStrides(os, "ost", y);
  os << "  const int64_t K = " << *axes[small].size << ", items = (" << c.rowsExpr() << " * "
     << c.extent(y, y->type.rank() - 1) << ") / K;\n"
     << kGridHead;
  for (std::string index : {"unsigned", "int64_t"}) { // 32-bit division where items allow
    os << (index == "unsigned" ? "  if (items <= 0x7fffffff) {\n" : "  } else {\n")
       << "  for (int64_t t = tid; t < items; t += stride) {\n"
       << "    " << index << " rem = (" << index << ")t;\n    int64_t inBase = 0, outBase = 0;\n";
    for (size_t d = axes.size(); d-- > 0;)
      if (d != small)
        os << "    { const " << index << " e = (" << index << ")(" << axes[d].extent
           << "), k = rem % e; rem /= e; inBase += k * " << axes[d].in << "; outBase += k * "
           << axes[d].out << "; }\n";
    os << "#pragma unroll\n    for (int k = 0; k < K; ++k)\n"
       << "      out[outBase + k * " << axes[small].out << "] = in[inBase + k * " << axes[small].in
       << "];\n  }\n";
  }
  os << "  }\n";
}

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
  size_t side = tileSide(bytes), pad = bytes >= 4 ? 1 : 4 / bytes;
  size_t q = 0;
  std::vector<MergedAxis> axes = mergedAxes(c, y, perm, q);
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
  os << "  const int64_t inner = " << c.extent(y, r - 1) << ", step = st[" << perm[r - 1] << "];\n";
  // The input offset of a row's first element.
  auto rowBase = [&](const std::string &index) {
    std::string cast = index == "int64_t" ? "" : "(" + index + ")";
    os << "    int64_t base = 0"
       << (cast.empty() ? ", rem = row;\n" : ";\n    " + index + " rem = row;\n");
    for (size_t d = r - 1; d-- > 0;)
      os << "    { const " << index << " c = rem % " << cast << c.extent(y, d)
         << "; rem /= " << cast << c.extent(y, d) << "; base += c * st[" << perm[d] << "]; }\n";
  };
  size_t bytes = dtypeSize(x->type.dtype);
  bool tiled = c.cuda() && perm[r - 1] != int64_t(r - 1) && bytes;
  size_t q = 0;
  std::optional<size_t> small;
  int64_t smallSize = 1;
  if (tiled) {
    std::vector<MergedAxis> axes = mergedAxes(c, y, perm, q);
    small = smallAxis(axes, q);
    if (small) {
      emitSmallAxisTranspose(c, os, y, axes, *small);
      smallSize = *axes[*small].size;
    } else {
      emitTiledTranspose(c, os, y, perm, T, bytes);
    }
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
  if (small) // one thread per K elements
    k.vec = unsigned(smallSize);
  else if (tiled) // about one block per tile
    k.vec = unsigned(tileSide(bytes) * tileSide(bytes) / kPointwiseBlock);
  else if (c.cuda() && perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16)
    k.vec = unsigned(16 / bytes); // the grid the 16-byte path needs
  return k;
}

} // namespace tc::kernels
