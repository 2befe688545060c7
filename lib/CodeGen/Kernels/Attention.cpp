// The Attention family: tc's fused Attention op (Ops.def), flash-attention
// style in both dialects (its gradient, AttentionGrad: AttentionGrad.cpp). Per query tile: scores
// against one key block at a time, an online softmax (running max m and sum l per query; the
// partial output rescaled by exp(m_old - m_new) when the max grows), f32 accumulation (f64 for f64
// data), and no Sq x Skv scores in memory. A query row whose keys are all masked (-inf) writes 0,
// as the reference. With a second result the row's log-sum-exp m + log(l) goes there (-inf for such
// a row).
//
// Every tensor is read and written through its layout's strides
// (AttentionLayout.h): [B, H, S, D], [B, S, H, D] or a part of a packed
// qkv projection are one kernel; features stay contiguous.
// CPU: rows [begin, end) of the result as [B, H, Sq] rows in tiles of
// kCpuTq queries of one (batch, head), key blocks of kCpuTk.
// CUDA, few queries over many keys (a decode step): the split-key kernel
// (AttentionDecode.cpp). f16/bf16: the tensor-core kernel (AttentionMma.cpp). Otherwise
// (f32):
// a `pointwise` launch (blocks stride over the tiles) of 128 threads,
// 4 warps of kQpw queries each; a key block of TK keys (one per lane) and
// its values staged in shared memory as float; lanes own the output columns
// c = lane + 32 n. Plain CUDA C++ (shared memory, __shfl_xor_sync,
// __syncthreads block-uniformly): it runs on the host emulation
// (test/CodeGen/Inputs/cuda_host_shim.h).
#include "Attention.h"
#include <algorithm>
#include <cmath>
#include <sstream>

namespace tc::kernels {

namespace {

constexpr int kCpuTq = 16, kCpuTk = 64;
constexpr unsigned kCudaBlock = 128;

using Operands = AttentionOperands;

// The element stride of `axis` of `v` (row-major) as a kernel expression.
std::string strideExpr(const KernelContext &c, const Value *v, size_t axis) {
  std::string e;
  for (size_t a = axis + 1; a < v->type.rank(); ++a)
    e += (e.empty() ? "" : " * ") + c.dim(v, a);
  return e.empty() ? "(int64_t)1" : "(int64_t)" + e;
}

} // namespace

void emitAttentionSetup(std::ostream &os, const KernelContext &c, const Operands &o, DType t) {
  const char *S = c.st(t);
  const Value *vals[4] = {o.q, o.k, o.v, o.out};
  auto ptr = [&](const char *name, const Value *v, const AttentionAxes *a) {
    os << "  const " << S << " *__restrict " << name << " = (const " << S << " *)bufs["
       << c.argIndex(v) << "]";
    if (a && a->part > 0)
      os << " + " << a->part << " * " << strideExpr(c, v, a->partAxis);
    os << ";\n";
  };
  ptr("Q", o.q, &o.axes[0]);
  ptr("K", o.k, &o.axes[1]);
  ptr("V", o.v, &o.axes[2]);
  if (o.mask)
    ptr("M", o.mask, nullptr);
  os << "  " << S << " *__restrict O = (" << S << " *)bufs[" << c.f.args.size() << "]";
  if (o.axes[3].part > 0) // AttentionGrad's dq as a part of its packed result
    os << " + " << o.axes[3].part << " * " << strideExpr(c, o.out, o.axes[3].partAxis);
  os << ";\n";
  if (o.lse) {
    const char *L = c.st(o.lse->type.dtype);
    os << "  " << L << " *__restrict LSE = (" << L << " *)bufs[" << c.f.args.size() + 1 << "];\n";
  }
  const AttentionAxes &qa = o.axes[0], &ka = o.axes[1], &va = o.axes[2], &oa = o.axes[3];
  os << "  const int64_t B = " << c.dim(o.out, oa.batch) << ", H = " << c.dim(o.out, oa.heads)
     << ", Sq = " << c.dim(o.out, oa.tokens) << ", QB = " << c.dim(o.q, qa.batch)
     << ", KB = " << c.dim(o.k, ka.batch) << ", VB = " << c.dim(o.v, va.batch)
     << ", HKV = " << c.dim(o.k, ka.heads) << ", SKV = " << c.dim(o.k, ka.tokens)
     << ";\n  const int64_t group = H / (HKV > 0 ? HKV : 1);\n  (void)B;\n";
  auto strides = [&](const char *name, const Value *v, const AttentionAxes &a) {
    os << "  const int64_t " << name << "SB = " << strideExpr(c, v, a.batch) << ", " << name
       << "SH = " << strideExpr(c, v, a.heads) << ", " << name
       << "SS = " << strideExpr(c, v, a.tokens) << ";\n";
  };
  const char *names[4] = {"Q", "K", "V", "O"};
  for (size_t i = 0; i < 4; ++i)
    strides(names[i], vals[i], o.axes[i]);
  if (o.y) {
    const Value *grad[4] = {o.y, o.g, o.dkOut, o.dvOut};
    const char *gradNames[4] = {"Y", "G", "DK", "DV"};
    for (size_t i = 0; i < 4; ++i)
      strides(gradNames[i], grad[i], o.gradAxes[i]);
  }
  // Mask strides over (b, h, i, j), 0 on broadcast axes (right-aligned),
  // and its batch MB (batch b reads b % MB: 1, B, or swin's windows).
  os << "  int64_t ms[4] = {0, 0, 0, 0}, MB = 1;\n";
  if (o.mask) {
    size_t r = o.mask->type.rank();
    if (r == 4)
      os << "  MB = " << c.dim(o.mask, 0) << ";\n";
    os << "  { int64_t s = 1;\n";
    for (size_t a = r; a-- > 0;)
      os << "    ms[" << 4 - r + a << "] = " << c.dim(o.mask, a)
         << " == 1 ? 0 : s; s *= " << c.dim(o.mask, a) << ";\n";
    os << "  }\n";
  }
}

std::string attentionMaskAt(const KernelContext &c, DType t) {
  return c.load(t, "M[mbase + i * ms[2] + j * ms[3]]");
}

std::string attentionBases(const KernelContext &c, DType t) {
  std::string S = c.st(t);
  return "    const " + S + " *q = Q + (QB == 1 ? 0 : b) * QSB + h * QSH + i0 * QSS;\n" +
         "    const " + S + " *k = K + (KB == 1 ? 0 : b) * KSB + (h / group) * KSH;\n" +
         "    const " + S + " *v = V + (VB == 1 ? 0 : b) * VSB + (h / group) * VSH;\n" +
         // Once per (b, h): a 64-bit b % MB per score made beit's kernel 1.7x slower.
         "    const int64_t mbase = b % MB * ms[0] + h * ms[1];\n    (void)mbase;\n";
}

namespace {

// With the lse result: row `row` of (b, h) gets m + log(l), -inf where no
// key was visible (l = 0).
std::string lseStore(const Operands &o, const std::string &indent, const std::string &l,
                     const std::string &m, const std::string &row) {
  if (!o.lse)
    return "";
  return indent + "LSE[(b * H + h) * Sq + " + row + "] = " + l + " > 0 ? " + m + " + tc_log(" + l +
         ") : -INF;\n";
}

// The score's mask and causal terms for query i, key j (in `s`).
std::string maskTerms(const KernelContext &c, const Operands &o, DType t, const std::string &s) {
  std::string code;
  if (o.mask)
    code += "        " + s + " += " + attentionMaskAt(c, t) + ";\n";
  if (o.causal)
    code += "        if (j > i + SKV - Sq) " + s + " = -INF;\n";
  return code;
}

void emitCpu(std::ostream &os, const KernelContext &c, const Operands &o, DType t) {
  const char *T = c.ct(t);
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", TQ = " << kCpuTq << ", TK = " << kCpuTk
     << " };\n  const " << T << " INF = " << c.info().inf
     << ", scale = " << floatLiteral(o.scale, t) << ";\n";
  os << "  " << T << " qt[TQ][D], s[TQ][TK], acc[TQ][DV], m[TQ], l[TQ];\n";
  os << "  for (int64_t r0 = begin; r0 < end;) {\n"
     << "    const int64_t bh = r0 / Sq, i0 = r0 - bh * Sq, b = bh / H, h = bh - b * H;\n"
     << "    int64_t nq = Sq - i0;\n    if (nq > end - r0) nq = end - r0;\n"
     << "    if (nq > TQ) nq = TQ;\n"
     << attentionBases(c, t) << "    for (int64_t r = 0; r < nq; ++r) {\n"
     << "      m[r] = -INF;\n      l[r] = 0;\n"
     << "      TC_SIMD_LOOP for (int64_t x = 0; x < D; ++x) qt[r][x] = "
     << c.load(t, "q[r * QSS + x]") << " * scale;\n"
     << "      TC_SIMD_LOOP for (int64_t x = 0; x < DV; ++x) acc[r][x] = 0;\n    }\n";
  os << "    int64_t jend = SKV;\n";
  if (o.causal)
    os << "    if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  os << "    for (int64_t j0 = 0; j0 < jend; j0 += TK) {\n"
     << "      const int64_t nk = jend - j0 < TK ? jend - j0 : TK;\n"
     << "      for (int64_t r = 0; r < nq; ++r) {\n"
     << "        const int64_t i = i0 + r;\n        " << T << " mx = -INF;\n"
     << "        for (int64_t jj = 0; jj < nk; ++jj) {\n"
     << "          const int64_t j = j0 + jj;\n"
     << "          " << T << " dot = 0;\n"
     << "          TC_REDUCE_LOOP for (int64_t x = 0; x < D; ++x) dot += qt[r][x] * "
     << c.load(t, "k[j * KSS + x]") << ";\n"
     << maskTerms(c, o, t, "dot") << "          s[r][jj] = dot;\n"
     << "          mx = dot > mx ? dot : mx;\n        }\n"
     << "        if (mx == -INF) continue; // no visible key in this block\n"
     << "        if (mx < m[r]) mx = m[r];\n"
     << "        const " << T << " corr = tc_exp(m[r] - mx); // rescale to the new max\n"
     << "        m[r] = mx;\n        l[r] *= corr;\n"
     << "        TC_SIMD_LOOP for (int64_t x = 0; x < DV; ++x) acc[r][x] *= corr;\n"
     << "        for (int64_t jj = 0; jj < nk; ++jj) {\n"
     << "          const " << T << " p = tc_exp(s[r][jj] - mx);\n          l[r] += p;\n"
     << "          const " << c.st(t) << " *vj = v + (j0 + jj) * VSS;\n"
     << "          TC_SIMD_LOOP for (int64_t x = 0; x < DV; ++x) acc[r][x] += p * "
     << c.load(t, "vj[x]") << ";\n        }\n      }\n    }\n";
  os << "    for (int64_t r = 0; r < nq; ++r) {\n"
     << "      const " << T << " inv = l[r] > 0 ? " << T << "(1) / l[r] : " << T << "(0);\n"
     << "      for (int64_t x = 0; x < DV; ++x) O[b * OSB + h * OSH + (i0 + r) * OSS + x] = "
     << c.store(t, "acc[r][x] * inv") << ";\n"
     << lseStore(o, "      ", "l[r]", "m[r]", "i0 + r") << "    }\n    r0 += nq;\n  }\n}\n";
}

void emitCuda(std::ostream &os, const KernelContext &c, const Operands &o, DType t) {
  int64_t qpw = o.d <= 128 && o.dv <= 128 ? 4 : 2, tk = o.d <= 128 && o.dv <= 128 ? 32 : 16;
  os << "  enum { D = " << o.d << ", DV = " << o.dv << ", QPW = " << qpw
     << ", TQ = 4 * QPW, TK = " << tk << ", NC = (DV + 31) / 32 };\n"
     << "  const float INF = " << c.info().inf << ", scale = " << floatLiteral(o.scale, DType::F32)
     << ";\n"
     << "  __shared__ float Qs[TQ][D], Ks[TK][D + 1], Vs[TK][DV], Ps[TQ][TK];\n"
     << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
     << "  const int64_t qtiles = (Sq + TQ - 1) / TQ, tiles = B * H * qtiles;\n"
     << "  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {\n"
     << "    const int64_t bh = tile / qtiles, i0 = (tile - bh * qtiles) * TQ;\n"
     << "    const int64_t b = bh / H, h = bh - b * H;\n"
     << "    const int nq = Sq - i0 < TQ ? (int)(Sq - i0) : TQ;\n"
     << attentionBases(c, t) << "    __syncthreads(); // the previous tile's reads of Qs are done\n"
     << "    for (int e = threadIdx.x; e < TQ * D; e += blockDim.x) {\n"
     << "      const int r = e / D, x = e - r * D;\n"
     << "      Qs[r][x] = r < nq ? " << c.load(t, "q[(int64_t)r * QSS + x]") << " * scale : 0.f;\n"
     << "    }\n"
     << "    float m[QPW], l[QPW], acc[QPW][NC];\n"
     << "#pragma unroll\n"
     << "    for (int u = 0; u < QPW; ++u) {\n      m[u] = -INF;\n      l[u] = 0.f;\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NC; ++n) acc[u][n] = 0.f;\n    }\n"
     << "    int64_t jend = SKV;\n";
  if (o.causal)
    os << "    if (jend > i0 + nq + SKV - Sq) jend = i0 + nq + SKV - Sq;\n";
  os << "    for (int64_t j0 = 0; j0 < jend; j0 += TK) {\n"
     << "      const int nk = jend - j0 < TK ? (int)(jend - j0) : TK;\n"
     << "      __syncthreads(); // the previous block's reads of Ks, Vs, Ps are done\n"
     << "      for (int e = threadIdx.x; e < TK * D; e += blockDim.x) {\n"
     << "        const int jj = e / D, x = e - jj * D;\n"
     << "        Ks[jj][x] = jj < nk ? " << c.load(t, "k[(j0 + jj) * KSS + x]") << " : 0.f;\n"
     << "      }\n"
     << "      for (int e = threadIdx.x; e < TK * DV; e += blockDim.x) {\n"
     << "        const int jj = e / DV, x = e - jj * DV;\n"
     << "        Vs[jj][x] = jj < nk ? " << c.load(t, "v[(j0 + jj) * VSS + x]") << " : 0.f;\n"
     << "      }\n      __syncthreads();\n"
     // Each lane's key against the warp's QPW queries: one Ks load per
     // QPW FMAs.
     << "      float dots[QPW];\n"
     << "#pragma unroll\n"
     << "      for (int u = 0; u < QPW; ++u) dots[u] = 0.f;\n"
     << "      if (lane < nk)\n"
     << "        for (int x = 0; x < D; ++x) {\n"
     << "          const float kx = Ks[lane][x];\n"
     << "#pragma unroll\n"
     << "          for (int u = 0; u < QPW; ++u) dots[u] += Qs[warp * QPW + u][x] * kx;\n"
     << "        }\n"
     << "#pragma unroll\n"
     << "      for (int u = 0; u < QPW; ++u) {\n"
     << "        const int r = warp * QPW + u;\n"
     << "        const int64_t i = i0 + r, j = j0 + lane;\n"
     << "        float sc = -INF;\n"
     << "        if (lane < nk && r < nq) {\n"
     << "          sc = dots[u];\n"
     << maskTerms(c, o, t, "sc") << "        }\n"
     << "        float mx = sc;\n"
     << "        for (int w = 16; w > 0; w >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, "
        "w));\n"
     << "        const float mn = fmaxf(m[u], mx);\n"
     << "        const float p = mn == -INF ? 0.f : tc_exp(sc - mn);\n"
     << "        const float corr = m[u] == -INF ? 0.f : tc_exp(m[u] - mn);\n"
     << "        float ps = p;\n"
     << "        for (int w = 16; w > 0; w >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, w);\n"
     << "        l[u] = l[u] * corr + ps;\n        m[u] = mn;\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < NC; ++n) acc[u][n] *= corr;\n"
     << "        if (lane < TK) Ps[r][lane] = p;\n      }\n"
     << "      __syncthreads();\n"
     // One Vs load per QPW FMAs (Ps reads are broadcasts).
     << "      for (int jj = 0; jj < nk; ++jj)\n"
     << "#pragma unroll\n"
     << "        for (int n = 0; n < NC; ++n) {\n"
     << "          if (lane + 32 * n >= DV) continue;\n"
     << "          const float vx = Vs[jj][lane + 32 * n];\n"
     << "#pragma unroll\n"
     << "          for (int u = 0; u < QPW; ++u) acc[u][n] += Ps[warp * QPW + u][jj] * vx;\n"
     << "        }\n    }\n"
     << "#pragma unroll\n"
     << "    for (int u = 0; u < QPW; ++u) {\n      const int r = warp * QPW + u;\n"
     << "      if (r >= nq) continue;\n"
     << "      const float inv = l[u] > 0.f ? 1.f / l[u] : 0.f;\n"
     << (o.lse ? "      if (lane == 0)\n" + lseStore(o, "  ", "l[u]", "m[u]", "i0 + r") : "")
     << "      " << c.st(t) << " *out = O + b * OSB + h * OSH + (i0 + r) * OSS;\n"
     << "#pragma unroll\n"
     << "      for (int n = 0; n < NC; ++n)\n"
     << "        if (lane + 32 * n < DV) out[lane + 32 * n] = " << c.store(t, "acc[u][n] * inv")
     << ";\n    }\n  }\n}\n";
}

} // namespace

std::optional<AttentionOperands> attentionOperands(const KernelContext &c, const Op &op,
                                                   int64_t maxHeadDim) {
  bool grad = op.is(OpKind::AttentionGrad);
  AttentionOperands o;
  o.q = op.operand(0);
  o.k = op.operand(1);
  o.v = op.operand(2);
  o.mask = op.operand(3);
  o.out = op.result();
  o.causal = op.getInt("causal") != 0;
  o.lse = !grad && op.results.size() > 1 ? op.result(1) : nullptr;
  for (size_t i = 0; i < 4; ++i)
    o.axes[i] = attentionAxes(op, grad && i == 3 ? kAttnDq : i);
  if (grad) {
    o.y = op.operand(4);
    o.g = op.operand(5);
    const bool packed = attentionGradPacked(op); // dq, dk, dv parts of one result
    o.dkOut = op.result(packed ? 0 : 1);
    o.dvOut = op.result(packed ? 0 : 2);
    for (size_t i = 0; i < 4; ++i)
      o.gradAxes[i] = attentionAxes(op, i < 2 ? kAttnOut + i : kAttnDk + i - 2);
  }
  const char *what = grad ? "attention gradient" : "attention";
  if (c.f.ops.size() != 1 || c.f.results.empty() || c.f.results[0] != op.result() ||
      (c.f.results.size() != op.results.size() && (grad || c.f.results.size() != 1)))
    return c.reject(std::string(what) + " fused with other ops");
  // A forward whose log-sum-exp nothing reads (a train step whose backward
  // recomputes through GEMMs) writes its output alone.
  if (c.f.results.size() == 1)
    o.lse = nullptr;
  for (const Value *v : op.operands)
    if (v && c.argIndex(v) == SIZE_MAX)
      return c.reject("an " + std::string(what) +
                      " operand that is no kernel argument (a constant)");
  DType t = o.q->type.dtype;
  const Dim &qd = o.q->type.shape.back(), &vd = o.v->type.shape.back(); // features are last
  if (!isFloat(t) || !c.st(t) || (c.cuda() && t == DType::F64))
    return c.reject(std::string(what) + " on " + o.q->type.str());
  if (!qd.isStatic() || !vd.isStatic() || qd.size < 1 || qd.size > maxHeadDim || vd.size < 1 ||
      vd.size > maxHeadDim)
    return c.reject(std::string(what) + " with head dims other than static 1.." +
                    std::to_string(maxHeadDim));
  o.d = qd.size;
  o.dv = vd.size;
  o.scale = attentionScale(op, o.d);
  return o;
}

std::optional<EmittedKernel> emitAttention(const KernelContext &c, const KernelClass &cls) {
  if (!cls.anchor || !(cls.anchor->is(OpKind::Attention) || cls.anchor->is(OpKind::AttentionGrad)))
    return c.reject("no Attention op in the group");
  const Op &op = *cls.anchor;
  if (op.is(OpKind::AttentionGrad))
    return emitAttentionGrad(c, op);
  std::optional<Operands> found = attentionOperands(c, op, 256);
  if (!found)
    return std::nullopt;
  Operands &o = *found;
  DType t = o.q->type.dtype;
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  os << "// group @" << c.f.name << ": Attention, head dims " << o.d << " / " << o.dv << "\n";
  // The log-sum-exp result (a train step's forward): the f32-FMA and
  // tensor-core kernels write it; the split-key kernel does not (a decode
  // step is no train step's).
  const std::optional<AttentionDecodeShape> split =
      c.cuda() && !o.lse ? attentionDecodeShape(o, t) : std::nullopt;
  if (split) {
    c.emitSignature(os, symbol, split->block, /*scratch=*/true);
    emitAttentionSetup(os, c, o, t);
    emitAttentionDecode(os, c, o, t, *split);
    EmittedKernel k = c.kernel(symbol, os.str());
    k.launch = LaunchKind::Columns;
    k.block = split->block;
    k.vec = kAttentionDecodeGrid;
    k.halfTypes = c.usesHalf();
    return k;
  }
  const bool mma = c.cuda() && attentionMmaApplies(o, t);
  if (mma)
    os << attentionMmaHelpers(t);
  c.emitSignature(os, symbol, kCudaBlock);
  emitAttentionSetup(os, c, o, t);
  if (mma)
    emitAttentionMma(os, c, o, t);
  else if (c.cuda())
    emitCuda(os, c, o, t);
  else
    emitCpu(os, c, o, t);
  EmittedKernel k = c.kernel(symbol, os.str());
  if (c.cuda()) { // blocks stride over B * H * ceil(Sq / TQ) query tiles: about one each
    int64_t tq = 4 * (o.d <= 128 && o.dv <= 128 ? 4 : 2);
    k.block = kCudaBlock;
    k.vec =
        mma ? attentionMmaVec(o) : unsigned(std::max<int64_t>(1, tq * o.dv / int64_t(kCudaBlock)));
    k.halfTypes = c.usesHalf();
  }
  return k;
}

} // namespace tc::kernels
