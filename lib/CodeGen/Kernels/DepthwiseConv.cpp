// The DepthwiseConv family (CUDA): a grouped Conv (group > 1; depthwise
// when each group has one input channel, any channel multiplier) and the
// group's pointwise epilogue (bias, BN's scale/shift, activation, residual
// add) in one kernel, 1-D or 2-D, NHWC (channels_last, OHWI weights) or
// NCHW, f32 / f16 / bf16 computed in float. Which convs take it instead of
// cuDNN is the backend's rule (CudaCodegen.cpp: convTakesKernel).
//
// Each thread computes TW output pixels along W for VC channels: per kernel
// row it keeps the row's KW taps of its channels in registers and reads
// each input column the TW outputs share once; the loops over taps and
// columns are unrolled on compile-time sizes, so which (column, output)
// pairs meet is decided by the compiler. Results are written once, through
// the epilogue, accumulated in float. Two forms:
//
// - Tiled (2-D NHWC depthwise, multiplier 1: every such conv in the zoo).
//   A block owns a TY x (TX * TW) tile of output pixels for a chunk of CC
//   channels: it stages the tile's input (halo and padding included) in
//   shared memory with 16-byte loads, and the chunk's filter, transposed to
//   channels-fastest, once; every thread then reads only shared memory
//   (VC = 2 halves or 1 float: one 4-byte word, adjacent threads adjacent
//   words). Reading the input and the weights once per tile rather than
//   once per output is meant to bring it to the memory roofline (issue 18;
//   utils/dwconv-bench.py measures it).
// - Per thread (the rest: NCHW, 1-D, channel multipliers, grouped convs):
//   no shared memory, the input read through the caches (NHWC: VC channels
//   of 16 bytes, adjacent threads adjacent vectors; NCHW: VC = 1, adjacent
//   threads adjacent pixel tiles).
#include "Families.h"
#include "Window.h"
#include "tc/CodeGen/LibraryCall.h"
#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <sstream>

namespace tc::kernels {

namespace {

// Output pixels per thread along W (the tiled form: twice that at stride 1).
constexpr int64_t kTileW = 4;
// The tiled form's shared memory at most (of the 48 KiB a block may take
// statically): several blocks per SM.
constexpr int64_t kTileSmem = 40 * 1024;

int64_t staticDim(const Value *v, size_t d) { return v->type.shape[d].size; }

// The tiled form's shape: TC threads along channels (VC each), TY x TX
// along the output tile (TW pixels each), LV elements per global load, the
// shared input tile's R rows of Q pixels at a pitch of RP elements, the
// filter's pitch WP (taps per channel vector).
struct Tiles {
  int64_t vc, tc, ty, tx, tw, lv, r, q, rp, wp, block, smem;
};

// Lanes of warp 0 reading input column 0 of their first row: how many
// distinct 4-byte words the busiest bank serves (1: no conflict).
int64_t bankConflicts(const Tiles &p, int64_t elt, int64_t SH, int64_t SW) {
  std::map<int64_t, std::set<int64_t>> words; // bank -> words
  for (int64_t l = 0; l < std::min<int64_t>(32, p.block); ++l) {
    int64_t cv = l % p.tc, ty = l / p.tc % p.ty, tx = l / (p.tc * p.ty);
    int64_t word = ((ty * SH) * p.rp + tx * p.tw * SW * p.tc * p.vc + cv * p.vc) * elt / 4;
    words[word % 32].insert(word);
  }
  size_t most = 0;
  for (const auto &[bank, w] : words)
    most = std::max(most, w.size());
  return int64_t(most);
}

// Threads along channels: as many as the channels keep busy (at most 15%
// of the last chunk idle), a warp at most; the rest of about 256 threads
// along the tile, no more of it than a static result has, less where the
// shared memory would not fit. Stride 1: 8 pixels per thread (each input
// column read serves up to 8 outputs, each tap 8).
std::optional<Tiles> planTiles(int64_t M, int64_t elt, int64_t KH, int64_t KW, int64_t SH,
                               int64_t SW, int64_t DH, int64_t DW, const Dim &OH, const Dim &OW) {
  Tiles p{};
  p.vc = elt == 2 && M % 2 == 0 ? 2 : 1;
  p.tw = SW == 1 ? 2 * kTileW : kTileW;
  int64_t nv = M / p.vc;
  for (p.tc = 32; p.tc > 1 && (nv + p.tc - 1) / p.tc * p.tc * 100 > 115 * nv; p.tc /= 2) {
  }
  int64_t spatial = std::max<int64_t>(8, 256 / p.tc);
  p.ty = std::min<int64_t>(8, spatial);
  p.tx = spatial / p.ty;
  while (OH.isStatic() && p.ty > 1 && p.ty / 2 >= OH.size)
    p.ty /= 2;
  while (OW.isStatic() && p.tx > 1 && p.tx / 2 * p.tw >= OW.size)
    p.tx /= 2;
  while (p.tc * p.ty * p.tx < 32) // whole warps
    p.tx *= 2;
  int64_t cc = p.tc * p.vc;
  for (p.lv = 16 / elt; cc % p.lv || M % p.lv; p.lv /= 2) {
  }
  p.wp = KH * KW | 1; // odd: adjacent channel vectors' taps in distinct banks
  for (;;) {
    p.block = p.tc * p.ty * p.tx;
    p.r = (p.ty - 1) * SH + (KH - 1) * DH + 1;
    p.q = (p.tx * p.tw - 1) * SW + (KW - 1) * DW + 1;
    // The row pitch: padded (whole loads) to the fewest bank conflicts.
    int64_t best = INT64_MAX, rp = 0;
    for (int64_t pad = 0; pad * elt < 128; pad += p.lv) {
      p.rp = p.q * cc + pad;
      if (int64_t n = bankConflicts(p, elt, SH, SW); n < best)
        best = n, rp = p.rp;
    }
    p.rp = rp;
    p.smem = p.r * p.rp * elt + p.tc * p.wp * p.vc * 4;
    if (p.smem <= kTileSmem)
      return p;
    if (p.block <= 32)
      return std::nullopt;
    if (p.tx > 1)
      p.tx /= 2;
    else
      p.ty /= 2;
  }
}

// The tiled form's loop over tiles, up to the accumulated outputs of a
// thread (acc[t][v]: pixel ow0 + t of row oh, channel m0 + v of image nb).
void emitTiles(const KernelContext &c, const Tiles &p, DType t, std::ostream &os,
               const std::string &zeroAcc, const std::string &accumulate) {
  std::string S = c.st(t), T = c.ct(t), xq = "tc_vec<" + S + ", LV>";
  os << "  constexpr int TC = " << p.tc << ", TY = " << p.ty << ", TX = " << p.tx
     << ", CC = TC * VC, LV = " << p.lv << ", R = " << p.r << ", Q = " << p.q << ", RP = " << p.rp
     << ", WP = " << p.wp << ", CHUNKS = (M + CC - 1) / CC;\n"
     << "  __shared__ " << xq << " xs_[R * RP / LV];\n"
     << "  __shared__ tc_vec<" << T << ", VC> ws[TC * WP];\n"
     << "  " << S << " *const xs = xs_[0].v;\n"
     << "  const int cv = threadIdx.x % TC, ty = threadIdx.x / TC % TY, tx = threadIdx.x / (TC * "
        "TY);\n"
     << "  const int64_t TWS = (OW + TX * TW - 1) / (TX * TW), THS = (OH + TY - 1) / TY,\n"
     << "                tiles = N * THS * TWS * CHUNKS;\n"
     << "  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {\n"
     << "    const int64_t c0 = tile % CHUNKS * CC;\n    int64_t r = tile / CHUNKS;\n"
     << "    const int64_t tw0 = r % TWS * (TX * TW);\n    r /= TWS;\n"
     << "    const int64_t th0 = r % THS * TY, nb = r / THS, ih0 = th0 * SH - PH, iw0 = tw0 * SW - "
        "PW;\n"
     << "    __syncthreads(); // the previous tile's reads are done\n"
     // The input tile: zeros outside the input (the padding) and past M.
     << "    for (int e = threadIdx.x; e < R * Q * (CC / LV); e += blockDim.x) {\n"
     << "      const int cl = e % (CC / LV) * LV, px = e / (CC / LV), qq = px % Q, rr = px / Q;\n"
     << "      const int64_t ih = ih0 + rr, iw = iw0 + qq;\n"
     << "      " << xq << " xq;\n"
     << "      if (ih >= 0 && ih < IH && iw >= 0 && iw < IW && c0 + cl < M) {\n"
     << "        const " << S << " *src = X + ((nb * IH + ih) * IW + iw) * C + c0 + cl;\n"
     << "        if (vecX)\n          xq = *(const " << xq << " *)src;\n        else\n"
     << "#pragma unroll\n          for (int k = 0; k < LV; ++k) xq.v[k] = src[k];\n"
     << "      } else\n#pragma unroll\n        for (int k = 0; k < LV; ++k) xq.v[k] = "
     << c.store(t, "0.0f") << ";\n"
     << "      *(" << xq
     << " *)(xs + rr * RP + qq * CC + cl) = xq;\n    }\n"
     // The chunk's filter (OHWI [M, KH, KW, 1]: contiguous), channels fastest.
     << "    for (int e = threadIdx.x; e < CC * KH * KW; e += blockDim.x) {\n"
     << "      const int ch = e / (KH * KW), k = e % (KH * KW);\n"
     << "      ws[ch / VC * WP + k].v[ch % VC] =\n          c0 + ch < M ? "
     << c.load(t, "Wt[(c0 + ch) * (KH * KW) + k]") << " : " << T << "(0);\n    }\n"
     << "    __syncthreads();\n"
     << "    const int64_t oh = th0 + ty, ow0 = tw0 + tx * TW, m0 = c0 + cv * VC;\n"
     << "    if (oh >= OH || ow0 >= OW || m0 >= M)\n      continue;\n"
     << zeroAcc << "#pragma unroll\n    for (int kh = 0; kh < KH; ++kh) {\n"
     << "      " << T << " wr[KW][VC];\n"
     << "#pragma unroll\n      for (int kw = 0; kw < KW; ++kw) {\n"
     << "        const tc_vec<" << T << ", VC> wv = ws[cv * WP + kh * KW + kw];\n"
     << "#pragma unroll\n        for (int v = 0; v < VC; ++v) wr[kw][v] = wv.v[v];\n      }\n"
     << "      const " << S
     << " *xr = xs + (ty * SH + kh * DH) * RP + tx * (TW * SW) * CC + cv * VC;\n"
     << "#pragma unroll\n      for (int jj = 0; jj < SPAN; ++jj) {\n"
     << "        " << T << " xv[VC];\n";
  if (p.vc > 1)
    os << "        const tc_vec<" << S << ", VC> xp = *(const tc_vec<" << S
       << ", VC> *)(xr + jj * CC);\n#pragma unroll\n        for (int v = 0; v < VC; ++v) xv[v] = "
       << c.load(t, "xp.v[v]") << ";\n";
  else
    os << "        xv[0] = " << c.load(t, "xr[jj * CC]") << ";\n";
  os << accumulate << "      }\n    }\n";
}

// The per-thread form's grid-stride loop over items (VC channels of TW
// pixels), up to the accumulated outputs, as emitTiles.
void emitPerThread(const KernelContext &c, bool last, bool vec, DType t, std::ostream &os,
                   const std::string &zeroAcc, const std::string &accumulate) {
  std::string S = c.st(t), T = c.ct(t);
  os << "  const int64_t OWT = (OW + TW - 1) / TW, items = N * OH * OWT * (M / VC);\n"
     << kGridHead << "  for (int64_t item = tid; item < items; item += stride) {\n";
  // NHWC: channel vectors vary fastest; NCHW: pixel tiles.
  if (last)
    os << "    const int64_t m0 = item % (M / VC) * VC;\n    int64_t r = item / (M / VC);\n"
       << "    const int64_t ow0 = r % OWT * TW;\n    r /= OWT;\n"
       << "    const int64_t oh = r % OH, nb = r / OH;\n";
  else
    os << "    const int64_t ow0 = item % OWT * TW;\n    int64_t r = item / OWT;\n"
       << "    const int64_t oh = r % OH;\n    r /= OH;\n"
       << "    const int64_t m0 = r % M, nb = r / M;\n";
  std::string xAt = last ? "((nb * IH + ih) * IW + iw) * C + (m0 + v) / MG * CG + ci"
                         : "((nb * C + (m0 + v) / MG * CG + ci) * IH + ih) * IW + iw";
  std::string wAt = last ? "(((m0 + v) * KH + kh) * KW + kw) * CG + ci"
                         : "(((m0 + v) * CG + ci) * KH + kh) * KW + kw";
  os << zeroAcc << "    for (int ci = 0; ci < CG; ++ci) {\n#pragma unroll\n"
     << "    for (int kh = 0; kh < KH; ++kh) {\n"
     << "      const int64_t ih = oh * SH - PH + kh * DH;\n"
     << "      if (ih < 0 || ih >= IH) continue;\n"
     << "      " << T << " wr[KW][VC];\n"
     << "#pragma unroll\n      for (int kw = 0; kw < KW; ++kw)\n#pragma unroll\n"
     << "        for (int v = 0; v < VC; ++v) wr[kw][v] = " << c.load(t, "Wt[" + wAt + "]") << ";\n"
     << "#pragma unroll\n      for (int jj = 0; jj < SPAN; ++jj) {\n"
     << "        const int64_t iw = ow0 * SW - PW + jj;\n"
     << "        if (iw < 0 || iw >= IW) continue;\n"
     << "        " << T << " xv[VC];\n";
  std::string scalarX = "#pragma unroll\n        for (int v = 0; v < VC; ++v) xv[v] = " +
                        c.load(t, "X[" + xAt + "]") + ";\n";
  if (vec)
    os << "        if (vecX) {\n          const int v = 0;\n"
       << "          const tc_vec<" << S << ", VC> q = *(const tc_vec<" << S << ", VC> *)(X + "
       << xAt << ");\n"
       << "#pragma unroll\n          for (int k = 0; k < VC; ++k) xv[k] = " << c.load(t, "q.v[k]")
       << ";\n        } else {\n"
       << scalarX << "        }\n";
  else
    os << scalarX;
  os << accumulate << "      }\n    }\n    }\n";
}

} // namespace

std::optional<EmittedKernel> emitDepthwiseConv(const KernelContext &c, const KernelClass &cls) {
  if (!cls.anchor || !cls.anchor->is(OpKind::Conv))
    return c.reject("no Conv op in the group");
  const Op &conv = *cls.anchor;
  const Value *x = conv.operand(0), *w = conv.operand(1), *b = conv.operand(2);
  size_t rank = x->type.rank(), sp = rank - 2;
  DType t = x->type.dtype;
  bool last = conv.getInt("channels_last") != 0;
  if (!c.cuda() || rank < 3 || rank > 4)
    return c.reject("Conv other than 1-D or 2-D on CUDA");
  if (t != DType::F32 && t != DType::F16 && t != DType::BF16)
    return c.reject("Conv on " + x->type.str());
  if (c.argIndex(x) == SIZE_MAX || c.argIndex(w) == SIZE_MAX || (b && c.argIndex(b) == SIZE_MAX))
    return c.reject("Conv on values computed in the group");
  if (!staticNumElements(w->type.shape))
    return c.reject("Conv whose weights' shape is not static");
  // The epilogue: pointwise ops over the conv's result (what a library
  // call's epilogue kernel would run).
  if (!isLibraryAnchored(c.f, /*anyDType=*/true) || conv.result()->type.shape != c.domain)
    return c.reject("Conv with an epilogue other than pointwise ops over its result");
  for (const Value *r : c.f.results)
    if (!isFloat(r->type.dtype) || !c.st(r->type.dtype))
      return c.reject("a depthwise conv's epilogue writing " + r->type.str());

  // Compile-time sizes: the weights' and the attributes.
  int64_t M = staticDim(w, 0), CG = staticDim(w, last ? rank - 1 : 1);
  int64_t G = conv.getInt("group"), MG = M / G;
  Window win{c, conv, sp, false, last ? 1u : 2u};
  auto attr = [&](const char *name, size_t d) { return std::stoll(win.ints(name, d, 1)); };
  bool two = sp == 2;
  int64_t KH = two ? staticDim(w, last ? 1 : 2) : 1, KW = staticDim(w, rank - (last ? 2 : 1));
  int64_t SH = two ? attr("strides", 0) : 1, SW = attr("strides", sp - 1);
  int64_t DH = two ? attr("dilations", 0) : 1, DW = attr("dilations", sp - 1);
  // The tiled form where it fits; else, NHWC depthwise without a
  // multiplier: VC channels per thread, one 16-byte access (or less, to
  // divide M).
  const Shape &ys = conv.result()->type.shape;
  std::optional<Tiles> tiles;
  if (last && two && CG == 1 && MG == 1)
    tiles = planTiles(M, int64_t(dtypeSize(t)), KH, KW, SH, SW, DH, DW, ys[1], ys[2]);
  int64_t VC = tiles ? tiles->vc : 1;
  if (!tiles && last && CG == 1 && MG == 1)
    for (VC = int64_t(16 / dtypeSize(t)); M % VC; VC /= 2) {
    }
  int64_t TW = tiles ? tiles->tw : kTileW, span = (TW - 1) * SW + (KW - 1) * DW + 1;

  ElementAccess ea(c, &conv);
  Expressions ex(c);
  std::ostringstream pro, body;
  auto anchor = [&](const Op &, const char *rt, std::ostream &os) {
    std::string e = "acc[t][v]";
    if (b)
      e += " + " + c.load(b->type.dtype, "in" + std::to_string(c.argIndex(b)) + "[m]");
    ex.define(conv.result(), rt, e, os);
    return true;
  };
  if (!emitGroupOps(c, ex, &conv, /*split=*/false, anchor, pro, body))
    return std::nullopt;

  const char *S = c.st(t), *T = c.ct(t);
  std::ostringstream os;
  unsigned block = tiles ? unsigned(tiles->block) : kPointwiseBlock;
  std::string symbol = c.emitStart(os, block);
  if (ea.readsBroadcast())
    ea.emitStrides(os);
  win.emitSetup(os);
  std::string n1 = two ? "1" : "0";
  os << "  const int64_t IH = " << (two ? "I0" : "1") << ", IW = I" << n1
     << ", OH = " << (two ? "O0" : "1") << ", OW = O" << n1 << ", PH = " << (two ? "P0" : "0")
     << ", PW = P" << n1 << ", C = " << c.dim(x, last ? rank - 1 : 1) << ", N = " << c.dim(x, 0)
     << ";\n"
     << "  constexpr int KH = " << KH << ", KW = " << KW << ", SH = " << SH << ", SW = " << SW
     << ", DH = " << DH << ", DW = " << DW << ", M = " << M << ", CG = " << CG << ", MG = " << MG
     << ", VC = " << VC << ", TW = " << TW << ", SPAN = " << span << ";\n"
     << "  const " << S << " *__restrict X = in" << c.argIndex(x) << ";\n"
     << "  const " << S << " *__restrict Wt = in" << c.argIndex(w) << ";\n";
  // NHWC channel vectors: each result's VC values too, one access when aligned.
  auto vt = [&](DType d) { return "tc_vec<" + std::string(c.st(d)) + ", VC>"; };
  if (VC > 1 || tiles) {
    os << "  const bool vecX = tc_aligned(X, sizeof(tc_vec<" << S << ", "
       << (tiles ? std::to_string(tiles->lv) : "VC") << ">))";
    for (size_t k = 0; VC > 1 && k < c.f.results.size(); ++k)
      os << ",\n             vecY" << k << " = tc_aligned(out" << k << ", sizeof("
         << vt(c.f.results[k]->type.dtype) << "))";
    os << ";\n";
  }
  // Output t meets column jj through tap kw = (jj - t * SW) / DW.
  std::string accumulate =
      "#pragma unroll\n        for (int t = 0; t < TW; ++t) {\n"
      "          const int q = jj - t * SW;\n"
      "          if (q < 0 || q % DW != 0 || q / DW >= KW) continue;\n"
      "#pragma unroll\n          for (int v = 0; v < VC; ++v) acc[t][v] += xv[v] * wr[q / DW][v];\n"
      "        }\n";
  std::string zeroAcc = "    " + std::string(T) +
                        " acc[TW][VC];\n#pragma unroll\n    for (int t = 0; t < TW; ++t)\n"
                        "#pragma unroll\n      for (int v = 0; v < VC; ++v) acc[t][v] = 0;\n";
  if (tiles)
    emitTiles(c, *tiles, t, os, zeroAcc, accumulate);
  else
    emitPerThread(c, last, VC > 1, t, os, zeroAcc, accumulate);
  // The epilogue, element by element: (row, j) of the domain as the
  // Pointwise family reads it.
  os << "#pragma unroll\n    for (int t = 0; t < TW; ++t) {\n"
     << "      const int64_t ow = ow0 + t;\n      if (ow >= OW) break;\n";
  if (last)
    os << "      const int64_t row = (nb * OH + oh) * OW + ow;\n";
  else
    os << "      const int64_t m = m0, row = (nb * M + m) * OH + oh, j = ow;\n";
  if (ea.readsBroadcast())
    ea.emitRowBases(os);
  for (size_t k = 0; VC > 1 && k < c.f.results.size(); ++k)
    os << "      " << vt(c.f.results[k]->type.dtype) << " y" << k << ";\n";
  os << "#pragma unroll\n      for (int v = 0; v < VC; ++v) {\n";
  if (last)
    os << "      const int64_t m = m0 + v, j = m;\n";
  os << "      const int64_t i = row * inner + j;\n";
  ea.emitLoads(os, "i");
  os << body.str();
  if (VC == 1)
    ex.emitStores(os, "i");
  for (size_t k = 0; VC > 1 && k < c.f.results.size(); ++k)
    os << "      y" << k
       << ".v[v] = " << c.store(c.f.results[k]->type.dtype, ex.name(c.f.results[k])) << ";\n";
  os << "      }\n";
  for (size_t k = 0; VC > 1 && k < c.f.results.size(); ++k) {
    std::string out = "out" + std::to_string(k), y = "y" + std::to_string(k);
    os << "      if (vecY" << k << ") *(" << vt(c.f.results[k]->type.dtype) << " *)(" << out
       << " + row * inner + m0) = " << y << ";\n"
       << "      else\n#pragma unroll\n        for (int v = 0; v < VC; ++v) " << out
       << "[row * inner + m0 + v] = " << y << ".v[v];\n";
  }
  os << "    }\n  }\n}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = block;
  k.vec = unsigned(VC * TW); // the grid: about one thread per item
  // Tiled: one block per tile (a result the tiles overhang would give some
  // blocks two, the kernel twice as long), the rest of the grid idle.
  if (tiles && ys[1].isStatic() && ys[2].isStatic()) {
    const Tiles &p = *tiles;
    int64_t OH = ys[1].size, OW = ys[2].size, cc = p.tc * p.vc;
    int64_t perImage =
        (OH + p.ty - 1) / p.ty * ((OW + p.tx * p.tw - 1) / (p.tx * p.tw)) * ((M + cc - 1) / cc);
    k.vec = unsigned(std::max<int64_t>(1, OH * OW * M / perImage / p.block));
  }
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace tc::kernels
