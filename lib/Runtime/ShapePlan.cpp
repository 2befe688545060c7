#include "tc/Runtime/ShapePlan.h"
#include "tc/Analysis/KernelCount.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeInference.h"

namespace tc {

std::optional<ShapeKey> shapeKeyOf(const Function &main, const std::vector<HostTensor> &inputs) {
  std::vector<InputType> types;
  for (const HostTensor &t : inputs)
    types.push_back({t.dtype(), &t.shape()});
  return shapeKeyOfTypes(main, types);
}

std::optional<ShapeKey> shapeKeyOfTypes(const Function &main,
                                        const std::vector<InputType> &inputs) {
  if (inputs.size() != main.args.size())
    return std::nullopt;
  ShapeKey k;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape &s = main.args[i]->type.shape;
    if (inputs[i].dtype != main.args[i]->type.dtype || inputs[i].dims->size() != s.size())
      return std::nullopt;
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t n = (*inputs[i].dims)[d];
      k.dims.push_back(n);
      if ((s[d].isStatic() && s[d].size != n) ||
          (s[d].isSymbolic() && !k.sizes.emplace(s[d].symbol, n).second &&
           k.sizes[s[d].symbol] != n))
        return std::nullopt;
    }
    k.dims.push_back(-1);
  }
  return k;
}

ValuePlace PlannedModule::placeOf(const Value *v) const {
  if (auto a = argIndex_.find(v); a != argIndex_.end())
    return {ValuePlace::Kind::Argument, a->second};
  if (v->isConstant())
    return {ValuePlace::Kind::Constant, 0, v->data->ptr};
  const PlannedBuffer &b = memory.buffers.at(bufferOf_.at(v));
  if (!b.base)
    return {ValuePlace::Kind::Arena, 0, nullptr, b.offset};
  ValuePlace at = placeOf(b.base);
  if (at.kind == ValuePlace::Kind::Constant)
    at.weight += b.viewOffset;
  else
    at.offset += b.viewOffset;
  return at;
}

bool PlannedModule::aliases(const Op &op) const {
  return isViewOp(op) && memory.buffers.at(bufferOf_.at(op.result())).base;
}

std::unique_ptr<PlannedModule> planShape(const Artifact &artifact,
                                         const std::map<std::string, int64_t> &sizes) {
  auto plan = std::make_unique<PlannedModule>();
  try {
    plan->module = readBytecode(artifact.share(kSectionModule));
    specializeDims(*plan->module, sizes);
    // With the sizes known, shape computations (Shape -> Gather -> Concat ->
    // Reshape) fold, and the sizes they decide become known too.
    runFoldConstantsPass(*plan->module, PassInvocation(PassId::FoldConstants).options);
    const Function &sf = plan->module->main();
    // Every value must have a size now, and a fixed one (not strings).
    for (const auto *values : {&sf.args, &sf.results})
      for (const Value *v : *values)
        if (!byteSize(v->type))
          throw Error("no fixed size");
    for (const auto &op : sf.ops) {
      if (refKernelSetsOutputDims(op->kind) || isControlFlowOp(*op))
        throw Error("data-dependent");
      for (const Value *r : op->results)
        if (!isStaticShape(r->type.shape) || !byteSize(r->type))
          throw Error("unknown size");
    }
    plan->memory = planMemory(sf, {});
  } catch (const Error &) {
    return nullptr;
  }
  const Function &f = plan->main();
  for (size_t i = 0; i < f.args.size(); ++i)
    plan->argIndex_[f.args[i]] = i;
  for (size_t i = 0; i < plan->memory.buffers.size(); ++i)
    plan->bufferOf_[plan->memory.buffers[i].value] = i;
  return plan;
}

std::vector<HostTensor> runOpOnReference(const Module &m, const Op &op,
                                         const std::function<HostTensor(const Value *)> &operand) {
  Function scratch;
  std::vector<Value *> operands;
  std::vector<HostTensor> ins;
  std::unordered_map<const Value *, Value *> copied; // an operand may repeat
  for (const Value *v : op.operands) {
    if (!v) {
      operands.push_back(nullptr);
      continue;
    }
    Value *&c = copied[v];
    if (!c && v->isConstant())
      c = scratch.addConstant(v->name, v->type, *v->data, v->loc);
    else if (!c) {
      c = scratch.addArgument(v->name, v->type);
      ins.push_back(operand(v));
    }
    operands.push_back(c);
  }
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (const Value *r : op.results) {
    names.push_back(r->name);
    types.push_back(r->type);
  }
  Op *copy = scratch.addOp(op.kind, operands, names, types, op.loc);
  copy->attrs = op.attrs;
  scratch.results = copy->results;
  return runReference(&m, scratch, ins);
}

} // namespace tc
