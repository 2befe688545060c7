// append-loss: main's model output becomes a loss against a new target
// argument (inserted before the state): cross-entropy over a class axis
// (PyTorch's CrossEntropyLoss: ignore_index, label smoothing, [N, C],
// [N, C, d...] or an LM's [B, T, V]), mse, l1, bce-with-logits, or the
// output itself when the model computes its own loss. The loss is main's
// result 0 (f32[]); the other model outputs are dropped. In an eval step
// (train-state{eval}) they are kept, after the metrics: cross-entropy's
// top-1 hits and the labels counted (ignored ones left out).
#include "tc/IR/Gradient.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"

namespace tc {

bool runAppendLossPass(Module &m, const PassOptions &opts) {
  Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  if (sig && (sig->grads || sig->step))
    fail("append-loss: the module is already differentiated");
  bool eval = sig && sig->eval;
  size_t buffers = sig && !eval ? sig->buffers : 0;
  size_t outputs = f.results.size() - buffers;
  int64_t which = opts.getInt("output");
  if (which < 0 || size_t(which) >= outputs)
    fail("append-loss: output ", which, " does not exist (@", f.name, " has ", outputs,
         " model outputs)");
  Value *y = f.results[size_t(which)];
  const std::string &kind = opts.get("loss");
  Op anchor(OpKind::Identity); // the loss's location: the model's file, node kLossNode
  anchor.loc = y->def ? y->def->loc : Location{};
  anchor.loc.node = kLossNode;
  GradBuilder b(f, anchor, "loss");
  if (!isFloat(y->type.dtype))
    fail("append-loss: output %", y->name, " is ", y->type.str(), "; a loss needs a float output");
  std::vector<int64_t> yD = b.dims(y);

  // The target argument goes before the state.
  auto addTarget = [&](TensorType t) {
    Value *a = f.addArgument(f.uniqueName("target"), std::move(t));
    f.args.pop_back();
    f.args.insert(f.args.end() - std::ptrdiff_t(sig ? sig->state : 0), a);
    return a;
  };
  auto meanAll = [&](Value *v) {
    return b.op(OpKind::ReduceMean, {v}, {{"keepdims", Attribute(int64_t(0))}});
  };
  Value *loss = nullptr;
  std::vector<Value *> metrics;
  if (kind == "cross-entropy") {
    if (yD.size() < 2)
      fail("append-loss: cross-entropy needs [N, C, ...] scores, not ", y->type.str());
    int64_t axis = opts.getInt("class-axis");
    if (axis < 0)
      axis += int64_t(yD.size());
    if (axis != 1 && axis != int64_t(yD.size()) - 1)
      fail("append-loss: class-axis must be 1 or the last axis of ", y->type.str());
    std::vector<int64_t> labelDims = yD;
    labelDims.erase(labelDims.begin() + axis);
    Value *labels = addTarget(TensorType{DType::I64, makeShape(labelDims)});
    // Classes last ([B, T, V]): rows of an [N, C] problem.
    Value *scores = y, *lab = labels;
    if (axis != 1) {
      int64_t rows = 1;
      for (int64_t d : labelDims)
        rows *= d;
      scores = b.reshape(y, {rows, yD.back()});
      lab = b.reshape(labels, {rows});
    }
    int64_t ignore = opts.getInt("ignore-index");
    std::vector<std::pair<std::string, Attribute>> attrs{
        {"ignore_index", Attribute(std::vector<int64_t>{ignore})}};
    double eps = opts.getNumber("append-loss", "label-smoothing");
    if (eps < 0 || eps > 1)
      fail("append-loss: label-smoothing must be in [0, 1], not ", eps);
    // The rows whose label is not ignored: label smoothing's mean and the
    // eval step's counts.
    Value *keep = nullptr;
    if (eval || eps != 0) {
      Value *ig = f.addConstant(f.uniqueName("loss_ignore"), TensorType{DType::I64, {}},
                                TensorData::copyOf(&ignore, 8), anchor.loc);
      keep = b.op(OpKind::Not, {b.op(OpKind::Equal, {lab, ig})});
    }
    if (eval) {
      // A hit: the label's score is the row's largest (float reductions
      // only: the kernels take no integer compare beside a reduction; a tie
      // with another class counts as a hit).
      int64_t classes = b.dims(scores)[1];
      std::vector<float> iota(static_cast<size_t>(classes));
      for (int64_t c = 0; c < classes; ++c)
        iota[size_t(c)] = float(c);
      Value *ids =
          f.addConstant(f.uniqueName("loss_classes"), TensorType{DType::F32, {Dim::fixed(classes)}},
                        TensorData::copyOf(iota.data(), iota.size() * 4), anchor.loc);
      Value *labF = b.reshape(b.castTo(lab, DType::F32), {b.dims(lab)[0], 1});
      Value *oneHot = b.castTo(b.op(OpKind::Equal, {labF, ids}), scores->type.dtype);
      Value *own = b.reduceSum(b.mul(scores, oneHot), {1}, false);
      Value *best =
          b.op(OpKind::ReduceMax, {scores},
               {{"axes", Attribute(std::vector<int64_t>{1})}, {"keepdims", Attribute(int64_t(0))}});
      Value *hit = b.op(OpKind::And, {b.op(OpKind::GreaterOrEqual, {own, best}), keep});
      auto count = [&](Value *v) {
        return b.op(OpKind::ReduceSum, {b.castTo(v, DType::F32)},
                    {{"keepdims", Attribute(int64_t(0))}});
      };
      metrics = {count(hit), count(keep)};
    }
    if (eps == 0) {
      loss = b.op(OpKind::SoftmaxCrossEntropyLoss, {scores, lab}, attrs);
    } else {
      // PyTorch's smoothing: (1 - eps) nll + eps mean over classes of -log p,
      // both averaged over the rows that are not ignored.
      std::vector<Value *> r = b.ops(OpKind::SoftmaxCrossEntropyLoss, {scores, lab}, 2, attrs);
      Value *smooth = b.neg(b.reduceMean(r[1], {1}, false));
      Value *kept = b.castTo(keep, y->type.dtype);
      Value *sumAll =
          b.op(OpKind::ReduceSum, {b.mul(smooth, kept)}, {{"keepdims", Attribute(int64_t(0))}});
      Value *count = b.op(OpKind::ReduceSum, {kept}, {{"keepdims", Attribute(int64_t(0))}});
      loss = b.add(b.scale(r[0], 1 - eps), b.scale(b.div(sumAll, count), eps));
    }
  } else if (kind == "mse" || kind == "l1" || kind == "bce-with-logits") {
    Value *t = addTarget(y->type);
    if (kind == "mse") {
      Value *d = b.sub(y, t);
      loss = meanAll(b.mul(d, d));
    } else if (kind == "l1") {
      loss = meanAll(b.op(OpKind::Abs, {b.sub(y, t)}));
    } else {
      // max(x, 0) - x t + log(1 + e^-|x|): stable for every x.
      Value *soft = b.op(OpKind::Softplus, {b.neg(b.op(OpKind::Abs, {y}))});
      loss = meanAll(b.add(b.sub(b.op(OpKind::Relu, {y}), b.mul(y, t)), soft));
    }
  } else if (kind == "output") {
    if (staticNumElements(y->type.shape) != std::optional<int64_t>(1))
      fail("append-loss: --loss=output needs a scalar model output, not %", y->name, " ",
           y->type.str());
    loss = b.reshape(y, {});
  } else {
    fail("append-loss: unknown loss '", kind,
         "' (cross-entropy, mse, l1, bce-with-logits or output)");
  }
  loss = b.castTo(loss, DType::F32);
  Value *named =
      f.addOp(OpKind::Identity, {loss}, {f.uniqueName("loss")}, {loss->type}, anchor.loc)->result();
  std::vector<Value *> results{named};
  if (eval) {
    const char *names[] = {"top1_hits", "labels_counted"};
    for (size_t i = 0; i < metrics.size(); ++i)
      results.push_back(f.addOp(OpKind::Identity, {metrics[i]}, {f.uniqueName(names[i])},
                                {metrics[i]->type}, anchor.loc)
                            ->result());
    results.insert(results.end(), f.results.begin(), f.results.end());
    sig->metrics = metrics.size();
    setTrainSignature(m, *sig);
  } else {
    results.insert(results.end(), f.results.end() - std::ptrdiff_t(buffers), f.results.end());
  }
  f.results = results;
  return true;
}

} // namespace tc
