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
#include "tc/Transforms/Rewrite.h"
#include <cmath>
#include <map>
#include <unordered_map>

namespace tc {

bool runAppendOptimizerPass(Module &m, const PassOptions &opts) {
  Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig || sig->grads == 0 || sig->grads != sig->params || sig->step)
    fail("append-optimizer: main must return the loss and a gradient per parameter (run autodiff "
         "first)");
  const std::string &kind = opts.get("optimizer");
  if (kind != "sgd" && kind != "adam" && kind != "adamw")
    fail("append-optimizer: unknown optimizer '", kind, "' (sgd, adam or adamw)");
  double lr = opts.getNumber("append-optimizer", "lr"),
         wd = opts.getNumber("append-optimizer", "weight-decay"),
         mom = opts.getNumber("append-optimizer", "momentum");
  double b1 = opts.getNumber("append-optimizer", "beta1"),
         b2 = opts.getNumber("append-optimizer", "beta2"),
         eps = opts.getNumber("append-optimizer", "eps");
  double clip = opts.getNumber("append-optimizer", "clip-norm"),
         minLr = opts.getNumber("append-optimizer", "min-lr");
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
  int64_t accumulate = opts.getInt("accumulate");
  if (accumulate < 1)
    fail("append-optimizer: accumulate must be >= 1");

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
  b.phase = ib.phase = Phase::Optimizer; // tc-prof's optimizer phase

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

  // State made before this pass beyond the parameters and buffers: fp16's
  // loss scale (autodiff{loss-scale}). Its new values follow the buffers'.
  size_t extraFirst = first + sig->params + sig->buffers;
  Value *lossScale = nullptr, *growth = nullptr, *rngSeed = nullptr, *rngOffset = nullptr;
  for (size_t i = sig->params + sig->buffers; i < sig->state; ++i) {
    Value *a = f.args[first + i];
    if (keys[i] == kLossScaleKey)
      lossScale = a;
    else if (keys[i] == kGrowthTrackerKey)
      growth = a;
    else if (keys[i] == kRngSeedKey)
      rngSeed = a;
    else if (keys[i] == kRngOffsetKey)
      rngOffset = a;
    else
      fail("append-optimizer: state value '", keys[i],
           "' is no parameter, buffer, loss scale or dropout RNG state");
  }
  std::unordered_map<const Value *, Value *> extraNewOf; // by argument
  // Dropout's RNG: the same seed, the next step's offset (every step, a
  // skipped one too, as PyTorch's generator advances regardless).
  if (rngSeed)
    extraNewOf[rngSeed] = b.op(OpKind::Identity, {rngSeed});
  if (rngOffset) {
    int64_t one = 1;
    extraNewOf[rngOffset] =
        b.add(rngOffset, f.addConstant(f.uniqueName("rng_step"), rngOffset->type,
                                       TensorData::copyOf(&one, sizeof one)));
  }
  // A scaled step: gradients unscaled first (a micro-batch's gradients are
  // summed unscaled: the scale may not change inside an update).
  Value *inv = nullptr;
  std::vector<Value *> scaled = grads; // as the backward wrote them
  if (lossScale) {
    inv = b.op(OpKind::Reciprocal, {lossScale});
    for (Value *&g : grads)
      g = b.mul(g, b.castTo(inv, g->type.dtype));
  }

  TensorType scalarF32{DType::F32, {}};
  Value *step = addState("optimizer.step", scalarF32, 0.0);
  // Accumulation: `apply` on the K-th call of an update; the gradients
  // become the mean of the K sums.
  Value *apply = nullptr, *micro = nullptr;
  std::vector<Value *> sums;
  if (accumulate > 1) {
    micro = addState("optimizer.micro_step", scalarF32, 0.0);
    Value *next = b.add(micro, b.scalar(1, micro));
    apply = b.op(OpKind::GreaterOrEqual, {next, b.scalar(double(accumulate), micro)});
    for (size_t i = 0; i < grads.size(); ++i) {
      Value *acc = addState(keys[i] + ".grad_accum", params[i]->type, 0.0);
      Value *sum = b.add(acc, b.castTo(grads[i], acc->type.dtype));
      sums.push_back(sum);
      grads[i] = b.scale(sum, 1.0 / double(accumulate));
    }
  }

  // `ok` when every gradient is finite (their sum is: an inf or NaN
  // anywhere makes it inf or NaN), else the update is skipped. Without
  // accumulation the sums read the scaled gradients, the backward's own
  // results, and are unscaled as scalars: the check then reads no value of
  // the update's, so fusion keeps each update a pointwise group of its own
  // (one multi-tensor launch for all) instead of joining it to its
  // gradient's sum as row results written out for a later Where.
  //
  // Small gradients (biases, norm scales) are summed together: flattened
  // and concatenated per dtype, a copy of a few KB that takes the place of
  // a reduction launch each (a transformer has about a hundred of them;
  // vit_b_16's AMP profile: ~200 sum launches, 1.1 of its 24 ms). A large
  // one is a ReduceSum of its own, read in place: CUDA runs those of a
  // dtype as one multi-tensor launch (tc/CodeGen/MultiTensor.h), where a
  // Concat of them would copy every gradient.
  Value *ok = nullptr;
  if (lossScale) {
    std::vector<Value *> totals;
    auto sumOf = [&](Value *g) { // (half gradients summed in f32: 65504 is no overflow)
      if (g->type.dtype == DType::F16 || g->type.dtype == DType::BF16)
        g = b.castTo(g, DType::F32);
      totals.push_back(b.castTo(b.op(OpKind::ReduceSum, {g}, {{"keepdims", Attribute(int64_t(0))}}),
                                DType::F32));
    };
    constexpr int64_t kPooledElements = int64_t(1) << 16; // per gradient
    constexpr size_t kPooledParts = 64;                   // per Concat (a kernel's parameter)
    std::map<DType, std::vector<Value *>> pools;
    auto flush = [&](std::vector<Value *> &parts) {
      if (!parts.empty())
        sumOf(parts.size() == 1 ? parts[0]
                                : b.op(OpKind::Concat, parts, {{"axis", Attribute(int64_t(1))}}));
      parts.clear();
    };
    for (Value *g : apply ? grads : scaled) {
      // A scatter-add into zeros (an untied embedding's gradient) sums to
      // its updates' sum: the check reads those, its batch's rows, not the
      // whole table (llama's 131 MB a step).
      if (const Op *d = g->def; d && (d->is(OpKind::ScatterND) || d->is(OpKind::ScatterElements)) &&
                                d->getString("reduction") == "add" && isZeros(d->operand(0)))
        g = d->operand(2);
      std::optional<int64_t> n = staticNumElements(g->type.shape);
      if (!n || *n > kPooledElements) {
        sumOf(g);
        continue;
      }
      std::vector<Value *> &parts = pools[g->type.dtype];
      parts.push_back(b.reshape(g, {1, *n}));
      if (parts.size() == kPooledParts)
        flush(parts);
    }
    for (auto &pool : pools)
      flush(pool.second);
    Value *total = totals.size() == 1 ? totals[0] : b.op(OpKind::Sum, totals);
    if (!apply)
      total = b.mul(total, inv);
    ok = b.op(OpKind::LessOrEqual,
              {b.op(OpKind::Abs, {total}), b.scalar(3.4028234663852886e38, total)});
    if (growth) {
      // PyTorch's GradScaler: halve on overflow; double after
      // growth-interval good steps in a row.
      Value *zero = b.scalar(0, growth), *g1 = b.add(growth, b.scalar(1, growth));
      Value *grow = b.op(OpKind::GreaterOrEqual,
                         {g1, b.scalar(double(opts.getInt("growth-interval")), growth)});
      extraNewOf[lossScale] =
          b.where(ok, b.where(grow, b.scale(lossScale, 2.0), lossScale), b.scale(lossScale, 0.5));
      extraNewOf[growth] = b.where(ok, b.where(grow, zero, g1), zero);
    } else {
      extraNewOf[lossScale] = b.op(OpKind::Identity, {lossScale});
    }
    // The scale changes only when an update is applied.
    if (apply)
      for (Value *a : {lossScale, growth})
        if (a)
          extraNewOf[a] = b.where(apply, extraNewOf[a], a);
  }
  Value *gate = ok && apply ? b.op(OpKind::And, {ok, apply}) : ok ? ok : apply;
  std::vector<Value *> extraNew; // in the state's order
  for (size_t i = extraFirst; i < first + sig->state; ++i)
    extraNew.push_back(extraNewOf.at(f.args[i]));
  auto keepIfSkipped = [&](Value *updated, Value *old) {
    return gate ? b.where(gate, updated, old) : updated;
  };

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
  // optimizer's (step, the accumulation's micro-step and sums, then per
  // parameter its moments, as addState made them). The accumulation's state
  // moves on whether or not the update is skipped.
  std::vector<Value *> accumNew;
  if (apply) {
    Value *zero = b.scalar(0, micro);
    accumNew.push_back(b.where(apply, zero, b.add(micro, b.scalar(1, micro))));
    for (Value *sum : sums)
      accumNew.push_back(b.where(apply, b.scalar(0, sum), sum));
  }
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
  for (size_t i = 0; i < params.size(); ++i)
    newParams[i] = keepIfSkipped(newParams[i], params[i]);
  for (size_t i = 0; i < optNew.size(); ++i) {
    size_t argIndex = i == 0 ? 0 : i + accumNew.size();
    optNew[i] = keepIfSkipped(optNew[i], optArgs[argIndex]);
  }
  optNew.insert(optNew.begin() + 1, accumNew.begin(), accumNew.end());
  std::vector<Value *> results{f.results[0]};
  auto named = [&](Value *v, const std::string &name) {
    results.push_back(
        f.addOp(OpKind::Identity, {v}, {f.uniqueName(name)}, {v->type}, b.loc())->result());
  };
  for (size_t i = 0; i < params.size(); ++i)
    named(newParams[i], params[i]->name + "_new");
  for (Value *v : bufferUpdates)
    results.push_back(v);
  for (size_t i = 0; i < extraNew.size(); ++i)
    named(extraNew[i], f.args[extraFirst + i]->name + "_new");
  for (size_t i = 0; i < optNew.size(); ++i)
    named(optNew[i], optArgs[i]->name + "_new");
  f.results = results;
  sig->state += optArgs.size();
  sig->grads = 0;
  sig->step = true;
  sig->accumulate = size_t(accumulate);
  setTrainSignature(m, *sig);
  setStateKeys(m, keys);
  return true;
}

} // namespace tc
