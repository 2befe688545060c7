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
// result): each block takes an item, scores its keys in tiles of kTileKeys
// (one key a thread: a row's 16-byte loads against Q in shared memory),
// an online softmax per query row (running max m, sum l; log2 units),
// and P x V with threads over (row, column pair). An item of a split
// key range leaves (o, m, l) in the scratch; the last block of its
// (batch, kv head) (a counter in the scratch) combines the splits in
// split order -- fixed for a shape, so results are identical run to run --
// and writes the output. A row whose keys are all masked writes 0.
//
// Plain CUDA C++ (shared memory, __shfl_xor_sync, __syncthreads
// block-uniformly, atomicAdd): it runs on the host emulation
// (test/CodeGen/Inputs/cuda_host_shim.h).
#include "Attention.h"
#include <algorithm>
#include <cstdlib>

namespace tc::kernels {

namespace {

constexpr int64_t kTileKeys = 128;    // keys a tile: one a thread in the score phase
constexpr int64_t kMinSplitKeys = 32; // the fewest keys a split takes
constexpr int64_t kMaxRows = 16;      // query rows (group x Sq) of an item
constexpr int64_t kMaxSharedBytes = 40 * 1024;
constexpr unsigned kMinBlock = 128;

// Elements a thread loads at once from a row of `n` elements of `bytes`
// each: 16 bytes where n allows (row offsets are multiples of the head
// dim: features are contiguous and last).
int64_t vectorWidth(int64_t n, int64_t bytes) {
  for (int64_t w = 16 / bytes; w > 1; w /= 2)
    if (n % w == 0)
      return w;
  return 1;
}

// The raw type of `bytes` bytes a vector load reads.
std::string rawType(int64_t bytes) {
  return bytes == 16  ? "tc_vec<unsigned, 4>"
         : bytes == 8 ? "tc_vec<unsigned, 2>"
         : bytes == 4 ? "unsigned"
                      : "unsigned short";
}

} // namespace

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
  s.cw = o.dv % 2 == 0 ? 2 : 1;
  // An item's partial (o, m, l) must fit its scratch slot: 8 bytes a thread.
  const int64_t slot = s.rows * (o.dv + 2);
  s.block = unsigned(std::max<int64_t>(kMinBlock, (slot / 2 + 31) / 32 * 32));
  const int64_t shared = 4 * (s.rows * o.d + s.rows * kTileKeys + 3 * s.rows);
  if (s.block > 1024 || shared > kMaxSharedBytes)
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
     << ", R = " << s.rows << ", NT = " << s.block << ", TK = " << kTileKeys << ", VW = " << s.vw
     << ", CW = " << s.cw
     << ", NCG = DV / CW, UI = (R * NCG + NT - 1) / NT, SLOT = R * (DV + 2) };\n"
     << "  typedef " << rawType(s.vw * bytes) << " KRaw;\n"
     << "  typedef " << rawType(s.cw * bytes) << " VRaw;\n"
     << "  const float INF = " << c.info().inf
     << ", SL = " << floatLiteral(o.scale * 1.4426950408889634, DType::F32)
     << ", LOG2E = 1.44269504f; // scores in log2 units: exp2\n"
     << "  __shared__ float Qs[R][D], Ps[R][TK], Ms[R], Ls[R], Cs[R];\n"
     << "  __shared__ int tc_last;\n"
     << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
     << "  const int64_t groups = B * HKV;\n"
     // Splits per (batch, kv head): what fills the grid, kMinSplitKeys keys
     // at least; items then fit the grid, so item w's slot is w.
     << "  int64_t S = groups > 0 && groups < gridDim.x ? (int64_t)gridDim.x / groups : 1;\n"
     << "  { const int64_t most = (SKV + " << kMinSplitKeys << " - 1) / " << kMinSplitKeys
     << ";\n    S = S < most ? S : most; S = S > 1 ? S : 1; }\n"
     << "  const int64_t per = (SKV + S - 1) / S;\n"
     << "  float *part = (float *)scratch;\n  const volatile float *settled = part;\n"
     << "  unsigned *count = (unsigned *)(scratch + (size_t)gridDim.x * blockDim.x * 8);\n"
     << "  for (int64_t w = blockIdx.x; w < groups * S; w += gridDim.x) {\n"
     << "    const int64_t gi = w / S, sp = w - gi * S, b = gi / HKV, kh = gi - b * HKV;\n"
     << "    const int64_t j0 = sp * per, j1 = j0 + per < SKV ? j0 + per : SKV;\n"
     << "    const " << S << " *k = K + (KB == 1 ? 0 : b) * KSB + kh * KSH;\n"
     << "    const " << S << " *v = V + (VB == 1 ? 0 : b) * VSB + kh * VSH;\n"
     << "    const int64_t mb = b % MB * ms[0];\n    (void)mb;\n"
     << "    __syncthreads(); // the previous item's reads of Qs, Ms, Ls are done\n"
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
     << "      __syncthreads(); // Qs is written; the previous tile's reads of Ps are done\n"
     // Scores: a key a thread, its row's vector loads all in flight.
     << "      for (int jj = threadIdx.x; jj < TK; jj += NT) {\n"
     << "        const int64_t j = t0 + jj;\n        float dot[R];\n"
     << "#pragma unroll\n        for (int r = 0; r < R; ++r) dot[r] = 0.f;\n"
     << "        if (jj < nk) {\n"
     << "          const " << S << " *kr = k + j * KSS;\n"
     << "#pragma unroll\n"
     << "          for (int x0 = 0; x0 < D; x0 += VW) {\n"
     << "            const KRaw raw = *(const KRaw *)(kr + x0);\n"
     << "            const " << S << " *e = (const " << S << " *)&raw;\n"
     << "#pragma unroll\n"
     << "            for (int u = 0; u < VW; ++u) {\n"
     << "              const float kx = " << c.load(t, "e[u]") << ";\n"
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
     // probabilities and their sum (every warp shuffles the same number of
     // times: the host emulation's shuffles are block barriers).
     << "      for (int r0 = 0; r0 < R; r0 += NT / 32) {\n"
     << "        const int r = r0 + warp;\n        const bool row = r < R;\n"
     << "        float mx = -INF;\n"
     << "        if (row)\n"
     << "          for (int jj = lane; jj < TK; jj += 32) mx = fmaxf(mx, Ps[r][jj]);\n"
     << "        for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, "
        "o));\n"
     << "        const float mo = row ? Ms[r] : -INF, mn = fmaxf(mo, mx);\n"
     << "        float sum = 0.f;\n"
     << "        if (row)\n"
     << "          for (int jj = lane; jj < TK; jj += 32) {\n"
     << "            const float p = mn == -INF ? 0.f : exp2f(Ps[r][jj] - mn);\n"
     << "            Ps[r][jj] = p;\n            sum += p;\n          }\n"
     << "        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);\n"
     << "        if (row && lane == 0) {\n"
     << "          const float corr = mo == -INF ? 0.f : exp2f(mo - mn);\n"
     << "          Cs[r] = corr;\n          Ls[r] = Ls[r] * corr + sum;\n          Ms[r] = mn;\n"
     << "        }\n      }\n"
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
     << "        const " << S << " *vc = v + t0 * VSS + cg * CW;\n"
     << "#pragma unroll 4\n"
     << "        for (int jj = 0; jj < nk; ++jj) {\n"
     << "          const VRaw raw = *(const VRaw *)(vc + jj * VSS);\n"
     << "          const " << S << " *e2 = (const " << S << " *)&raw;\n"
     << "          const float p = Ps[r][jj];\n"
     << "#pragma unroll\n"
     << "          for (int q = 0; q < CW; ++q) acc[u][q] += p * " << c.load(t, "e2[q]") << ";\n"
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
  // Several: this split's partial, then the last block of the (batch, kv
  // head) combines them in split order.
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
     << "    __threadfence();\n    __syncthreads();\n"
     << "    if (threadIdx.x == 0) tc_last = atomicAdd(&count[gi], 1u) == (unsigned)(S - 1);\n"
     << "    __syncthreads();\n    if (!tc_last) continue;\n    __threadfence();\n"
     << "    const volatile float *all = settled + gi * S * SLOT;\n"
     << "    for (int e = threadIdx.x; e < R * DV; e += NT) {\n"
     << "      const int r = e / DV, x = e - r * DV;\n"
     << "      float mx = -INF, l = 0.f, a = 0.f;\n"
     << "      const int64_t splits = S" << (drop ? " - 1" : "") << ";\n"
     << "      for (int64_t q = 0; q < splits; ++q) mx = fmaxf(mx, all[q * SLOT + R * DV + r]);\n"
     << "      if (mx != -INF)\n"
     << "        for (int64_t q = 0; q < splits; ++q) {\n"
     << "          const float f = exp2f(all[q * SLOT + R * DV + r] - mx);\n"
     << "          l += all[q * SLOT + R * DV + R + r] * f;\n"
     << "          a += all[q * SLOT + r * DV + x] * f;\n        }\n"
     << "      " << out << " + x] = " << c.store(t, "l > 0.f ? a / l : 0.f") << ";\n    }\n"
     << "    if (threadIdx.x == 0) count[gi] = 0; // zero for the next launch\n"
     << "  }\n}\n";
}

} // namespace tc::kernels
