// Helpers shared by rewriting passes (tc/Transforms/Rewrite.h); replaceValue
// and eraseDeadOps live with DCE.
#include "tc/Transforms/Rewrite.h"
#include "tc/Runtime/ConstantEval.h"
#include <algorithm>
#include <cctype>

namespace tc {

bool rewriteOpsInPlace(Function &f, const std::function<bool(Function &, Op &)> &rewrite) {
  bool changed = false;
  std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
  f.ops.clear();
  for (auto &op : old) {
    changed |= rewrite(f, *op); // appends its new ops first
    f.ops.push_back(std::move(op));
  }
  return changed;
}

bool rewriteOpsInPlace(Module &m, const std::function<bool(Function &, Op &)> &rewrite) {
  bool changed = false;
  for (auto &fp : m.functions)
    changed |= rewriteOpsInPlace(*fp, rewrite);
  return changed;
}

Value *addIntsConstant(Function &f, const std::string &base, const std::vector<int64_t> &values,
                       Location loc) {
  return f.addConstant(f.uniqueName(base),
                       TensorType{DType::I64, makeShape({int64_t(values.size())})},
                       TensorData::copyOf(values.data(), values.size() * sizeof(int64_t)), loc);
}

Value *addInferredOp(Function &f, OpKind k, std::vector<Value *> ins,
                     std::vector<std::pair<std::string, Attribute>> attrs, const std::string &base,
                     const Location &loc) {
  std::string name = base + "_";
  for (char c : opInfo(k).name)
    name += char(std::tolower(static_cast<unsigned char>(c)));
  Op *o = f.addOp(k, std::move(ins), {f.uniqueName(name)}, {TensorType{}}, loc);
  for (auto &[n, a] : attrs)
    o->setAttr(n, std::move(a));
  o->result()->type = opInfo(k).infer(*o).at(0);
  return o->result();
}

void adoptValue(Value *r, Value *y, Function *f) {
  Op *def = y->def;
  def->results[y->resultIndex] = r;
  r->def = def;
  r->resultIndex = y->resultIndex;
  r->type = y->type;
  if (f)
    for (auto &o : f->ops)
      for (Value *&v : o->operands)
        if (v == y)
          v = r;
}

bool isWeightArgument(const Function &f, const Value *v) {
  if (v->def && v->def->is(OpKind::Transpose))
    v = v->def->operand(0);
  return !v->def && !v->isConstant() && std::find(f.args.begin(), f.args.end(), v) != f.args.end();
}

Op *soleReader(Function &f, const Value *v) {
  if (std::find(f.results.begin(), f.results.end(), v) != f.results.end())
    return nullptr;
  Op *reader = nullptr;
  for (auto &o : f.ops)
    for (const Value *x : o->operands)
      if (x == v) {
        if (reader)
          return nullptr;
        reader = o.get();
      }
  return reader;
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

ValueUses::ValueUses(const Function &f) {
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      if (v) {
        users[v].push_back(op.get());
        ++count[v];
      }
  for (const Value *v : f.results)
    count[v] += 2;
}

int ValueUses::operator[](const Value *v) const {
  auto it = count.find(v);
  return it == count.end() ? 0 : it->second;
}

const std::vector<Op *> &ValueUses::readers(const Value *v) const {
  static const std::vector<Op *> none;
  auto it = users.find(v);
  return it == users.end() ? none : it->second;
}

bool ValueUses::returned(const Value *v) const { return (*this)[v] > int(readers(v).size()); }

Op *ValueUses::sole(const Value *v) const { return (*this)[v] == 1 ? readers(v)[0] : nullptr; }

bool isZeros(const Value *v) {
  if (v->isConstant()) {
    if (!isFloat(v->type.dtype) || !v->data)
      return false;
    HostTensor t = constantTensor(*v);
    for (int64_t i = 0; i < t.numElements(); ++i)
      if (t.getDouble(i) != 0)
        return false;
    return true;
  }
  const Op *d = v->def;
  if (d && d->is(OpKind::Expand))
    return isZeros(d->operand(0));
  if (d && d->is(OpKind::ConstantOfShape))
    return d->getFloat("value") == 0;
  return false;
}

} // namespace tc
