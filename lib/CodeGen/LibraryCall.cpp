#include "tc/CodeGen/LibraryCall.h"
#include "tc/IR/OpTable.h"
#include <unordered_map>

namespace tc {

bool isLibraryOp(const Op &op) { return op.info().library != LibraryClass::None; }

bool isLibraryAnchored(const Function &group, bool anyDType) {
  if (group.ops.empty() || group.results.empty() || (!anyDType && group.results.size() != 1))
    return false;
  const Op &anchor = *group.ops.front();
  if (!isLibraryOp(anchor) || anchor.results.size() != 1)
    return false;
  // Several results (a residual and its f32 copy for a LayerNorm): the
  // epilogue kernel writes each; none may be the anchor's own.
  if (group.results.size() > 1)
    for (const Value *r : group.results)
      if (r == anchor.result() || r->type.shape != group.results[0]->type.shape)
        return false;
  const TensorType &a = anchor.result()->type, &r = group.results[0]->type;
  if (anyDType ? a.shape != r.shape : a != r)
    return false;
  for (size_t i = 1; i < group.ops.size(); ++i) {
    const Op &op = *group.ops[i];
    if (op.info().category != FusionCategory::Pointwise)
      return false;
    for (const Value *r : op.results) // the epilogue writes the domain, element for element
      if (r->type.shape != group.results[0]->type.shape)
        return false;
  }
  return true;
}

bool moveConvBiasToEpilogue(Function &group) {
  if (group.ops.empty())
    return false;
  Op &conv = *group.ops.front();
  Value *bias = conv.operand(2);
  if (!conv.is(OpKind::Conv) || !bias || !conv.getInt("channels_last") || bias->type.rank() != 1)
    return false;
  Value *biased = conv.result();
  Value *raw = group.newValue(group.uniqueName(biased->name + "_nobias"), biased->type);
  raw->def = &conv;
  conv.results[0] = raw;
  conv.operands.resize(2);
  auto add = std::make_unique<Op>(OpKind::Add);
  add->operands = {raw, bias};
  add->results = {biased};
  add->loc = conv.loc;
  biased->def = add.get();
  group.insertOp(1, std::move(add));
  return true;
}

std::unique_ptr<Function> epilogueGroup(const Function &group) {
  if (!isLibraryAnchored(group, /*anyDType=*/true) || group.ops.size() == 1)
    return nullptr;
  auto e = std::make_unique<Function>();
  e->name = group.name + "__epilogue";
  std::unordered_map<const Value *, Value *> map;
  for (const Value *a : group.args)
    map[a] = e->addArgument(a->name, a->type);
  const Value *anchored = group.ops.front()->result();
  map[anchored] = e->addArgument(anchored->name, anchored->type);
  for (const Value *c : group.constants)
    map[c] = e->addConstant(c->name, c->type, *c->data, c->loc);
  for (size_t i = 1; i < group.ops.size(); ++i) {
    const Op &op = *group.ops[i];
    std::vector<Value *> ins;
    for (const Value *v : op.operands)
      ins.push_back(v ? map.at(v) : nullptr);
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (const Value *r : op.results) {
      names.push_back(r->name);
      types.push_back(r->type);
    }
    Op *copy = e->addOp(op.kind, std::move(ins), std::move(names), std::move(types), op.loc);
    copy->attrs = op.attrs;
    for (size_t k = 0; k < op.results.size(); ++k)
      map[op.results[k]] = copy->results[k];
  }
  for (const Value *r : group.results)
    e->results.push_back(map.at(r));
  return e;
}

} // namespace tc
