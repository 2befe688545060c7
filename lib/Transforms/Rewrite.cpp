// Helpers shared by rewriting passes (tc/Transforms/Rewrite.h); replaceValue
// and eraseDeadOps live with DCE.
#include "tc/Transforms/Rewrite.h"
#include "tc/Runtime/ConstantEval.h"

namespace tc {

bool rewriteOpsInPlace(Module &m, const std::function<bool(Function &, Op &)> &rewrite) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &op : old) {
      changed |= rewrite(f, *op); // appends its new ops first
      f.ops.push_back(std::move(op));
    }
  }
  return changed;
}

Value *addIntsConstant(Function &f, const std::string &base, const std::vector<int64_t> &values,
                       Location loc) {
  return f.addConstant(f.uniqueName(base),
                       TensorType{DType::I64, makeShape({int64_t(values.size())})},
                       TensorData::copyOf(values.data(), values.size() * sizeof(int64_t)), loc);
}

std::optional<double> floatScalarConstant(const Value *v) {
  if (!v || !v->isConstant() || !isFloat(v->type.dtype))
    return std::nullopt;
  HostTensor t = constantTensor(*v);
  if (t.numElements() != 1)
    return std::nullopt;
  return t.getDouble(0);
}

std::optional<ScalarScale> scalarScale(const Op &op) {
  if (!op.is(OpKind::Mul) && !op.is(OpKind::Div))
    return std::nullopt;
  bool div = op.is(OpKind::Div);
  std::optional<double> c = floatScalarConstant(op.operand(1));
  size_t data = 0;
  if (!c && !div && (c = floatScalarConstant(op.operand(0))))
    data = 1;
  if (!c || *c == 0 || op.operand(data)->type.shape != op.result()->type.shape)
    return std::nullopt;
  return ScalarScale{op.operand(data), div ? 1.0 / *c : *c};
}

} // namespace tc
