// The RowReduction family: Softmax, LogSoftmax or LayerNormalization over
// the last axis, with a pointwise prologue (the ops before it, feeding its
// input) and epilogue. CPU: the row loop of Pointwise.cpp, with a first
// pass over the row keeping the reduced input in `acc` and the row's
// statistics in double. CUDA: one block per row.
#include "Families.h"
#include <sstream>

namespace tc::kernels {

namespace {

// The group's code around the reduction: the prologue and epilogue
// expressions, the reduced input's expression and the values computed
// before the reduction.
struct RowCode {
  std::string pro, body, reducedInput;
  std::unordered_set<const Value *> prologue;
};

// Over the last axis only: the row is the kernel's inner loop.
bool checkRowReduction(const KernelContext &c, const Op &op,
                       std::unordered_set<const Value *> &prologue) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  if (r == 0 || x->type.shape != c.domain || op.result()->type.shape != c.domain)
    return c.noKernel(std::string(op.name()) + " whose result is not the group's domain");
  int64_t axis = op.getInt("axis");
  if (axis != -1 && axis != int64_t(r) - 1)
    return c.noKernel(std::string(op.name()) + " over an axis other than the last");
  if (op.results.size() != 1)
    return c.noKernel("LayerNormalization with Mean/InvStdDev results");
  if (op.is(OpKind::LayerNormalization))
    for (size_t k = 1; k < op.operands.size(); ++k)
      if (const Value *p = op.operand(k);
          p && c.argIndex(p) == SIZE_MAX &&
          !(p->isConstant() && staticNumElements(p->type.shape) == 1))
        return c.noKernel("LayerNormalization parameters computed in the group");
  for (const auto &o : c.f.ops) {
    if (o.get() == &op)
      break;
    for (const Value *v : o->results)
      prologue.insert(v);
  }
  return true;
}

// Row statistics in double, as the reference kernels compute them; the
// sums vectorize (TC_REDUCE_LOOP lets them be reassociated: a different
// rounding of a double sum of floats, far inside any tolerance).
void emitRowStats(const KernelContext &c, const Op &op, std::ostream &os) {
  const char *T = c.ct(op.result()->type.dtype);
  if (op.is(OpKind::LayerNormalization)) {
    os << "    double mean = 0, var = 0;\n"
       << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) mean += acc[j];\n"
       << "    mean /= (double)inner;\n"
       << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) { const double d = acc[j] - "
          "mean; var += d * d; }\n"
       << "    var /= (double)inner;\n"
       << "    const double rstd = 1.0 / __builtin_sqrt(var + "
       << floatLiteral(op.getFloat("epsilon"), DType::F64) << ");\n";
    return;
  }
  os << "    double shift = -__builtin_inf(), sum = 0;\n"
     << "    for (int64_t j = 0; j < inner; ++j) if (acc[j] > shift) shift = acc[j];\n"
     << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) sum += tc_exp(acc[j] - (" << T
     << ")shift);\n";
  if (op.is(OpKind::LogSoftmax))
    os << "    const double logsum = __builtin_log(sum);\n";
}

// The reduction's value per element: kept in `acc` (CPU) or `x` (CUDA).
bool emitAnchor(const KernelContext &c, Expressions &ex, const Op &op, const char *rt,
                std::string &reducedInput, std::ostream &os) {
  auto in = ex.operand(op.operand(0));
  if (!in)
    return c.noKernel(std::string(op.name()) + " reading a non-scalar constant");
  reducedInput = *in;
  std::string e, xj = c.cuda() ? "x" : "acc[j]";
  if (op.is(OpKind::Softmax))
    e = std::string(rt) + "(tc_exp(" + xj + " - (" + rt + ")shift) / sum)";
  else if (op.is(OpKind::LogSoftmax))
    e = std::string(rt) + "(" + xj + " - shift - logsum)";
  else {
    e = std::string(rt) + "((" + xj + " - mean) * rstd)";
    std::vector<std::string> p;
    for (size_t k = 1; k < op.operands.size(); ++k)
      if (const Value *v = op.operand(k)) {
        auto pe = ex.operand(v);
        if (!pe)
          return c.noKernel("LayerNormalization with a non-scalar constant parameter");
        p.push_back(*pe);
      }
    e = e + " * " + p.at(0);
    if (p.size() > 1)
      e += " + " + p[1];
  }
  ex.define(op.result(), rt, e, os);
  return true;
}

// One block per row: pass 1 computes the prologue and keeps the reduced
// input (up to kRowCache elements per thread in registers; longer rows
// recompute the rest from memory), block reductions give the statistics
// in float (double for f64), the last pass runs the epilogue.
std::optional<EmittedKernel> emitCudaRows(const KernelContext &c, const Op &op,
                                          const ElementAccess &ea, const Expressions &ex,
                                          const RowCode &code) {
  const std::string &pro = code.pro, &body = code.body;
  const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
  bool layerNorm = op.is(OpKind::LayerNormalization);
  // The epilogue reads a prologue value other than through the reduction:
  // the last pass recomputes the prologue.
  bool rerunPrologue = false;
  bool after = false;
  for (const auto &o : c.f.ops) {
    if (after)
      for (const Value *v : o->operands)
        rerunPrologue |= v && code.prologue.count(v);
    after |= o.get() == &op;
  }
  std::ostringstream os;
  std::string symbol = c.emitStart(os, kRowsBlock);
  bool anyBroadcast = ea.readsBroadcast();
  if (anyBroadcast)
    ea.emitStrides(os);
  std::string K = std::to_string(kRowCache);
  os << "  const int64_t rows = " << c.rowsExpr() << ";\n"
     << "  __shared__ " << A << " tc_red[32];\n"
     << "  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {\n";
  if (anyBroadcast)
    ea.emitRowBases(os);
  os << "    " << A << " cache[" << K << "];\n";
  // A pass over the row: `stmt` per element with x its reduced input.
  auto pass = [&](const std::string &stmt, bool first, bool last) {
    std::ostringstream el; // the element's x, recomputed from memory
    ea.emitLoads(el);
    el << pro << "      const " << A << " x = " << code.reducedInput << ";\n";
    if (first)
      ex.emitStores(el, "row * inner + j", code.prologue, /*inPrologue=*/true);
    std::ostringstream lastLoads;
    if (last) {
      ea.emitLoads(lastLoads);
      if (rerunPrologue)
        lastLoads << pro;
    }
    os << "#pragma unroll\n    for (int k = 0; k < " << K << "; ++k) {\n"
       << "      const int64_t j = threadIdx.x + (int64_t)k * blockDim.x;\n"
       << "      if (j >= inner) break;\n";
    if (first)
      os << el.str() << "      cache[k] = x;\n";
    else
      os << lastLoads.str() << "      const " << A << " x = cache[k];\n";
    os << stmt << "    }\n";
    os << "    for (int64_t j = threadIdx.x + " << K << " * (int64_t)blockDim.x; j < inner; j += "
       << "blockDim.x) {\n"
       << el.str() << stmt << "    }\n";
  };
  std::ostringstream epilogue;
  epilogue << body;
  ex.emitStores(epilogue, "row * inner + j", code.prologue, /*inPrologue=*/false);
  if (layerNorm) {
    os << "    " << A << " mean = 0;\n";
    pass("      mean += x;\n", true, false);
    os << "    mean = tc_block_sum(mean, tc_red) / (" << A << ")inner;\n"
       << "    " << A << " var = 0;\n";
    pass("      var += (x - mean) * (x - mean);\n", false, false);
    os << "    var = tc_block_sum(var, tc_red) / (" << A << ")inner;\n"
       << "    const " << A << " rstd = " << A << "(1) / tc_sqrt(var + "
       << floatLiteral(op.getFloat("epsilon"),
                       op.result()->type.dtype == DType::F64 ? DType::F64 : DType::F32, c.dialect)
       << ");\n";
  } else {
    os << "    " << A << " shift = -" << c.info().inf << ";\n";
    pass("      shift = tc_fmax(shift, x);\n", true, false);
    os << "    shift = tc_block_max(shift, tc_red);\n    " << A << " sum = 0;\n";
    pass("      sum += tc_exp(x - shift);\n", false, false);
    os << "    sum = tc_block_sum(sum, tc_red);\n";
    if (op.is(OpKind::LogSoftmax))
      os << "    const " << A << " logsum = tc_log(sum);\n";
  }
  pass(epilogue.str(), false, true);
  os << "  }\n}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.launch = LaunchKind::Rows;
  k.block = kRowsBlock;
  k.vec = kRowCache;
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace

std::optional<EmittedKernel> emitRowReduction(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  RowCode code;
  if (!checkRowReduction(c, op, code.prologue))
    return std::nullopt;
  ElementAccess ea(c, nullptr);
  Expressions ex(c);
  // Ops before the reduction are its prologue (run in the first pass over
  // the row, and again in the second where the epilogue needs them).
  std::ostringstream pro, body;
  auto anchor = [&](const Op &a, const char *rt, std::ostream &os) {
    return emitAnchor(c, ex, a, rt, code.reducedInput, os);
  };
  if (!emitGroupOps(c, ex, &op, /*split=*/true, anchor, pro, body))
    return std::nullopt;
  code.pro = pro.str();
  code.body = body.str();
  if (c.cuda())
    return emitCudaRows(c, op, ea, ex, code);
  CpuRowParts parts;
  parts.prologue = code.prologue;
  parts.setup = [&](std::ostream &os) {
    const char *T = c.ct(op.result()->type.dtype);
    os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(double) * (inner ? inner : 1));\n";
  };
  parts.row = [&](std::ostream &os) {
    // Pass 1: the prologue, the reduced input kept in `acc`, prologue results.
    os << "    TC_SIMD_LOOP for (int64_t j = 0; j < inner; ++j) {\n";
    ea.emitLoads(os);
    os << code.pro << "      acc[j] = " << code.reducedInput << ";\n";
    ex.emitStores(os, "row * inner + j", code.prologue, /*inPrologue=*/true);
    os << "    }\n";
    emitRowStats(c, op, os);
  };
  return emitCpuRows(c, ea, ex, code.pro, code.body, parts);
}

} // namespace tc::kernels
