// train-state: makes main's trained weights state. Float initializers
// (matched by their ONNX names against `trainable`, not `freeze`) become
// trailing arguments of main, their values @init's results; batch norms
// (either form) normalize with batch statistics, their running statistics
// buffers updated by the forward (tc/IR/TrainSignature.h); training-mode
// Dropouts PhiloxDropouts whose RNG seed and offset are state. With `eval`,
// the same state for an eval step: batch norms normalize with the buffers,
// Dropouts are the identity.
#include "tc/IR/Gradient.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <regex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// The value an exporter's chain of Identities hands on (a batch norm's
// running statistics may reach it so).
Value *throughIdentities(Value *v) {
  while (v && v->def && v->def->is(OpKind::Identity))
    v = v->def->operand(0);
  return v;
}

std::regex compile(const std::string &what, const std::string &re) {
  try {
    return std::regex(re, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    fail("train-state: ", what, " '", re, "' is not a regular expression: ", e.what());
  }
}

std::string onnxName(const Value *c) { return c->loc.node.empty() ? c->name : c->loc.node; }

// Training-mode Dropouts (training_mode a constant true) become
// PhiloxDropouts reading two new state values, rng.seed and rng.offset
// (i64 scalars from @init: 0, 0), each its own stream (the Dropouts in
// order); a ratio of 0, or an eval step, is the identity. Returns the state
// values added.
size_t trainingDropouts(Module &m, Function &f, Function &init, std::vector<std::string> &keys,
                        bool eval) {
  Value *seed = nullptr, *offset = nullptr;
  int64_t stream = 0;
  std::vector<std::pair<Value *, Value *>> replaced;
  rewriteOpsInPlace(m, [&](Function &fn, Op &op) {
    if (&fn != &f || !op.is(OpKind::Dropout) || !op.operand(2))
      return false;
    const Value *mode = op.operand(2), *r = op.operand(1);
    if (!mode->isConstant())
      fail(op.where(), ": training a Dropout needs a constant training_mode");
    if (mode->data->size >= 1 && mode->data->ptr[0] == 0)
      return false; // inference form: canonicalize drops it
    if (r && (!r->isConstant() || staticNumElements(r->type.shape) != std::optional<int64_t>(1)))
      fail(op.where(), ": training a Dropout needs a constant ratio");
    double ratio = !r                            ? 0.5
                   : r->type.dtype == DType::F32 ? double(*r->data->as<float>())
                   : r->type.dtype == DType::F64 ? *r->data->as<double>()
                                                 : -1.0;
    if (r && r->type.dtype != DType::F32 && r->type.dtype != DType::F64)
      fail(op.where(), ": training a Dropout needs an f32 or f64 ratio");
    if (!(ratio >= 0 && ratio < 1))
      fail(op.where(), ": Dropout ratio ", ratio, " is not in [0, 1)");
    if (eval)
      ratio = 0; // model.eval(): no element dropped, no RNG state
    if (!seed && ratio != 0) {
      TensorType i64{DType::I64, {}};
      seed = f.addArgument(f.uniqueName("rng_seed"), i64);
      offset = f.addArgument(f.uniqueName("rng_offset"), i64);
      for (const char *key : {kRngSeedKey, kRngOffsetKey}) {
        int64_t zero = 0;
        init.results.push_back(init.addConstant(init.uniqueName("rng"), i64,
                                                TensorData::copyOf(&zero, sizeof zero), op.loc));
        keys.push_back(key);
      }
    }
    GradBuilder b(fn, op, op.result()->name + "_drop");
    Value *x = op.operand(0);
    std::vector<std::pair<std::string, Attribute>> attrs{
        {"ratio", Attribute(ratio)},
        {"stream", Attribute(stream++)},
        {"seed", Attribute(op.getInts("seed").empty() ? int64_t(0) : op.getInts("seed")[0])}};
    replaced.emplace_back(op.result(),
                          ratio == 0 ? x : b.op(OpKind::PhiloxDropout, {x, seed, offset}, attrs));
    if (op.results.size() > 1) { // the mask: the kept elements of ones
      Value *ones = b.expandTo(b.scalar(1.0, x), b.dims(x));
      Value *kept = ratio == 0 ? ones : b.op(OpKind::PhiloxDropout, {ones, seed, offset}, attrs);
      replaced.emplace_back(op.result(1), b.op(OpKind::Greater, {kept, b.scalar(0.0, x)}));
    }
    return true;
  });
  for (auto [from, to] : replaced)
    f.replaceAllUsesWith(from, to);
  eraseDeadOps(f);
  return seed ? 2 : 0;
}

} // namespace

bool runTrainStatePass(Module &m, const PassOptions &opts) {
  if (trainSignature(m))
    fail("train-state: the module already has a training record");
  Function &f = m.main();
  std::regex trainable = compile("trainable", opts.get("trainable"));
  std::string freezeText = opts.get("freeze");
  std::regex freeze = compile("freeze", freezeText.empty() ? "$^" : freezeText);
  bool eval = opts.getBool("eval");

  // A batch norm whose statistics are computed in the graph (NFNet's weight
  // standardization: the dynamo exporter gives an inference one the weight's
  // mean and variance, the TorchScript one a training-mode one over the
  // weight whose "running statistics" are computed too) has no running
  // statistics to keep: it is its formula, and the gradient flows through
  // the statistics as PyTorch's does.
  auto constantStat = [](Value *v) {
    v = throughIdentities(v);
    return v && v->isConstant();
  };
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op &op = *f.ops[i];
    bool computed =
        (op.is(OpKind::BatchNormalization) || op.is(OpKind::BatchNormalizationTraining)) &&
        !(constantStat(op.operand(3)) && constantStat(op.operand(4)));
    if (computed && !(op.is(OpKind::BatchNormalization) ? lowerBatchNormFormula(f, i)
                                                        : lowerTrainingBatchNorm(f, i)))
      fail(op.where(), ": training a batch norm needs constant running statistics, or [C] "
                       "statistics computed in the graph");
  }

  // Batch norms: training batch norm ops over batch statistics (lowered
  // after autodiff into a reduction per statistic and pointwise ops); their
  // running statistics become buffers updated as PyTorch does (the
  // variance's unbiased).
  std::vector<Value *> bufferConsts, bufferUpdates;
  std::unordered_set<const Value *> statistics;
  std::vector<std::pair<Value *, Value *>> replaced; // old result -> its value now
  rewriteOpsInPlace(m, [&](Function &fn, Op &op) {
    bool training = op.is(OpKind::BatchNormalizationTraining);
    if (&fn != &f || !(training || op.is(OpKind::BatchNormalization)))
      return false;
    // Each batch norm's statistics become buffers of their own: an exporter
    // may hand it an initializer through an Identity, and one shared with
    // other tensors of equal values (a fresh model's zero bias and zero
    // mean); the buffer is named as the value that reaches the batch norm.
    auto ownCopy = [&](Value *v) {
      Value *c = throughIdentities(v);
      if (!c->isConstant())
        fail(op.where(), ": training a batch norm needs constant running statistics");
      std::string key = v == c ? onnxName(c) : v->name;
      return fn.addConstant(fn.uniqueName(v->name + "_buffer"), c->type, *c->data,
                            Location{c->loc.file, key});
    };
    Value *x = op.operand(0), *mean = ownCopy(op.operand(3)), *var = ownCopy(op.operand(4));
    GradBuilder b(fn, op, op.result()->name + "_bn");
    std::vector<int64_t> xD = b.dims(x);
    if (b.dims(mean).size() != 1)
      fail(op.where(), ": training a batch norm needs [C] statistics");
    std::vector<int64_t> cD(xD.size(), 1);
    int64_t count = xD[0];
    for (size_t a = 2; a < xD.size(); ++a)
      count *= xD[a];
    cD[1] = xD[1];
    Value *eps = b.scalar(op.getFloat("epsilon"), x);
    statistics.insert(mean);
    statistics.insert(var);
    bufferConsts.push_back(mean);
    bufferConsts.push_back(var);
    if (eval) { // the running statistics, unchanged
      Value *inv = b.op(OpKind::Reciprocal, {b.op(OpKind::Sqrt, {b.add(b.reshape(var, cD), eps)})});
      Value *y =
          b.add(b.mul(b.mul(b.sub(x, b.reshape(mean, cD)), inv), b.reshape(op.operand(1), cD)),
                b.reshape(op.operand(2), cD));
      replaced.emplace_back(op.result(), y);
      if (training) {
        replaced.emplace_back(op.result(1), mean);
        replaced.emplace_back(op.result(2), var);
      }
      return true;
    }
    // A training batch norm op: autodiff applies its rule (two sums a norm),
    // then canonicalize lowers it (FoldBatchNorm.cpp). Its running variance
    // takes the population one, PyTorch's the unbiased one (u = M / (M - 1)):
    // theirs is u * ours + (1 - u) * momentum * var.
    double momentum = training ? op.getFloat("momentum") : 0.9;
    double unbiased = count > 1 ? double(count) / double(count - 1) : 1.0;
    std::vector<Value *> bn =
        b.ops(OpKind::BatchNormalizationTraining, {x, op.operand(1), op.operand(2), mean, var}, 3,
              {{"epsilon", Attribute(op.getFloat("epsilon"))}, {"momentum", Attribute(momentum)}});
    Value *y = bn[0], *newMean = bn[1];
    Value *newVar = unbiased == 1.0
                        ? bn[2]
                        : b.add(b.scale(bn[2], unbiased), b.scale(var, (1 - unbiased) * momentum));
    replaced.emplace_back(op.result(), y);
    if (training) {
      replaced.emplace_back(op.result(1), newMean);
      replaced.emplace_back(op.result(2), newVar);
    }
    bufferUpdates.push_back(newMean);
    bufferUpdates.push_back(newVar);
    return true;
  });
  for (auto [from, to] : replaced)
    f.replaceAllUsesWith(from, to);
  f.results.insert(f.results.end(), bufferUpdates.begin(), bufferUpdates.end());
  eraseDeadOps(f);

  // Parameters: float initializers with 2+ elements that some op reads
  // (scalars are the exporter's literals, not weights), in the model's order;
  // of an imported model, only its initializers (kWeightsMetadataKey).
  // (A metadata entry of names, one a line; none when the module lacks it.)
  auto names = [&](const char *key) -> std::optional<std::unordered_set<std::string>> {
    auto it = m.metadata.find(key);
    if (it == m.metadata.end())
      return std::nullopt;
    std::unordered_set<std::string> out;
    std::istringstream lines(it->second);
    for (std::string line; std::getline(lines, line);)
      out.insert(line);
    return out;
  };
  std::optional<std::unordered_set<std::string>> weights = names(kWeightsMetadataKey);
  // Not trained, as the model's exporter said (kFrozenMetadataKey).
  std::unordered_set<std::string> frozen =
      names(kFrozenMetadataKey).value_or(std::unordered_set<std::string>{});
  std::unordered_set<const Value *> used;
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      used.insert(v);
  std::vector<Value *> params;
  for (Value *c : f.constants) {
    if (!isFloat(c->type.dtype) || statistics.count(c) || !used.count(c) ||
        (weights && !weights->count(onnxName(c))) || frozen.count(onnxName(c)))
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
  size_t rngState = trainingDropouts(m, f, *init, keys, eval);
  f.removeUnusedConstants();
  TrainSignature sig;
  sig.state = all.size() + rngState;
  sig.params = params.size();
  sig.buffers = bufferConsts.size();
  sig.eval = eval;
  setTrainSignature(m, sig);
  setStateKeys(m, keys);
  return true;
}

} // namespace tc
