// Binding run-time attribute operands to attributes (see RuntimeAttrs.h).
#include "tc/IR/RuntimeAttrs.h"
#include "Ops/OpInference.h"

namespace tc {

const AttrSpec *runtimeAttrSpec(const OpInfo &info, size_t i) {
  if (i >= info.operands.size() || !info.operands[i].optional)
    return nullptr;
  return info.findAttr(info.operands[i].name);
}

const Value *runtimeAttrOperand(const OpInfo &info, const std::vector<Value *> &operands,
                                std::string_view attr) {
  for (size_t i = 0; i < operands.size(); ++i)
    if (const AttrSpec *spec = runtimeAttrSpec(info, i); spec && operands[i] && spec->name == attr)
      return operands[i];
  return nullptr;
}

bool hasRuntimeAttrOperands(const Op &op) {
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (op.operands[i] && runtimeAttrSpec(op.info(), i))
      return true;
  return false;
}

void checkRuntimeAttrOperands(const Op &op) {
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (const AttrSpec *spec = runtimeAttrSpec(op.info(), i); spec && op.operands[i])
      if (op.findAttr(spec->name))
        fail("'", spec->name, "' is given both as an attribute and as operand ", i);
}

Attribute attributeFromConstant(const AttrSpec &spec, const Value &v) {
  const TensorType &t = v.type;
  auto n = staticNumElements(t.shape);
  bool isInt = spec.kind == AttrKind::Int || spec.kind == AttrKind::Ints;
  bool one = spec.kind == AttrKind::Int || spec.kind == AttrKind::Float;
  bool typeOk = isInt                          ? (t.dtype == DType::I64 || t.dtype == DType::I32)
                : spec.kind == AttrKind::Float ? t.dtype != DType::Bool
                                               : isFloat(t.dtype);
  if (!typeOk || t.rank() > 1 || !n || (one && *n != 1) ||
      (spec.kind != AttrKind::Int && spec.kind != AttrKind::Ints && spec.kind != AttrKind::Float &&
       spec.kind != AttrKind::Floats))
    fail("operand '", spec.name, "' must be ", one ? "one element" : "a 1-D tensor", " of ",
         isInt                          ? "i32 or i64"
         : spec.kind == AttrKind::Float ? "a numeric type"
                                        : "a float type",
         ", got ", t.str());
  switch (spec.kind) {
  case AttrKind::Int: return Attribute(infer::elementAsInt(v, 0));
  case AttrKind::Float: return Attribute(infer::elementAsDouble(v, 0));
  case AttrKind::Ints: {
    std::vector<int64_t> r;
    for (int64_t k = 0; k < *n; ++k)
      r.push_back(infer::elementAsInt(v, size_t(k)));
    return Attribute(std::move(r));
  }
  default: {
    std::vector<double> r;
    for (int64_t k = 0; k < *n; ++k)
      r.push_back(infer::elementAsDouble(v, size_t(k)));
    return Attribute(std::move(r));
  }
  }
}

Op *bindRuntimeAttrs(Function &scratch, const Op &op) {
  std::vector<Value *> operands = op.operands;
  std::vector<std::pair<std::string, Attribute>> bound;
  for (size_t i = 0; i < operands.size(); ++i) {
    const AttrSpec *spec = runtimeAttrSpec(op.info(), i);
    if (!spec || !operands[i])
      continue;
    if (!operands[i]->isConstant())
      return nullptr;
    bound.emplace_back(spec->name, attributeFromConstant(*spec, *operands[i]));
    operands[i] = nullptr;
  }
  while (!operands.empty() && !operands.back())
    operands.pop_back();
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (const Value *r : op.results) {
    names.push_back(r->name);
    types.push_back(r->type);
  }
  Op *s = scratch.addOp(op.kind, std::move(operands), std::move(names), std::move(types), op.loc);
  s->attrs = op.attrs;
  for (auto &[name, value] : bound)
    s->setAttr(name, std::move(value));
  return s;
}

} // namespace tc
