// The Attention family's tensor-core CUDA kernel for f16/bf16 data
// (flash-attention-2 style): a block of 4 warps owns 64 query rows of one
// (batch, head), each warp 16 of them with Q's mma fragments in registers
// (or 128 rows, 32 a warp, on long sequences: mTiles; over heads above 64
// with Q's fragments in shared memory: qShared).
// Key tiles of TK keys and their values are staged in shared memory
// (cp.async); per tile each warp computes its 16 x TK scores with
// mma.m16n8k16 (f32 accumulation), applies scale, mask and causality in
// log2 units, updates its online softmax (running max m and sum l per row,
// exp2) and multiplies P by V, reusing the scores' accumulator fragments
// as P's A fragments (the m16n8 C layout of two n8 tiles is the m16n8k16 A
// layout). No Sq x Skv scores in memory. With the lse result (a train
// step's forward) each row's log-sum-exp goes there, in natural-log units
// as the reference's: m ln 2 + ln(l).
//
// Head dims that are no multiple of 16 (MobileViT's 36) run padded to one:
// Q's fragments and the K/V tiles' columns past d read as zeros, so the
// scores are exact, and only the first dv output columns are written. Rows
// of such dims are not 16-byte multiples: every offset is a multiple of the
// head dim (features are contiguous and last), so a tile copies chunks of
// the largest of 16, 8, 4 or 2 bytes that divides a row.
//
// The PTX (mma, ldmatrix, cp.async) sits behind small helpers with a
// portable body built from warp shuffles, which the host emulation
// (test/CodeGen/Inputs/cuda_host_shim.h) runs: it computes the very
// fragment layout the tensor cores do.
#include "Attention.h"
#include <cmath>
#include <cstdlib>

namespace tc::kernels {

namespace {

// Fragment loads, async copies and 2^x, whatever the data type. Lane l gives
// row l % 8 of 8x8 matrix l / 8 and gets, of each matrix m, (row l / 4,
// cols 2 (l % 4) + {0, 1}) in r[m]; transposed: (rows 2 (l % 4) + {0, 1},
// col l / 4).
constexpr const char *kFragmentHelpers = R"(#ifndef TC_MMA_FRAGMENTS
#define TC_MMA_FRAGMENTS
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
TC_INLINE unsigned tc_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
TC_INLINE void tc_ldsm4(unsigned r[4], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tc_smem(row)));
}
TC_INLINE void tc_ldsm4t(unsigned r[4], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tc_smem(row)));
}
TC_INLINE void tc_cp16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(tc_smem(dst)), "l"(src));
}
TC_INLINE void tc_cp8(void *dst, const void *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(tc_smem(dst)), "l"(src));
}
TC_INLINE void tc_cp4(void *dst, const void *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(tc_smem(dst)), "l"(src));
}
TC_INLINE void tc_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> TC_INLINE void tc_cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
TC_INLINE float tc_exp2(float x) { // 2^x, -inf -> 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
#else
TC_INLINE const unsigned short *tc_lane_row(const void *row, int src) {
  return (const unsigned short *)__shfl_sync(0xffffffffu, (unsigned long long)row, src);
}
TC_INLINE void tc_ldsm4(unsigned r[4], const void *row) {
  const int lane = threadIdx.x & 31;
  for (int m = 0; m < 4; ++m) {
    const unsigned short *p = tc_lane_row(row, m * 8 + (lane >> 2));
    r[m] = p[2 * (lane & 3)] | (unsigned)p[2 * (lane & 3) + 1] << 16;
  }
}
TC_INLINE void tc_ldsm4t(unsigned r[4], const void *row) {
  const int lane = threadIdx.x & 31;
  for (int m = 0; m < 4; ++m) {
    const unsigned short *lo = tc_lane_row(row, m * 8 + 2 * (lane & 3));
    const unsigned short *hi = tc_lane_row(row, m * 8 + 2 * (lane & 3) + 1);
    r[m] = lo[lane >> 2] | (unsigned)hi[lane >> 2] << 16;
  }
}
TC_INLINE void tc_cp16(void *dst, const void *src) {
  *(tc_vec<unsigned, 4> *)dst = *(const tc_vec<unsigned, 4> *)src;
}
TC_INLINE void tc_cp8(void *dst, const void *src) {
  *(unsigned long long *)dst = *(const unsigned long long *)src;
}
TC_INLINE void tc_cp4(void *dst, const void *src) { *(unsigned *)dst = *(const unsigned *)src; }
TC_INLINE void tc_cp_commit() {}
template <int N> TC_INLINE void tc_cp_wait() {}
TC_INLINE float tc_exp2(float x) { return exp2f(x); }
#endif
#endif
)";

// c += a * b on one m16n8k16 tile of `@T@` data (lane = 4 g + t: a holds
// A's (row g | g + 8, cols 2t + {0, 1} | + 8), b B's (rows 2t + {0, 1} | + 8,
// col g), c C's (row g | g + 8, cols 2t + {0, 1})), and two floats packed
// as an A operand. The portable body gathers the operands by shuffles.
constexpr const char *kMmaHelpers = R"(#ifndef TC_MMA_@T@
#define TC_MMA_@T@
TC_INLINE float tc_@T@_lo(unsigned x) { return @TOF@(__ushort_as_@H@((unsigned short)(x & 0xffffu))); }
TC_INLINE float tc_@T@_hi(unsigned x) { return @TOF@(__ushort_as_@H@((unsigned short)(x >> 16))); }
TC_INLINE unsigned tc_@T@_pack(float lo, float hi) {
  return __@H@_as_ushort(@FROMF@(lo)) | (unsigned)__@H@_as_ushort(@FROMF@(hi)) << 16;
}
TC_INLINE void tc_mma16816_@T@(float c[4], const unsigned a[4], const unsigned b[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.@T@.@T@.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int u = 0; u < 4; ++u) { // k = 2u + {0, 1} and 8 + 2u + {0, 1}: lane 4 g + u's A
    unsigned x[4], y[2][2]; // register pairs move as one 64-bit shuffle
    for (int e = 0; e < 4; e += 2) {
      const unsigned long long w = __shfl_sync(0xffffffffu, a[e] | (unsigned long long)a[e + 1] << 32, 4 * g + u);
      x[e] = (unsigned)w;
      x[e + 1] = (unsigned)(w >> 32);
    }
    for (int n = 0; n < 2; ++n) {
      const unsigned long long w = __shfl_sync(0xffffffffu, b[0] | (unsigned long long)b[1] << 32, 4 * (2 * t + n) + u);
      y[n][0] = (unsigned)w;
      y[n][1] = (unsigned)(w >> 32);
    }
    for (int n = 0; n < 2; ++n)
      for (int r = 0; r < 2; ++r)
        c[2 * r + n] += tc_@T@_lo(x[r]) * tc_@T@_lo(y[n][0]) + tc_@T@_hi(x[r]) * tc_@T@_hi(y[n][0]) +
                        tc_@T@_lo(x[2 + r]) * tc_@T@_lo(y[n][1]) + tc_@T@_hi(x[2 + r]) * tc_@T@_hi(y[n][1]);
  }
#endif
}
#endif
)";

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string mmaHelpers(DType t) {
  std::string s = kMmaHelpers;
  bool bf = t == DType::BF16;
  replaceAll(s, "@T@", bf ? "bf16" : "f16");
  replaceAll(s, "@H@", bf ? "bfloat16" : "half");
  replaceAll(s, "@TOF@", bf ? "__bfloat162float" : "__half2float");
  replaceAll(s, "@FROMF@", bf ? "__float2bfloat16_rn" : "__float2half_rn");
  return s;
}

// Query rows a warp's m16 tile covers; a warp owns mTiles(o) of them.
constexpr int64_t kTileRows = 16, kWarps = 4;

int64_t padded(int64_t d) { return attentionMmaPadded(d); }

// Two m16 tiles a warp (128 queries a block) where the sequence is long:
// each K / V fragment read from shared memory feeds two mma instead of one
// (shared-memory bandwidth bounds the one-tile kernel at long sequences).
// Short sequences keep 64 queries a block (a 197-token ViT would waste a
// third of a 128-row tile); masks keep one tile (ptxas: d 64 at two tiles
// takes 254 registers, with a mask's registers it spills); heads above 128
// too (at d 256 the O accumulator alone would take 256 registers).
// TC_CUDA_ATTENTION_MTILES (1 or 2) forces the choice where the head allows
// it (tests, comparisons).
int64_t mTiles(const AttentionOperands &o) {
  if (padded(o.d) > 128 || padded(o.dv) > 128)
    return 1;
  if (const char *e = std::getenv("TC_CUDA_ATTENTION_MTILES"))
    return std::atoi(e) == 2 ? 2 : 1;
  const Dim &sq = o.out->type.shape[o.axes[3].tokens];
  return !o.mask && sq.isStatic() && sq.size >= 512 ? 2 : 1;
}

// Two tiles over heads in (64, 128]: Q's fragments of both tiles in
// registers (32 a tile at d 128) beside the O accumulator (64 a tile)
// spill, so each lane parks its Q fragments in shared memory in fragment
// order (one conflict-free 16-byte load per k16 step and tile, only one
// step's live) and the key tile shrinks to 32: its scores take 32
// registers, not 64 (ptxas, d 128: 253-255 registers, no spills), and
// Q's 32 KB plus the K and V tiles fit the 48 KB of static shared memory
// (64-key tiles would need dynamic shared memory and spill). Per 32 keys
// at d 128 that is 32 Q / K loads for the 64 mma of Q K^T and 16 V loads
// for the 64 of P V (each load 512 bytes a warp): 0.375 shared loads an
// mma against the one-tile kernel's 0.5. K and V rows go unpadded then,
// their 16-byte chunks XOR-swizzled by row % 8 (an ldmatrix's 8 rows hit
// 8 different bank groups) at a pitch of a multiple of 64 elements, so
// the swizzle stays inside the row.
bool qShared(const AttentionOperands &o) {
  return mTiles(o) == 2 && (padded(o.d) > 64 || padded(o.dv) > 64);
}

int64_t keyTile(const AttentionOperands &o) {
  return qShared(o) || padded(o.d) > 128 || padded(o.dv) > 128 ? 32 : 64;
}

// Elements a K / V tile row takes in shared memory: padded by 16 bytes
// (no bank conflicts for ldmatrix) or, swizzled, a multiple of 64.
int64_t tilePitch(const AttentionOperands &o, int64_t d) {
  return qShared(o) ? (padded(d) + 63) / 64 * 64 : padded(d) + 8;
}

int64_t blockQueries(const AttentionOperands &o) { return kWarps * kTileRows * mTiles(o); }

// `dst` = `src` (chunk elements), async where a chunk is 4+ bytes.
std::string copyCall(int64_t chunk, const std::string &dst, const std::string &src) {
  if (chunk == 1)
    return "*(&" + dst + ") = *(" + src + ");";
  return "tc_cp" + std::to_string(chunk * 2) + "(&" + dst + ", " + src + ");";
}

// Zeros over `chunk` elements at `dst`.
std::string zeroStore(int64_t chunk, const std::string &dst) {
  if (chunk == 8)
    return "*(tc_vec<unsigned, 4> *)&" + dst + " = tc_vec<unsigned, 4>{};";
  const char *ty = chunk == 4 ? "unsigned long long" : chunk == 2 ? "unsigned" : "unsigned short";
  return std::string("*(") + ty + " *)&" + dst + " = 0;";
}

} // namespace

int64_t attentionMmaPadded(int64_t d) { return (d + 15) / 16 * 16; }

std::string attentionTileCopy(int64_t chunk, const std::string &in, const std::string &cond,
                              const std::string &at, const std::string &src) {
  return in + "if (" + cond + ")\n" + in + "  " + copyCall(chunk, at, src) + "\n" + in + "else\n" +
         in + "  " + zeroStore(chunk, at) + "\n";
}

void emitMmaPairs(std::ostream &os, const std::string &mma, const std::string &count,
                  const std::string &ldsm, const std::string &at, const std::string &c,
                  const std::string &a, bool mtiles) {
  const std::string in = mtiles ? "            " : "          ";
  os << "#pragma unroll\n"
     << "        for (int n = 0; n < " << count << "; n += 2) {\n"
     << "          unsigned b[4];\n"
     << "          " << ldsm << "(b, &" << at << ");\n";
  if (mtiles)
    os << "#pragma unroll\n"
       << "          for (int mt = 0; mt < MT; ++mt) {\n";
  os << in << mma << "(" << c << "[n], " << a << ", b);\n"
     << in << mma << "(" << c << "[n + 1], " << a << ", b + 2);\n";
  if (mtiles)
    os << "          }\n";
  os << "        }\n";
}

bool attentionMmaApplies(const AttentionOperands &o, DType t) {
  return (t == DType::F16 || t == DType::BF16) && o.d >= 1 && o.dv >= 1 && o.d <= 256 &&
         o.dv <= 256;
}

unsigned attentionMmaVec(const AttentionOperands &o) {
  // The grid is ceil(B H Sq Dv / (block vec)) blocks: at least one per
  // (b, h, query tile) when Sq is known, else twice the tiles' worth.
  const Dim &sq = o.out->type.shape[o.axes[3].tokens];
  if (!sq.isStatic() || sq.size < 1)
    return unsigned(o.dv / 4);
  int64_t bq = blockQueries(o), tiles = (sq.size + bq - 1) / bq;
  return unsigned(std::max<int64_t>(1, sq.size * o.dv / (128 * tiles)));
}

void emitAttentionMma(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                      DType t) {
  const std::string T = t == DType::BF16 ? "bf16" : "f16";
  const std::string mma = "tc_mma16816_" + T, pack = "tc_" + T + "_pack";
  const bool qShm = qShared(o);
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", DP = " << padded(o.d)
     << ", DVP = " << padded(o.dv) << ", MT = " << mTiles(o) << ", BQ = " << blockQueries(o)
     << ", TK = " << keyTile(o) << ", KP = " << tilePitch(o, o.d) << ", VP = " << tilePitch(o, o.dv)
     << ", KD = DP / 16, NK = TK / 8, NV = DVP / 8 };\n"
     << "  const float INF = " << c.info().inf
     << ", SL = " << floatLiteral(o.scale * 1.4426950408889634, DType::F32)
     << ", LOG2E = 1.44269504f; // scores in log2 units: exp2\n"
     << "  // 16-byte rows (cp.async, ldmatrix), "
     << (qShm ? "16-byte chunks swizzled" : "padded by 16 bytes") << ": no bank conflicts\n"
     << "  __shared__ tc_vec<unsigned, 4> Kv[TK * KP / 8], Vv[TK * VP / 8];\n"
     << "  unsigned short *Ks = (unsigned short *)Kv, *Vs = (unsigned short *)Vv;\n"
     << "  const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;\n";
  if (qShm)
    os << "  // This lane's Q fragments, (tile mt, k16 step kk) at qf[(mt * KD + kk) * 32].\n"
       << "  __shared__ tc_vec<unsigned, 4> Qv[4 * MT * KD * 32];\n"
       << "  tc_vec<unsigned, 4> *qf = Qv + (threadIdx.x >> 5) * MT * KD * 32 + lane;\n";
  os << "  // The warp's rows: ra + 16 mt + {0, 8} of the tile, m16 tile mt < MT.\n"
     << "  const int ra = (threadIdx.x >> 5) * 16 * MT + g;\n"
     << "  const int64_t qtiles = (Sq + BQ - 1) / BQ, tiles = B * H * qtiles;\n";
  // Element (row, col) of a K / V tile; swizzled, its 16-byte chunk col / 8
  // sits at col / 8 ^ row % 8: as the pitch is a multiple of 64, the index
  // row * pitch + col XOR (row % 8) * 8.
  auto tileAt = [&](const char *buf, const char *pitch, const std::string &row,
                    const std::string &col) {
    const std::string at = "(" + row + ") * " + pitch + " + " + col;
    return std::string(buf) + "[" + (qShm ? "(" + at + ") ^ (((" + row + ") & 7) << 3)" : at) + "]";
  };
  // Swizzled ldmatrix addresses, from one index a lane: the lane's in the
  // first k16 step / n8 pair, XOR the step's column (a per-element XOR
  // kept 8 lane-dependent offsets a buffer live: ptxas spilled).
  if (qShm)
    os << "  const int kl = (((lane >> 4) * 8 + (lane & 7)) * KP + ((lane >> 3) & 1) * 8) ^ ((lane "
          "& "
          "7) << 3),\n"
       << "            vl = ((((lane >> 3) & 1) * 8 + (lane & 7)) * VP + (lane >> 4) * 8) ^ ((lane "
          "& "
          "7) << 3);\n";
  // Columns [d, padded d) of a tile: zeros once, never copied over.
  auto zeroPadding = [&](const char *buf, const char *pitch, const char *dim, int64_t d) {
    if (padded(d) == d)
      return;
    const std::string w = std::to_string(padded(d) - d);
    os << "  for (int e = threadIdx.x; e < TK * " << w << "; e += blockDim.x) // the padding\n"
       << "    " << tileAt(buf, pitch, "e / " + w, std::string(dim) + " + e % " + w) << " = 0;\n";
  };
  zeroPadding("Ks", "KP", "D", o.d);
  zeroPadding("Vs", "VP", "DV", o.dv);
  // Q's fragment x of tile mt, k16 step kk: in registers or, Q-shared, into
  // f for the lane's slot. Pairs past d (padding) are zeros.
  const std::string qfrag = qShm ? "f.v[x]" : "qa[mt][kk][x]";
  os << "  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {\n"
     << "    const int64_t bh = tile / qtiles, i0 = (tile - bh * qtiles) * BQ;\n"
     << "    const int64_t b = bh / H, h = bh - b * H;\n"
     << "    const int nq = Sq - i0 < BQ ? (int)(Sq - i0) : BQ;\n"
     << attentionBases(c, t)
     << "    const unsigned short *qs = (const unsigned short *)q, *kg = (const unsigned short "
        "*)k,\n"
     << "                         *vg = (const unsigned short *)v;\n"
     << (qShm ? "" : "    unsigned qa[MT][KD][4]; // Q's A fragments\n") << "#pragma unroll\n"
     << "    for (int mt = 0; mt < MT; ++mt)\n"
     << "#pragma unroll\n"
     << "    for (int kk = 0; kk < KD; ++kk) {\n"
     << (qShm ? "      tc_vec<unsigned, 4> f;\n" : "") << "#pragma unroll\n"
     << "      for (int x = 0; x < 4; ++x) {\n"
     << "        const int r = ra + mt * 16 + (x & 1) * 8, col = kk * 16 + (x >> 1) * 8 + 2 * "
        "t4;\n"
     << (o.d % 2 == 0
             ? "        " + qfrag +
                   " = r < nq && col < D ? *(const unsigned *)(qs + (int64_t)r * QSS + "
                   "col) : 0u;\n"
             : "        const unsigned short *qr = qs + (int64_t)r * QSS;\n        " + qfrag +
                   " = r < nq ? (col < D ? qr[col] : 0u) | (col + 1 < D ? "
                   "(unsigned)qr[col + 1] << 16 : 0u) : 0u;\n")
     << "      }\n"
     << (qShm ? "      qf[(mt * KD + kk) * 32] = f;\n" : "") << "    }\n"
     << "    // Per m16 tile and row half (g, g + 8): running max, sum, P V.\n"
     << "    float m[MT][2], l[MT][2], acc[MT][NV][4];\n"
     << "    int64_t jend = SKV, lim[MT][2]; // row half hh of tile mt sees keys j < lim\n"
     << "#pragma unroll\n"
     << "    for (int mt = 0; mt < MT; ++mt) {\n"
     << "#pragma unroll\n"
     << "      for (int hh = 0; hh < 2; ++hh) {\n"
     << "        m[mt][hh] = -INF;\n        l[mt][hh] = 0.f;\n        lim[mt][hh] = SKV;\n";
  if (o.causal) // up to the diagonal
    os << "        const int64_t diag = i0 + ra + mt * 16 + hh * 8 + 1 + SKV - Sq;\n"
       << "        if (lim[mt][hh] > diag) lim[mt][hh] = diag;\n";
  os << "      }\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NV; ++n) acc[mt][n][0] = acc[mt][n][1] = acc[mt][n][2] = "
        "acc[mt][n][3] = 0.f;\n"
     << "    }\n";
  if (o.causal) // key tiles past the last row's are skipped
    os << "    if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  // The mask's terms of a key tile go into registers one tile ahead (issued
  // before this tile's P V, used after the next tile's scores): a mask read
  // at each score stalled the softmax on L2 (beit: 104 us vs vit's 45 us).
  // Raw 16-bit pairs (x = 2hh, 2hh + 1 in mk[mt][n][hh]): half the
  // registers of floats.
  auto loadMask = [&](const char *j) {
    os << "#pragma unroll\n"
       << "      for (int mt = 0; mt < MT; ++mt)\n"
       << "#pragma unroll\n"
       << "      for (int n = 0; n < NK; ++n)\n"
       << "#pragma unroll\n"
       << "        for (int hh = 0; hh < 2; ++hh) {\n"
       << "          const int64_t j = " << j << " + n * 8 + 2 * t4;\n"
       << "          const unsigned short *mr = (const unsigned short *)mrow[mt][hh];\n"
       << "          const bool mv = mlive[mt][hh];\n"
       << "          mk[mt][n][hh] = (mv && j < SKV ? (unsigned)mr[j * ms[3]] : 0u) |\n"
       << "                          (mv && j + 1 < SKV ? (unsigned)mr[(j + 1) * ms[3]] << 16 : "
          "0u);\n"
       << "        }\n";
  };
  if (o.mask) {
    os << "    bool mlive[MT][2];\n"
       << "    const " << c.st(t) << " *mrow[MT][2];\n"
       << "#pragma unroll\n"
       << "    for (int mt = 0; mt < MT; ++mt)\n"
       << "#pragma unroll\n"
       << "      for (int hh = 0; hh < 2; ++hh) {\n"
       << "        const int64_t i = i0 + ra + mt * 16 + hh * 8;\n"
       << "        mlive[mt][hh] = i < Sq;\n"
       << "        mrow[mt][hh] = M + mbase + (i < Sq ? i : 0) * ms[2];\n"
       << "      }\n"
       << "    unsigned mk[MT][NK][2];\n    {\n";
    loadMask("0");
    os << "    }\n";
  }
  // Rows [j, j + TK) of k or v into a tile (zeros past jend), one cp.async
  // group. K(j + TK) loads during tile j's softmax and P V, V(j + TK)
  // during the scores of tile j + TK: one buffer each.
  auto load = [&](const char *buf, const char *pitch, const char *src, const char *dim, int64_t d,
                  const char *stride, const char *j) {
    // Row copies of 16, 8, 4 or 2 bytes (f16/bf16: 2-byte elements).
    const int64_t chunk = vectorWidth(d, 2), per = keyTile(o) * (d / chunk), threads = 32 * kWarps;
    const std::string n = std::string(dim) + " / " + std::to_string(chunk),
                      at = tileAt(buf, pitch, "jj", "x");
    if (!qShm) {
      os << "      for (int e = threadIdx.x; e < TK * (" << n << "); e += blockDim.x) {\n"
         << "        const int jj = e / (" << n << "), x = (e - jj * (" << n << ")) * " << chunk
         << ";\n";
    } else { // unrolled: the rolled loop cost 38 SASS instructions a chunk at 254 registers
      os << "#pragma unroll\n"
         << "      for (int u = 0; u < " << (per + threads - 1) / threads << "; ++u) {\n"
         << "        const int e = threadIdx.x + u * " << threads << ";\n"
         << (per % threads ? "        if (e >= TK * (" + n + ")) break;\n" : "")
         << "        const int jj = e / (" << n << "), x = (e - jj * (" << n << ")) * " << chunk
         << ";\n";
    }
    os << attentionTileCopy(chunk, "        ", std::string(j) + " + jj < jend", at,
                            std::string(src) + " + (" + j + " + jj) * " + stride + " + x")
       << "      }\n";
  };
  // c[mt][n], c[mt][n + 1] += a[mt] * B for n = 0, 2, ... < `count` and
  // every m16 tile mt: B's fragments of two n8 tiles by ONE ldmatrix at
  // `at`, shared by the MT tiles.
  auto mmaPairs = [&](const char *count, const char *ldsm, const std::string &at, const char *c,
                      const char *a) {
    emitMmaPairs(os, mma, count, ldsm, at, std::string(c) + "[mt]", a, /*mtiles=*/true);
  };
  // Once every warp is done with `buf`: the next tile's rows into it.
  auto refill = [&](const char *buf, const char *pitch, const char *src, const char *dim, int64_t d,
                    const char *stride) {
    os << "      __syncthreads(); // every warp is done with " << buf << "\n"
       << "      if (j0 + TK < jend) {\n";
    load(buf, pitch, src, dim, d, stride, "j0 + TK");
    os << "      }\n      tc_cp_commit();\n";
  };
  os << "    __syncthreads(); // the previous tile's reads of Ks, Vs are done\n    {\n";
  load("Ks", "KP", "kg", "D", o.d, "KSS", "0");
  os << "      tc_cp_commit();\n";
  load("Vs", "VP", "vg", "DV", o.dv, "VSS", "0");
  os << "      tc_cp_commit();\n    }\n"
     << "    for (int64_t j0 = 0; j0 < jend; j0 += TK) {\n"
     << "      tc_cp_wait<1>(); // K(j0) has landed; V(j0) may be on its way\n"
     << "      __syncthreads();\n"
     << "      float s[MT][NK][4];\n"
     << "#pragma unroll\n"
     << "      for (int mt = 0; mt < MT; ++mt)\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NK; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] "
        "= 0.f;\n"
     << "#pragma unroll\n"
     << "      for (int kk = 0; kk < KD; ++kk) {\n";
  if (qShm)
    os << "        unsigned qa[MT][4]; // this k16 step's Q fragments\n"
       << "#pragma unroll\n"
       << "        for (int mt = 0; mt < MT; ++mt) {\n"
       << "          const tc_vec<unsigned, 4> f = qf[(mt * KD + kk) * 32];\n"
       << "          qa[mt][0] = f.v[0];\n          qa[mt][1] = f.v[1];\n"
       << "          qa[mt][2] = f.v[2];\n          qa[mt][3] = f.v[3];\n"
       << "        }\n";
  // K rows as B: key tiles n, n + 1.
  mmaPairs("NK", "tc_ldsm4",
           qShm ? std::string("Ks[(kl ^ kk * 16) + n * 8 * KP]")
                : tileAt("Ks", "KP", "n * 8 + (lane >> 4) * 8 + (lane & 7)",
                         "kk * 16 + ((lane >> 3) & 1) * 8"),
           "s", qShm ? "qa[mt]" : "qa[mt][kk]");
  os << "      }\n";
  refill("Ks", "KP", "kg", "D", o.d, "KSS");
  os << "#pragma unroll\n"
     << "      for (int mt = 0; mt < MT; ++mt) {\n"
     << "      const int c0 = lim[mt][0] - j0 < TK ? (int)(lim[mt][0] - j0) : TK,\n"
     << "                c1 = lim[mt][1] - j0 < TK ? (int)(lim[mt][1] - j0) : TK;\n"
     << "      float mx0 = m[mt][0], mx1 = m[mt][1];\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NK; ++n)\n"
     << "#pragma unroll\n"
     << "        for (int x = 0; x < 4; ++x) {\n"
     << "          float z = s[mt][n][x] * SL;\n";
  if (o.mask)
    os << "          z += LOG2E * (x & 1 ? tc_" << T << "_hi(mk[mt][n][x >> 1]) : tc_" << T
       << "_lo(mk[mt][n][x >> 1]));\n";
  os << "          if (n * 8 + 2 * t4 + (x & 1) >= (x < 2 ? c0 : c1)) z = -INF;\n"
     << "          s[mt][n][x] = z;\n"
     << "          if (x < 2) mx0 = fmaxf(mx0, z);\n"
     << "          else mx1 = fmaxf(mx1, z);\n"
     << "        }\n"
     << "      // A row's scores are in the 4 lanes of its g.\n"
     << "      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));\n"
     << "      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));\n"
     << "      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));\n"
     << "      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));\n"
     << "      // A row with no visible key yet keeps p = 0 (not exp2(-inf + inf)).\n"
     << "      const float u0 = mx0 == -INF ? 0.f : mx0, u1 = mx1 == -INF ? 0.f : mx1;\n"
     << "      const float r0 = tc_exp2(m[mt][0] - u0), r1 = tc_exp2(m[mt][1] - u1);\n"
     << "      m[mt][0] = mx0;\n      m[mt][1] = mx1;\n"
     << "      l[mt][0] *= r0;\n      l[mt][1] *= r1;\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NK; ++n) {\n"
     << "        s[mt][n][0] = tc_exp2(s[mt][n][0] - u0);\n"
     << "        s[mt][n][1] = tc_exp2(s[mt][n][1] - u0);\n"
     << "        s[mt][n][2] = tc_exp2(s[mt][n][2] - u1);\n"
     << "        s[mt][n][3] = tc_exp2(s[mt][n][3] - u1);\n"
     << "        l[mt][0] += s[mt][n][0] + s[mt][n][1]; // this lane's part of the row sum\n"
     << "        l[mt][1] += s[mt][n][2] + s[mt][n][3];\n"
     << "      }\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NV; ++n) {\n"
     << "        acc[mt][n][0] *= r0;\n        acc[mt][n][1] *= r0;\n"
     << "        acc[mt][n][2] *= r1;\n        acc[mt][n][3] *= r1;\n"
     << "      }\n"
     << "      }\n";
  if (o.mask) {
    os << "      if (j0 + TK < jend) {\n";
    loadMask("j0 + TK");
    os << "      }\n";
  }
  os << "      tc_cp_wait<1>(); // V(j0) has landed; K(j0 + TK) may not have\n"
     << "      __syncthreads();\n"
     << "#pragma unroll\n"
     << "      for (int kk = 0; kk < TK / 16; ++kk) {\n"
     << "        unsigned pa[MT][4];\n"
     << "#pragma unroll\n"
     << "        for (int mt = 0; mt < MT; ++mt) {\n"
     << "          pa[mt][0] = " << pack << "(s[mt][2 * kk][0], s[mt][2 * kk][1]);\n"
     << "          pa[mt][1] = " << pack << "(s[mt][2 * kk][2], s[mt][2 * kk][3]);\n"
     << "          pa[mt][2] = " << pack << "(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);\n"
     << "          pa[mt][3] = " << pack << "(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);\n"
     << "        }\n";
  // V rows as B, transposed: dv tiles n, n + 1.
  mmaPairs("NV", "tc_ldsm4t",
           qShm ? std::string("Vs[kk * 16 * VP + (vl ^ n * 8)]")
                : tileAt("Vs", "VP", "kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)",
                         "(n + (lane >> 4)) * 8"),
           "acc", "pa[mt]");
  os << "      }\n";
  refill("Vs", "VP", "vg", "DV", o.dv, "VSS");
  os << "    }\n"
     << "#pragma unroll\n"
     << "    for (int mt = 0; mt < MT; ++mt)\n"
     << "#pragma unroll\n"
     << "    for (int half = 0; half < 2; ++half) {\n"
     << "      float sum = l[mt][half];\n"
     << "      sum += __shfl_xor_sync(0xffffffffu, sum, 1);\n"
     << "      sum += __shfl_xor_sync(0xffffffffu, sum, 2);\n"
     << "      const float inv = sum > 0.f ? 1.f / sum : 0.f;\n"
     << "      const int r = ra + mt * 16 + half * 8;\n"
     << "      if (r >= nq) continue;\n";
  if (o.lse) // m is in log2 units: ln(sum 2^(z - m) 2^m) = ln(l) + m ln 2
    os << "      if (t4 == 0)\n"
       << "        LSE[(b * H + h) * Sq + i0 + r] = sum > 0.f ? m[mt][half] * 0.69314718f + "
          "tc_log(sum) : -INF;\n";
  // Columns n * 8 + 2 t4 + {0, 1}, the first dv of them.
  if (o.dv % 2 == 0)
    os << "      unsigned *out = (unsigned *)(O + b * OSB + h * OSH + (i0 + r) * OSS) + t4;\n"
       << "#pragma unroll\n"
       << "      for (int n = 0; n < NV; ++n)\n"
       << "        if (n * 8 + 2 * t4 < DV)\n"
       << "          out[n * 4] = " << pack
       << "(acc[mt][n][2 * half] * inv, acc[mt][n][2 * half + 1] * inv);\n";
  else
    os << "      unsigned short *out = (unsigned short *)(O + b * OSB + h * OSH + (i0 + r) * "
          "OSS);\n"
       << "#pragma unroll\n"
       << "      for (int n = 0; n < NV; ++n) {\n"
       << "        const int col = n * 8 + 2 * t4;\n"
       << "        const unsigned w = " << pack
       << "(acc[mt][n][2 * half] * inv, acc[mt][n][2 * half + 1] * inv);\n"
       << "        if (col < DV) out[col] = (unsigned short)(w & 0xffffu);\n"
       << "        if (col + 1 < DV) out[col + 1] = (unsigned short)(w >> 16);\n"
       << "      }\n";
  os << "    }\n"
     << "  }\n}\n";
}

std::string attentionMmaHelpers(DType t) { return std::string(kFragmentHelpers) + mmaHelpers(t); }

} // namespace tc::kernels
