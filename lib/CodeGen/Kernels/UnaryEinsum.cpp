// A one-operand Einsum the lower-einsum pass leaves alone (a label repeated
// in its term: a diagonal, a trace) as an index move (IndexMoveParts.h),
// both dialects: result element c reads the operand where each axis takes
// its label's coordinate (an output label's from c, a repeated label's once
// for all its axes) and sums over the labels the output drops, in double,
// rounded once.
#include "Families.h"
#include "IndexMoveParts.h"
#include "tc/IR/NNMath.h"
#include <algorithm>

namespace tc::kernels {

bool isUnaryEinsum(const Op &op) {
  return op.is(OpKind::Einsum) && op.operands.size() == 1 && op.operand(0) &&
         isFloat(op.operand(0)->type.dtype);
}

bool emitUnaryEinsum(MoveCode &m) {
  nn::EinsumSpec spec;
  try {
    spec = nn::parseEinsum(m.op.getString("equation"), {m.x->type.rank()});
  } catch (const Error &) {
    return m.c.noKernel("an Einsum whose equation does not parse");
  }
  const std::vector<int> &in = spec.inputs[0], &out = spec.output;
  if (out.size() != m.r || !m.computed())
    return m.ok && m.c.noKernel("an Einsum whose result rank does not match");
  m.c.emitRowMajorStrides(m.setup, "xst", m.x);
  std::string at = "(int64_t)0", indent = "    ";
  std::vector<int> summed;
  m.body << "    double acc = 0;\n";
  for (size_t j = 0; j < in.size(); ++j) {
    int l = in[j];
    auto o = std::find(out.begin(), out.end(), l);
    std::string coord = "s" + std::to_string(l);
    if (o != out.end()) {
      coord = m.cs(size_t(o - out.begin()));
    } else if (std::find(summed.begin(), summed.end(), l) == summed.end()) {
      summed.push_back(l);
      m.body << indent << "for (int64_t " << coord << " = 0; " << coord << " < " << m.c.dim(m.x, j)
             << "; ++" << coord << ")\n";
      indent += "  ";
    }
    at += " + " + coord + " * xst[" + std::to_string(j) + "]";
  }
  m.body << indent << "acc += (double)" << m.load(m.data(0) + "[" + at + "]") << ";\n"
         << "    out0[i] = " << m.store("acc") << ";\n";
  return true;
}

} // namespace tc::kernels
