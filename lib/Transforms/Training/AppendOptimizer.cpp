// append-optimizer: the parameter update after the backward, as ordinary
// ops the fuse pass turns into kernels: SGD (momentum, Nesterov, weight
// decay), Adam and AdamW (PyTorch's update rules), a learning-rate schedule
// of the step counter (constant, or linear warmup then cosine or linear
// decay), and global-norm gradient clipping. Its moments and the step
// counter become state; main becomes a full train step returning the loss
// and every state value's new value (tc/IR/TrainSignature.h).
#include "tc/IR/Gradient.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <cmath>

namespace tc {

namespace {

double number(const PassOptions &opts, const char *name) {
  const std::string &s = opts.get(name);
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v))
      return v;
  } catch (const std::exception &) {
  }
  fail("append-optimizer: ", name, " must be a number, not '", s, "'");
}

} // namespace

bool runAppendOptimizerPass(Module &m, const PassOptions &opts) {
  Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig || sig->grads == 0 || sig->grads != sig->params || sig->step)
    fail("append-optimizer: main must return the loss and a gradient per parameter (run autodiff "
         "first)");
  const std::string &kind = opts.get("optimizer");
  if (kind != "sgd" && kind != "adam" && kind != "adamw")
    fail("append-optimizer: unknown optimizer '", kind, "' (sgd, adam or adamw)");
  double lr = number(opts, "lr"), wd = number(opts, "weight-decay"), mom = number(opts, "momentum");
  double b1 = number(opts, "beta1"), b2 = number(opts, "beta2"), eps = number(opts, "eps");
  double clip = number(opts, "clip-norm"), minLr = number(opts, "min-lr");
  int64_t warmup = opts.getInt("warmup"), total = opts.getInt("total-steps");
  const std::string &schedule = opts.get("schedule");
  bool nesterov = opts.getBool("nesterov");
  if (!(lr > 0) || wd < 0 || mom < 0 || clip < 0 || warmup < 0 || !(b1 >= 0 && b1 < 1) ||
      !(b2 >= 0 && b2 < 1))
    fail("append-optimizer: lr must be > 0; weight-decay, momentum, clip-norm, warmup >= 0; betas "
         "in [0, 1)");
  if (nesterov && (kind != "sgd" || mom <= 0))
    fail("append-optimizer: nesterov goes with sgd and a momentum > 0");
  if (schedule != "constant" && schedule != "cosine" && schedule != "linear")
    fail("append-optimizer: unknown schedule '", schedule, "' (constant, cosine or linear)");
  if (schedule != "constant" && total <= warmup)
    fail("append-optimizer: a ", schedule, " schedule needs total-steps > warmup");

  size_t first = f.args.size() - sig->state;
  std::vector<Value *> params(f.args.begin() + std::ptrdiff_t(first),
                              f.args.begin() + std::ptrdiff_t(first + sig->params));
  std::vector<Value *> grads(f.results.begin() + 1,
                             f.results.begin() + 1 + std::ptrdiff_t(sig->grads));
  std::vector<Value *> bufferUpdates(f.results.end() - std::ptrdiff_t(sig->buffers),
                                     f.results.end());
  std::vector<std::string> keys = stateKeys(m);
  Function &init = *trainInit(m);
  Op anchor(OpKind::Identity);
  GradBuilder b(f, anchor, "opt");
  GradBuilder ib(init, anchor, "opt");

  // New optimizer state: an argument of main, zeros (or `value`) from @init.
  std::vector<Value *> optArgs, optNew;
  auto addState = [&](const std::string &key, const TensorType &t, double value) {
    Value *a = f.addArgument(f.uniqueName(key), t);
    Value *zero = ib.scalar(value, a);
    init.results.push_back(t.rank() ? ib.expandTo(zero, staticDims(t.shape)) : zero);
    keys.push_back(key);
    optArgs.push_back(a);
    return a;
  };

  TensorType scalarF32{DType::F32, {}};
  Value *step = addState("optimizer.step", scalarF32, 0.0);
  Value *t1 = b.add(step, b.scalar(1, step));
  // The learning rate of this step: warmup, then the schedule's decay.
  Value *lrT = b.scalar(lr, step);
  Value *one = b.scalar(1, step);
  if (warmup > 0)
    lrT = b.mul(lrT, b.op(OpKind::Min, {one, b.scale(t1, 1.0 / double(warmup))}));
  if (schedule != "constant") {
    Value *progress =
        b.scale(b.sub(t1, b.scalar(double(warmup), step)), 1.0 / double(total - warmup));
    progress = b.op(OpKind::Min, {one, b.op(OpKind::Max, {b.scalar(0, step), progress})});
    Value *decay = schedule == "cosine"
                       ? b.scale(b.add(one, b.op(OpKind::Cos, {b.scale(progress, M_PI)})), 0.5)
                       : b.sub(one, progress);
    Value *peak = warmup > 0 ? b.op(OpKind::Min, {one, b.scale(t1, 1.0 / double(warmup))}) : one;
    lrT = b.add(b.scalar(minLr, step), b.mul(b.scalar(lr - minLr, step), b.mul(peak, decay)));
  }

  // Global-norm clipping: every gradient scaled by min(1, clip / (norm + 1e-6)).
  if (clip > 0) {
    std::vector<Value *> sq;
    for (Value *g : grads)
      sq.push_back(b.castTo(
          b.op(OpKind::ReduceSumSquare, {g}, {{"keepdims", Attribute(int64_t(0))}}), DType::F32));
    Value *total2 = sq.size() == 1 ? sq[0] : b.op(OpKind::Sum, sq);
    Value *norm = b.op(OpKind::Sqrt, {total2});
    Value *coef =
        b.op(OpKind::Min, {one, b.div(b.scalar(clip, step), b.add(norm, b.scalar(1e-6, step)))});
    for (Value *&g : grads)
      g = b.mul(g, b.castTo(coef, g->type.dtype));
  }

  std::vector<Value *> newParams;
  std::vector<Value *> moments1, moments2;
  for (size_t i = 0; i < params.size(); ++i) {
    Value *w = params[i], *g = grads[i];
    Value *lrW = b.castTo(lrT, w->type.dtype);
    if (kind == "sgd") {
      if (wd > 0)
        g = b.add(g, b.scale(w, wd));
      if (mom > 0) {
        Value *buf = addState(keys[i] + ".momentum_buffer", w->type, 0.0);
        Value *nb = b.add(b.scale(buf, mom), g);
        moments1.push_back(nb);
        g = nesterov ? b.add(g, b.scale(nb, mom)) : nb;
      }
      newParams.push_back(b.sub(w, b.mul(lrW, g)));
      continue;
    }
    if (kind == "adam" && wd > 0)
      g = b.add(g, b.scale(w, wd));
    Value *m1 = addState(keys[i] + ".exp_avg", w->type, 0.0);
    Value *m2 = addState(keys[i] + ".exp_avg_sq", w->type, 0.0);
    Value *nm1 = b.add(b.scale(m1, b1), b.scale(g, 1 - b1));
    Value *nm2 = b.add(b.scale(m2, b2), b.scale(b.mul(g, g), 1 - b2));
    moments1.push_back(nm1);
    moments2.push_back(nm2);
    Value *bc1 = b.sub(one, b.op(OpKind::Pow, {b.scalar(b1, step), t1}));
    Value *bc2 = b.sub(one, b.op(OpKind::Pow, {b.scalar(b2, step), t1}));
    Value *stepSize = b.castTo(b.div(lrT, bc1), w->type.dtype);
    Value *denom =
        b.add(b.div(b.op(OpKind::Sqrt, {nm2}), b.castTo(b.op(OpKind::Sqrt, {bc2}), w->type.dtype)),
              b.scalar(eps, w));
    Value *base = kind == "adamw" && wd > 0 ? b.sub(w, b.mul(b.scale(lrW, wd), w)) : w;
    newParams.push_back(b.sub(base, b.mul(stepSize, b.div(nm1, denom))));
  }
  // The new state in the state's order: parameters, buffers, then the
  // optimizer's (step, then per parameter its moments, as addState made them).
  for (size_t i = 0; i < params.size(); ++i) {
    if (kind == "sgd") {
      if (mom > 0)
        optNew.push_back(moments1[i]);
    } else {
      optNew.push_back(moments1[i]);
      optNew.push_back(moments2[i]);
    }
  }
  optNew.insert(optNew.begin(), t1);
  std::vector<Value *> results{f.results[0]};
  auto named = [&](Value *v, const std::string &name) {
    results.push_back(f.addOp(OpKind::Identity, {v}, {f.uniqueName(name)}, {v->type})->result());
  };
  for (size_t i = 0; i < params.size(); ++i)
    named(newParams[i], params[i]->name + "_new");
  for (Value *v : bufferUpdates)
    results.push_back(v);
  for (size_t i = 0; i < optNew.size(); ++i)
    named(optNew[i], optArgs[i]->name + "_new");
  f.results = results;
  sig->state += optArgs.size();
  sig->grads = 0;
  sig->step = true;
  setTrainSignature(m, *sig);
  setStateKeys(m, keys);
  return true;
}

} // namespace tc
