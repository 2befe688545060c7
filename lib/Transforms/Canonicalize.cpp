// Local rewrites to a canonical form; each returns true when it changed the IR.
#include "tc/IR/Verifier.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <numeric>

namespace tc {

namespace {

std::vector<int64_t> transposePerm(const Op &op) {
  std::vector<int64_t> p = op.getInts("perm");
  if (p.empty())
    for (size_t i = 0; i < op.operand(0)->type.rank(); ++i)
      p.push_back(int64_t(op.operand(0)->type.rank() - 1 - i));
  return p;
}

bool isIdentityPerm(const std::vector<int64_t> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

// x -> op -> y where y == x: forward x.
bool foldToOperand(Function &f, Op &op) {
  Value *x = op.operand(0);
  if (!(x->type == op.result()->type))
    return false;
  return replaceValue(f, op.result(), x);
}

bool rewrite(Function &f, Op &op) {
  switch (op.kind) {
  case OpKind::Identity: return foldToOperand(f, op);
  case OpKind::Cast:
    return op.attr("to").type() == op.operand(0)->type.dtype && foldToOperand(f, op);
  case OpKind::Transpose: {
    std::vector<int64_t> p2 = transposePerm(op);
    if (isIdentityPerm(p2))
      return foldToOperand(f, op);
    Op *inner = op.operand(0)->def;
    if (!inner || !inner->is(OpKind::Transpose))
      return false;
    // out[i] = mid[p2[i]] = x[p1[p2[i]]]
    std::vector<int64_t> p1 = transposePerm(*inner), p(p2.size());
    for (size_t i = 0; i < p2.size(); ++i)
      p[i] = p1[p2[i]];
    op.operands[0] = inner->operand(0);
    op.setAttr("perm", Attribute(p));
    return true;
  }
  case OpKind::Reshape: {
    const TensorType &in = op.operand(0)->type, &out = op.result()->type;
    if (in == out && isStaticShape(in.shape))
      return foldToOperand(f, op);
    Op *inner = op.operand(0)->def;
    if (!inner || !inner->is(OpKind::Reshape))
      return false;
    // Reshape(Reshape(x, s1), s2) == Reshape(x, s2) unless s2 copies dims
    // (0 entries) from the intermediate shape.
    const Value *s2 = op.operand(1);
    if (!s2->isConstant())
      return false;
    const int64_t *d = s2->data->as<int64_t>();
    for (size_t i = 0; i < s2->data->size / 8; ++i)
      if (d[i] == 0 && !op.getInt("allowzero"))
        return false;
    op.operands[0] = inner->operand(0);
    return true;
  }
  default: return false;
  }
}

} // namespace

bool runCanonicalizePass(Module &m, const PassOptions &opts) {
  int64_t maxIter = opts.getInt("max-iterations");
  bool changedAny = false;
  for (auto &f : m.functions) {
    for (int64_t iter = 0; iter < maxIter; ++iter) {
      bool changed = false;
      for (auto &op : f->ops)
        changed |= rewrite(*f, *op);
      changed |= eraseDeadOps(*f);
      changedAny |= changed;
      if (!changed)
        break;
    }
  }
  return changedAny;
}

} // namespace tc
