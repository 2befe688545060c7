// AttentionGrad's kernel (Ops.def), flash-attention style in both dialects:
// no Sq x Skv buffer. The probabilities are recomputed block by block from
// q, k and the forward's log-sum-exp, p = exp(scale q.k + mask - lse), with
// D = rowsum(dout * out), dp = dout.v and ds = p (dp - D). Two kinds of work
// item, independent (no atomics, no second launch): a tile of query rows
// of one (batch, head) sums dq = scale ds k over every key; a tile of keys
// of one (batch, kv head) sums dk = scale ds q and dv = p dout over every
// query row of the query heads that share it (grouped-query attention).
// The scores of a (query tile, key tile) pair are computed twice, once for
// each kind. Accumulation in f32 (f64 for f64 data on the CPU). With
// mask_grad the dq items also write dS, the op's dmask result (a trainable
// mask's gradient), and zeros at the keys a causal tile skips.
//
// CPU: the kernel's rows [begin, end) of dq's [B, H, Sq] rows (a third of
// the domain's rows where dq, dk, dv are one packed result), and the same
// share of k's [B, Hkv, Skv] rows, [begin * KR / R, end * KR / R): the
// thread pool's chunks partition both. CUDA: a `pointwise` launch of
// 128 threads whose blocks stride over the query tiles (TQ rows, each warp
// QPW of them) and then the key tiles (TK = 32 keys, one a lane for the
// scores; each warp KPW of them for dk and dv); q, dout, k and v staged in
// shared memory as float. Head dims up to 128 on CUDA (the shared memory
// of one block), 256 on the CPU; past them the op runs on the reference.
// f16/bf16 with even head dims take the tensor-core kernel instead
// (AttentionGradMma.cpp: the same two kinds of item, mma.m16n8k16); this
// blocked one runs f32 and odd head dims.
#include "Attention.h"
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace tc::kernels {

namespace {

constexpr int kCpuTq = 16, kCpuTk = 64;
constexpr unsigned kCudaBlock = 128;

// After `dot` (q.k) and `dp` (dout.v) of query i and key j: the
// probability p and ds, of compute type `T`, given the row's lse `L` and D
// `Dr`. Test-only: TC_TEST_ATTENTION_GRAD_NO_D leaves D out of ds (a wrong
// kernel the numeric tests must catch).
std::string scoreTerms(const KernelContext &c, const AttentionOperands &o, DType t,
                       const std::string &T, const std::string &in, const std::string &L,
                       const std::string &Dr) {
  std::string s = in + T + " s = dot * scale;\n";
  if (o.mask)
    s += in + "s += " + attentionMaskAt(c, t) + ";\n";
  if (o.causal)
    s += in + "if (j > i + SKV - Sq) s = -INF;\n";
  s += in + "const " + T + " p = tc_exp(s - " + L + ");\n";
  s += in + "const " + T + " ds = p * (dp" +
       (std::getenv("TC_TEST_ATTENTION_GRAD_NO_D") ? "" : " - " + Dr) + ");\n";
  return s;
}

// The bases of (b, h) in q, out, dout, lse and the mask, and of (b, hk) in
// k and v; each tensor by its layout's strides (token i of q at q + i *
// QSS, of out at y + i * YSS, of dout at g + i * GSS).
std::string queryBases(const KernelContext &c, DType t) {
  std::string S = c.st(t);
  return "      const " + S + " *q = Q + b * QSB + h * QSH, *y = Y + b * YSB + h * YSH,\n" +
         "                 *g = G + b * GSB + h * GSH;\n" +
         "      const int64_t lrow = (b * H + h) * Sq, mbase = b % MB * ms[0] + h * ms[1];\n" +
         "      (void)mbase;\n";
}
std::string keyBases(const KernelContext &c, DType t) {
  std::string S = c.st(t);
  return "    const " + S + " *k = K + b * KSB + hk * KSH, *v = V + b * VSB + hk * VSH;\n";
}

void emitCpu(std::ostream &os, const KernelContext &c, const AttentionOperands &o, DType t,
             bool packed, bool maskGrad) {
  const char *T = c.ct(t);
  auto L = [&](const std::string &r) { return c.load(t, r); };
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", TQ = " << kCpuTq << ", TK = " << kCpuTk
     << " };\n  const " << T << " INF = " << c.info().inf
     << ", scale = " << floatLiteral(o.scale, t) << ";\n"
     << "  const int64_t R = B * H * Sq, KR = B * HKV * SKV;\n";
  // A packed result's rows (the domain) are 3 R: this call's share of R.
  if (packed)
    os << "  begin /= 3;\n  end /= 3;\n";
  os << "  " << T << " acc[TQ][D], dka[TK][D], dva[TK][DV];\n";
  // D and lse of query row i of (b, h), and the score of key j.
  std::string row = "        const " + std::string(T) + " Lr = LS[lrow + i];\n" +
                    "        if (Lr == -INF) continue; // no visible key: nothing flows\n" +
                    "        " + T + " Dr = 0;\n" +
                    "        for (int64_t x = 0; x < DV; ++x) Dr += " + L("g[i * GSS + x]") +
                    " * " + L("y[i * YSS + x]") + ";\n";
  std::string dots =
      "          " + std::string(T) + " dot = 0, dp = 0;\n" +
      "          TC_REDUCE_LOOP for (int64_t x = 0; x < D; ++x) dot += " + L("q[i * QSS + x]") +
      " * " + L("k[j * KSS + x]") + ";\n" +
      "          TC_REDUCE_LOOP for (int64_t x = 0; x < DV; ++x) dp += " + L("g[i * GSS + x]") +
      " * " + L("v[j * VSS + x]") + ";\n" + scoreTerms(c, o, t, T, "          ", "Lr", "Dr");
  // dq: query tiles of one (b, h), key blocks of TK.
  // dmask: the dq rows' dS (zeros first: the rows and keys nothing flows through).
  std::string dsZero =
      maskGrad ? "        for (int64_t j = 0; j < SKV; ++j) DS[(lrow + i) * SKV + j] = " +
                     c.store(t, "0.f") + ";\n"
               : "";
  std::string dsWrite =
      maskGrad ? "          DS[(lrow + i) * SKV + j] = " + c.store(t, "ds") + ";\n" : "";
  os << "  for (int64_t r0 = begin; r0 < end;) {\n"
     << "    const int64_t bh = r0 / Sq, i0 = r0 - bh * Sq, b = bh / H, h = bh - b * H,\n"
     << "                  hk = h / group;\n"
     << "    int64_t nq = Sq - i0;\n    if (nq > end - r0) nq = end - r0;\n"
     << "    if (nq > TQ) nq = TQ;\n"
     << keyBases(c, t) << "    {\n"
     << queryBases(c, t) << "      int64_t jend = SKV;\n";
  if (o.causal)
    os << "      if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  os << "      for (int64_t r = 0; r < nq; ++r) {\n"
     << "        const int64_t i = i0 + r;\n"
     << "        TC_SIMD_LOOP for (int64_t x = 0; x < D; ++x) acc[r][x] = 0;\n"
     << dsZero << row << "        for (int64_t j = 0; j < jend; ++j) {\n"
     << dots << dsWrite
     << "          TC_SIMD_LOOP for (int64_t x = 0; x < D; ++x) acc[r][x] += ds * "
     << L("k[j * KSS + x]") << ";\n        }\n      }\n"
     << "      for (int64_t r = 0; r < nq; ++r)\n"
     << "        for (int64_t x = 0; x < D; ++x) O[b * OSB + h * OSH + (i0 + r) * OSS + x] = "
     << c.store(t, "acc[r][x] * scale") << ";\n    }\n    r0 += nq;\n  }\n";
  // dk, dv: this call's share of the key rows, in tiles of one (b, hk).
  os << "  const int64_t kb = R > 0 ? begin * KR / R : 0, ke = R > 0 ? end * KR / R : 0;\n"
     << "  for (int64_t r0 = kb; r0 < ke;) {\n"
     << "    const int64_t bk = r0 / SKV, j0 = r0 - bk * SKV, b = bk / HKV, hk = bk - b * HKV;\n"
     << "    int64_t nk = SKV - j0;\n    if (nk > ke - r0) nk = ke - r0;\n"
     << "    if (nk > TK) nk = TK;\n"
     << keyBases(c, t) << "    for (int64_t jj = 0; jj < nk; ++jj) {\n"
     << "      TC_SIMD_LOOP for (int64_t x = 0; x < D; ++x) dka[jj][x] = 0;\n"
     << "      TC_SIMD_LOOP for (int64_t x = 0; x < DV; ++x) dva[jj][x] = 0;\n    }\n"
     << "    for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {\n"
     << queryBases(c, t) << "      int64_t ibeg = 0;\n";
  if (o.causal)
    os << "      if (j0 - (SKV - Sq) > ibeg) ibeg = j0 - (SKV - Sq);\n";
  os << "      for (int64_t i = ibeg; i < Sq; ++i) {\n"
     << row << "        for (int64_t jj = 0; jj < nk; ++jj) {\n"
     << "          const int64_t j = j0 + jj;\n"
     << dots << "          TC_SIMD_LOOP for (int64_t x = 0; x < D; ++x) dka[jj][x] += ds * "
     << L("q[i * QSS + x]") << ";\n"
     << "          TC_SIMD_LOOP for (int64_t x = 0; x < DV; ++x) dva[jj][x] += p * "
     << L("g[i * GSS + x]") << ";\n        }\n      }\n    }\n"
     << "    for (int64_t jj = 0; jj < nk; ++jj) {\n"
     << "      for (int64_t x = 0; x < D; ++x) DK[b * DKSB + hk * DKSH + (j0 + jj) * DKSS + x] = "
     << c.store(t, "dka[jj][x] * scale") << ";\n"
     << "      for (int64_t x = 0; x < DV; ++x) DVo[b * DVSB + hk * DVSH + (j0 + jj) * DVSS + x] = "
     << c.store(t, "dva[jj][x]") << ";\n    }\n    r0 += nk;\n  }\n}\n";
}

void emitCuda(std::ostream &os, const KernelContext &c, const AttentionOperands &o, DType t,
              bool maskGrad) {
  auto L = [&](const std::string &r) { return c.load(t, r); };
  os << "  enum { D = " << o.d << ", DV = " << o.dv
     << ", TQ = 8, TK = 32, QPW = TQ / 4, KPW = TK / 4, ND = (D + 31) / 32, NV = (DV + 31) / 32 "
        "};\n"
     << "  const float INF = " << c.info().inf << ", scale = " << floatLiteral(o.scale, DType::F32)
     << ";\n"
     << "  __shared__ float Qs[TQ][D], Gs[TQ][DV], Ks[TK][D + 1], Vs[TK][DV + 1], Ps[TQ][TK],\n"
     << "      Ss[TQ][TK], Lq[TQ], Dq[TQ];\n"
     << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
     << "  const int64_t qtiles = (Sq + TQ - 1) / TQ, ktiles = (SKV + TK - 1) / TK;\n"
     << "  const int64_t qitems = B * H * qtiles, items = qitems + B * HKV * ktiles;\n";
  // Staging (block-wide): rows [i0, i0 + nq) of q and dout, their lse and
  // D (a warp a row); keys [j0, j0 + nk) of k and v. Zeros past the ends.
  std::string stageRows =
      "        for (int e = threadIdx.x; e < TQ * D; e += blockDim.x) {\n"
      "          const int r = e / D, x = e - r * D;\n"
      "          Qs[r][x] = r < nq ? " +
      L("q[(i0 + r) * QSS + x]") +
      " : 0.f;\n        }\n"
      "        for (int e = threadIdx.x; e < TQ * DV; e += blockDim.x) {\n"
      "          const int r = e / DV, x = e - r * DV;\n"
      "          Gs[r][x] = r < nq ? " +
      L("g[(i0 + r) * GSS + x]") +
      " : 0.f;\n        }\n"
      "        for (int r = warp; r < TQ; r += 4) {\n"
      "          float d = 0.f;\n"
      "          if (r < nq)\n"
      "            for (int x = lane; x < DV; x += 32) d += " +
      L("g[(i0 + r) * GSS + x]") + " * " + L("y[(i0 + r) * YSS + x]") +
      ";\n"
      "          for (int w = 16; w > 0; w >>= 1) d += __shfl_xor_sync(0xffffffffu, d, w);\n"
      "          if (lane == 0) {\n"
      "            Dq[r] = d;\n"
      "            Lq[r] = r < nq ? (float)LS[lrow + i0 + r] : -INF;\n"
      "          }\n        }\n";
  std::string stageKeys = "        for (int e = threadIdx.x; e < TK * D; e += blockDim.x) {\n"
                          "          const int jj = e / D, x = e - jj * D;\n"
                          "          Ks[jj][x] = jj < nk ? " +
                          L("k[(j0 + jj) * KSS + x]") +
                          " : 0.f;\n        }\n"
                          "        for (int e = threadIdx.x; e < TK * DV; e += blockDim.x) {\n"
                          "          const int jj = e / DV, x = e - jj * DV;\n"
                          "          Vs[jj][x] = jj < nk ? " +
                          L("v[(j0 + jj) * VSS + x]") + " : 0.f;\n        }\n";
  // The tile's p and ds: each warp its QPW rows, a lane a key.
  std::string scores = "#pragma unroll\n"
                       "        for (int u = 0; u < QPW; ++u) {\n"
                       "          const int r = warp * QPW + u;\n"
                       "          const int64_t i = i0 + r, j = j0 + lane;\n"
                       "          float pr = 0.f, dsr = 0.f;\n"
                       "          if (r < nq && lane < nk && Lq[r] != -INF) {\n"
                       "            float dot = 0.f, dp = 0.f;\n"
                       "            for (int x = 0; x < D; ++x) dot += Qs[r][x] * Ks[lane][x];\n"
                       "            for (int x = 0; x < DV; ++x) dp += Gs[r][x] * Vs[lane][x];\n" +
                       scoreTerms(c, o, t, "float", "            ", "Lq[r]", "Dq[r]") +
                       "            pr = p;\n            dsr = ds;\n          }\n"
                       "          Ps[r][lane] = pr;\n          Ss[r][lane] = dsr;\n        }\n";
  os << "  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {\n"
     << "    __syncthreads(); // the previous item's reads of shared memory are done\n"
     << "    if (item < qitems) { // dq of TQ query rows of (b, h)\n"
     << "      const int64_t bh = item / qtiles, i0 = (item - bh * qtiles) * TQ;\n"
     << "      const int64_t b = bh / H, h = bh - b * H, hk = h / group;\n"
     << "      const int nq = Sq - i0 < TQ ? (int)(Sq - i0) : TQ;\n"
     << keyBases(c, t) << queryBases(c, t) << "      {\n"
     << stageRows << "      }\n"
     << "      float acc[QPW][ND];\n"
     << "#pragma unroll\n"
     << "      for (int u = 0; u < QPW; ++u)\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < ND; ++n) acc[u][n] = 0.f;\n"
     << "      int64_t jend = SKV;\n";
  if (o.causal)
    os << "      if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  os << "      for (int64_t j0 = 0; j0 < jend; j0 += TK) {\n"
     << "        const int nk = jend - j0 < TK ? (int)(jend - j0) : TK;\n"
     << "        __syncthreads(); // the previous block's reads of Ks, Vs, Ss are done\n"
     << stageKeys << "        __syncthreads();\n"
     << scores << "        __syncthreads();\n";
  if (maskGrad) // dmask: the tile's dS (0 where no row's lse is finite)
    os << "        for (int e = threadIdx.x; e < TQ * TK; e += blockDim.x) {\n"
       << "          const int r = e / TK, jj = e - r * TK;\n"
       << "          if (r < nq && jj < nk) DS[(lrow + i0 + r) * SKV + j0 + jj] = "
       << c.store(t, "Ss[r][jj]") << ";\n        }\n";
  os << "#pragma unroll\n"
     << "        for (int u = 0; u < QPW; ++u)\n"
     << "#pragma unroll\n"
     << "          for (int n = 0; n < ND; ++n) {\n"
     << "            if (lane + 32 * n >= D) continue;\n"
     << "            for (int jj = 0; jj < nk; ++jj)\n"
     << "              acc[u][n] += Ss[warp * QPW + u][jj] * Ks[jj][lane + 32 * n];\n"
     << "          }\n      }\n";
  if (maskGrad && o.causal)
    os << attentionGradDmaskTail(c, t);
  os << "#pragma unroll\n"
     << "      for (int u = 0; u < QPW; ++u) {\n"
     << "        const int r = warp * QPW + u;\n"
     << "        if (r >= nq) continue;\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < ND; ++n)\n"
     << "          if (lane + 32 * n < D) O[b * OSB + h * OSH + (i0 + r) * OSS + lane + 32 * n] = "
     << c.store(t, "acc[u][n] * scale") << ";\n      }\n"
     << "    } else { // dk, dv of TK keys of (b, hk)\n"
     << "      const int64_t it = item - qitems, bk = it / ktiles, j0 = (it - bk * ktiles) * TK;\n"
     << "      const int64_t b = bk / HKV, hk = bk - b * HKV;\n"
     << "      const int nk = SKV - j0 < TK ? (int)(SKV - j0) : TK;\n"
     << keyBases(c, t) << stageKeys << "      float dka[KPW][ND], dva[KPW][NV];\n"
     << "#pragma unroll\n"
     << "      for (int w = 0; w < KPW; ++w) {\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < ND; ++n) dka[w][n] = 0.f;\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < NV; ++n) dva[w][n] = 0.f;\n      }\n"
     << "      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {\n"
     << queryBases(c, t) << "      int64_t ibeg = 0;\n";
  if (o.causal)
    os << "      if (j0 - (SKV - Sq) > ibeg) ibeg = j0 - (SKV - Sq);\n";
  os << "      for (int64_t i0 = ibeg; i0 < Sq; i0 += TQ) {\n"
     << "        const int nq = Sq - i0 < TQ ? (int)(Sq - i0) : TQ;\n"
     << "        __syncthreads(); // the previous tile's reads of Qs, Gs, Ps, Ss are done\n"
     << stageRows << "        __syncthreads();\n"
     << scores << "        __syncthreads();\n"
     << "#pragma unroll\n"
     << "        for (int w = 0; w < KPW; ++w) {\n"
     << "          const int jj = warp * KPW + w;\n"
     << "#pragma unroll\n"
     << "          for (int n = 0; n < ND; ++n)\n"
     << "            if (lane + 32 * n < D)\n"
     << "              for (int r = 0; r < nq; ++r) dka[w][n] += Ss[r][jj] * Qs[r][lane + 32 * "
        "n];\n"
     << "#pragma unroll\n"
     << "          for (int n = 0; n < NV; ++n)\n"
     << "            if (lane + 32 * n < DV)\n"
     << "              for (int r = 0; r < nq; ++r) dva[w][n] += Ps[r][jj] * Gs[r][lane + 32 * "
        "n];\n"
     << "        }\n      }\n      }\n"
     << "#pragma unroll\n"
     << "      for (int w = 0; w < KPW; ++w) {\n"
     << "        const int jj = warp * KPW + w;\n"
     << "        if (jj >= nk) continue;\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < ND; ++n)\n"
     << "          if (lane + 32 * n < D) DK[b * DKSB + hk * DKSH + (j0 + jj) * DKSS + lane + 32 * "
        "n] = "
     << c.store(t, "dka[w][n] * scale") << ";\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < NV; ++n)\n"
     << "          if (lane + 32 * n < DV) DVo[b * DVSB + hk * DVSH + (j0 + jj) * DVSS + lane + 32 "
        "* n] = "
     << c.store(t, "dva[w][n]") << ";\n      }\n    }\n  }\n}\n";
}

} // namespace

std::string attentionGradDmaskTail(const KernelContext &c, DType t) {
  return "      for (int64_t e = threadIdx.x; e < nq * (SKV - jend); e += blockDim.x) {\n"
         "        const int64_t r = e / (SKV - jend);\n"
         "        DS[(lrow + i0 + r) * SKV + jend + e - r * (SKV - jend)] = " +
         c.store(t, "0.f") + ";\n      }\n";
}

std::optional<EmittedKernel> emitAttentionGrad(const KernelContext &c, const Op &op) {
  std::optional<AttentionOperands> found =
      attentionOperands(c, op, c.cuda() ? kCudaAttentionGradMaxHeadDim : 256);
  if (!found)
    return std::nullopt;
  const AttentionOperands &o = *found;
  DType t = o.q->type.dtype;
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  os << "// group @" << c.f.name << ": AttentionGrad, head dims " << o.d << " / " << o.dv << "\n";
  const bool mma = c.cuda() && attentionGradMmaApplies(o, t);
  if (mma)
    os << attentionMmaHelpers(t);
  c.emitSignature(os, symbol, kCudaBlock);
  emitAttentionSetup(os, c, o, t); // O: dq
  const char *S = c.st(t), *LT = c.st(op.operand(6)->type.dtype);
  size_t nargs = c.f.args.size();
  const bool packed = attentionGradPacked(op); // dq, dk, dv parts of one result
  // Where part p of the packed result starts.
  auto partOffset = [&](const Value *v, const AttentionAxes &a) {
    std::string e;
    for (size_t x = a.partAxis + 1; x < v->type.rank(); ++x)
      e += " * " + c.dim(v, x);
    return a.part > 0 ? " + " + std::to_string(a.part) + e : std::string();
  };
  os << "  const " << S << " *__restrict Y = (const " << S << " *)bufs["
     << c.argIndex(op.operand(4)) << "];\n"
     << "  const " << S << " *__restrict G = (const " << S << " *)bufs["
     << c.argIndex(op.operand(5)) << "];\n"
     << "  const " << LT << " *__restrict LS = (const " << LT << " *)bufs["
     << c.argIndex(op.operand(6)) << "];\n"
     << "  " << S << " *__restrict DK = (" << S << " *)bufs[" << nargs + (packed ? 0 : 1) << "]"
     << partOffset(o.dkOut, o.gradAxes[2]) << ";\n"
     << "  " << S << " *__restrict DVo = (" << S << " *)bufs[" << nargs + (packed ? 0 : 2) << "]"
     << partOffset(o.dvOut, o.gradAxes[3]) << ";\n";
  // dmask (mask_grad): the dq items write dS. Test-only:
  // TC_TEST_ATTENTION_GRAD_NO_DMASK writes none (a wrong kernel the numeric
  // tests must catch).
  const int dmaskAt = attentionGradMaskResult(op);
  const bool maskGrad = dmaskAt >= 0 && !std::getenv("TC_TEST_ATTENTION_GRAD_NO_DMASK");
  if (maskGrad)
    os << "  " << S << " *__restrict DS = (" << S << " *)bufs[" << nargs + size_t(dmaskAt)
       << "];\n";
  if (mma)
    emitAttentionGradMma(os, c, o, t, maskGrad);
  else if (c.cuda())
    emitCuda(os, c, o, t, maskGrad);
  else
    emitCpu(os, c, o, t, packed, maskGrad);
  EmittedKernel k = c.kernel(symbol, os.str());
  if (c.cuda()) { // blocks stride over the work items: about one each
    k.block = kCudaBlock;
    k.vec = mma ? attentionGradMmaVec(o)
                : unsigned(std::max<int64_t>(1, (packed ? 3 : 1) * 8 * o.d / int64_t(kCudaBlock)));
    k.halfTypes = c.usesHalf();
  }
  return k;
}

} // namespace tc::kernels
