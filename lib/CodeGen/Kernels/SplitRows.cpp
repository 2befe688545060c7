// The Reduction family's `split` strategy (CUDA): long contiguous rows
// (InstanceNormalization over 200704 elements: a block per row leaves most
// of the GPU idle and rereads a row that no block's registers hold; a
// loss summed over all of bert's 31M logits ran 11 ms in one block, an
// AdamW update beside its gradient's sum 153 ms). Each statistic is one launch (pass) of a fixed
// grid whose blocks split the rows: a block reduces its chunk, the last block of a row (a counter
// in the runtime's scratch, as `columns` does) combines the row's partials in chunk order and
// stores the statistic; statistics that need the earlier ones (LayerNorm's variance around the
// mean) read them in the next pass, and the last pass writes the elements. Every sum is in a fixed
// order for a shape: results identical run to run.
#include "ReductionEmitter.h"
#include <cstdlib>
#include <sstream>

namespace tc::kernels::reduce {

namespace {

// Vectors a thread loads before it combines any (memory-level
// parallelism): in the statistics' passes, and in the last (its results'
// vectors too). A kernel with broadcast arguments (a per-channel scale)
// loads one vector at a time instead, at 64 registers (4 blocks an SM,
// splitMinBlocks): poolformer's token mixer + GroupNorm on the H100 ran
// 0.095 ms at 2 vectors, 124 registers, 2 blocks an SM, 0.061 ms so
// (docs/cuda-bench.md, session 24).
constexpr int kSplitUnroll = 4, kSplitLastUnroll = 2;

// Whether the kernel loads one vector a trip (kSplitUnroll's note): its
// broadcast arguments' loads need the registers; it must fit 64 of them
// (splitMinBlocks) to keep 4 blocks an SM.
bool oneVectorATrip(const Layout &l) { return !l.broadcastArgs.empty(); }

// Whether a `centered` plan's two statistics take one pass (centeredPass).
bool oneCenteredPass(const Layout &l) { return l.plan.centered && l.plan.stats.size() == 2; }

// Whether an `online` plan's two statistics take one pass (onlinePass).
bool oneOnlinePass(const Layout &l) { return l.plan.online && l.plan.stats.size() == 2; }

// The grid as a block sees it: the launch's, or in a multi-tensor kernel
// its member's share (tc/CodeGen/MultiTensor.h), whose scratch holds that
// member's partials, statistic and counter alone (multiTensorScratchBytes).
struct SplitGrid {
  std::string blocks, block, partialBytes, counters;
};
SplitGrid splitGrid(const KernelContext &c) {
  if (!c.multiTensor)
    return {"gridDim.x", "blockIdx.x", "(int64_t)gridDim.x * blockDim.x * 8", kScratchCounters};
  return {"tc_mt_blocks", "tc_mt_block", "(tc_mt_blocks + 1) * 8",
          "  unsigned *count = (unsigned *)(scratch + (tc_mt_blocks + 1) * 8);\n"};
}

} // namespace

std::vector<size_t> Emitter::laneArgs(unsigned vw) const {
  std::vector<size_t> lanes;
  const Shape &xs = l.x->type.shape;
  if (vw < 2 || xs.empty() || !xs.back().isStatic() || xs.back().size % vw)
    return lanes;
  for (size_t i : l.broadcastArgs) {
    const Shape &as = c.f.args[i]->type.shape;
    bool lastOnly = !as.empty() && as.back() == xs.back();
    for (size_t d = 0; lastOnly && d + 1 < as.size(); ++d)
      lastOnly = as[d] == Dim::fixed(1);
    if (lastOnly)
      lanes.push_back(i);
  }
  return lanes;
}

// The row's static length, 0 when unknown.
int64_t staticRow(const Layout &l) {
  int64_t n = 1;
  for (size_t d = 0; d < l.plan.reduced.size(); ++d)
    if (l.plan.reduced[d]) {
      const Dim &dim = l.x->type.shape[d];
      if (!dim.isStatic())
        return 0;
      n *= dim.size;
    }
  return n;
}

bool takesSplit(const KernelContext &c, const Layout &l) {
  if (!c.cuda() || !l.contiguous || l.plan.arg || l.plan.topK || !l.plan.viewDims.empty())
    return false;
  // A multi-tensor kernel's members are each split (MultiTensorRuns.cpp);
  // its sizes are erased.
  return c.multiTensor || staticRow(l) >= kSplitMinRow;
}

bool takesMultiTensorSplit(const Layout &l) {
  return l.split && foldsRowResults(l) && l.plan.stats.size() == 1 &&
         l.plan.reduced == std::vector<bool>(l.plan.reduced.size(), true) &&
         l.broadcastArgs.empty();
}

void Emitter::splitLoop(std::ostream &os) const {
  const size_t P = l.plan.stats.size();
  const int64_t n = staticRow(l); // 0 in a multi-tensor kernel
  const SplitGrid grid = splitGrid(c);
  std::vector<size_t> vectors;
  const unsigned vw = vectorWidth(n, vectors);
  // Test-only wrong statistics the host-emulation tests must catch: the
  // last block leaves out the last partial; the vector path leaves out
  // each vector's last element.
  bool drop = std::getenv("TC_TEST_SPLIT_DROP_PARTIAL") != nullptr;
  bool skip = std::getenv("TC_TEST_SPLIT_VECTOR_SKIP") != nullptr;
  const std::vector<size_t> lanes = vectors.empty() ? std::vector<size_t>() : laneArgs(vw);
  // Mean and squared deviations in one pass (X read twice, not three
  // times): K partials a block.
  const bool centered = oneCenteredPass(l), online = oneOnlinePass(l);
  const int K = centered || online ? 2 : 1;
  const bool one = oneVectorATrip(l);
  os << "  const int64_t P = " << P << ";\n  enum { U = " << (one ? 1 : kSplitUnroll)
     << ", UL = " << (one ? 1 : kSplitLastUnroll) << ", VW = " << vw
     << " };\n"
     // Blocks per row: what fills the grid, at least kSplitMinPerThread elements a thread.
     << gridSplits("rows",
                   "(L + (int64_t)blockDim.x * " + std::to_string(kSplitMinPerThread) +
                       " - 1) / ((int64_t)blockDim.x * " + std::to_string(kSplitMinPerThread) + ")",
                   "", grid.blocks)
     << "  const int64_t per = ((L + S - 1) / S + VW - 1) / VW * VW; // whole vectors a block\n"
     // The scratch: the items' partials, the rows' statistics, the counters.
     << "  if ((rows * S * " << K << " + rows * P) * (int64_t)sizeof(A) > " << grid.partialBytes
     << ") {\n"
     << "    __trap(); // never below 2^33 elements: the statistics outgrow the scratch\n"
     << "    return;\n  }\n"
     << "  A *part = (A *)scratch, *stat = part + rows * S * " << K << ";\n"
     << "  const volatile A *settled = part;\n"
     << "  const bool vec = " << aligned(vectors, "L", lanes) << ";\n  (void)vec;\n"
     << grid.counters << "  __shared__ A tc_red[32];\n"
     << (centered || online ? "  __shared__ A tc_red3[96];\n" : "") << "  __shared__ int tc_last;\n"
     << "  for (int64_t w = " << grid.block << "; w < rows * S; w += " << grid.blocks << ") {\n"
     << "    const int64_t o = w / S, j0 = (w - o * S) * per, j1 = j0 + per < L ? j0 + per : L;\n";
  for (size_t k = 0; k < P; ++k)
    os << "    const A s" << k << " = p.pass > " << (centered || online ? 0 : k)
       << " ? stat[o * P + " << k << "] : (A)0;\n    (void)s" << k << ";\n";
  // A thread's U vectors of VW elements a trip (vector u at jb + u *
  // blockDim.x * VW), every load before any use: U 16-byte loads in flight
  // (a pass at one 2-byte load a thread ran at a fifth of HBM's
  // bandwidth). Unaligned pointers: the same elements one at a time, in
  // the same order.
  // `acc`: what the statistics pass does with the elements; none: the last
  // pass (the element ops and stores).
  auto chunk = [&](const Accumulate *acc) {
    const bool final = !acc;
    const char *U = final ? "UL" : "U";
    // Vectors are whole in the row (L % VW == 0): one check a vector.
    auto element = [&](const char *vector) {
      return std::string("#pragma unroll\n        for (int u = 0; u < ") + U + "; ++u) {\n" +
             (final ? "" : acc->before) +
             "#pragma unroll\n        for (int t = 0; t < VW; ++t) {\n" +
             "        const int64_t j = jb + (int64_t)u * blockDim.x * VW + t;\n" +
             (vector ? std::string("        if (j - t >= j1") +
                           (skip && !final ? " || t == VW - 1" : "") + ") continue;\n"
                     : "        if (j >= j1) continue;\n") +
             "        const int64_t i = o * L + j;\n        (void)i;\n" +
             (final ? loads(true, vector, lanes) : loads(false, vector, lanes) + acc->element) +
             "        }\n" + (final ? "" : acc->after) + "        }\n";
    };
    os << "      for (int64_t jb = j0 + (int64_t)threadIdx.x * VW; jb < j1; jb += "
          "(int64_t)blockDim.x * VW * "
       << U << ") {\n";
    if (!vectors.empty()) {
      os << "       if (vec) {\n";
      // Per-element results a vector at a time; row results are stored per row.
      std::vector<size_t> perElement;
      for (size_t r = 0; r < c.f.results.size() && final; ++r)
        if (!rowStats.count(c.f.results[r]))
          perElement.push_back(r);
      for (size_t r : perElement)
        os << "        " << vectorType(c.f.results[r]) << " w" << r << "[" << U << "];\n";
      vectorLoads(os, vectors, U, "const int64_t j = jb + (int64_t)u * blockDim.x * VW;", "j < j1",
                  "o * L + j", lanes);
      os << element("[u].v[t]");
      if (final) {
        os << "#pragma unroll\n        for (int u = 0; u < " << U << "; ++u) {\n"
           << "          const int64_t j = jb + (int64_t)u * blockDim.x * VW;\n"
           << "          if (j < j1) {\n";
        for (size_t r : perElement)
          os << "            *(" << vectorType(c.f.results[r]) << " *)(out" << r
             << " + o * L + j) = w" << r << "[u];\n";
        os << "          }\n        }\n";
      }
      os << "        continue;\n       }\n";
    }
    os << element(nullptr) << "      }\n";
  };
  // Row results only (a loss's sum, the overflow check's sum of a
  // gradient): the last statistic's last block stores them, no pass after.
  const bool folded = foldsRowResults(l);
  if (centered)
    centeredPass(os, chunk, drop);
  if (online)
    onlinePass(os, chunk, drop, folded);
  for (size_t k = 0; k < P && !centered && !online; ++k) {
    const ReduceStat &s = l.plan.stats[k];
    std::string combine = s.combine + "()";
    os << "    if (p.pass == " << k << ") {\n      A acc;\n";
    sweep(os, s, "acc", chunk);
    // The last block combines the row's S partials with every thread (each
    // every blockDim-th one, then the block's tree): one thread reading
    // them in turn made S dependent L2 round trips, ~20 us of a 9 MB
    // gradient's 24 us sum on the H200.
    os << "      if (S > 1) {\n"
       << "        if (threadIdx.x == 0) part[w] = acc;\n"
       << lastBlockOf("o", "        ") << "        A mine = " << initOf(s) << ";\n"
       << "        for (int64_t t = threadIdx.x; t < S" << (drop ? " - 1" : "")
       << "; t += blockDim.x) mine = " << combine << "(mine, settled[o * S + t]);\n"
       << "        acc = tc_block_reduce(mine, tc_red, " << combine << ");\n"
       << "        if (threadIdx.x == 0) count[o] = 0; // zero for the next pass\n"
       << "      }\n"
       << "      if (threadIdx.x == 0) stat[o * P + " << k << "] = " << s.finish << ";\n";
    if (folded && k + 1 == P) {
      std::ostringstream st;
      ex.emitStores(st, "o");
      os << "      if (threadIdx.x == 0) {\n        const A s" << k << " = " << s.finish
         << ";\n        (void)s" << k << ";\n";
      rowLoads(os);
      os << rowCode << st.str() << "      }\n";
    }
    os << "      continue;\n    }\n";
  }
  if (folded) {
    os << "  }\n";
    return;
  }
  // The last pass: the row's epilogue values, then the elements; the
  // row's results (a loss's sum, the overflow check's sum beside an update)
  // stored once, by the block of its first chunk.
  os << "    {\n";
  if (!l.perElementResults)
    os << "      if (j0 != 0) continue;\n";
  rowLoads(os);
  os << rowCode;
  if (l.perElementResults)
    chunk(nullptr);
  if (!l.perElementResults || !rowStats.empty()) {
    std::ostringstream st;
    if (l.perElementResults)
      ex.emitStores(st, "o", rowStats, /*inPrologue=*/true);
    else
      ex.emitStores(st, "o");
    os << "      if (j0 == 0 && threadIdx.x == 0) {\n" << st.str() << "      }\n";
  }
  os << "    }\n  }\n";
}

unsigned splitMinBlocks(const Layout &l) { return oneVectorATrip(l) ? 4 : 2; }

bool foldsRowResults(const Layout &l) { return !l.perElementResults && !oneCenteredPass(l); }

unsigned splitLaunches(const Layout &l) {
  const bool one = oneCenteredPass(l) || oneOnlinePass(l); // both statistics in one pass
  if (foldsRowResults(l))
    return one ? 1 : unsigned(l.plan.stats.size());
  return one ? 2 : unsigned(l.plan.stats.size() + 1);
}

// Statistic `s` over the block's chunk: a partial per u (U independent
// chains, `chunk` accumulating accu[u]) combined in u order, then across
// the block into `into`.
void Emitter::sweep(std::ostream &os, const ReduceStat &s, const char *into,
                    const std::function<void(const Accumulate *)> &chunk) const {
  os << "      {\n      A accu[U];\n"
     << "#pragma unroll\n      for (int u = 0; u < U; ++u) accu[u] = " << initOf(s) << ";\n";
  Accumulate acc{"", "        accu[u] = " + s.combine + "()(accu[u], (A)(" + s.term + "));\n", ""};
  chunk(&acc);
  os << "      A tc_acc = accu[0];\n"
     << "#pragma unroll\n      for (int u = 1; u < U; ++u) tc_acc = " << s.combine
     << "()(tc_acc, accu[u]);\n"
     << "      " << into << " = tc_block_reduce(tc_acc, tc_red, " << s.combine << "());\n"
     << "      }\n";
}

// The pass of a `centered` plan's two statistics (mean, squared deviations
// around it) in ONE sweep over the block's chunk: each vector's count,
// mean and M2 (shifted by its first element: no cancellation beyond the
// vector's own spread), merged into the thread's by Chan et al.'s update,
// then across u, the block and (the last block) the row's chunks in a
// fixed order. A second sweep around the chunk's mean waited on a block
// reduction between the two and held poolformer's GroupNorm at ~700 GB/s.
void Emitter::centeredPass(std::ostream &os, const std::function<void(const Accumulate *)> &chunk,
                           bool drop) const {
  // A centered plan's statistics are x's mean and the sum of (x - mean)^2
  // (ReducePlans.cpp): the summary below; only the second's finish is used.
  const ReduceStat &q = l.plan.stats[1];
  os << "    if (p.pass == 0) {\n"
     << "      A mean, m2;\n      {\n"
     << "      A cn[U], cm[U], cq[U];\n"
     << "#pragma unroll\n      for (int u = 0; u < U; ++u) cn[u] = cm[u] = cq[u] = (A)0;\n";
  Accumulate acc{"        A vx0 = 0, vs1 = 0, vs2 = 0, vn = 0;\n",
                 "        if (t == 0) vx0 = x;\n"
                 "        { const A d = x - vx0; vs1 += d; vs2 += d * d; vn += (A)1; }\n",
                 "        if (vn > (A)0) tc_chan_merge(cn[u], cm[u], cq[u], vn, vx0 + vs1 / vn, "
                 "vs2 - vs1 * vs1 / vn);\n"};
  chunk(&acc);
  os << "#pragma unroll\n      for (int u = 1; u < U; ++u) tc_chan_merge(cn[0], cm[0], cq[0], "
        "cn[u], cm[u], cq[u]);\n"
     << "      tc_block_chan(cn[0], cm[0], cq[0], tc_red3);\n"
     << "      mean = cm[0];\n      m2 = cq[0];\n      }\n"
     << "      if (S > 1) {\n"
     << "        if (threadIdx.x == 0) { part[2 * w] = mean; part[2 * w + 1] = m2; }\n"
     << lastBlockOf("o", "        ") << "        A n = 0;\n        mean = 0;\n        m2 = 0;\n"
     << "        for (int64_t t = 0; t < S" << (drop ? " - 1" : "") << "; ++t) {\n"
     << "          const int64_t a = t * per, b = a + per < L ? a + per : L;\n"
     << "          if (b <= a) continue;\n"
     << "          tc_chan_merge(n, mean, m2, (A)(b - a), settled[2 * (o * S + t)], "
        "settled[2 * (o * S + t) + 1]);\n"
     << "        }\n"
     << "        if (threadIdx.x == 0) count[o] = 0; // zero for the next pass\n"
     << "      }\n"
     << "      if (threadIdx.x == 0) {\n"
     << "        stat[o * P] = mean;\n"
     << "        const A acc = m2;\n"
     << "        stat[o * P + 1] = " << q.finish << ";\n      }\n"
     << "      continue;\n    }\n";
}

// The pass of an `online` plan's two statistics (ReduceLogSumExp: the max M
// and the sum of exp(x - s0)) in ONE sweep: each thread's (max, sum of
// exp(x - max)) per u, the sum rescaled when the max grows, merged across
// u, the block and (the last block) the row's chunks in a fixed order
// (tc_online_merge). The two-pass kernel read [1024, 50272] logits twice
// (roberta_base's cross-entropy: two launches of ~42 us on the H200). The
// finish is the two-pass one's: s0 from M; the sum relative to s0 is the
// accumulated one where s0 is M (M finite), else M's own (+inf, NaN) or 0
// (every element -inf), which is what summing exp(x - s0) gives there.
void Emitter::onlinePass(std::ostream &os, const std::function<void(const Accumulate *)> &chunk,
                         bool drop, bool folded) const {
  const ReduceStat &mx = l.plan.stats[0], &sum = l.plan.stats[1];
  const std::string f = mx.combine + "()";
  os << "    if (p.pass == 0) {\n"
     << "      A m, e;\n      {\n"
     << "      A om[U], oe[U];\n"
     << "#pragma unroll\n      for (int u = 0; u < U; ++u) { om[u] = " << initOf(mx)
     << "; oe[u] = (A)0; }\n";
  Accumulate acc{
      "",
      "        { const A v = (A)(" + mx.term + "), mm = " + f +
          "(om[u], v);\n"
          "          if (mm == om[u]) oe[u] += v == mm ? (A)1 : tc_exp(v - mm);\n"
          "          else { oe[u] = oe[u] * tc_exp(om[u] - mm) + tc_exp(v - mm); om[u] = "
          "mm; } }\n",
      ""};
  chunk(&acc);
  os << "#pragma unroll\n      for (int u = 1; u < U; ++u) tc_online_merge(om[0], oe[0], om[u], "
        "oe[u], "
     << f << ");\n"
     << "      tc_block_online(om[0], oe[0], tc_red3, " << f << ");\n"
     << "      m = om[0];\n      e = oe[0];\n      }\n"
     << "      if (S > 1) {\n"
     << "        if (threadIdx.x == 0) { part[2 * w] = m; part[2 * w + 1] = e; }\n"
     << lastBlockOf("o", "        ") << "        m = " << initOf(mx) << ";\n        e = 0;\n"
     << "        for (int64_t t = 0; t < S" << (drop ? " - 1" : "") << "; ++t)\n"
     << "          tc_online_merge(m, e, settled[2 * (o * S + t)], settled[2 * (o * S + t) + 1], "
     << f << ");\n"
     << "        if (threadIdx.x == 0) count[o] = 0; // zero for the next launch\n"
     << "      }\n"
     << "      if (threadIdx.x == 0) {\n"
     << "        A tc_s0, tc_s1;\n"
     << "        { const A acc = m; tc_s0 = " << mx.finish << "; }\n"
     << "        { const A s0 = tc_s0;\n"
     << "          const A acc = s0 == m ? e : (m != m || m > (A)0 ? m : (A)0);\n"
     << "          tc_s1 = " << sum.finish << "; }\n"
     << "        stat[o * P] = tc_s0;\n        stat[o * P + 1] = tc_s1;\n";
  if (folded) {
    std::ostringstream st;
    ex.emitStores(st, "o");
    os << "        const A s0 = tc_s0, s1 = tc_s1;\n        (void)s0;\n        (void)s1;\n";
    rowLoads(os);
    os << rowCode << st.str();
  }
  os << "      }\n      continue;\n    }\n";
}

} // namespace tc::kernels::reduce
