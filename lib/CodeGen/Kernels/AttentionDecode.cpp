// The Attention family's split-key CUDA kernel ("flash decoding"): few
// queries against many keys, as in a decode step (1 new token of a batch
// against a KV cache of thousands of slots). The query-tiled kernels give
// such a shape one block per (batch, head): 16 blocks for a 16-head
// decoder at batch 1 on a 132-SM GPU, each walking every key alone (97 us
// a layer for 1096 keys, most of a decode step). Here the work items are
// (batch, kv head, key split): the group's query heads share each K / V
// row read (grouped-query attention reads the cache once per kv head),
// and the keys split across blocks until the grid is full.
//
// A `columns` launch (a fixed grid, the runtime's scratch after the
// result): each block takes an item and walks its keys in tiles: all its
// threads copy the tile's K and V rows into shared memory at once (16-byte
// loads, all in flight: a split holds few keys, so what it costs is the
// latency of a load more than bandwidth), then score one key a thread
// against Q in shared memory, run an online softmax per query row (running
// max m, sum l; log2 units) and P x V with threads over (row, column
// pair). An item of a split key range leaves (o, m, l) in the scratch; the
// last block of its (batch, kv head) (a counter in the scratch) combines
// the splits: each split's weight per row first (its loads all in
// flight), then the weighted sums in split order -- fixed for a shape, so
// results are identical run to run. A row whose keys are all masked
// writes 0.
//
// Plain CUDA C++ (shared memory, __shfl_xor_sync, __syncthreads
// block-uniformly, atomicAdd): it runs on the host emulation
// (test/CodeGen/Inputs/cuda_host_shim.h), whose shuffles are block
// barriers: every warp shuffles the same number of times.
#include "Attention.h"
#include <algorithm>
#include <cstdlib>

namespace tc::kernels {

namespace {

constexpr int64_t kMaxTileKeys = 128;          // keys a tile: one a thread when scoring
constexpr int64_t kMinSplitKeys = 32;          // the fewest keys a split takes
constexpr int64_t kMaxSplits = 64;             // splits of one (batch, kv head)
constexpr int64_t kMaxRows = 16;               // query rows (group x Sq) of an item
constexpr int64_t kMaxSharedBytes = 46 * 1024; // static shared memory ends at 48 KB
constexpr unsigned kMinBlock = 128;

// The raw type of `n` elements of `t` a vector load reads: float words for
// f32, 32-bit words of two halves for f16/bf16 (unsigned short for one).
std::string rawType(DType t, int64_t n) {
  if (t == DType::F32)
    return "tc_vec<float, " + std::to_string(n) + ">";
  return n == 1 ? "unsigned short" : "tc_vec<unsigned, " + std::to_string(n / 2) + ">";
}

// Element `u` (a constant after unrolling) of such a raw value as a float:
// shifts and moves in registers (a pointer into the raw value would put it
// in local memory: ptxas spilled 1.4 KB a thread that way).
std::string rawElement(DType t, int64_t n, const std::string &raw, const std::string &u) {
  if (t == DType::F32)
    return raw + ".v[" + u + "]";
  std::string bits =
      n == 1 ? raw
             : "(unsigned short)(" + raw + ".v[(" + u + ") >> 1] >> (((" + u + ") & 1) * 16))";
  return t == DType::BF16 ? "__bfloat162float(__ushort_as_bfloat16(" + bits + "))"
                          : "__half2float(__ushort_as_half(" + bits + "))";
}

// A warp a query row, every warp the same number of trips: `body` sees r
// and `row` (r < R).
std::string perRow(const std::string &body) {
  return "      for (int r0 = 0; r0 < R; r0 += NT / 32) {\n"
         "        const int r = r0 + warp;\n        const bool row = r < R;\n" +
         body + "      }\n";
}

// `v` reduced over the warp by `op` (fmaxf or +).
std::string warpReduce(const std::string &v, bool max) {
  std::string shfl = "__shfl_xor_sync(0xffffffffu, " + v + ", o)";
  return "        for (int o = 16; o > 0; o >>= 1) " + v + " = " +
         (max ? "fmaxf(" + v + ", " + shfl + ")" : v + " + " + shfl) + ";\n";
}

} // namespace

int64_t vectorWidth(int64_t n, int64_t bytes) {
  for (int64_t w = 16 / bytes; w > 1; w /= 2)
    if (n % w == 0)
      return w;
  return 1;
}

std::optional<AttentionDecodeShape> attentionDecodeShape(const AttentionOperands &o, DType t) {
  const char *force = std::getenv("TC_CUDA_ATTENTION_SPLITKV"); // 0: never, 1: wherever it can
  if (force && std::atoi(force) == 0)
    return std::nullopt;
  if (t != DType::F32 && t != DType::F16 && t != DType::BF16)
    return std::nullopt;
  const Dim &sq = o.out->type.shape[o.axes[3].tokens], &h = o.out->type.shape[o.axes[3].heads],
            &hkv = o.k->type.shape[o.axes[1].heads], &skv = o.k->type.shape[o.axes[1].tokens];
  if (!sq.isStatic() || !h.isStatic() || !hkv.isStatic() || sq.size < 1 || hkv.size < 1 ||
      h.size % hkv.size != 0)
    return std::nullopt;
  AttentionDecodeShape s;
  s.sq = sq.size;
  s.group = h.size / hkv.size;
  s.rows = s.sq * s.group;
  // Worth it where a query tile would be mostly empty and the keys many
  // (a symbolic key count: a cache whose length the run decides).
  if (s.rows > kMaxRows || (skv.isStatic() && skv.size < 256 && !force))
    return std::nullopt;
  const int64_t bytes = int64_t(dtypeSize(t));
  s.vw = vectorWidth(o.d, bytes);
  s.vwv = vectorWidth(o.dv, bytes);
  s.cw = o.dv % 2 == 0 ? 2 : 1;
  // An item's partial (o, m, l) must fit its scratch slot: 8 bytes a thread.
  const int64_t slot = s.rows * (o.dv + 2);
  s.block = unsigned(std::max<int64_t>(kMinBlock, (slot / 2 + 31) / 32 * 32));
  // The largest key tile whose K (rows padded by 16 bytes: conflict-free
  // row reads) and V fit beside Q, the scores and the combine's weights.
  auto sharedBytes = [&](int64_t tk) {
    return 4 * (s.rows * o.d + s.rows * tk + 3 * s.rows + s.rows * kMaxSplits) +
           bytes * tk * (o.d + 16 / bytes + o.dv);
  };
  for (s.tk = kMaxTileKeys; s.tk > 32 && sharedBytes(s.tk) > kMaxSharedBytes;)
    s.tk /= 2;
  if (s.block > 1024 || sharedBytes(s.tk) > kMaxSharedBytes)
    return std::nullopt;
  return s;
}

void emitAttentionDecode(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                         DType t, const AttentionDecodeShape &s) {
  const std::string S = c.st(t);
  const int64_t bytes = int64_t(dtypeSize(t));
  // Test-only: the combine leaves out the last split (a wrong result the
  // host-emulation test must catch).
  const bool drop = std::getenv("TC_TEST_SPLITKV_DROP") != nullptr;
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", SQ = " << s.sq << ", G = " << s.group
     << ", R = " << s.rows << ", NT = " << s.block << ", TK = " << s.tk << ", VW = " << s.vw
     << ", VWV = " << s.vwv << ", CW = " << s.cw << ", KP = D + " << 16 / bytes
     << ", MS = " << kMaxSplits
     << ",\n         NCG = DV / CW, UI = (R * NCG + NT - 1) / NT, SLOT = R * (DV + 2) };\n"
     << "  typedef " << rawType(t, s.vw) << " KRaw;\n"
     << "  typedef " << rawType(t, s.vwv) << " VRowRaw;\n"
     << "  typedef " << rawType(t, s.cw) << " VRaw;\n"
     << "  const float INF = " << c.info().inf
     << ", SL = " << floatLiteral(o.scale * 1.4426950408889634, DType::F32)
     << ", LOG2E = 1.44269504f; // scores in log2 units: exp2\n"
     << "  __shared__ float Qs[R][D], Ps[R][TK], Ms[R], Ls[R], Cs[R], Wt[R][MS];\n"
     << "  __shared__ KRaw Kv[TK * KP / VW];\n  __shared__ VRowRaw Vv[TK * DV / VWV];\n"
     << "  " << S << " *Ks = (" << S << " *)Kv, *Vs = (" << S << " *)Vv;\n"
     << "  __shared__ int tc_last;\n"
     << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
     << "  const int64_t groups = B * HKV;\n"
     // Splits per (batch, kv head): what fills the grid, kMinSplitKeys keys
     // at least; items then fit the grid, so item w's slot is w.
     << gridSplits("groups",
                   "(SKV + " + std::to_string(kMinSplitKeys) + " - 1) / " +
                       std::to_string(kMinSplitKeys),
                   "MS")
     << "  const int64_t per = (SKV + S - 1) / S;\n"
     << "  float *part = (float *)scratch;\n  const volatile float *settled = part;\n"
     << kScratchCounters << "  for (int64_t w = blockIdx.x; w < groups * S; w += gridDim.x) {\n"
     << "    const int64_t gi = w / S, sp = w - gi * S, b = gi / HKV, kh = gi - b * HKV;\n"
     << "    const int64_t j0 = sp * per, j1 = j0 + per < SKV ? j0 + per : SKV;\n"
     << "    const " << S << " *k = K + (KB == 1 ? 0 : b) * KSB + kh * KSH;\n"
     << "    const " << S << " *v = V + (VB == 1 ? 0 : b) * VSB + kh * VSH;\n"
     << "    const int64_t mb = b % MB * ms[0];\n    (void)mb;\n"
     << "    __syncthreads(); // the previous item's reads of Qs, Ms, Ls, Wt are done\n"
     // Row r: query head kh * G + r / SQ, query r % SQ.
     << "    for (int e = threadIdx.x; e < R * D; e += NT) {\n"
     << "      const int r = e / D, x = e - r * D;\n"
     << "      const int64_t h = kh * G + r / SQ, i = r % SQ;\n"
     << "      Qs[r][x] = " << c.load(t, "Q[(QB == 1 ? 0 : b) * QSB + h * QSH + i * QSS + x]")
     << " * SL;\n    }\n"
     << "    for (int r = threadIdx.x; r < R; r += NT) {\n      Ms[r] = -INF;\n      Ls[r] = 0.f;\n"
     << "    }\n"
     << "    float acc[UI][CW];\n"
     << "#pragma unroll\n    for (int u = 0; u < UI; ++u)\n"
     << "#pragma unroll\n      for (int q = 0; q < CW; ++q) acc[u][q] = 0.f;\n"
     << "    for (int64_t t0 = j0; t0 < j1; t0 += TK) {\n"
     << "      const int nk = j1 - t0 < TK ? (int)(j1 - t0) : TK;\n"
     << "      __syncthreads(); // Qs is written; the previous tile's reads of Ks, Vs, Ps are "
        "done\n"
     // The tile's rows; V's past the keys zero (0 x garbage would be NaN).
     << "#pragma unroll 4\n"
     << "      for (int e = threadIdx.x; e < TK * (D / VW); e += NT) {\n"
     << "        const int jj = e / (D / VW), x = (e - jj * (D / VW)) * VW;\n"
     << "        if (jj < nk) *(KRaw *)&Ks[jj * KP + x] = *(const KRaw *)(k + (t0 + jj) * KSS + "
        "x);\n"
     << "      }\n"
     << "#pragma unroll 4\n"
     << "      for (int e = threadIdx.x; e < TK * (DV / VWV); e += NT) {\n"
     << "        const int jj = e / (DV / VWV), x = (e - jj * (DV / VWV)) * VWV;\n"
     << "        *(VRowRaw *)&Vs[jj * DV + x] =\n"
     << "            jj < nk ? *(const VRowRaw *)(v + (t0 + jj) * VSS + x) : VRowRaw{};\n"
     << "      }\n      __syncthreads();\n"
     // Scores: a key a thread (padded rows: a warp's 16-byte reads of 32
     // rows spread over the banks).
     << "      for (int jj = threadIdx.x; jj < TK; jj += NT) {\n"
     << "        const int64_t j = t0 + jj;\n        float dot[R];\n"
     << "#pragma unroll\n        for (int r = 0; r < R; ++r) dot[r] = 0.f;\n"
     << "        if (jj < nk) {\n"
     << "#pragma unroll\n"
     << "          for (int x0 = 0; x0 < D; x0 += VW) {\n"
     << "            const KRaw raw = *(const KRaw *)&Ks[jj * KP + x0];\n"
     << "#pragma unroll\n"
     << "            for (int u = 0; u < VW; ++u) {\n"
     << "              const float kx = " << rawElement(t, s.vw, "raw", "u") << ";\n"
     << "#pragma unroll\n"
     << "              for (int r = 0; r < R; ++r) dot[r] += Qs[r][x0 + u] * kx;\n"
     << "            }\n          }\n        }\n"
     << "#pragma unroll\n"
     << "        for (int r = 0; r < R; ++r) {\n"
     << "          float sc = -INF;\n"
     << "          if (jj < nk) {\n"
     << "            const int64_t h = kh * G + r / SQ, i = r % SQ;\n            (void)h;\n"
     << "            (void)i;\n            sc = dot[r];\n";
  if (o.mask)
    os << "            sc += " << c.load(t, "M[mb + h * ms[1] + i * ms[2] + j * ms[3]]")
       << " * LOG2E;\n";
  if (o.causal)
    os << "            if (j > i + SKV - SQ) sc = -INF;\n";
  os << "          }\n          Ps[r][jj] = sc;\n        }\n      }\n"
     << "      __syncthreads();\n"
     // A warp a row: the tile's max, the rescale of what came before, the
     // probabilities and their sum.
     << perRow("        float mx = -INF;\n"
               "        if (row)\n"
               "          for (int jj = lane; jj < TK; jj += 32) mx = fmaxf(mx, Ps[r][jj]);\n" +
               warpReduce("mx", true) +
               "        const float mo = row ? Ms[r] : -INF, mn = fmaxf(mo, mx);\n"
               "        float sum = 0.f;\n"
               "        if (row)\n"
               "          for (int jj = lane; jj < TK; jj += 32) {\n"
               "            const float p = mn == -INF ? 0.f : exp2f(Ps[r][jj] - mn);\n"
               "            Ps[r][jj] = p;\n            sum += p;\n          }\n" +
               warpReduce("sum", false) +
               "        if (row && lane == 0) {\n"
               "          const float corr = mo == -INF ? 0.f : exp2f(mo - mn);\n"
               "          Cs[r] = corr;\n          Ls[r] = Ls[r] * corr + sum;\n"
               "          Ms[r] = mn;\n        }\n")
     << "      __syncthreads();\n"
     // P x V: a thread a (row, column pair); a warp's lanes share the row
     // (P reads broadcast) and read neighbouring columns of a value row.
     << "#pragma unroll\n"
     << "      for (int u = 0; u < UI; ++u) {\n"
     << "        const int e = threadIdx.x + u * NT;\n"
     << "        if (e >= R * NCG) continue;\n"
     << "        const int r = e / NCG, cg = e - r * NCG;\n"
     << "        const float corr = Cs[r];\n"
     << "#pragma unroll\n        for (int q = 0; q < CW; ++q) acc[u][q] *= corr;\n"
     << "#pragma unroll 8\n"
     << "        for (int jj = 0; jj < nk; ++jj) {\n"
     << "          const VRaw raw = *(const VRaw *)&Vs[jj * DV + cg * CW];\n"
     << "          const float p = Ps[r][jj];\n"
     << "#pragma unroll\n"
     << "          for (int q = 0; q < CW; ++q) acc[u][q] += p * "
     << rawElement(t, s.cw, "raw", "q") << ";\n"
     << "        }\n      }\n    }\n";
  // One split: the output directly.
  const std::string out = "O[b * OSB + (kh * G + r / SQ) * OSH + (r % SQ) * OSS";
  os << "    if (S == 1) {\n"
     << "#pragma unroll\n"
     << "      for (int u = 0; u < UI; ++u) {\n"
     << "        const int e = threadIdx.x + u * NT;\n"
     << "        if (e >= R * NCG) continue;\n"
     << "        const int r = e / NCG, cg = e - r * NCG;\n"
     << "        const float inv = Ls[r] > 0.f ? 1.f / Ls[r] : 0.f;\n"
     << "#pragma unroll\n"
     << "        for (int q = 0; q < CW; ++q) " << out
     << " + cg * CW + q] = " << c.store(t, "acc[u][q] * inv")
     << ";\n      }\n      continue;\n    }\n";
  // Several: this split's partial; the last block of the (batch, kv head)
  // combines them.
  os << "    float *mine = part + w * SLOT;\n"
     << "#pragma unroll\n"
     << "    for (int u = 0; u < UI; ++u) {\n"
     << "      const int e = threadIdx.x + u * NT;\n"
     << "      if (e >= R * NCG) continue;\n"
     << "      const int r = e / NCG, cg = e - r * NCG;\n"
     << "#pragma unroll\n"
     << "      for (int q = 0; q < CW; ++q) mine[r * DV + cg * CW + q] = acc[u][q];\n    }\n"
     << "    for (int r = threadIdx.x; r < R; r += NT) {\n"
     << "      mine[R * DV + r] = Ms[r];\n      mine[R * DV + R + r] = Ls[r];\n    }\n"
     << lastBlockOf("gi", "    ") << "    const volatile float *all = settled + gi * S * SLOT;\n"
     << "    const int splits = (int)S" << (drop ? " - 1" : "")
     << ";\n"
     // The splits' maxima, a thread a (row, split): every load in flight.
     << "    for (int e = threadIdx.x; e < R * splits; e += NT) {\n"
     << "      const int r = e / splits, q = e - r * splits;\n"
     << "      Wt[r][q] = all[q * SLOT + R * DV + r];\n    }\n"
     << "    __syncthreads();\n"
     // A warp a row: the row's max, each split's weight 2^(m - max) / l.
     << perRow("        float mx = -INF;\n"
               "        if (row)\n"
               "          for (int q = lane; q < splits; q += 32) mx = fmaxf(mx, Wt[r][q]);\n" +
               warpReduce("mx", true) +
               "        float l = 0.f;\n"
               "        if (row)\n"
               "          for (int q = lane; q < splits; q += 32) {\n"
               "            const float f = mx == -INF ? 0.f : exp2f(Wt[r][q] - mx);\n"
               "            Wt[r][q] = f;\n"
               "            l += all[q * SLOT + R * DV + R + r] * f;\n          }\n" +
               warpReduce("l", false) +
               "        if (row)\n"
               "          for (int q = lane; q < splits; q += 32) Wt[r][q] *= l > 0.f ? 1.f / l : "
               "0.f;\n")
     << "    __syncthreads();\n"
     << "    for (int e = threadIdx.x; e < R * DV; e += NT) {\n"
     << "      const int r = e / DV, x = e - r * DV;\n"
     << "      float a = 0.f;\n"
     << "#pragma unroll 8\n"
     << "      for (int q = 0; q < splits; ++q) a += Wt[r][q] * all[q * SLOT + r * DV + x];\n"
     << "      " << out << " + x] = " << c.store(t, "a") << ";\n    }\n"
     << "    if (threadIdx.x == 0) count[gi] = 0; // zero for the next launch\n"
     << "  }\n}\n";
}

} // namespace tc::kernels
