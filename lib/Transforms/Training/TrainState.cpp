// train-state: makes main's trained weights state. Float initializers
// (matched by their ONNX names against `trainable`, not `freeze`) become
// trailing arguments of main, their values @init's results; batch norms in
// their inference form become the training form, whose running statistics
// are buffers updated by the forward (tc/IR/TrainSignature.h).
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <regex>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

std::regex compile(const std::string &what, const std::string &re) {
  try {
    return std::regex(re, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    fail("train-state: ", what, " '", re, "' is not a regular expression: ", e.what());
  }
}

std::string onnxName(const Value *c) { return c->loc.node.empty() ? c->name : c->loc.node; }

} // namespace

bool runTrainStatePass(Module &m, const PassOptions &opts) {
  if (trainSignature(m))
    fail("train-state: the module already has a training record");
  Function &f = m.main();
  std::regex trainable = compile("trainable", opts.get("trainable"));
  std::string freezeText = opts.get("freeze");
  std::regex freeze = compile("freeze", freezeText.empty() ? "$^" : freezeText);

  // Batch norms: the training form; their statistics become buffers.
  std::vector<Value *> bufferConsts, bufferUpdates;
  std::unordered_set<const Value *> statistics;
  for (auto &op : f.ops) {
    if (op->is(OpKind::BatchNormalizationTraining)) { // exported after model.train()
      for (size_t i : {3, 4}) {
        if (!op->operand(i)->isConstant())
          fail(op->where(), ": training a batch norm needs constant running statistics");
        statistics.insert(op->operand(i));
        bufferConsts.push_back(op->operand(i));
        bufferUpdates.push_back(op->result(i - 2));
      }
      continue;
    }
    if (!op->is(OpKind::BatchNormalization))
      continue;
    Value *mean = op->operand(3), *var = op->operand(4);
    if (!mean->isConstant() || !var->isConstant())
      fail(op->where(), ": training a batch norm needs constant running statistics");
    statistics.insert(mean);
    statistics.insert(var);
    auto bn = std::make_unique<Op>(OpKind::BatchNormalizationTraining);
    bn->operands = op->operands;
    bn->loc = op->loc;
    bn->setAttr("epsilon", Attribute(op->getFloat("epsilon")));
    Value *y = op->result();
    bn->results.push_back(y);
    y->def = bn.get();
    for (Value *stat : {mean, var}) {
      Value *r = f.newValue(f.uniqueName(stat->name + "_new"), stat->type);
      r->def = bn.get();
      r->resultIndex = unsigned(bn->results.size());
      bn->results.push_back(r);
      bufferConsts.push_back(stat);
      bufferUpdates.push_back(r);
    }
    op = std::move(bn);
  }

  // Parameters: float initializers with 2+ elements that some op reads
  // (scalars are the exporter's literals, not weights), in the model's order.
  std::unordered_set<const Value *> used;
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      used.insert(v);
  std::vector<Value *> params;
  for (Value *c : f.constants) {
    if (!isFloat(c->type.dtype) || statistics.count(c) || !used.count(c))
      continue;
    std::optional<int64_t> n = staticNumElements(c->type.shape);
    std::string name = onnxName(c);
    if (n && *n >= 2 && std::regex_match(name, trainable) && !std::regex_match(name, freeze))
      params.push_back(c);
  }
  if (params.empty())
    fail("train-state: no float initializer of @", f.name, " matches --trainable '",
         opts.get("trainable"), "'",
         freezeText.empty() ? "" : " and not --freeze '" + freezeText + "'");

  Function *init = trainInit(m, true);
  std::vector<std::string> keys;
  for (Value *c : params)
    keys.push_back(onnxName(c));
  for (Value *c : bufferConsts)
    keys.push_back(onnxName(c));
  std::vector<Value *> all = params;
  all.insert(all.end(), bufferConsts.begin(), bufferConsts.end());
  for (Value *c : all) {
    Value *arg = f.addArgument(f.uniqueName(c->name), c->type);
    f.replaceAllUsesWith(c, arg);
    init->results.push_back(
        init->addConstant(init->uniqueName(c->name), c->type, *c->data, c->loc));
  }
  f.removeUnusedConstants();
  f.results.insert(f.results.end(), bufferUpdates.begin(), bufferUpdates.end());
  TrainSignature sig;
  sig.state = all.size();
  sig.params = params.size();
  sig.buffers = bufferConsts.size();
  setTrainSignature(m, sig);
  setStateKeys(m, keys);
  return true;
}

} // namespace tc
