// The DepthwiseConv family (CUDA): a grouped Conv (group > 1; depthwise
// when each group has one input channel, any channel multiplier) and the
// group's pointwise epilogue (bias, BN's scale/shift, activation, residual
// add) in one kernel, 1-D or 2-D, NHWC (channels_last, OHWI weights) or
// NCHW, f32 / f16 / bf16 computed in float. Which convs take it instead of
// cuDNN is the backend's rule (CudaCodegen.cpp: convTakesKernel).
//
// A depthwise conv is memory-bound: each thread computes TW output pixels
// along W for VC channels (NHWC: adjacent threads adjacent channel vectors,
// the input read 16 bytes at a time; NCHW: VC = 1, adjacent threads
// adjacent pixel tiles). Per kernel row it keeps the row's KW taps of its
// channels in registers and loads each input column the TW outputs share
// once; the loops over taps and columns are unrolled on compile-time sizes,
// so which (column, output) pairs meet is decided by the compiler. Results
// are written once, through the epilogue, accumulated in float.
#include "Families.h"
#include "Window.h"
#include "tc/CodeGen/LibraryCall.h"
#include <sstream>

namespace tc::kernels {

namespace {

// Output pixels per thread along W.
constexpr int64_t kTileW = 4;

int64_t staticDim(const Value *v, size_t d) { return v->type.shape[d].size; }

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
  // NHWC depthwise without a multiplier: VC channels per thread, one
  // 16-byte access (or less, to divide M).
  int64_t VC = 1;
  if (last && CG == 1 && MG == 1)
    for (VC = int64_t(16 / dtypeSize(t)); M % VC; VC /= 2) {
    }
  int64_t TW = kTileW, span = (TW - 1) * SW + (KW - 1) * DW + 1;

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
  std::string symbol = c.emitStart(os, kPointwiseBlock);
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
     << "  const " << S << " *__restrict Wt = in" << c.argIndex(w) << ";\n"
     << "  const int64_t OWT = (OW + TW - 1) / TW, items = N * OH * OWT * (M / VC);\n";
  // NHWC channel vectors: each result's VC values too, one access when aligned.
  auto vt = [&](DType d) { return "tc_vec<" + std::string(c.st(d)) + ", VC>"; };
  if (VC > 1) {
    os << "  const bool vecX = tc_aligned(X, sizeof(" << vt(t) << "))";
    for (size_t k = 0; k < c.f.results.size(); ++k)
      os << ",\n             vecY" << k << " = tc_aligned(out" << k << ", sizeof("
         << vt(c.f.results[k]->type.dtype) << "))";
    os << ";\n";
  }
  os << kGridHead << "  for (int64_t item = tid; item < items; item += stride) {\n";
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
  os << "    " << T << " acc[TW][VC];\n"
     << "#pragma unroll\n    for (int t = 0; t < TW; ++t)\n#pragma unroll\n"
     << "      for (int v = 0; v < VC; ++v) acc[t][v] = 0;\n"
     << "    for (int ci = 0; ci < CG; ++ci) {\n#pragma unroll\n"
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
  if (VC > 1)
    os << "        if (vecX) {\n          const int v = 0;\n"
       << "          const tc_vec<" << S << ", VC> q = *(const tc_vec<" << S << ", VC> *)(X + "
       << xAt << ");\n"
       << "#pragma unroll\n          for (int k = 0; k < VC; ++k) xv[k] = " << c.load(t, "q.v[k]")
       << ";\n        } else {\n"
       << scalarX << "        }\n";
  else
    os << scalarX;
  // Output t meets column jj through tap kw = (jj - t * SW) / DW.
  os << "#pragma unroll\n        for (int t = 0; t < TW; ++t) {\n"
     << "          const int q = jj - t * SW;\n"
     << "          if (q < 0 || q % DW != 0 || q / DW >= KW) continue;\n"
     << "#pragma unroll\n          for (int v = 0; v < VC; ++v) acc[t][v] += xv[v] * wr[q / "
        "DW][v];\n"
     << "        }\n      }\n    }\n    }\n";
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
  k.block = kPointwiseBlock;
  k.vec = unsigned(VC * TW); // the grid: about one thread per item
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace tc::kernels
