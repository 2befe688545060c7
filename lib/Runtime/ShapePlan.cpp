#include "tc/Runtime/ShapePlan.h"
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Runtime/ArenaPacking.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <cstdlib>

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
  // Only a view's buffer has a base (MemoryPlan.h).
  auto it = op.results.size() == 1 ? bufferOf_.find(op.result()) : bufferOf_.end();
  return it != bufferOf_.end() && memory.buffers[it->second].base;
}

namespace {

// The stored plan (ShapePlanSection.h) at `sizes`: its sizes evaluated and
// its blocks packed; no pass, no shape inference, no planner.
std::unique_ptr<Module> planFromArtifact(const Artifact &artifact, const StoredShapePlan &stored,
                                         const std::map<std::string, int64_t> &sizes,
                                         MemoryPlan &memory) {
  std::unique_ptr<Module> m = readBytecode(artifact.share(kSectionModule));
  substituteDims(*m, sizes);
  applyFolds(m->main(), stored.folds, sizes);
  std::vector<ArenaBlock> blocks;
  for (const StoredBlock &b : stored.blocks)
    blocks.push_back({uint64_t(b.bytes.eval(sizes)), b.start, b.end});
  const Function &f = m->main();
  memory.function = f.name;
  memory.arenaBytes = packArena(blocks);
  std::unordered_map<std::string, const Value *> named;
  for (const auto *values : {&f.args, &f.constants})
    for (const Value *v : *values)
      named[v->name] = v;
  auto corrupt = [&](const std::string &why) {
    fail(artifact.file, ": section ", kSectionShapePlan, " does not fit the module: ", why);
  };
  size_t i = 0;
  for (const auto &op : f.ops)
    for (const Value *r : op->results) {
      if (i >= stored.buffers.size() || stored.buffers[i].value != r->name)
        corrupt("buffer " + std::to_string(i) + " is not %" + r->name);
      const StoredBuffer &sb = stored.buffers[i++];
      PlannedBuffer b;
      b.value = r;
      b.bytes = uint64_t(sb.bytes.eval(sizes));
      b.offset = sb.block == StoredBuffer::kNoBlock ? 0 : blocks[sb.block].offset;
      b.viewOffset = uint64_t(sb.viewOffset.eval(sizes));
      for (auto [name, to] : {std::pair{&sb.base, &b.base}, {&sb.inPlaceOf, &b.inPlaceOf}})
        if (!name->empty()) {
          auto it = named.find(*name);
          if (it == named.end())
            corrupt("no value %" + *name + " before %" + r->name);
          *to = it->second;
        }
      // Within its storage: a constant's bytes, its block (an argument's
      // bounds are the caller's inputs').
      uint64_t end = b.base ? b.viewOffset + byteSize(r->type).value_or(0) : b.bytes;
      bool inArena = sb.block != StoredBuffer::kNoBlock;
      if ((b.base && b.base->isConstant() && end > b.base->data->size) || (!b.base && !inArena) ||
          (inArena && end > blocks[sb.block].bytes))
        corrupt("%" + r->name + " does not fit its storage");
      memory.buffers.push_back(b);
      memory.blockOf.push_back(inArena ? sb.block : SIZE_MAX);
      named[r->name] = r;
    }
  if (i != stored.buffers.size())
    corrupt("more buffers than results");
  memory.blocks = std::move(blocks);
  return m;
}

// The section, or why there is no plan.
StoredShapePlan storedPlanOf(const Artifact &artifact) {
  const MemoryBuffer *section = artifact.section(kSectionShapePlan);
  if (section)
    return readShapePlan(section->str(), artifact.file);
  StoredShapePlan none;
  none.unplanned = "no section " + std::string(kSectionShapePlan) + ": an older tc-codegen's";
  return none;
}

} // namespace

RunTimePlanner runTimePlanner = nullptr;

std::string unplannedShapes(const Artifact &artifact) {
  std::string why = storedPlanOf(artifact).unplanned;
  if (!why.empty() && !runTimePlanner)
    fail(artifact.file, ": the artifact stores no shape plan (", why,
         "), and this runtime plans no shape itself nor runs one op by op on the host; "
         "compile with that dim fixed (tc-codegen --dim NAME=N) or run it with tc-run");
  return why;
}

void checkStoredPlan(const PlannedModule &stored, const PlannedModule &runTime) {
  const Function &a = stored.main(), &b = runTime.main();
  auto differ = [](const std::string &what) {
    fail("shape plan check: the artifact's plan and the run-time plan differ: ", what);
  };
  if (a.ops.size() > b.ops.size()) {
    // The planner also folded ops whose operands its folds made constants
    // and whose results are small at these sizes (a Cast of the batch's
    // indices), which the stored plan runs at every size: the same values
    // by another route. What both run must agree; the arenas differ.
    std::unordered_map<std::string, const Value *> runs;
    for (const auto &op : a.ops)
      for (const Value *r : op->results)
        runs[r->name] = r;
    for (const auto &op : b.ops)
      for (const Value *r : op->results)
        if (auto it = runs.find(r->name);
            it == runs.end() || it->second->type.str() != r->type.str())
          differ("%" + r->name + " is " + r->type.str() + " at run time, " +
                 (it == runs.end() ? "folded" : it->second->type.str()) + " stored");
    return;
  }
  if (a.ops.size() != b.ops.size())
    differ("op count");
  for (size_t i = 0; i < a.ops.size(); ++i)
    for (size_t r = 0; r < a.ops[i]->results.size(); ++r)
      if (a.ops[i]->results[r]->type.str() != b.ops[i]->results[r]->type.str())
        differ("%" + a.ops[i]->results[r]->name + " is " + a.ops[i]->results[r]->type.str() +
               " vs " + b.ops[i]->results[r]->type.str());
  const std::vector<PlannedBuffer> &x = stored.memory.buffers, &y = runTime.memory.buffers;
  if (x.size() != y.size())
    differ("buffer count");
  auto nameOf = [](const Value *v) { return v ? v->name : std::string("-"); };
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].bytes != y[i].bytes || nameOf(x[i].base) != nameOf(y[i].base) ||
        x[i].viewOffset != y[i].viewOffset || nameOf(x[i].inPlaceOf) != nameOf(y[i].inPlaceOf) ||
        x[i].offset != y[i].offset)
      differ("%" + x[i].value->name + " at " + std::to_string(x[i].offset) + " size " +
             std::to_string(x[i].bytes) + " vs at " + std::to_string(y[i].offset) + " size " +
             std::to_string(y[i].bytes));
  if (stored.memory.arenaBytes != runTime.memory.arenaBytes)
    differ("arena " + std::to_string(stored.memory.arenaBytes) + " vs " +
           std::to_string(runTime.memory.arenaBytes) + " bytes");
}

std::unique_ptr<PlannedModule> planShape(const Artifact &artifact,
                                         const std::map<std::string, int64_t> &sizes) {
  auto plan = std::make_unique<PlannedModule>();
  StoredShapePlan stored = storedPlanOf(artifact);
  if (!stored.unplanned.empty()) {
    unplannedShapes(artifact); // without a planner: the load-time error
    plan->module = runTimePlanner(artifact, sizes, plan->memory);
  } else {
    // What the plan assumes (a position buffer's length): refused here,
    // before any size is evaluated, naming the dim and the limit.
    checkGuards(stored.guards, sizes, artifact.file);
    plan->module = planFromArtifact(artifact, stored, sizes, plan->memory);
  }
  if (!plan->module)
    return nullptr;
  plan->index();
  // A debug check (test/Runtime/shape-plan.test): the stored plan against
  // the one the run-time planner makes for the same shape.
  if (stored.unplanned.empty() && runTimePlanner && std::getenv("TC_CHECK_SHAPE_PLAN")) {
    auto runTime = std::make_unique<PlannedModule>();
    runTime->module = runTimePlanner(artifact, sizes, runTime->memory);
    if (!runTime->module)
      fail("shape plan check: the run-time planner cannot plan this shape");
    runTime->index();
    checkStoredPlan(*plan, *runTime);
  }
  return plan;
}

void repackArena(MemoryPlan &plan, const std::function<bool(const Value *)> &stored) {
  std::vector<bool> needed(plan.blocks.size(), false);
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.blockOf[i] != SIZE_MAX && !stored(plan.buffers[i].value))
      needed[plan.blockOf[i]] = true;
  std::vector<ArenaBlock> spans = plan.blocks;
  for (size_t i = 0; i < spans.size(); ++i)
    if (!needed[i])
      spans[i].bytes = 0;
  plan.arenaBytes = packArena(spans);
  for (size_t i = 0; i < spans.size(); ++i)
    plan.blocks[i].offset = spans[i].offset;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.blockOf[i] != SIZE_MAX)
      plan.buffers[i].offset = plan.blocks[plan.blockOf[i]].offset;
}

void PlannedModule::index() {
  const Function &f = main();
  for (size_t i = 0; i < f.args.size(); ++i)
    argIndex_[f.args[i]] = i;
  for (size_t i = 0; i < memory.buffers.size(); ++i)
    bufferOf_[memory.buffers[i].value] = i;
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
