// The DataMovement family's index moves, both dialects: a lone op whose
// result element at coordinate (c0, ..., c{r-1}) is computed from a few
// input elements found from that coordinate — Trilu, DepthToSpace,
// SpaceToDepth, GatherElements, GatherND, ScatterElements, ScatterND,
// CumSum, Resize, OneHot, ReverseSequence, LRN, GridSample, RoiAlign
// (RoiAlign.cpp), MaxUnpool, Dropout (a checked copy), Det (Det.cpp), DFT and STFT (Spectral.cpp),
// and the fills ConstantOfShape, EyeLike, Range and the signal windows and mel matrix (Windows.cpp)
// (isIndexMove); a Reduce* with run-time axes (RuntimeAxesReduce.cpp), a one-operand Einsum
// (UnaryEinsum.cpp). One loop over the result's elements: CUDA's grid-stride loop, the CPU's rows
// [begin, end) of the result.
//
// Scatters combine each element's updates in the reference's (index)
// order into the data's element and write it once, so duplicate indices
// resolve as the reference does (the last update wins for reduction
// "none") and no two threads write one element. ScatterElements and
// MaxUnpool are inverted into gathers: an element takes every update
// whose index lands on it, work data x updates along the axis. ScatterND
// goes by update slices where that is less work (emitScatterND: the
// result a copy of the data, then the first tuple of each index value
// combines that value's updates into its slice; CUDA's two `split`
// passes), work data + the updated elements x tuples index compares:
// bert's embedding gradient, 1024 tuples into [30522, 768], scanned 24G
// indices as a gather, at most 0.8G so.
#include "Families.h"
#include "IndexMoveParts.h"
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace tc::kernels {

namespace {

// ---- The ops ----------------------------------------------------------------

bool emitTrilu(MoveCode &m) {
  const Op &op = m.op;
  if (m.r < 2)
    return m.c.noKernel("a Trilu of rank below 2");
  // k: a literal, or (a run-time k) the argument's one element, read once
  // a call.
  std::string k = "0LL";
  if (op.operands.size() > 1 && op.operand(1)) {
    const Value *kv = op.operand(1);
    if (auto ks = constantInts(kv)) {
      if (ks->size() != 1)
        return m.c.noKernel("a Trilu whose k is not one element");
      k = std::to_string(ks->at(0)) + "LL";
    } else {
      auto n = staticNumElements(kv->type.shape);
      if (m.c.argIndex(kv) == SIZE_MAX || !n || *n != 1 || !isInteger(kv->type.dtype))
        return m.c.noKernel("a Trilu whose run-time k is not one integer");
      m.setup << "  const int64_t k = (int64_t)" << m.data(1) << "[0];\n";
      k = "k";
    }
  }
  std::string d = m.cs(m.r - 1) + " - " + m.cs(m.r - 2),
              keep = op.getInt("upper") != 0 ? d + " >= " + k : d + " <= " + k;
  m.body << "    out0[i] = " << keep << " ? " << m.data(0) << "[i] : (" << m.T << ")0;\n";
  return true;
}

// Element (n, c, h, w) of the space-side tensor, h = hb * b + i and
// w = wb * b + j, is channel (i * b + j) * C + c (DCR) or c * b * b + i * b + j
// (CRD) at (hb, wb) of the depth-side tensor (as the reference's blockKernel).
bool emitBlocks(MoveCode &m) {
  const Op &op = m.op;
  bool toSpace = op.is(OpKind::DepthToSpace);
  if (m.r != 4 || m.x->type.rank() != 4)
    return m.c.noKernel(std::string(op.name()) + " of rank other than 4");
  std::string b = std::to_string(op.getInt("blocksize")) + "LL";
  bool crd = toSpace && op.getString("mode") == "CRD";
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  if (toSpace) {
    std::string C = m.c.dim(m.y, 1);
    m.body << "    const int64_t bi = c2 % " << b << ", bj = c3 % " << b << ";\n"
           << "    const int64_t ch = "
           << (crd ? "c1 * " + b + " * " + b + " + bi * " + b + " + bj"
                   : "(bi * " + b + " + bj) * " + C + " + c1")
           << ";\n    out0[i] = " << m.data(0) << "[c0 * xst[0] + ch * xst[1] + (c2 / " << b
           << ") * xst[2] + (c3 / " << b << ") * xst[3]];\n";
  } else {
    std::string C = m.c.dim(m.x, 1);
    m.body << "    const int64_t ch = c1 % " << C << ", bij = c1 / " << C << ";\n"
           << "    out0[i] = " << m.data(0) << "[c0 * xst[0] + ch * xst[1] + (c2 * " << b
           << " + bij / " << b << ") * xst[2] + (c3 * " << b << " + bij % " << b
           << ") * xst[3]];\n";
  }
  return true;
}

bool emitGatherElements(MoveCode &m) {
  size_t a = m.axis(m.x);
  if (a == SIZE_MAX || m.r != m.x->type.rank())
    return false;
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.body << "    int64_t src = 0;\n";
  for (size_t d = 0; d < m.r; ++d)
    if (d != a)
      m.body << "    src += " << m.cs(d) << " * xst[" << d << "];\n";
  const Value *ind = m.op.operand(1);
  std::string at = "i";
  if (ind->def && ind->def->is(OpKind::Expand)) {
    // Indices read through their Expand: stride 0 on the broadcast axes.
    ind = ind->def->operand(0);
    size_t ri = ind->type.rank();
    m.c.emitRowMajorStrides(m.setup, "ist", ind);
    at = "ki";
    m.body << "    int64_t ki = 0;\n";
    for (size_t d = 0; d < ri; ++d)
      m.body << "    ki += (" << m.c.extent(ind, d) << " == 1 ? 0 : " << m.cs(d + m.r - ri)
             << ") * ist[" << d << "];\n";
  }
  m.index("k", ind, at, m.c.dim(m.x, a));
  m.body << "    out0[i] = " << m.data(0) << "[src + k * xst[" << a << "]];\n";
  return true;
}

bool emitGatherND(MoveCode &m) {
  const Value *ind = m.op.operand(1);
  size_t q = ind->type.rank(), b = size_t(m.op.getInt("batch_dims")), rx = m.x->type.rank();
  if (q == 0 || !ind->type.shape[q - 1].isStatic())
    return m.c.noKernel("a GatherND whose index tuples are of unknown length");
  size_t k = size_t(ind->type.shape[q - 1].size);
  if (b + k > rx || m.r != q - 1 + rx - b - k)
    return m.c.noKernel("a GatherND of inconsistent ranks");
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.body << "    int64_t t = 0, src = 0;\n";
  for (size_t d = 0; d + 1 < q; ++d)
    m.body << "    t = t * " << m.c.dim(m.y, d) << " + " << m.cs(d) << ";\n";
  for (size_t d = 0; d < b; ++d)
    m.body << "    src += " << m.cs(d) << " * xst[" << d << "];\n";
  for (size_t j = 0; j < k; ++j) {
    std::string v = "k" + std::to_string(j);
    m.index(v, ind, "t * " + std::to_string(k) + " + " + std::to_string(j), m.c.dim(m.x, b + j));
    m.body << "    src += " << v << " * xst[" << b + j << "];\n";
  }
  for (size_t s = 0; b + k + s < rx; ++s)
    m.body << "    src += " << m.cs(q - 1 + s) << " * xst[" << b + k + s << "];\n";
  m.body << "    out0[i] = " << m.data(0) << "[src];\n";
  return true;
}

bool emitScatterElements(MoveCode &m) {
  const Value *ind = m.op.operand(1), *upd = m.op.operand(2);
  size_t a = m.axis(m.x);
  if (a == SIZE_MAX || ind->type.rank() != m.r || upd->type.rank() != m.r)
    return m.c.noKernel("a ScatterElements of inconsistent ranks");
  if (!m.startCombine())
    return false;
  m.c.emitRowMajorStrides(m.setup, "ust", upd);
  m.body << "    " << m.initial("i") << "\n    bool in = true;\n    int64_t up = 0;\n";
  for (size_t d = 0; d < m.r; ++d)
    if (d != a)
      m.body << "    in &= " << m.cs(d) << " < " << m.c.dim(upd, d) << "; up += " << m.cs(d)
             << " * ust[" << d << "];\n";
  m.body << "    if (in) for (int64_t u = 0; u < " << m.c.dim(upd, a) << "; ++u) {\n"
         << "      const int64_t at = up + u * ust[" << a << "];\n";
  m.index("k", ind, "at", m.c.dim(m.x, a), "      ");
  m.body << "      if (k == " << m.cs(a) << ") { " << m.combine(m.data(2) + "[at]")
         << " }\n    }\n    " << m.finish("i") << "\n";
  if (!m.c.cuda())
    return true;
  // CUDA by lines (emitScatterND's two passes): the result a copy of the
  // data, then a thread per line of the updates (every axis but `a` fixed)
  // folds its updates into the result in index order, a read-modify-write
  // each: the same order per element as the gather, so the same bits for
  // f32 (a half result rounds at each update, as the reference does).
  // The gather scans a line's U updates for every element: DeBERTa's
  // relative-position gradient ([96, 128, 512] from [96, 128, 128]) did
  // 128 scans an element, 24 such ops 10 ms of a 24 ms step. Chosen at run
  // time by steps a thread against the threads a GPU keeps resident (132
  // SMs x 2048), a read-modify-write counted as 4 scans.
  std::string U = m.c.dim(upd, a), lines = "(int64_t)1";
  for (size_t d = 0; d < m.r; ++d)
    if (d != a)
      lines += " * " + m.c.dim(upd, d);
  m.c.emitRowMajorStrides(m.setup, "ost", m.y);
  const char *force = std::getenv("TC_TEST_SCATTER_BY_LINES"); // test-only: 1 lines, 0 gather
  m.setup << "  const int64_t tc_R = 270336, U = " << U << ", lines = " << lines << ";\n"
          << "  const bool byUpdates = "
          << (force ? std::string(*force == '1' ? "U > 0" : "false")
                    : std::string("U > 0 && 4 * ((lines + tc_R - 1) / tc_R) * U + (n + tc_R - 1) / "
                                  "tc_R < (n + tc_R - 1) / tc_R * U"))
          << ";\n";
  // Test-only wrong sums (as emitScatterND's): a line folds only its first update.
  std::string last = std::getenv("TC_TEST_SCATTER_FIRST_ONLY") ? "1" : "U";
  std::ostringstream &u = m.updates;
  u << "  for (int64_t L = tid; L < lines; L += stride) {\n"
    << "    int64_t rem = L, up = 0, ob = 0;\n    bool in = true;\n";
  for (size_t d = m.r; d-- > 0;)
    if (d != a)
      u << "    { const int64_t cd = rem % " << m.c.dim(upd, d) << "; rem /= " << m.c.dim(upd, d)
        << "; in &= cd < " << m.c.dim(m.y, d) << "; up += cd * ust[" << d << "]; ob += cd * ost["
        << d << "]; }\n";
  u << "    if (!in)\n      continue;\n"
    << "    for (int64_t u = 0; u < " << last << "; ++u) {\n"
    << "      const int64_t at = up + u * ust[" << a << "];\n";
  m.index(u, "k", ind, "at", m.c.dim(m.x, a), "      ");
  u << "      const int64_t o = ob + k * ost[" << a << "];\n"
    << "      { " << m.initial("o") << " " << m.resume("o") << " " // (initial declares v)
    << m.combine(m.data(2) + "[at]") << " " << m.finish("o") << " }\n    }\n  }\n";
  m.copied = m.data(0);
  return true;
}

// Two ways, both combining each element's updates in the reference's
// (index) order into the data's element and writing it once, so their
// results are the same bits, run to run:
//   - the inverted gather (`body`): every element scans all index tuples;
//     work data x tuples (24G compares for bert's [30522, 768] embedding
//     gradient from 1024 tokens);
//   - by update slices (`updates`): the result starts as a copy of the
//     data; then each tuple that is the first of its value among the
//     tuples owns its slice and combines there every tuple of that value
//     in order; work data + the slices' elements x tuples compares.
// The CPU takes the second always (a chunk copies its rows, then walks the
// tuples for the slices that meet it). CUDA takes it where its passes take
// fewer steps a thread (byUpdates, at run time: a block per tuple against
// the gather's elements a thread over the same grid); few tuples with big
// slices leave most of the grid idle there, and the gather is better.
// More compares than this (about a tenth of a second on an H100) make
// emitScatterND's kernel a slow path tc-codegen reports.
constexpr double kSlowScatterCompares = 1e11;

bool emitScatterND(MoveCode &m) {
  const Value *ind = m.op.operand(1);
  size_t q = ind->type.rank();
  if (q == 0 || !ind->type.shape[q - 1].isStatic() || size_t(ind->type.shape[q - 1].size) > m.r)
    return m.c.noKernel("a ScatterND whose index tuples are of unknown length");
  size_t k = size_t(ind->type.shape[q - 1].size);
  if (!m.startCombine())
    return false;
  std::string tuples = "(int64_t)1", slice = "(int64_t)1", K = std::to_string(k);
  for (size_t d = 0; d + 1 < q; ++d)
    tuples += " * " + m.c.dim(ind, d);
  for (size_t d = k; d < m.r; ++d)
    slice += " * " + m.c.dim(m.y, d);
  m.setup << "  const int64_t tuples = " << tuples << ", slice = " << slice << ";\n";
  // CUDA's two ways (below) compare every element with every tuple, or
  // tuples with tuples: quadratic in the tuples. Where that is large, say so.
  if (m.c.cuda()) {
    std::optional<int64_t> nt =
        staticNumElements(Shape(ind->type.shape.begin(), ind->type.shape.end() - 1));
    std::optional<int64_t> ne = staticNumElements(m.y->type.shape);
    double compares = nt && ne ? double(*nt) * double(std::min(*nt, *ne)) : 0;
    if (compares > kSlowScatterCompares) {
      std::ostringstream why;
      why << "a ScatterND of " << *nt << " index tuples into " << *ne
          << " elements compares tuples pairwise (" << std::setprecision(2) << compares
          << " compares a run: seconds or more on a GPU); canonicalize rewrites a slice "
             "assignment's grid of ranges, not this one";
      m.c.slowPath = why.str();
    }
  }
  if (!m.c.cuda()) { // the CPU's gather: each element scans the tuples
    m.body << "    " << m.initial("i") << "\n"
           << "    for (int64_t t = 0; t < tuples; ++t) {\n      bool hit = true;\n";
    for (size_t j = 0; j < k; ++j) {
      std::string v = "k" + std::to_string(j);
      m.index(v, ind, "t * " + K + " + " + std::to_string(j), m.c.dim(m.y, j), "      ");
      m.body << "      hit &= " << v << " == " << m.cs(j) << ";\n";
    }
    m.body << "      if (hit) { " << m.combine(m.data(2) + "[t * slice + i % slice]")
           << " }\n    }\n    " << m.finish("i") << "\n";
  } else {
    // CUDA's gather: a block's elements together, the tuples staged in
    // shared memory a block-width chunk at a time (read, normalized and
    // checked once, not by every element), compared there, and the chunk's
    // hits folded in tuple order with their loads unrolled ahead of the
    // adds (a token type's one row takes every update: one chain).
    std::ostringstream &g = m.blockLoop;
    g << "  __shared__ int64_t tc_k[" << k << "][" << kPointwiseBlock << "];\n"
      << "  for (int64_t i0 = blockIdx.x * (int64_t)blockDim.x; i0 < n; i0 += stride) {\n"
      << "    const int64_t i = i0 + threadIdx.x;\n    const bool live = i < n;\n";
    m.coordinates(g, "live ? i : 0", "    ");
    // Test-only wrong sums: only the first chunk's tuples (the test's token type must fail).
    std::string chunks = std::getenv("TC_TEST_SCATTER_FIRST_ONLY") ? "blockDim.x" : "tuples";
    g << "    " << m.initial("live ? i : 0") << "\n"
      << "    for (int64_t t0 = 0; t0 < tuples && t0 < " << chunks << "; t0 += blockDim.x) {\n"
      << "      __syncthreads();\n"
      << "      if (t0 + threadIdx.x < tuples) {\n"
      << "        const int64_t t = t0 + threadIdx.x;\n";
    for (size_t j = 0; j < k; ++j) {
      std::string v = "k" + std::to_string(j);
      m.index(g, v, ind, "t * " + K + " + " + std::to_string(j), m.c.dim(m.y, j), "        ");
      g << "        tc_k[" << j << "][threadIdx.x] = " << v << ";\n";
    }
    g << "      }\n      __syncthreads();\n"
      << "      const int64_t m = tuples - t0 < blockDim.x ? tuples - t0 : blockDim.x;\n"
      << "      if (live) {\n";
    std::string match;
    for (size_t j = 0; j < k; ++j)
      match += (j ? " && " : "") + std::string("tc_k[") + std::to_string(j) + "][u] == " + m.cs(j);
    std::string update = m.data(2) + "[(t0 + u) * slice + i % slice]";
    // Where most of the chunk's tuples hit (a token type's one row), every
    // update is loaded ahead of the adds (no load waits on a compare);
    // else only the hits are.
    g << "        int64_t hits = 0;\n"
      << "        for (int64_t u = 0; u < m; ++u)\n          hits += " << match << ";\n"
      << "        if (4 * hits >= m) {\n#pragma unroll 8\n"
      << "          for (int64_t u = 0; u < m; ++u) {\n"
      << "            const " << m.T << " tc_x = " << update << ";\n"
      << "            if (" << match << ") " << m.combine("tc_x") << "\n          }\n"
      << "        } else if (hits) {\n"
      << "          for (int64_t u = 0; u < m; ++u)\n"
      << "            if (" << match << ") " << m.combine(update) << "\n        }\n"
      << "      }\n    }\n"
      << "    if (live) " << m.finish("i") << "\n  }\n";
  }

  // By update slices. Tuple s equals tuple t (its k<j> checked in range)
  // where each index is k<j> or k<j> - D (negative).
  const bool cuda = m.c.cuda();
  std::string I = m.indices(ind), same, base = "(int64_t)0";
  for (size_t j = 0; j < k; ++j) {
    std::string x = I + "[s * " + K + " + " + std::to_string(j) + "]", kj = "k" + std::to_string(j);
    same += (j ? " && (" : "(") + x + " == " + kj + " || " + x + " == " + kj + " - " +
            m.c.dim(m.y, j) + ")";
    base = "(" + base + ") * " + m.c.dim(m.y, j) + " + " + kj;
  }
  if (cuda)
    m.setup
        << "  // Steps a thread: a block per tuple (its scan of the earlier tuples,\n"
           "  // an owner's chunks of the later ones, its share of the slice) against\n"
           "  // the gather's elements a thread, each comparing every tuple (roberta's\n"
           "  // position-table gradient, 1024 tuples into [514, 768]: the gather took\n"
           "  // 185 us on the H200 when the scans were left out of this count).\n"
           "  const int64_t G = gridDim.x, B = blockDim.x;\n"
           "  const bool byUpdates = (tuples + G - 1) / G * (2 * ((tuples + B - 1) / B) +\n"
           "                         (slice + B - 1) / B) < (n + G * B - 1) / (G * B) * tuples;\n";
  std::ostringstream &u = m.updates;
  // Test-only wrong sums the host-emulation tests must catch: a slice
  // takes only its first tuple's update (duplicates dropped).
  std::string last = std::getenv("TC_TEST_SCATTER_FIRST_ONLY") ? "t + 1" : "tuples";
  // The loop over the tuples: tuple t's index values k<j> (checked) and where its slice starts.
  auto tupleLoop = [&](const std::string &head) {
    u << head;
    for (size_t j = 0; j < k; ++j)
      m.index(u, "k" + std::to_string(j), ind, "t * " + K + " + " + std::to_string(j),
              m.c.dim(m.y, j), "    ");
    u << "    const int64_t at = (" << base << ") * slice;\n";
  };
  if (cuda) {
    // A block per tuple; the block decides together whether an earlier tuple
    // has t's value (each thread scans a share of them), then finds the
    // tuples of t's value a block-width chunk at a time (a flag each, in
    // shared memory) and every thread folds its slice elements' updates of
    // the chunk in tuple order: no thread scans all the tuples alone
    // (bert's embedding gradient: 1024 tuples, a token type's one row
    // taking all of them).
    u << "  __shared__ unsigned char tc_hit[1024];\n  __shared__ int tc_any;\n";
    tupleLoop("  for (int64_t t = blockIdx.x; t < tuples; t += gridDim.x) {\n");
    u << "    bool seen = false;\n"
      << "    for (int64_t s = threadIdx.x; s < t && !seen; s += blockDim.x)\n"
      << "      seen = " << same << ";\n"
      << "    if (threadIdx.x == 0) tc_any = 0;\n    __syncthreads();\n"
      << "    if (seen) tc_any = 1;\n    __syncthreads();\n"
      << "    const bool owned = !tc_any;\n    __syncthreads();\n"
      << "    if (!owned)\n      continue;\n"
      << "    for (int64_t from = t; from < " << last << "; from += blockDim.x) {\n"
      << "      const int64_t s = from + threadIdx.x;\n"
      << "      const bool h = s < " << last << " && " << same << ";\n"
      << "      if (threadIdx.x == 0) tc_any = 0;\n      __syncthreads();\n"
      << "      tc_hit[threadIdx.x] = h;\n      if (h) tc_any = 1;\n      __syncthreads();\n"
      << "      if (tc_any) {\n"
      << "        const int64_t m = " << last << " - from < blockDim.x ? " << last
      << " - from : blockDim.x;\n"
      << "        for (int64_t e = threadIdx.x; e < slice; e += blockDim.x) {\n"
      << "          " << m.initial("at + e") << "\n"
      << "          if (from != t) // a later chunk: on from the earlier chunks' result\n"
      << "            " << m.resume("at + e") << "\n"
      << "          for (int64_t j = 0; j < m; ++j)\n"
      << "            if (tc_hit[j]) " << m.combine(m.data(2) + "[(from + j) * slice + e]") << "\n"
      << "          " << m.finish("at + e") << "\n        }\n      }\n"
      << "      __syncthreads();\n    }\n  }\n";
  } else {
    tupleLoop("  for (int64_t t = 0; t < tuples; ++t) {\n");
    // The part of the slice in this chunk's [tid, n).
    u << "    const int64_t e0 = tid > at ? tid - at : 0, e1 = n - at < slice ? n - at : slice;\n"
      << "    if (e0 >= e1)\n      continue;\n"
      << "    bool first = true;\n"
      << "    for (int64_t s = 0; s < t && first; ++s)\n      first = !(" << same << ");\n"
      << "    if (!first)\n      continue;\n"
      << "    for (int64_t e = e0; e < e1; ++e) {\n      " << m.initial("at + e") << "\n"
      << "      for (int64_t s = t; s < " << last << "; ++s)\n"
      << "        if (" << same << ") " << m.combine(m.data(2) + "[s * slice + e]") << "\n"
      << "      " << m.finish("at + e") << "\n    }\n  }\n";
  }
  m.copied = m.data(0);
  return true;
}

// X's values written at the flat indices I into the unpooled tensor of
// MaxPool's input size, which sits at the start of each axis of the
// (possibly larger) result. Inverted: an element inside that tensor takes,
// in index order, every X value whose index is its flat position (the last
// one wins, as the reference's writes); an index outside it is a fault.
bool emitMaxUnpool(MoveCode &m) {
  const Op &op = m.op;
  size_t r = m.r, sp = r < 3 ? 0 : r - 2;
  const std::vector<int64_t> &kernel = op.getInts("kernel_shape");
  std::vector<int64_t> strides = op.getInts("strides"), pads = op.getInts("pads");
  strides.resize(sp, 1);
  pads.resize(2 * sp, 0);
  if (sp == 0 || m.x->type.rank() != r || kernel.size() != sp)
    return m.c.noKernel("a MaxUnpool whose ranks or kernel_shape do not agree");
  const Value *ind = m.op.operand(1);
  if (ind->type.dtype != DType::I64 && ind->type.dtype != DType::I32)
    return m.c.noKernel("a MaxUnpool with indices of " + ind->type.str());
  std::string full = m.c.dim(m.x, 0) + ", " + m.c.dim(m.x, 1), in = "(int64_t)1";
  for (size_t d = 0; d < sp; ++d) {
    std::string x = m.c.dim(m.x, 2 + d);
    full += ", (" + x + " > 1 ? " + x + " - 1 : 0) * " + std::to_string(strides[d]) + " - " +
            std::to_string(pads[d] + pads[d + sp] - kernel[d]);
  }
  for (size_t d = 0; d < r; ++d)
    in += " * " + m.c.dim(m.x, d);
  m.setup << "  const int64_t full[" << r << "] = {" << full << "};\n"
          << "  int64_t total = 1;\n  for (int d = 0; d < " << r << "; ++d) total *= full[d];\n"
          << "  const int64_t count = " << in << ";\n";
  std::string x = m.data(0), I = m.dataOf(ind);
  m.body << "    bool inside = true;\n    int64_t j = 0;\n";
  for (size_t d = 0; d < r; ++d)
    m.body << "    inside &= " << m.cs(d) << " < full[" << d << "]; j = j * full[" << d << "] + "
           << m.cs(d) << ";\n";
  m.body << "    " << m.T << " v = (" << m.T << ")0;\n"
         << "    bool bad = false;\n    int64_t k = 0;\n"
         << "    for (int64_t t = 0; t < count && inside; ++t) {\n"
         << "      k = (int64_t)" << I << "[t];\n"
         << "      if (k < 0 || k >= total) { bad = true; break; }\n"
         << "      if (k == j) v = " << x << "[t];\n    }\n"
         << "    if (bad) " << m.indexFault("k", "total") << "\n"
         << "    out0[i] = v;\n";
  return true;
}

// A Dropout whose training_mode or ratio is read at run time (canonicalize
// drops the others and gives a read mask its own fill): the identity, or,
// when training with a ratio other than 0, the reference's refusal (random
// drops are tc-opt --train's PhiloxDropout): a fault, the CPU's carrying the
// ratio's bits.
bool emitDropout(MoveCode &m) {
  const Op &op = m.op;
  const Value *ratio = op.operands.size() > 1 ? op.operand(1) : nullptr,
              *training = op.operands.size() > 2 ? op.operand(2) : nullptr;
  if (training && (m.c.argIndex(training) == SIZE_MAX || training->type.dtype != DType::Bool))
    return m.c.noKernel("a Dropout whose training_mode is no bool argument");
  std::string r = ratio ? m.scalar(ratio) : "0.5";
  if (training) {
    m.setup << "  const double ratio = " << r << ";\n"
            << "  if (" << m.stored(training) << "[0] && ratio != 0.0) {\n";
    if (m.c.cuda())
      m.setup << "    __trap();\n";
    else
      m.setup << "    long long bits;\n    __builtin_memcpy(&bits, &ratio, sizeof bits);\n"
              << "    tc_raise(TC_FAULT_DROPOUT, 0, bits, 0);\n";
    m.setup << "    return;\n  }\n";
  }
  m.body << "    out0[i] = " << m.data(0) << "[i];\n";
  return true;
}

// Each element sums its prefix (suffix) along the axis in the reference's
// order, in double, rounded once.
bool emitCumSum(MoveCode &m) {
  const Op &op = m.op;
  // A run-time axis (an argument of one element; the importer makes a
  // constant one the attribute) picks the coordinate, extent and stride
  // from arrays: out of range, a fault as an index's.
  const Value *axisArg = op.operands.size() > 1 ? op.operand(1) : nullptr;
  if (axisArg) {
    auto n = staticNumElements(axisArg->type.shape);
    if (m.c.argIndex(axisArg) == SIZE_MAX || !n || *n != 1)
      return m.c.noKernel("a CumSum whose run-time axis is not one argument element");
  }
  size_t a = axisArg ? 0 : m.axis(m.x);
  if (a == SIZE_MAX || !m.computed(/*integers=*/true))
    return false;
  bool exclusive = op.getInt("exclusive") != 0, reverse = op.getInt("reverse") != 0;
  // Integers (position ids from a mask) sum exactly, wrapping as unsigned.
  bool integer = isInteger(m.y->type.dtype);
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  std::string ca = m.cs(a), D = m.c.dim(m.x, a), sa = "xst[" + std::to_string(a) + "]";
  if (axisArg) {
    size_t r = m.x->type.rank();
    std::string dims, coords;
    for (size_t d = 0; d < r; ++d) {
      dims += (d ? ", " : "") + m.c.dim(m.x, d);
      coords += (d ? ", " : "") + m.cs(d);
    }
    m.setup << "  const int64_t xd[] = {" << dims << "};\n";
    m.index("ax", axisArg, "0", "(int64_t)" + std::to_string(r));
    m.body << "    const int64_t cc[] = {" << coords << "};\n";
    ca = "cc[ax]";
    D = "xd[ax]";
    sa = "xst[ax]";
  }
  m.body << "    const int64_t sa = " << sa << ", base = i - " << ca << " * sa;\n"
         << "    " << (integer ? "unsigned long long" : "double") << " acc = 0;\n";
  if (!reverse)
    m.body << "    for (int64_t j = 0; j " << (exclusive ? "<" : "<=") << " " << ca << "; ++j)";
  else
    m.body << "    for (int64_t j = " << D << " - 1; j " << (exclusive ? ">" : ">=") << " " << ca
           << "; --j)";
  m.body << " acc += (" << (integer ? "unsigned long long" : "double") << ")"
         << m.load(m.data(0) + "[base + j * sa]") << ";\n"
         << "    out0[i] = " << (integer ? "(" + std::string(m.T) + ")acc" : m.store("acc"))
         << ";\n";
  return true;
}

bool emitFill(MoveCode &m) {
  DType t = m.y->type.dtype;
  if (m.op.is(OpKind::ConstantOfShape)) {
    m.body << "    out0[i] = " << fillBits(m.op.getFloat("value"), t, m.T) << ";\n";
    return true;
  }
  if (m.r != 2)
    return m.c.noKernel("an EyeLike of rank other than 2");
  m.body << "    out0[i] = c1 - c0 == " << m.op.getInt("k") << "LL ? " << fillBits(1, t, m.T)
         << " : (" << m.T << ")0;\n";
  return true;
}

// start + i * delta: floats in double, rounded once; integers wrapping (the
// reference's). The length is the result's (a run-time size: the CPU
// runtime gives a lone op's kernel the shape rule's at the run's values).
bool emitRange(MoveCode &m) {
  if (!m.computed(/*integers=*/true))
    return false;
  std::string s = m.scalar(m.op.operand(0)), d = m.scalar(m.op.operand(2));
  if (isInteger(m.y->type.dtype))
    m.setup << "  const unsigned long long s = (unsigned long long)(int64_t)" << s
            << ", d = (unsigned long long)(int64_t)" << d << ";\n";
  else
    m.setup << "  const double s = " << s << ", d = " << d << ";\n";
  m.body << "    out0[i] = "
         << (isInteger(m.y->type.dtype)
                 ? "(" + std::string(m.T) + ")(s + (unsigned long long)i * d)"
                 : m.store("s + (double)i * d"))
         << ";\n";
  return true;
}

// values[1] where the new axis' coordinate is the index (negative counted
// from the depth, the result's extent), values[0] elsewhere; float indices
// truncate, an index out of range gives values[0] (ONNX's).
bool emitOneHot(MoveCode &m) {
  const Value *ind = m.op.operand(0);
  int64_t a = m.op.getInt("axis"), r = int64_t(m.r);
  a += a < 0 ? r : 0;
  if (a < 0 || a >= r || ind->type.rank() + 1 != m.r)
    return m.c.noKernel("a OneHot over an axis out of range");
  std::string vals = m.data(2), at = "(int64_t)0", D = m.c.dim(m.y, size_t(a));
  for (size_t d = 0; d < m.r; ++d)
    if (d != size_t(a))
      at = "(" + at + ") * " + m.c.dim(m.y, d) + " + " + m.cs(d);
  std::string v = m.c.load(ind->type.dtype, m.stored(ind) + "[" + at + "]");
  m.body << "    int64_t k = (int64_t)(" << v << ");\n"
         << "    if (k < 0) k += " << D << ";\n"
         << "    out0[i] = " << vals << "[k == " << m.cs(size_t(a)) << " ? 1 : 0];\n";
  return true;
}

// Each batch entry's first sequence_lens[b] time steps reversed; a length
// outside [0, T] is an index fault (the reference refuses it).
bool emitReverseSequence(MoveCode &m) {
  int64_t b = m.op.getInt("batch_axis"), t = m.op.getInt("time_axis");
  if (m.r < 2 || b < 0 || b > 1 || t < 0 || t > 1 || b == t)
    return m.c.noKernel("a ReverseSequence whose batch and time axes are not 0 and 1");
  const Value *lens = m.op.operand(1);
  std::string cb = m.cs(size_t(b)), ct = m.cs(size_t(t)), T = m.c.dim(m.x, size_t(t));
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.body << "    const int64_t len = (int64_t)" << m.stored(lens) << "[" << cb << "];\n"
         << "    if (len < 0 || len > " << T << ") " << m.indexFault("len", T + " + 1") << "\n"
         << "    out0[i] = " << m.data(0) << "[" << ct << " < len ? i + (len - 1 - 2 * " << ct
         << ") * xst[" << t << "] : i];\n";
  return true;
}

// x / (bias + alpha / size * sum of x^2 over channels c - (size - 1) / 2 ..
// c + size / 2 (clipped))^beta, in double as the reference.
bool emitLRN(MoveCode &m) {
  if (m.r < 3 || !m.computed())
    return m.ok && m.c.noKernel("an LRN of rank below 3");
  int64_t size = m.op.getInt("size"), before = (size - 1) / 2, after = size - 1 - before;
  std::ostringstream k;
  k.precision(17);
  k << "(double)" << m.op.getFloat("alpha") << " / " << size << ".0";
  std::string x = m.data(0), C = m.c.dim(m.x, 1);
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  std::ostringstream bias, beta;
  bias.precision(17);
  beta.precision(17);
  bias << m.op.getFloat("bias");
  beta << m.op.getFloat("beta");
  m.body << "    double sq = 0;\n"
         << "    const int64_t lo = c1 - " << before << " < 0 ? 0 : c1 - " << before
         << ", hi = c1 + " << after << " > " << C << " - 1 ? " << C << " - 1 : c1 + " << after
         << ";\n"
         << "    for (int64_t k = lo; k <= hi; ++k) { const double e = (double)"
         << m.c.load(m.x->type.dtype, x + "[i + (k - c1) * xst[1]]") << "; sq += e * e; }\n"
         << "    out0[i] = "
         << m.store("(double)" + m.c.load(m.x->type.dtype, x + "[i]") + " / tc_pow((double)" +
                    bias.str() + " + " + k.str() + " * sq, (double)" + beta.str() + ")")
         << ";\n";
  return true;
}

} // namespace

std::optional<EmittedKernel> emitIndexMove(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  const Value *y = op.result();
  // The one op but for GatherElements' indices' Expand (Classify.cpp).
  bool throughExpand = c.f.ops.size() == 2 && op.is(OpKind::GatherElements);
  if (c.f.ops.size() != 1 + size_t(throughExpand) || c.f.results.size() != 1 || c.f.results[0] != y)
    return c.reject(std::string(op.name()) + " with other ops in its group");
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  MoveCode m(c, op);
  if (!m.T)
    return c.reject(std::string(op.name()) + " producing " + y->type.str());
  bool ok = false;
  switch (op.kind) {
  case OpKind::Trilu: ok = emitTrilu(m); break;
  case OpKind::DepthToSpace:
  case OpKind::SpaceToDepth: ok = emitBlocks(m); break;
  case OpKind::GatherElements: ok = emitGatherElements(m); break;
  case OpKind::GatherND: ok = emitGatherND(m); break;
  case OpKind::ScatterElements: ok = emitScatterElements(m); break;
  case OpKind::ScatterND: ok = emitScatterND(m); break;
  case OpKind::CumSum: ok = emitCumSum(m); break;
  case OpKind::Resize: ok = emitResize(m); break;
  case OpKind::ConstantOfShape:
  case OpKind::EyeLike: ok = emitFill(m); break;
  case OpKind::Range: ok = emitRange(m); break;
  case OpKind::OneHot: ok = emitOneHot(m); break;
  case OpKind::ReverseSequence: ok = emitReverseSequence(m); break;
  case OpKind::LRN: ok = emitLRN(m); break;
  case OpKind::HannWindow:
  case OpKind::HammingWindow:
  case OpKind::BlackmanWindow: ok = emitWindow(m); break;
  case OpKind::MelWeightMatrix: ok = emitMelWeightMatrix(m); break;
  case OpKind::GridSample: ok = emitGridSample(m); break;
  case OpKind::RoiAlign: ok = emitRoiAlign(m); break;
  case OpKind::MaxUnpool: ok = emitMaxUnpool(m); break;
  case OpKind::Det: ok = emitDet(m); break;
  case OpKind::Dropout: ok = emitDropout(m); break;
  case OpKind::DFT: ok = emitDFT(m); break;
  case OpKind::STFT: ok = emitSTFT(m); break;
  case OpKind::Einsum: ok = emitUnaryEinsum(m); break;
  default:
    if (!isRuntimeAxesReduce(op))
      return c.reject("no index-move code for " + std::string(op.name()));
    ok = emitRuntimeAxesReduce(m);
  }
  if (!ok || !m.ok)
    return std::nullopt;
  os << "// group @" << c.f.name << ": " << op.name() << "\n";
  // A scatter by update slices: CUDA's two passes (emitScatterND).
  bool passes = c.cuda() && !m.updates.str().empty();
  c.emitSignature(os, symbol, kPointwiseBlock, /*scratch=*/passes, /*pass=*/passes);
  m.emitLoop(os, symbol);
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = c.cuda() ? kPointwiseBlock : 0;
  if (passes) {
    k.launch = LaunchKind::Split;
    k.vec = 2;
  }
  k.halfTypes = c.usesHalf(); // computed f16/bf16 values (LRN, CumSum, Resize)
  return k;
}

} // namespace tc::kernels
