// A lone Reduce* whose axes are an operand (computed at run time, so the
// Reduction family's plans, which fix the reduced axes at compile time,
// and oneDNN turn it down) as an index move, both dialects: each result
// element reads the axes (negative counted from the rank, out of range an
// index fault), finds its first input element from its coordinate and
// folds the reduced axes' elements in the reference's order (the last
// reduced axis fastest), in double as lib/Runtime/Ref/Reduction.cpp,
// rounded once.
#include "IndexMoveParts.h"
#include <cmath>

namespace tc::kernels {

bool isRuntimeAxesReduce(const Op &op) {
  return op.info().category == FusionCategory::Reduction && op.kind != OpKind::ArgMax &&
         op.kind != OpKind::ArgMin && op.operands.size() == 2 && op.operand(1) &&
         op.info().operands.size() == 2 && op.info().operands[1].name == "axes";
}

bool emitRuntimeAxesReduce(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  const Value *axes = op.operand(1);
  auto na = staticNumElements(axes->type.shape);
  size_t R = m.x->type.rank();
  bool keep = op.getInt("keepdims") != 0;
  if (!na || *na == 0 || R == 0 || (keep && m.r != R))
    return c.noKernel(std::string(op.name()) + " over axes of unknown number");
  if (!isFloat(m.x->type.dtype) || !m.computed())
    return m.ok && c.noKernel(std::string(op.name()) + " on " + m.x->type.str());
  // The fold of element e into acc, its start and the last step.
  std::string inf = floatLiteral(INFINITY, DType::F64, c.dialect), fold, init = "0.0",
              finish = "acc";
  switch (op.kind) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceLogSum: fold = "acc += e;"; break;
  case OpKind::ReduceProd:
    fold = "acc *= e;";
    init = "1.0";
    break;
  case OpKind::ReduceMax:
    fold = "acc = e > acc || e != e ? e : acc;";
    init = "-" + inf;
    break;
  case OpKind::ReduceMin:
    fold = "acc = e < acc || e != e ? e : acc;";
    init = inf;
    break;
  case OpKind::ReduceL1: fold = "acc += tc_abs(e);"; break;
  case OpKind::ReduceL2:
  case OpKind::ReduceSumSquare: fold = "acc += e * e;"; break;
  case OpKind::ReduceLogSumExp: fold = "acc += tc_exp(e - shift);"; break;
  default: return c.noKernel("no run-time-axes code for " + std::string(op.name()));
  }
  if (op.is(OpKind::ReduceMean))
    finish = "acc / (double)count";
  else if (op.is(OpKind::ReduceL2))
    finish = "tc_sqrt(acc)";
  else if (op.is(OpKind::ReduceLogSum))
    finish = "tc_log(acc)";
  else if (op.is(OpKind::ReduceLogSumExp))
    finish = "tc_log(acc) + shift";
  std::string x = m.data(0), dims, coords, Rs = std::to_string(R);
  for (size_t d = 0; d < R; ++d)
    dims += (d ? ", " : "") + c.dim(m.x, d);
  for (size_t d = 0; d < m.r; ++d)
    coords += (d ? ", " : "") + m.cs(d);
  c.emitRowMajorStrides(m.setup, "xst", m.x);
  m.setup << "  const int64_t xd[" << R << "] = {" << dims << "};\n";
  m.body << "    bool red[" << R << "] = {false};\n";
  for (int64_t j = 0; j < *na; ++j) {
    std::string a = "a" + std::to_string(j);
    m.index(a, axes, std::to_string(j), "(int64_t)" + Rs);
    m.body << "    red[" << a << "] = true;\n";
  }
  // The first input element (the result coordinates on the kept axes) and
  // the reduced axes, in order.
  m.body << "    const int64_t cc[" << std::max<size_t>(m.r, 1) << "] = {" << (m.r ? coords : "0")
         << "};\n"
         << "    int64_t base = 0, k = 0, rs[" << R << "], nr = 0, count = 1;\n"
         << "    for (int d = 0; d < " << R << "; ++d) {\n"
         << "      if (red[d]) { rs[nr++] = d; count *= xd[d];" << (keep ? " ++k;" : "") << " }\n"
         << "      else base += cc[k++] * xst[d];\n    }\n"
         << "    double acc = " << init << ", shift = 0;\n";
  std::string each = "    for (int64_t t = 0; t < count; ++t) {\n"
                     "      int64_t rem = t, off = base;\n"
                     "      for (int64_t j = nr; j-- > 0;) { off += rem % xd[rs[j]] * xst[rs[j]]; "
                     "rem /= xd[rs[j]]; }\n"
                     "      const double e = (double)" +
                     m.load(x + "[off]") + ";\n";
  // LogSumExp: the maximum as the shift, none when not finite (all -inf or
  // empty, or an inf; a NaN propagates).
  if (op.is(OpKind::ReduceLogSumExp))
    m.body << "    shift = -" << inf << ";\n"
           << each << "      shift = e > shift || e != e ? e : shift;\n    }\n"
           << "    if (shift - shift != 0.0 && shift == shift) shift = 0.0;\n";
  m.body << each << "      " << fold << "\n    }\n"
         << "    out0[i] = " << m.store(finish) << ";\n";
  return true;
}

} // namespace tc::kernels
