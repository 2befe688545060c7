// weight-shadows: a mixed-precision train step keeps each parameter's half
// copy as state. The forward cast every weight to f16 each step (one
// multi-tensor launch reading 4 bytes and writing 2 a parameter: 0.17 ms of
// roberta_base's AMP step, 0.25 ms of llama's on the H100); the optimizer's
// update, which reads and writes the f32 weight anyway, writes the copy
// beside it instead (2 bytes a parameter more in a kernel already at the
// bandwidth roofline), and the next step's forward and backward GEMMs read
// it. The copy is derived state (TrainSignature.h, derivedState): whoever
// starts the state from @init or a checkpoint casts it from the weight
// (TrainCheckpoint.h initialTrainState, readTrainCheckpoint), and a
// checkpoint never stores it, so it can never disagree with its weight. A
// step whose loss scale skips the update writes the same copy again (the
// cast of the kept weight).
#include "tc/IR/Gradient.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <map>
#include <unordered_map>

namespace tc {

bool runWeightShadowsPass(Module &m, const PassOptions &opts) {
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!opts.getBool("enable") || !sig || !sig->step || sig->eval)
    return false;
  Function &f = m.main();
  Function &init = *trainInit(m);
  Op anchor(OpKind::Identity);
  GradBuilder ib(init, anchor, "shadow");
  std::vector<std::string> keys = stateKeys(m);
  std::vector<std::pair<std::string, std::string>> derived = derivedState(m);
  const size_t firstArg = f.args.size() - sig->state, firstResult = f.results.size() - sig->state;
  // The parameter a Cast to f16 / bf16 outside the optimizer reads, directly
  // (mixed precision's for the forward) or through a Transpose or Reshape of
  // it alone (a gradient rule's transposed weight, cast for the backward's
  // GEMM); paramOf: each f32 parameter's index.
  std::unordered_map<const Value *, size_t> paramOf;
  for (size_t i = 0; i < sig->params; ++i)
    if (f.args[firstArg + i]->type.dtype == DType::F32)
      paramOf[f.args[firstArg + i]] = i;
  auto source = [&](const Op &op) -> const Value * {
    if (!op.is(OpKind::Cast) || op.loc.phase == Phase::Optimizer ||
        (op.result()->type.dtype != DType::F16 && op.result()->type.dtype != DType::BF16))
      return nullptr;
    const Value *v = op.operand(0);
    if (v->def && (v->def->is(OpKind::Transpose) || v->def->is(OpKind::Reshape)))
      v = v->def->operand(0);
    return paramOf.count(v) ? v : nullptr;
  };
  // One copy a parameter and type, made at its first such Cast.
  std::map<std::pair<size_t, DType>, Value *> copies;
  Location loc;
  loc.phase = Phase::Optimizer;
  for (size_t at = 0; at < f.ops.size(); ++at) {
    Op &cast = *f.ops[at];
    const Value *w = source(cast);
    if (!w)
      continue;
    const size_t i = paramOf.at(w);
    const DType low = cast.result()->type.dtype;
    const TensorType t{low, w->type.shape};
    const std::string type(dtypeName(low));
    Value *&copy = copies[{i, low}];
    if (!copy) {
      copy = f.addArgument(f.uniqueName(w->name + "_" + type), t);
      Op *recast = f.addOp(OpKind::Cast, {f.results[firstResult + i]},
                           {f.uniqueName(w->name + "_new_" + type)}, {t}, loc);
      recast->setAttr("to", Attribute(low));
      f.results.push_back(recast->result());
      // @init gives zeros (an Expand, which fold-constants leaves alone: a
      // folded Cast would store every weight twice in the artifact); who
      // runs @init derives the copy (TrainCheckpoint.h initialTrainState).
      init.results.push_back(ib.expandTo(ib.scalar(0, copy), staticDims(t.shape)));
      std::string key = keys[i] + "." + type;
      derived.push_back({key, keys[i]});
      keys.push_back(key);
      ++sig->state;
    }
    Value *replacement = copy;
    if (cast.operand(0) != w) { // the Transpose / Reshape, of the copy
      const Op &layout = *cast.operand(0)->def;
      auto moved = std::make_unique<Op>(layout.kind);
      moved->operands = layout.operands;
      moved->operands[0] = copy;
      moved->attrs = layout.attrs;
      moved->loc = cast.loc;
      replacement = f.newValue(f.uniqueName(cast.result()->name), cast.result()->type);
      replacement->def = moved.get();
      moved->results = {replacement};
      f.insertOp(at++, std::move(moved));
    }
    if (!replaceValue(f, cast.result(), replacement))
      fail("weight-shadows: cannot replace %", cast.result()->name);
  }
  if (copies.empty())
    return false;
  eraseDeadOps(f);
  setTrainSignature(m, *sig);
  setStateKeys(m, keys);
  setDerivedState(m, derived);
  return true;
}

} // namespace tc
