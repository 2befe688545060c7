// The Reduction family's `columns` strategy (CUDA): one statistic over a
// run of axes before kept inner ones (NHWC's ReduceMean over H, W), and
// the 16-byte vectors it and `split` (SplitRows.cpp) read X in.
#include "ReductionEmitter.h"
#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tc::kernels::reduce {

const ColumnsGeometry &columnsGeometry() {
  static const ColumnsGeometry g = [] {
    ColumnsGeometry g;
    const char *e = std::getenv("TC_COLUMNS_TUNE");
    std::istringstream in(e ? e : "");
    for (std::string kv; std::getline(in, kv, ',');) {
      size_t eq = kv.find('=');
      unsigned v = eq == std::string::npos ? 0 : unsigned(std::atoi(kv.c_str() + eq + 1));
      std::string k = kv.substr(0, eq);
      if (v == 0)
        continue;
      (k == "grid" ? g.grid : k == "rows" ? g.minRows : k == "unroll" ? g.unroll : g.blocks) = v;
    }
    return g;
  }();
  return g;
}

std::string ColumnsGeometry::name() const {
  if (broken)
    return "broken";
  return "grid=" + std::to_string(grid) + ",rows=" + std::to_string(minRows) +
         ",unroll=" + std::to_string(unroll) + ",blocks=" + std::to_string(blocks) +
         ",block=" + std::to_string(block);
}

const std::vector<ColumnsGeometry> &columnsVariants() {
  static const std::vector<ColumnsGeometry> v = [] {
    ColumnsGeometry d = columnsGeometry();
    std::vector<ColumnsGeometry> v{d};
    // Twice the blocks, each a shorter trip (more blocks an SM: 64 registers).
    v.push_back({d.grid * 2, std::max(d.minRows / 2, 1u), std::max(d.unroll / 2, 1u), 4, 256});
    // Half the blocks, each a longer trip (one an SM: no register cap).
    v.push_back({std::max(d.grid / 2, 1u), d.minRows * 2, d.unroll * 2, 1, 256});
    // 512 threads: twice the rows of lanes a block (fewer partials to combine).
    v.push_back({d.grid, d.minRows, d.unroll, 2, 512});
    if (std::getenv("TC_TEST_BROKEN_VARIANT")) {
      v.push_back(d);
      v.back().broken = true;
    }
    return v;
  }();
  return v;
}

std::string Emitter::vectorType(const Value *v) const {
  return "tc_vec<" + std::string(c.st(v->type.dtype)) + ", VW>";
}

unsigned Emitter::vectorWidth(int64_t n, std::vector<size_t> &vectors) const {
  size_t widest = 0;
  for (size_t i : l.elementArgs)
    if (c.f.args[i]->type.shape == l.x->type.shape) {
      vectors.push_back(i);
      widest = std::max(widest, dtypeSize(c.f.args[i]->type.dtype));
    }
  if (l.perElementResults)
    for (const Value *r : c.f.results)
      widest = std::max(widest, dtypeSize(r->type.dtype));
  unsigned vw = widest ? std::min<unsigned>(kMaxVector, unsigned(16 / widest)) : 1;
  while (vw > 1 && n > 0 && n % vw)
    vw /= 2;
  if (vw == 1)
    vectors.clear();
  return vw;
}

void Emitter::vectorLoads(std::ostream &os, const std::vector<size_t> &vectors, const char *count,
                          const std::string &where, const std::string &inRange,
                          const std::string &at, const std::vector<size_t> &lanes) const {
  for (size_t i : vectors)
    os << "        " << vectorType(c.f.args[i]) << " v" << i << "[" << count << "];\n";
  for (size_t i : lanes)
    os << "        " << vectorType(c.f.args[i]) << " c" << i << "[" << count << "];\n";
  os << "#pragma unroll\n        for (int u = 0; u < " << count << "; ++u) {\n"
     << "          " << where << "\n"
     << "          if (" << inRange << ") {\n";
  for (size_t i : vectors)
    os << "            v" << i << "[u] = *(const " << vectorType(c.f.args[i]) << " *)(in" << i
       << " + " << at << ");\n";
  for (size_t i : lanes)
    os << "            c" << i << "[u] = *(const " << vectorType(c.f.args[i]) << " *)(in" << i
       << " + (" << at << ") % " << c.dim(l.x, l.x->type.rank() - 1) << ");\n";
  os << "          }\n        }\n";
}

std::string Emitter::aligned(const std::vector<size_t> &vectors, const std::string &n,
                             const std::vector<size_t> &lanes) const {
  // Test-only: the path of unaligned pointers everywhere.
  if (vectors.empty() || std::getenv("TC_TEST_REDUCE_NO_VECTORS"))
    return "false";
  std::string all = n + " % VW == 0";
  for (const auto *list : {&vectors, &lanes})
    for (size_t i : *list)
      all += " && tc_aligned(in" + std::to_string(i) + ", sizeof(" + vectorType(c.f.args[i]) + "))";
  if (l.perElementResults)
    for (size_t r = 0; r < c.f.results.size(); ++r)
      all += " && tc_aligned(out" + std::to_string(r) + ", sizeof(" + vectorType(c.f.results[r]) +
             "))";
  return all;
}

// `columns`: X as [O, L, I] (kept outer, the reduced run, kept inner). A
// lane owns VW consecutive columns (one 16-byte vector of the widest
// argument read per element, narrowed until it divides a static I); TX
// lanes side by side cover an item's W = TX * VW columns and the block's
// TY rows of lanes stride over the item's rows, U rows a trip whose loads
// all issue before any sum (one load then its add kept one 2-byte load in
// flight a thread: an SE block's mean at a tenth of HBM's bandwidth).
// TX: every vector of a row when it has at most 32 (I = 32 f16: 4 lanes,
// 64 rows a block; 144: 18 lanes), else the widest divisor of the row's
// vectors from 32 down to 8 (1152 f16: 144 vectors, 24 lanes a chunk of 6)
// so that no chunk has idle lanes, else 32. Where pointers are not
// aligned or I is not a multiple of VW, the same geometry reads one
// element at a time (the same sums in the same order). The block's TY
// partials of a column combine as a tree in shared memory; where the items
// do not fill the grid, S blocks split each item's rows and write partials
// to the scratch; the last of them (a counter) combines the S partials in
// order. Every sum is in a fixed order for a shape: results identical run
// to run.
void Emitter::columnsLoop(std::ostream &os) const {
  const ReduceStat &s = l.plan.stats[0];
  const Shape &xs = l.x->type.shape;
  std::string I = "(int64_t)1";
  int64_t staticI = 1;
  for (size_t d = l.redEnd; d < l.viewDims.size(); ++d) {
    I += " * v" + std::to_string(d);
    staticI = xs[d].isStatic() && staticI > 0 ? staticI * xs[d].size : -1;
  }
  std::vector<size_t> vectors;
  const unsigned vw = vectorWidth(staticI, vectors);
  // Per-channel arguments (laneArgs: a batch norm's mean, 1 / std, shift
  // on NHWC): a lane's VW columns' values are one vector read once an
  // item, not VW loads at VW 64-bit modulos every row (resnet50's
  // variance and ds sums ran at 25% of HBM's bandwidth so).
  const std::vector<size_t> lanes = vectors.empty() ? std::vector<size_t>() : laneArgs(vw);
  std::string init = initOf(s), combine = s.combine + "()";
  // Test-only wrong sums the host-emulation tests must catch: the last
  // block leaves out the last partial; the vector path leaves out a lane's
  // last column.
  const ColumnsGeometry &geo = columnsVariants()[c.variant];
  bool drop = std::getenv("TC_TEST_COLUMNS_DROP_PARTIAL") != nullptr || geo.broken;
  bool skip = std::getenv("TC_TEST_COLUMNS_VECTOR_SKIP") != nullptr;
  const std::string minRows = std::to_string(geo.minRows);
  os << "  enum { U = " << std::max(geo.unroll, 16 / vw) << ", VW = " << vw << ", P = 8 };\n"
     << "  const int64_t I = " << I << ", O = I ? rows / I : 0, G = (I + VW - 1) / VW;\n"
     << "  int TX = G < 32 ? (G > 1 ? (int)G : 1) : 32;\n"
     << "  for (int t = 32; G > 32 && t >= 8; --t)\n"
     << "    if (G % t == 0) { TX = t; break; }\n"
     << "  const int TY = blockDim.x / TX, tx = threadIdx.x % TX, ty = threadIdx.x / TX;\n"
     << "  const bool live = ty < TY; // TX not dividing the block: the last threads idle\n"
     << "  const int64_t W = (int64_t)TX * VW, chunks = (I + W - 1) / W, items = O * chunks;\n"
     // Blocks per item: what fills the grid, at least minRows rows per thread.
     << gridSplits("items",
                   "(L + (int64_t)TY * " + minRows + " - 1) / ((int64_t)TY * " + minRows + ")")
     << "  const int64_t per = (L + S - 1) / S;\n"
     << "  __shared__ A tc_part[" << geo.block * vw << "];\n"
     << "  __shared__ int tc_last;\n"
     << "  A *part = (A *)scratch;\n  const volatile A *settled = part;\n"
     << "  const bool vec = " << aligned(vectors, "I", lanes) << ";\n  (void)vec;\n"
     << kScratchCounters << "  for (int64_t w = blockIdx.x; w < items * S; w += gridDim.x) {\n"
     << "    const int64_t item = w / S, split = w - item * S, oo = item / chunks,\n"
     << "                  c0 = (item - oo * chunks) * W, r0 = split * per,\n"
     << "                  r1 = r0 + per < L ? r0 + per : L, cl = c0 + (int64_t)tx * VW;\n"
     << "    A accs[VW];\n"
     << "#pragma unroll\n    for (int t = 0; t < VW; ++t) accs[t] = " << init << ";\n";
  for (size_t i : lanes)
    os << "    " << vectorType(c.f.args[i]) << " c" << i << " = {};\n"
       << "    if (vec && cl < I) c" << i << " = *(const " << vectorType(c.f.args[i]) << " *)(in"
       << i << " + cl % " << c.dim(l.x, l.x->type.rank() - 1) << ");\n";
  os << "    for (int64_t rb = r0 + ty; live && rb < r1; rb += (int64_t)TY * U) {\n"
     << "      A xs[U][VW]; // every term first, then the sums\n";
  // Term t of row u: from the vectors read (a whole vector in range: one
  // check) or an element at a time.
  auto terms = [&](const char *vector) {
    os << "#pragma unroll\n        for (int u = 0; u < U; ++u)\n"
       << "#pragma unroll\n        for (int t = 0; t < VW; ++t) {\n"
       << "      xs[u][t] = " << init << ";\n"
       << "      if (rb + (int64_t)u * TY >= r1 || "
       << (vector ? std::string("cl >= I") + (skip ? " || t == VW - 1" : "") : "cl + t >= I")
       << ") continue;\n"
       << "      const int64_t i = (oo * L + rb + (int64_t)u * TY) * I + cl + t;\n"
       << "      (void)i; // vectors: broadcast arguments only\n"
       << (vector ? loads(false, vector, lanes, ".v[t]") : loads(false)) << "      xs[u][t] = (A)("
       << s.term << ");\n"
       << "        }\n";
  };
  if (!vectors.empty()) {
    os << "      if (vec) {\n";
    vectorLoads(os, vectors, "U", "const int64_t at = (oo * L + rb + (int64_t)u * TY) * I + cl;",
                "rb + (int64_t)u * TY < r1 && cl < I", "at");
    terms("[u].v[t]");
    os << "      } else ";
  }
  os << "{\n";
  terms(nullptr);
  os << "      }\n"
     << "#pragma unroll\n      for (int u = 0; u < U; ++u)\n"
     << "        if (rb + (int64_t)u * TY < r1)\n"
     << "#pragma unroll\n          for (int t = 0; t < VW; ++t) accs[t] = " << combine
     << "(accs[t], xs[u][t]);\n"
     << "    }\n"
     // The block's TY partials of each column, a tree over ty in shared
     // memory (a thread summing TY = 64 partials alone took longer than
     // the loads).
     << "    __syncthreads(); // the last item's tc_part reads are done\n"
     << "    if (live)\n"
     << "#pragma unroll\n      for (int t = 0; t < VW; ++t) tc_part[ty * W + tx * VW + t] = "
        "accs[t];\n"
     << "    __syncthreads();\n"
     << "    int h = 1;\n    while (h < TY) h *= 2;\n"
     << "    for (h /= 2; h > 0; h /= 2) {\n"
     << "      for (int q = threadIdx.x; q < h * (int)W; q += blockDim.x)\n"
     << "        if (q / W + h < TY) tc_part[q] = " << combine
     << "(tc_part[q], tc_part[q + h * W]);\n"
     << "      __syncthreads();\n    }\n"
     // Thread q: the item's column c0 + q.
     << "    const int64_t q = threadIdx.x;\n"
     << "    A acc = q < W ? tc_part[q] : " << init << ";\n"
     << "    if (S > 1) {\n"
     << "      if (q < W) part[w * W + q] = acc;\n"
     << lastBlockOf("item", "      ")
     // The S partials of a column: K = blockDim / W groups of W threads
     // each combine every K-th one, P loads issued before their sums, then
     // a tree over the groups. (One thread a column, a load then its sum,
     // made the last block S L2 round trips: 1024 of them, 80% of an NHWC
     // batch norm's statistics kernel.) `settled`: volatile, read through
     // to what the other blocks wrote.
     << "      const int K = (int)(blockDim.x / W), k = (int)(threadIdx.x / W),\n"
     << "                col = (int)(threadIdx.x - (unsigned)k * (unsigned)W);\n"
     << "      const int64_t n = S" << (drop ? " - 1" : "") << ";\n"
     << "      A sum = " << init << ";\n"
     << "      for (int64_t t0 = k; k < K && t0 < n; t0 += (int64_t)K * P) {\n"
     << "        A got[P];\n"
     << "#pragma unroll\n        for (int p = 0; p < P; ++p)\n"
     << "          got[p] = t0 + (int64_t)p * K < n ? settled[(item * S + t0 + (int64_t)p * K) * W "
        "+ "
        "col] : "
     << init << ";\n"
     << "#pragma unroll\n        for (int p = 0; p < P; ++p) sum = " << combine
     << "(sum, got[p]);\n      }\n"
     << "      if (k < K) tc_part[k * W + col] = sum;\n"
     << "      __syncthreads();\n"
     << "      int g = 1;\n      while (g < K) g *= 2;\n"
     << "      for (g /= 2; g > 0; g /= 2) {\n"
     << "        if (k < g && k + g < K) tc_part[k * W + col] = " << combine
     << "(tc_part[k * W + col], tc_part[(k + g) * W + col]);\n"
     << "        __syncthreads();\n      }\n"
     << "      acc = q < W ? tc_part[q] : " << init << ";\n"
     << "      if (threadIdx.x == 0) count[item] = 0; // zero for the next launch\n"
     << "    }\n"
     << "    if (q < W && c0 + q < I) {\n"
     << "      const int64_t o = oo * I + c0 + q;\n"
     << "      const A s0 = " << s.finish << ";\n";
  rowLoads(os);
  os << rowCode;
  ex.emitStores(os, "o");
  os << "    }\n  }\n";
}

} // namespace tc::kernels::reduce
