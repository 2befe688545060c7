// The Contraction family (CPU): a MatMul, Gemm or Conv as a loop nest
// accumulating one result row in `acc`, then the group's pointwise
// epilogue over that row, in the row loop of Pointwise.cpp. (On CUDA these
// groups are library calls, cuBLASLt/cuDNN, with the epilogue a Pointwise
// kernel.)
#include "Families.h"
#include <sstream>
#include <tuple>

namespace tc::kernels {

namespace {

// MatMul: op(A) [..., M, K] x op(B) [..., K, N] with broadcast batch dims;
// Gemm: op(A) [M, K] x op(B) [K, N] (+ C in the epilogue). Both read
// transA/transB (op swaps the last two axes) and alpha. Both operands must be
// group arguments of rank >= 2 (1-D MatMul falls back).
bool checkMatmul(const KernelContext &c, const Op &mm) {
  const Value *a = mm.operand(0), *b = mm.operand(1);
  if (c.argIndex(a) == SIZE_MAX || c.argIndex(b) == SIZE_MAX)
    return c.noKernel(std::string(mm.name()) + " on values computed in the group");
  if (a->type.rank() < 2 || b->type.rank() < 2 || c.rank < 2)
    return c.noKernel(std::string(mm.name()) + " with a 1-D operand");
  if (a->type.dtype != DType::F32 && a->type.dtype != DType::F64)
    return c.noKernel(std::string(mm.name()) + " on " + a->type.str());
  if (mm.result() != c.f.ops.front()->result() || mm.result()->type.shape != c.domain)
    return c.noKernel("an epilogue that changes the matmul's shape");
  return true;
}

// 2-D convolution in ONNX's NCHW layout with explicit pads (auto_pad
// NOTSET): X, W (and B) must be group arguments.
bool checkConv(const KernelContext &c, const Op &conv) {
  const Value *x = conv.operand(0), *w = conv.operand(1), *b = conv.operand(2);
  if (x->type.rank() != 4 || conv.getInt("channels_last") || conv.getString("auto_pad") != "NOTSET")
    return c.noKernel("Conv other than 2-D NCHW with explicit pads");
  if (x->type.dtype != DType::F32 && x->type.dtype != DType::F64)
    return c.noKernel("Conv on " + x->type.str());
  if (c.argIndex(x) == SIZE_MAX || c.argIndex(w) == SIZE_MAX ||
      (b && c.argIndex(b) == SIZE_MAX && staticNumElements(b->type.shape) != 1))
    return c.noKernel("Conv on values computed in the group");
  if (conv.result()->type.shape != c.domain)
    return c.noKernel("an epilogue that changes the conv's shape");
  return true;
}

void emitConvSetup(const KernelContext &c, const Op &conv, std::ostream &os) {
  const Value *x = conv.operand(0), *w = conv.operand(1), *y = c.f.results[0];
  const char *T = c.ct(conv.result()->type.dtype);
  auto attr = [&](const char *name, size_t i, int64_t dflt) {
    const std::vector<int64_t> &v = conv.getInts(name);
    return std::to_string(v.empty() ? dflt : v.at(i));
  };
  os << "  const int64_t C = " << c.dim(x, 1) << ", H = " << c.dim(x, 2) << ", W = " << c.dim(x, 3)
     << ", M = " << c.dim(y, 1) << ", OH = " << c.dim(y, 2) << ", OW = " << c.dim(y, 3)
     << ", KH = " << c.dim(w, 2) << ", KW = " << c.dim(w, 3) << ";\n";
  os << "  const int64_t G = " << conv.getInt("group") << ", CG = C / G, MG = M / G;\n";
  os << "  const int64_t SH = " << attr("strides", 0, 1) << ", SW = " << attr("strides", 1, 1)
     << ", DH = " << attr("dilations", 0, 1) << ", DW = " << attr("dilations", 1, 1)
     << ", PH = " << attr("pads", 0, 0) << ", PW = " << attr("pads", 1, 0) << ";\n";
  os << "  const " << T << " *__restrict X = in" << c.argIndex(x) << ";\n  const " << T
     << " *__restrict Wt = in" << c.argIndex(w) << ";\n";
  os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(" << T << ") * (OW ? OW : 1));\n";
}

// Row (n, m, oh) of the result: acc[ow] = sum over c, kh, kw; the ow loop
// is contiguous in X for stride 1, so it vectorizes.
void emitConvRow(std::ostream &os) {
  os << "    const int64_t oh = row % OH, m = (row / OH) % M, n = row / (OH * M), g = m / MG;\n"
     << "    for (int64_t j = 0; j < OW; ++j) acc[j] = 0;\n"
     << "    for (int64_t c = 0; c < CG; ++c) {\n"
     << "      for (int64_t kh = 0; kh < KH; ++kh) {\n"
     << "        const int64_t ih = oh * SH - PH + kh * DH;\n"
     << "        if (ih < 0 || ih >= H) continue;\n"
     << "        const auto *__restrict xrow = X + ((n * C + g * CG + c) * H + ih) * W;\n"
     << "        for (int64_t kw = 0; kw < KW; ++kw) {\n"
     << "          const auto wv = Wt[((m * CG + c) * KH + kh) * KW + kw];\n"
     << "          const int64_t off = kw * DW - PW;\n"
     << "          int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;\n"
     << "          int64_t hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / SW + 1;\n"
     << "          if (hi > OW) hi = OW;\n"
     << "          if (SW == 1)\n"
     << "            for (int64_t j = lo; j < hi; ++j) acc[j] += wv * xrow[j + off];\n"
     << "          else\n"
     << "            for (int64_t j = lo; j < hi; ++j) acc[j] += wv * xrow[j * SW + off];\n"
     << "        }\n      }\n    }\n";
}

// Per call: sizes, batch strides (MatMul) and one accumulator row.
void emitMatmulSetup(const KernelContext &c, const Op &mm, std::ostream &os) {
  const Value *a = mm.operand(0), *b = mm.operand(1), *y = c.f.results[0];
  size_t ia = c.argIndex(a), ib = c.argIndex(b), ra = a->type.rank(), rb = b->type.rank();
  const char *T = c.ct(mm.result()->type.dtype);
  bool ta = mm.getInt("transA");
  os << "  const int64_t M = " << c.dim(y, c.rank - 2) << ", N = " << c.dim(y, c.rank - 1)
     << ", K = " << c.dim(a, ta ? ra - 2 : ra - 1) << ";\n";
  os << "  const " << T << " *__restrict A = in" << ia << ";\n  const " << T
     << " *__restrict B = in" << ib << ";\n";
  os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(" << T << ") * (N ? N : 1));\n";
  size_t batch = c.rank - 2;
  if (batch == 0)
    return;
  // Batch strides over the result's batch axes (0 where broadcast).
  for (auto [name, v, rk, block] : {std::tuple{"sa", a, ra, std::string("M * K")},
                                    std::tuple{"sb", b, rb, std::string("K * N")}}) {
    os << "  int64_t " << name << "[" << batch << "];\n  { int64_t s = " << block << ";\n";
    for (size_t d = batch; d-- > 0;) {
      size_t vb = rk - 2; // the operand's batch axes, aligned right
      if (d + vb < batch) {
        os << "    " << name << "[" << d << "] = 0;\n";
        continue;
      }
      std::string vd = c.dim(v, d + vb - batch);
      os << "    " << name << "[" << d << "] = " << vd << " == 1 && " << c.dim(y, d)
         << " != 1 ? 0 : s; s *= " << vd << ";\n";
    }
    os << "  }\n";
  }
}

// Row `row` of the result: acc[j] = sum_k A[i,k] * B[k,j].
void emitMatmulRow(const KernelContext &c, const Op &mm, std::ostream &os) {
  const Value *y = c.f.results[0];
  bool ta = mm.getInt("transA"), tb = mm.getInt("transB");
  size_t batch = c.rank - 2;
  os << "    const int64_t i = row % M;\n    int64_t offA = 0, offB = 0;\n";
  if (batch) {
    os << "    { int64_t rem = row / M;\n";
    for (size_t d = batch; d-- > 0;)
      os << "      { const int64_t c = rem % " << c.dim(y, d) << "; rem /= " << c.dim(y, d)
         << "; offA += c * sa[" << d << "]; offB += c * sb[" << d << "]; }\n";
    os << "    }\n";
  }
  os << "    for (int64_t j = 0; j < N; ++j) acc[j] = 0;\n";
  os << "    for (int64_t k = 0; k < K; ++k) {\n";
  os << "      const auto av = A[offA + " << (ta ? "k * M + i" : "i * K + k") << "];\n";
  if (tb)
    os << "      for (int64_t j = 0; j < N; ++j) acc[j] += av * B[offB + j * K + k];\n";
  else
    os << "      const auto *__restrict brow = B + offB + k * N;\n"
       << "      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];\n";
  os << "    }\n";
}

// The contraction's value at element j of the row: acc[j], Conv's bias,
// MatMul's and Gemm's alpha, Gemm's beta and C.
bool emitAnchor(const KernelContext &c, Expressions &ex, const Op &op, const char *rt,
                std::ostream &os) {
  const Value *res = op.result();
  std::string e = "acc[j]";
  if (op.is(OpKind::Conv)) {
    if (const Value *b = op.operand(2))
      e += " + " + (c.argIndex(b) != SIZE_MAX ? "in" + std::to_string(c.argIndex(b)) + "[m]"
                                              : *ex.operand(b));
  } else {
    if (double alpha = op.getFloat("alpha"); alpha != 1.0 || op.is(OpKind::Gemm))
      e = floatLiteral(alpha, res->type.dtype) + " * acc[j]";
    if (const Value *cv = op.is(OpKind::Gemm) ? op.operand(2) : nullptr) {
      auto ce = ex.operand(cv);
      if (!ce)
        return c.noKernel("Gemm's C is a non-scalar constant %" + cv->name);
      e += " + " + floatLiteral(op.getFloat("beta"), res->type.dtype) + " * " + *ce;
    }
  }
  ex.define(res, rt, e, os);
  return true;
}

} // namespace

std::optional<EmittedKernel> emitContraction(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  bool conv = op.is(OpKind::Conv);
  if (!(conv ? checkConv(c, op) : checkMatmul(c, op)))
    return std::nullopt;
  ElementAccess ea(c, &op);
  Expressions ex(c);
  std::ostringstream pro, body;
  auto anchor = [&](const Op &a, const char *rt, std::ostream &os) {
    return emitAnchor(c, ex, a, rt, os);
  };
  if (!emitGroupOps(c, ex, &op, /*split=*/false, anchor, pro, body))
    return std::nullopt;
  CpuRowParts parts;
  parts.setup = [&](std::ostream &os) {
    conv ? emitConvSetup(c, op, os) : emitMatmulSetup(c, op, os);
  };
  parts.row = [&](std::ostream &os) { conv ? emitConvRow(os) : emitMatmulRow(c, op, os); };
  return emitCpuRows(c, ea, ex, "", body.str(), parts);
}

} // namespace tc::kernels
