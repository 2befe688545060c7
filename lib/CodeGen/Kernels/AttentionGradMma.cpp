// AttentionGrad's tensor-core CUDA kernel for f16/bf16 data
// (flash-attention-2's backward; the blocked f32-FMA kernel and the
// algorithm: AttentionGrad.cpp). One launch of 128-thread blocks striding
// over two kinds of independent work item, no atomics:
//  - dk/dv items, first (the heavier): 64 keys of one (batch, kv head),
//    each warp 16 of them. The K and V rows land in shared memory once;
//    the item loops over the query tiles (TQ rows) of every query head of
//    the kv head (grouped-query attention), staging Q and dO rows and the
//    rows' lse and D = rowsum(dO * O) in shared memory, and per tile
//    computes S^T = K Q^T and dP^T = V dO^T (16 keys x TQ queries a warp),
//    P^T = exp2(S^T scale log2 e + mask - lse log2 e) and dS^T = P^T (dP^T
//    - D), then dV += P^T dO and dK += dS^T Q, reusing the accumulator
//    fragments as A operands (the m16n8 C layout of two n8 tiles is the
//    m16n8k16 A layout).
//  - dq items: 64 query rows of one (batch, head), each warp 16 with Q's
//    and dO's fragments in registers, lse and D in shared memory; per key
//    tile (TKQ keys, K and V rows in shared memory, the next tile's landing
//    meanwhile) S and dP again, dS, and dQ += dS K (ldmatrix.trans of the
//    K rows); with mask_grad dS goes to the dmask result from the
//    fragments, and zeros to the keys past a causal item's last tile.
// All products by mma.m16n8k16 with f32 accumulation; the results are
// scaled (dq, dk) and rounded once when written. The scores of a (query
// tile, key tile) pair are computed twice, once for each kind of item.
//
// Shared memory is one static buffer (48 KB at most): K and V tiles of 64
// rows, Q and dO tiles of TQ rows, rows padded by 16 bytes (no ldmatrix
// bank conflicts); a dq item uses the first TKQ rows of the K and V tiles.
// TQ: 64 where head dims <= 64, 32 up to 96, 16 up to 128 (the K and V
// tiles alone take 34 KB at 128). Head dims that are no multiple of 16 run
// padded to one: columns [d, padded d) of every tile are zeroed once and
// never copied over, Q's and dO's fragments past d are zeros.
//
// Not covered (the blocked kernel runs them): f32 (no f16 tensor cores),
// odd head dims (fragments are loaded and results stored as 16-bit pairs)
// and head dims above 128 (the tiles would not fit 48 KB of static shared
// memory). The mma, ldmatrix and cp.async helpers and their portable
// bodies, which the host emulation runs, are the forward's
// (AttentionMma.cpp).
#include "Attention.h"
#include <algorithm>
#include <cstdlib>

namespace tc::kernels {

namespace {

constexpr int64_t kKeys = 64, kRows = 64, kThreads = 128, kStaticShared = 48 * 1024;

int64_t pitch(int64_t d) { return attentionMmaPadded(d) + 8; }

// Bytes of the shared buffer at TQ query rows a tile.
int64_t sharedBytes(const AttentionOperands &o, int64_t tq) {
  return 2 * (kKeys + tq) * (pitch(o.d) + pitch(o.dv)) + 2 * 4 * kRows;
}

// The query rows of a dk/dv item's tile: the most of 64, 32, 16 that fit.
int64_t queryTile(const AttentionOperands &o) {
  for (int64_t tq : {64, 32, 16})
    if (sharedBytes(o, tq) <= kStaticShared)
      return tq;
  return 0;
}

// Keys a dq item's tile: 64 where heads <= 64, else 32 (Q's and dO's
// fragments and dQ's accumulator take 128 registers at 128).
int64_t keyTile(const AttentionOperands &o) {
  return attentionMmaPadded(o.d) <= 64 && attentionMmaPadded(o.dv) <= 64 ? 64 : 32;
}

// Rows [`row0`, `row0` + `rows`) of the global `src` (16-bit elements,
// `d` of each row, row stride `stride`) into the shared tile `buf` (pitch
// `pit`), by all threads; zeros at rows >= `lim`.
std::string tileLoad(const std::string &buf, const char *pit, const std::string &src, int64_t d,
                     const std::string &stride, const std::string &row0, const char *rows,
                     const std::string &lim, const std::string &in) {
  const int64_t chunk = vectorWidth(d, 2);
  const std::string n = std::to_string(d / chunk);
  return in + "for (int e = threadIdx.x; e < " + rows + " * " + n + "; e += blockDim.x) {\n" + in +
         "  const int rr = e / " + n + ", x = (e - rr * " + n + ") * " + std::to_string(chunk) +
         ";\n" +
         attentionTileCopy(chunk, in + "  ", row0 + " + rr < " + lim,
                           buf + "[rr * " + pit + " + x]",
                           src + " + (" + row0 + " + rr) * " + stride + " + x") +
         in + "}\n";
}

} // namespace

bool attentionGradMmaApplies(const AttentionOperands &o, DType t) {
  return (t == DType::F16 || t == DType::BF16) && o.d % 2 == 0 && o.dv % 2 == 0 && o.d <= 128 &&
         o.dv <= 128 && queryTile(o) > 0;
}

unsigned attentionGradMmaVec(const AttentionOperands &o) {
  // The grid is ceil(B H Sq D parts / (128 vec)) blocks (the elements of
  // result 0: dq, or the packed dq, dk, dv of `parts` 3): about one per
  // item where the dims are known, else two per dq item.
  const int64_t parts = o.axes[3].part >= 0 ? 3 : 1;
  const Dim &h = o.q->type.shape[o.axes[0].heads], &sq = o.q->type.shape[o.axes[0].tokens],
            &hkv = o.k->type.shape[o.axes[1].heads], &skv = o.k->type.shape[o.axes[1].tokens];
  if (!h.isStatic() || !sq.isStatic() || !hkv.isStatic() || !skv.isStatic() || sq.size < 1)
    return unsigned(std::max<int64_t>(1, parts * o.d / 4));
  const int64_t items =
      h.size * ((sq.size + kRows - 1) / kRows) + hkv.size * ((skv.size + kKeys - 1) / kKeys);
  return unsigned(std::max<int64_t>(1, parts * h.size * sq.size * o.d / (kThreads * items)));
}

void emitAttentionGradMma(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                          DType t, bool maskGrad) {
  const std::string T = t == DType::BF16 ? "bf16" : "f16";
  const std::string mma = "tc_mma16816_" + T, pack = "tc_" + T + "_pack", lo = "tc_" + T + "_lo",
                    hi = "tc_" + T + "_hi";
  const int64_t tq = queryTile(o);
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", DP = " << attentionMmaPadded(o.d)
     << ", DVP = " << attentionMmaPadded(o.dv) << ", KP = " << pitch(o.d)
     << ", VP = " << pitch(o.dv) << ", BK = " << kKeys << ", BQ = " << kRows << ", TQ = " << tq
     << ", TKQ = " << keyTile(o)
     << ",\n         KD = DP / 16, VD = DVP / 16, ND = DP / 8, NDV = DVP / 8 };\n"
     << "  const float INF = " << c.info().inf
     << ", SL = " << floatLiteral(o.scale * 1.4426950408889634, DType::F32)
     << ", SCALE = " << floatLiteral(o.scale, DType::F32)
     << ", LOG2E = 1.44269504f; // scores in log2 units: exp2\n"
     << "  // K, V (64 rows), Q, dO (TQ rows): 16-bit rows padded by 16 bytes;\n"
     << "  // the lse (log2 units, +inf: no probability flows) and D of BQ rows.\n"
     << "  __shared__ tc_vec<unsigned, 4> Sm[(BK + TQ) * (KP + VP) / 8];\n"
     << "  __shared__ float Ls[BQ], Ds[BQ];\n"
     << "  unsigned short *Ks = (unsigned short *)Sm, *Vs = Ks + BK * KP, *Qs = Vs + BK * VP,\n"
     << "                 *Gs = Qs + TQ * KP;\n"
     << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t4 = lane & "
        "3;\n"
     << "  const int64_t qtiles = (Sq + BQ - 1) / BQ, ktiles = (SKV + BK - 1) / BK;\n"
     << "  const int64_t kitems = B * HKV * ktiles, items = kitems + B * H * qtiles;\n";
  // Columns [d, padded d) of every tile: zeros once, never copied over.
  auto zeroPadding = [&](const char *buf, const char *pit, const char *dim, const char *rows,
                         int64_t d) {
    const int64_t w = attentionMmaPadded(d) - d;
    if (w == 0)
      return;
    os << "  for (int e = threadIdx.x; e < " << rows << " * " << w
       << "; e += blockDim.x) // the padding\n"
       << "    " << buf << "[(e / " << w << ") * " << pit << " + " << dim << " + e % " << w
       << "] = 0;\n";
  };
  zeroPadding("Ks", "KP", "D", "BK", o.d);
  zeroPadding("Vs", "VP", "DV", "BK", o.dv);
  zeroPadding("Qs", "KP", "D", "TQ", o.d);
  zeroPadding("Gs", "VP", "DV", "TQ", o.dv);
  // Ls and Ds of rows [i0, i0 + n) of (b, h), `rows` of them (128 / rows
  // threads a row, 16-bit pairs of dO and O); rows past n get lse +inf.
  auto rowStats = [&](const char *rows, const char *n, const std::string &in) {
    os << in << "{\n"
       << in << "  enum { PER = " << kThreads << " / " << rows << " };\n"
       << in << "  const int r = threadIdx.x / PER, part = threadIdx.x % PER;\n"
       << in << "  float d = 0.f;\n"
       << in << "  if (r < " << n << ") {\n"
       << in << "    const unsigned *gr = (const unsigned *)(go + (i0 + r) * GSS),\n"
       << in << "                   *yr = (const unsigned *)(yo + (i0 + r) * YSS);\n"
       << in << "    for (int x = part; x < DV / 2; x += PER) {\n"
       << in << "      const unsigned u = gr[x], w = yr[x];\n"
       << in << "      d += " << lo << "(u) * " << lo << "(w) + " << hi << "(u) * " << hi
       << "(w);\n"
       << in << "    }\n"
       << in << "  }\n"
       << in << "  for (int w = PER / 2; w > 0; w >>= 1) d += __shfl_xor_sync(0xffffffffu, d, w);\n"
       << in << "  if (part == 0) {\n"
       << in << "    const float L = r < " << n << " ? (float)LS[lrow + i0 + r] : -INF;\n"
       << in << "    Ls[r] = L == -INF ? INF : L * LOG2E;\n"
       << in << "    Ds[r] = d;\n"
       << in << "  }\n"
       << in << "}\n";
  };
  // p and ds of one score `s[n][x]` (with `dp[n][x]`) of query i and key
  // j, given the row's lse L (log2 units) and D. Test-only:
  // TC_TEST_ATTENTION_GRAD_NO_D leaves D out (a wrong kernel the numeric
  // tests must catch), as the blocked kernel's scoreTerms.
  const bool noD = std::getenv("TC_TEST_ATTENTION_GRAD_NO_D") != nullptr;
  // `rowMask`: the mask's terms of the lane's two keys, read before.
  auto scoreTerms = [&](const std::string &in, const char *L, const char *Dr, bool keepP,
                        bool rowMask) {
    os << in << "float z = s[n][x] * SL;\n";
    if (o.mask && rowMask)
      os << in << "z += x < 2 ? mka : mkb;\n";
    else if (o.mask)
      os << in << "if (i < Sq && j < SKV) z += LOG2E * " << attentionMaskAt(c, t) << ";\n";
    if (o.causal)
      os << in << "if (j > i + SKV - Sq) z = -INF;\n";
    os << in << "if (j >= SKV) z = -INF;\n" << in << "const float p = tc_exp2(z - " << L << ");\n";
    if (keepP)
      os << in << "s[n][x] = p;\n";
    os << in << "dp[n][x] = p * (dp[n][x]" << (noD ? "" : std::string(" - ") + Dr) << ");\n";
  };
  // Pack accumulator rows (m16 x k16 step kk) as an A operand.
  auto packA = [&](const char *name, const char *from, const std::string &in) {
    os << in << "const unsigned " << name << "[4] = {" << pack << "(" << from << "[2 * kk][0], "
       << from << "[2 * kk][1]), " << pack << "(" << from << "[2 * kk][2], " << from
       << "[2 * kk][3]),\n"
       << in << "    " << pack << "(" << from << "[2 * kk + 1][0], " << from << "[2 * kk + 1][1]), "
       << pack << "(" << from << "[2 * kk + 1][2], " << from << "[2 * kk + 1][3])};\n";
  };
  auto zeroAcc = [&](const char *name, const char *count, const std::string &in) {
    os << in << "float " << name << "[" << count << "][4];\n"
       << "#pragma unroll\n"
       << in << "for (int n = 0; n < " << count << "; ++n) " << name << "[n][0] = " << name
       << "[n][1] = " << name << "[n][2] = " << name << "[n][3] = 0.f;\n";
  };
  // The m16 x `dim` accumulator `acc` (times `mul`) into rows `r0` + g
  // (+ 8) of `out` (row stride `dim`), rows < `lim`: 16-bit pairs.
  auto store = [&](const char *acc, const char *out, const char *stride, const char *dim,
                   const char *count, const std::string &r0, const std::string &lim,
                   const char *mul) {
    os << "#pragma unroll\n"
       << "      for (int half = 0; half < 2; ++half) {\n"
       << "        const int64_t r = " << r0 << " + g + half * 8;\n"
       << "        if (r >= " << lim << ") continue;\n"
       << "        unsigned *row = (unsigned *)(" << out << " + r * " << stride << ") + t4;\n"
       << "#pragma unroll\n"
       << "        for (int n = 0; n < " << count << "; ++n)\n"
       << "          if (n * 8 + 2 * t4 < " << dim << ")\n"
       << "            row[n * 4] = " << pack << "(" << acc << "[n][2 * half]" << mul << ", " << acc
       << "[n][2 * half + 1]" << mul << ");\n"
       << "      }\n";
  };
  const std::string in = "        ";
  // A mask that broadcasts over the queries (a padding mask [B, 1, 1, S]):
  // a dk/dv item reads its keys' terms once a query head.
  const size_t mr = o.mask ? o.mask->type.rank() : 0;
  const bool rowMask =
      o.mask &&
      (mr < 2 || (o.mask->type.shape[mr - 2].isStatic() && o.mask->type.shape[mr - 2].size == 1));
  // Lane l's ldmatrix row of an A operand (rows r0..r0 + 15 of a tile), a
  // B operand's n8 pair (rows n * 8 ..), and a transposed B's k16 step.
  auto aRow = [](const char *buf, const char *pit, const char *r0, const char *kk) {
    return std::string(buf) + "[(" + r0 + " + ((lane >> 3) & 1) * 8 + (lane & 7)) * " + pit +
           " + " + kk + " * 16 + (lane >> 4) * 8]";
  };
  auto bRow = [](const char *buf, const char *pit) {
    return std::string(buf) + "[(n * 8 + (lane >> 4) * 8 + (lane & 7)) * " + pit +
           " + kk * 16 + ((lane >> 3) & 1) * 8]";
  };
  auto btRow = [](const char *buf, const char *pit) {
    return std::string(buf) + "[(kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * " + pit +
           " + (n + (lane >> 4)) * 8]";
  };

  os << "  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {\n"
     << "    __syncthreads(); // the previous item's reads of shared memory are done\n"
     << "    if (item < kitems) { // dk, dv of BK keys of (b, hk)\n"
     << "      const int64_t bk = item / ktiles, j0 = (item - bk * ktiles) * BK;\n"
     << "      const int64_t b = bk / HKV, hk = bk - b * HKV;\n"
     << "      const unsigned short *kg = (const unsigned short *)(K + b * KSB + hk * KSH),\n"
     << "                           *vg = (const unsigned short *)(V + b * VSB + hk * VSH);\n"
     << tileLoad("Ks", "KP", "kg", o.d, "KSS", "j0", "BK", "SKV", "      ")
     << tileLoad("Vs", "VP", "vg", o.dv, "VSS", "j0", "BK", "SKV", "      ")
     << "      tc_cp_commit();\n"
     << "      const int kr = warp * 16; // the warp's keys: j0 + kr + g (+ 8)\n"
     << "      const int64_t ja = j0 + kr + g, jb = ja + 8;\n";
  zeroAcc("dka", "ND", "      ");
  zeroAcc("dva", "NDV", "      ");
  os << "      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {\n"
     << "        const unsigned short *qg = (const unsigned short *)(Q + b * QSB + h * QSH),\n"
     << "                             *gg = (const unsigned short *)(G + b * GSB + h * GSH);\n"
     << "        const " << c.st(t)
     << " *go = G + b * GSB + h * GSH, *yo = Y + b * YSB + h * YSH;\n"
     << "        const int64_t lrow = (b * H + h) * Sq, mbase = b % MB * ms[0] + h * ms[1];\n"
     << "        (void)mbase;\n"
     << (rowMask ? "        const float mka = ja < SKV ? LOG2E * " +
                       c.load(t, "M[mbase + ja * ms[3]]") +
                       " : 0.f,\n                    mkb = jb < SKV ? LOG2E * " +
                       c.load(t, "M[mbase + jb * ms[3]]") + " : 0.f;\n"
                 : "")
     << "        int64_t ibeg = 0;\n";
  if (o.causal) // rows before the first key's diagonal see none of the keys
    os << "        if (j0 - (SKV - Sq) > ibeg) ibeg = j0 - (SKV - Sq);\n";
  os << "        for (int64_t i0 = ibeg; i0 < Sq; i0 += TQ) {\n"
     << "          const int nq = Sq - i0 < TQ ? (int)(Sq - i0) : TQ;\n"
     << "          __syncthreads(); // the previous tile's reads of Qs, Gs, Ls, Ds are done\n"
     << tileLoad("Qs", "KP", "qg", o.d, "QSS", "i0", "TQ", "Sq", "          ")
     << tileLoad("Gs", "VP", "gg", o.dv, "GSS", "i0", "TQ", "Sq", "          ")
     << "          tc_cp_commit();\n";
  rowStats("TQ", "nq", "          ");
  os << "          tc_cp_wait<0>();\n"
     << "          __syncthreads();\n"
     << "          // S^T = K Q^T, dP^T = V dO^T: the warp's 16 keys x TQ queries.\n";
  zeroAcc("s", "TQ / 8", "          ");
  zeroAcc("dp", "TQ / 8", "          ");
  // acc (16 keys x TQ queries) += the warp's rows of `rows` times `cols`^T,
  // over `steps` k-steps of 16 (both tiles of pitch `pit`).
  auto keyRowsTimes = [&](const char *steps, const char *rows, const char *cols, const char *pit,
                          const char *acc) {
    os << "#pragma unroll\n"
       << "          for (int kk = 0; kk < " << steps << "; ++kk) {\n"
       << "            unsigned a[4];\n"
       << "            tc_ldsm4(a, &" << aRow(rows, pit, "kr", "kk") << ");\n";
    emitMmaPairs(os, mma, "TQ / 8", "tc_ldsm4", bRow(cols, pit), acc, "a", false);
    os << "          }\n";
  };
  keyRowsTimes("KD", "Ks", "Qs", "KP", "s");
  keyRowsTimes("VD", "Vs", "Gs", "VP", "dp");
  os << "          // P^T and dS^T: element x of tile n is key x < 2 ? ja : jb, query\n"
     << "          // i0 + c with c = n * 8 + 2 t4 + (x & 1).\n"
     << "#pragma unroll\n"
     << "          for (int n = 0; n < TQ / 8; ++n)\n"
     << "#pragma unroll\n"
     << "            for (int x = 0; x < 4; ++x) {\n"
     << "              const int cq = n * 8 + 2 * t4 + (x & 1);\n"
     << "              const int64_t i = i0 + cq, j = x < 2 ? ja : jb;\n";
  scoreTerms("              ", "Ls[cq]", "Ds[cq]", true, rowMask);
  os << "            }\n"
     << "          // dV += P^T dO, dK += dS^T Q over the tile's queries.\n"
     << "#pragma unroll\n"
     << "          for (int kk = 0; kk < TQ / 16; ++kk) {\n";
  packA("pa", "s", "            ");
  packA("da", "dp", "            ");
  emitMmaPairs(os, mma, "NDV", "tc_ldsm4t", btRow("Gs", "VP"), "dva", "pa", false);
  emitMmaPairs(os, mma, "ND", "tc_ldsm4t", btRow("Qs", "KP"), "dka", "da", false);
  os << "          }\n"
     << "        }\n"
     << "      }\n"
     << "      tc_cp_wait<0>(); // no copy into Ks, Vs outlives the item (no query rows)\n";
  store("dka", "(DK + b * DKSB + hk * DKSH)", "DKSS", "D", "ND", "j0 + kr", "SKV", " * SCALE");
  store("dva", "(DVo + b * DVSB + hk * DVSH)", "DVSS", "DV", "NDV", "j0 + kr", "SKV", "");
  os << "    } else { // dq of BQ query rows of (b, h)\n"
     << "      const int64_t it = item - kitems, bh = it / qtiles, i0 = (it - bh * qtiles) * BQ;\n"
     << "      const int64_t b = bh / H, h = bh - b * H, hk = h / group;\n"
     << "      const int nq = Sq - i0 < BQ ? (int)(Sq - i0) : BQ;\n"
     << "      const unsigned short *kg = (const unsigned short *)(K + b * KSB + hk * KSH),\n"
     << "                           *vg = (const unsigned short *)(V + b * VSB + hk * VSH),\n"
     << "                           *qg = (const unsigned short *)(Q + b * QSB + h * QSH),\n"
     << "                           *gg = (const unsigned short *)(G + b * GSB + h * GSH);\n"
     << "      const " << c.st(t) << " *go = G + b * GSB + h * GSH, *yo = Y + b * YSB + h * YSH;\n"
     << "      const int64_t lrow = (b * H + h) * Sq, mbase = b % MB * ms[0] + h * ms[1];\n"
     << "      (void)mbase;\n";
  rowStats("BQ", "nq", "      ");
  os << "      // The warp's rows: i0 + qr + g (+ 8); Q's and dO's A fragments (zeros\n"
     << "      // past the rows and columns).\n"
     << "      const int qr = warp * 16;\n"
     << "      const int64_t ia = i0 + qr + g, ib = ia + 8;\n"
     << "      unsigned qa[KD][4], ga[VD][4];\n"
     << "#pragma unroll\n"
     << "      for (int kk = 0; kk < KD; ++kk)\n"
     << "#pragma unroll\n"
     << "        for (int x = 0; x < 4; ++x) {\n"
     << "          const int r = qr + g + (x & 1) * 8, col = kk * 16 + (x >> 1) * 8 + 2 * t4;\n"
     << "          qa[kk][x] = r < nq && col < D ? *(const unsigned *)(qg + (i0 + r) * QSS + col) "
        ": 0u;\n"
     << "        }\n"
     << "#pragma unroll\n"
     << "      for (int kk = 0; kk < VD; ++kk)\n"
     << "#pragma unroll\n"
     << "        for (int x = 0; x < 4; ++x) {\n"
     << "          const int r = qr + g + (x & 1) * 8, col = kk * 16 + (x >> 1) * 8 + 2 * t4;\n"
     << "          ga[kk][x] = r < nq && col < DV ? *(const unsigned *)(gg + (i0 + r) * GSS + col) "
        ": 0u;\n"
     << "        }\n"
     << "      __syncthreads(); // Ls, Ds\n"
     << "      const float la = Ls[qr + g], lb = Ls[qr + g + 8], da = Ds[qr + g], db = Ds[qr + g + "
        "8];\n";
  zeroAcc("dqa", "ND", "      ");
  os << "      int64_t jend = SKV;\n";
  if (o.causal) // key tiles past the last row's diagonal are skipped
    os << "      if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  // Two stages of K and V tiles: the next tile's rows land (cp.async)
  // while this one's are used. Stage 1 is the K and V tiles' second half
  // or, where a stage takes all 64 rows, the Q and dO tiles (TQ = TKQ).
  os << "      unsigned short *const K1 = 2 * TKQ <= BK ? Ks + TKQ * KP : Qs,\n"
     << "                     *const V1 = 2 * TKQ <= BK ? Vs + TKQ * VP : Gs;\n"
     << "      {\n"
     << "        const int64_t jn = 0;\n"
     << tileLoad("Ks", "KP", "kg", o.d, "KSS", "jn", "TKQ", "jend", in)
     << tileLoad("Vs", "VP", "vg", o.dv, "VSS", "jn", "TKQ", "jend", in) << "      }\n"
     << "      tc_cp_commit();\n"
     << "      int st = 0;\n"
     << "      for (int64_t j0 = 0; j0 < jend; j0 += TKQ, st ^= 1) {\n"
     << "        __syncthreads(); // the previous tile's reads of stage st ^ 1 are done\n"
     << "        unsigned short *const Kn = st ? Ks : K1, *const Vn = st ? Vs : V1;\n"
     << "        if (j0 + TKQ < jend) {\n"
     << "          const int64_t jn = j0 + TKQ;\n"
     << tileLoad("Kn", "KP", "kg", o.d, "KSS", "jn", "TKQ", "jend", in + "  ")
     << tileLoad("Vn", "VP", "vg", o.dv, "VSS", "jn", "TKQ", "jend", in + "  ") << in << "}\n"
     << in << "tc_cp_commit();\n"
     << in << "tc_cp_wait<1>(); // tile j0 has landed; the next may be on its way\n"
     << in << "__syncthreads();\n"
     << in << "const unsigned short *const Kt = st ? K1 : Ks, *const Vt = st ? V1 : Vs;\n"
     << in << "// S = Q K^T, dP = dO V^T: the warp's 16 rows x TKQ keys.\n";
  zeroAcc("s", "TKQ / 8", in);
  zeroAcc("dp", "TKQ / 8", in);
  os << "#pragma unroll\n" << in << "for (int kk = 0; kk < KD; ++kk) {\n";
  emitMmaPairs(os, mma, "TKQ / 8", "tc_ldsm4", bRow("Kt", "KP"), "s", "qa[kk]", false);
  os << in << "}\n"
     << "#pragma unroll\n"
     << in << "for (int kk = 0; kk < VD; ++kk) {\n";
  emitMmaPairs(os, mma, "TKQ / 8", "tc_ldsm4", bRow("Vt", "VP"), "dp", "ga[kk]", false);
  os << in << "}\n"
     << in
     << "// dS: element x of tile n is row x < 2 ? ia : ib, key j0 + n * 8 + 2 t4 + (x & 1).\n"
     << "#pragma unroll\n"
     << in << "for (int n = 0; n < TKQ / 8; ++n)\n"
     << "#pragma unroll\n"
     << in << "  for (int x = 0; x < 4; ++x) {\n"
     << in << "    const int64_t i = x < 2 ? ia : ib, j = j0 + n * 8 + 2 * t4 + (x & 1);\n";
  scoreTerms(in + "    ", "(x < 2 ? la : lb)", "(x < 2 ? da : db)", false, false);
  if (maskGrad) // dmask: dS itself
    os << in << "    if (i < Sq && j < SKV) DS[(lrow + i) * SKV + j] = " << c.store(t, "dp[n][x]")
       << ";\n";
  os << in << "  }\n"
     << in << "// dQ += dS K over the tile's keys.\n"
     << "#pragma unroll\n"
     << in << "for (int kk = 0; kk < TKQ / 16; ++kk) {\n";
  packA("da", "dp", in + "  ");
  emitMmaPairs(os, mma, "ND", "tc_ldsm4t", btRow("Kt", "KP"), "dqa", "da", false);
  os << in << "}\n"
     << "      }\n";
  if (maskGrad && o.causal)
    os << attentionGradDmaskTail(c, t);
  store("dqa", "(O + b * OSB + h * OSH)", "OSS", "D", "ND", "i0 + qr", "Sq", " * SCALE");
  os << "    }\n"
     << "  }\n}\n";
}

} // namespace tc::kernels
