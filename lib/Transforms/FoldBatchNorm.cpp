// Inference BatchNormalization after a Conv or Gemm whose weights are
// constants folds into those weights: with s = scale / sqrt(var + eps), the
// output channel o of the producer is scaled by s[o] and shifted by
// beta[o] - mean[o] * s[o]. Runs in f64 and rounds once to the weights'
// dtype; the original weights stay (they may be shared) and DCE drops them.
// One that folds into nothing becomes x * s + (beta - mean * s) (a Mul and an
// Add over [C, 1, ...] constants, lowerBatchNormToAffine); one whose
// parameters are computed at run time becomes the reference's formula over
// them unsqueezed to [C, 1, ...] (views): pointwise ops, no host step. A per-column
// constant scale after a MatMul with constant weights (a transformer's
// layer scale) folds the same way (foldScaleIntoMatMul). A training-mode one
// outside tc-opt --train (ONNX's training_mode = 1: batch statistics and the
// running ones as results) becomes the reference's formula too: two
// reductions and pointwise ops (lowerTrainingBatchNorm).
#include "tc/IR/Gradient.h"
#include "tc/IR/MatMulViews.h"
#include "tc/IR/OpAttrs.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <cmath>
#include <optional>

namespace tc {

namespace {

Value *addConstant(Function &f, const std::string &base, const HostTensor &t, const Location &loc) {
  return f.addConstant(f.uniqueName(base), t.type(), TensorData::copyOf(t.bytes(), t.byteSize()),
                       loc);
}

// Inference BatchNormalization per channel c: y = (x - mean[c]) * scale[c] +
// beta[c], scale = gamma / sqrt(var + eps) (f64); nullopt unless its four
// parameters are float constants of `channels` elements.
struct ChannelAffine {
  std::vector<double> scale, mean, beta;
  double shift(size_t c) const { return beta[c] - mean[c] * scale[c]; }
};
std::optional<ChannelAffine> channelAffine(const Op &bn, int64_t channels) {
  std::vector<HostTensor> p;
  for (size_t i = 1; i <= 4; ++i) {
    const Value *v = bn.operand(i);
    if (!v || !v->isConstant() || v->type.rank() != 1 || !isFloat(v->type.dtype))
      return std::nullopt;
    p.push_back(constantTensor(*v));
    if (p.back().numElements() != channels)
      return std::nullopt;
  }
  double eps = attr<OpKind::BatchNormalization, "epsilon">(bn);
  ChannelAffine a;
  for (int64_t c = 0; c < channels; ++c) {
    double s = p[0].getDouble(c) / std::sqrt(p[3].getDouble(c) + eps);
    a.scale.push_back(s);
    a.mean.push_back(p[2].getDouble(c));
    a.beta.push_back(p[1].getDouble(c));
  }
  return a;
}

// Ops replacing the BatchNormalization `bn` at f.ops[at]: appended, named
// after its first result, typed by their shape rules; finish() moves them
// where `bn` was and erases it.
struct BatchNormLowering {
  Function &f;
  const Op &bn;
  size_t first = f.ops.size();

  Value *add(OpKind k, std::vector<Value *> ins, const std::string &suffix,
             std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    Op *o = f.addOp(k, std::move(ins), {f.uniqueName(bn.result()->name + "_bn_" + suffix)},
                    {TensorType{}}, bn.loc);
    for (auto &[n, v] : attrs)
      o->setAttr(n, std::move(v));
    o->result()->type = opInfo(k).infer(*o).at(0);
    return o->result();
  }

  // The op making made[i] writes bn's result i instead (its readers, name and
  // place among the function's results stay).
  void finish(size_t at, const std::vector<Value *> &made) {
    for (size_t i = 0; i < made.size(); ++i) {
      Value *old = bn.results[i];
      Op *last = made[i]->def;
      last->results[0] = old;
      old->def = last;
      old->resultIndex = 0;
    }
    std::rotate(f.ops.begin() + std::ptrdiff_t(at), f.ops.begin() + std::ptrdiff_t(first),
                f.ops.end());
    f.ops.erase(f.ops.begin() + std::ptrdiff_t(at + f.ops.size() - first));
  }
};

// Parameters computed at run time ([C] each, X's dtype): (x - mean) /
// sqrt(var + eps) * scale + B over them unsqueezed to [C, 1, ...], in the
// reference's order; the ops go where the BatchNormalization was.
// `constantViews`: a constant parameter's [C, 1, ...] view is a constant
// over its bytes (inference), else an Unsqueeze of it (training, where the
// constant becomes a parameter and a twin would split it in two).
bool lowerRunTimeBatchNorm(Function &f, size_t at, int64_t channels, bool constantViews) {
  Op &bn = *f.ops[at];
  Value *x = bn.operand(0);
  size_t r = x->type.rank();
  for (size_t i = 1; i <= 4; ++i) {
    const Value *v = bn.operand(i);
    if (!v || v->type.dtype != x->type.dtype || v->type.shape != makeShape({channels}))
      return false;
  }
  Value *y = bn.result();
  BatchNormLowering l{f, bn};
  std::vector<int64_t> axes;
  for (size_t d = 2; d < r; ++d)
    axes.push_back(int64_t(d - 1));
  std::vector<Value *> p; // scale, B, mean, var as [C, 1, ...]
  const char *names[] = {"scale", "b", "mean", "var"};
  for (size_t i = 1; i <= 4; ++i) {
    Value *v = bn.operand(i);
    if (axes.empty()) {
      p.push_back(v);
    } else if (constantViews && v->isConstant()) {
      // A constant's [C, 1, ...] view is a constant over the same bytes: an
      // Unsqueeze of it here would come after the last constant fold, a
      // computation left for run time that blocks the stored shape plan.
      TensorType t = v->type;
      std::vector<int64_t> dims(r - 1, 1);
      dims[0] = channels;
      t.shape = makeShape(dims);
      p.push_back(
          f.addConstant(f.uniqueName(y->name + "_bn_" + names[i - 1]), t, *v->data, v->loc));
    } else {
      p.push_back(l.add(OpKind::Unsqueeze, {v}, names[i - 1], {{"axes", Attribute(axes)}}));
    }
  }
  HostTensor eps(x->type.dtype, {});
  eps.setDouble(0, attr<OpKind::BatchNormalization, "epsilon">(bn));
  Value *epsV = addConstant(f, y->name + "_bn_eps", eps, bn.loc);
  Value *centered = l.add(OpKind::Sub, {x, p[2]}, "centered");
  Value *stddev = l.add(OpKind::Sqrt, {l.add(OpKind::Add, {p[3], epsV}, "var_eps")}, "stddev");
  Value *scaled =
      l.add(OpKind::Mul, {l.add(OpKind::Div, {centered, stddev}, "normed"), p[0]}, "scaled");
  Value *out = l.add(OpKind::Add, {scaled, p[1]}, "out");
  y->type = out->type;
  l.finish(at, {out});
  return true;
}

} // namespace

bool foldBatchNormIntoProducer(Function &f, Op &bn) {
  if (!bn.is(OpKind::BatchNormalization) || bn.results.size() != 1)
    return false;
  Value *y = bn.operand(0);
  Op *prod = y->def;
  if (!prod || !(prod->is(OpKind::Conv) || prod->is(OpKind::Gemm)) || !usedOnlyBy(f, y, bn))
    return false;
  Value *w = prod->operand(1), *bias = prod->operand(2);
  if (!w->isConstant() || !isFloat(w->type.dtype) || (bias && !bias->isConstant()) ||
      y->type.rank() < 2 || !y->type.shape[1].isStatic())
    return false;
  int64_t channels = y->type.shape[1].size;
  std::optional<ChannelAffine> bnAffine = channelAffine(bn, channels);
  if (!bnAffine)
    return false;
  bool gemm = prod->is(OpKind::Gemm);
  HostTensor wt = constantTensor(*w);
  // Which output channel each weight element feeds.
  const std::vector<int64_t> &wd = wt.shape();
  bool transB = gemm && attr<OpKind::Gemm, "transB">(*prod);
  int64_t inner = 1;
  if (!gemm) { // W: [M, C/group, k...]
    if (wd.empty() || wd[0] != channels)
      return false;
    for (size_t i = 1; i < wd.size(); ++i)
      inner *= wd[i];
  } else if (wd.size() != 2 || wd[transB ? 0 : 1] != channels) {
    return false;
  }
  auto channelOf = [&](int64_t i) {
    if (!gemm)
      return i / inner;
    return transB ? i / wd[1] : i % wd[1];
  };
  // Gemm's C must broadcast along rows for a per-column shift: [], [1], [M], [1,M].
  HostTensor c;
  double cScale = 1.0;
  if (bias) {
    c = constantTensor(*bias);
    int64_t n = c.numElements();
    bool rowVector =
        gemm ? (c.rank() <= 2 && (n == 1 || n == channels) && (c.rank() < 2 || c.shape()[0] == 1))
             : (c.rank() == 1 && n == channels);
    if (!rowVector || !isFloat(c.dtype()))
      return false;
    if (gemm)
      cScale = attr<OpKind::Gemm, "beta">(*prod);
  }
  const std::vector<double> &s = bnAffine->scale;

  HostTensor newW(wt.dtype(), wt.shape());
  for (int64_t i = 0; i < wt.numElements(); ++i)
    newW.setDouble(i, wt.getDouble(i) * s[size_t(channelOf(i))]);
  DType biasType = bias ? c.dtype() : wt.dtype();
  HostTensor newB(biasType, {channels});
  for (int64_t o = 0; o < channels; ++o) {
    double b = bias ? cScale * c.getDouble(c.numElements() == 1 ? 0 : o) : 0.0;
    newB.setDouble(o, (b - bnAffine->mean[size_t(o)]) * s[size_t(o)] + bnAffine->beta[size_t(o)]);
  }
  prod->operands[1] = addConstant(f, w->name + "_bn", newW, bn.loc);
  Value *nb = addConstant(f, (bias ? bias->name : w->name) + "_bn_bias", newB, bn.loc);
  if (prod->operands.size() < 3)
    prod->operands.resize(3, nullptr);
  prod->operands[2] = nb;
  if (gemm)
    prod->setAttr("beta", Attribute(1.0));
  return replaceValue(f, bn.result(), y);
}

namespace {

// `v`'s static dims are 1 but for a last one of `n` (or it has one element).
bool alongLastAxis(const Value *v, int64_t n) {
  std::optional<int64_t> count = staticNumElements(v->type.shape);
  if (!count || (*count != 1 && *count != n))
    return false;
  return *count == 1 || v->type.shape.back() == Dim::fixed(n);
}

} // namespace

bool foldScaleIntoMatMul(Function &f, Op &mul) {
  if (!mul.is(OpKind::Mul) || mul.results.size() != 1)
    return false;
  for (size_t side = 0; side < 2; ++side) {
    Value *c = mul.operand(side), *y = mul.operand(1 - side);
    Op *mm = y->def, *add = nullptr;
    Value *bias = nullptr;
    if (!c->isConstant() || !isFloat(c->type.dtype) || c == y || !mm ||
        mul.result()->type != y->type)
      continue;
    if (mm->is(OpKind::Add)) { // x W + b
      add = mm;
      mm = nullptr;
      for (size_t s = 0; s < 2 && !mm; ++s) {
        Op *d = add->operand(s)->def;
        if (d && isPlainMatMul(*d) && add->operand(1 - s)->isConstant()) {
          mm = d;
          bias = add->operand(1 - s);
        }
      }
    }
    if (!mm || !isPlainMatMul(*mm))
      continue;
    Value *w = mm->operand(1);
    if (!w->isConstant() || !isFloat(w->type.dtype) || w->type.rank() != 2 ||
        !isStaticShape(w->type.shape))
      continue;
    int64_t n = w->type.shape[1].size;
    if (!alongLastAxis(c, n) || (bias && (!isFloat(bias->type.dtype) || !alongLastAxis(bias, n) ||
                                          add->result()->type != mm->result()->type)))
      continue;
    // Last: each scans the function (a Mul by a constant is common, a
    // foldable one is not).
    if (!usedOnlyBy(f, y, mul) || (add && !usedOnlyBy(f, mm->result(), *add)))
      continue;
    HostTensor ct = constantTensor(*c), wt = constantTensor(*w);
    auto scale = [&](int64_t col) { return ct.getDouble(ct.numElements() == 1 ? 0 : col); };
    HostTensor newW(wt.dtype(), wt.shape());
    for (int64_t i = 0; i < wt.numElements(); ++i)
      newW.setDouble(i, wt.getDouble(i) * scale(i % n));
    mm->operands[1] = addConstant(f, w->name + "_scaled", newW, mul.loc);
    if (bias) {
      HostTensor bt = constantTensor(*bias);
      HostTensor newB(bt.dtype(), {n});
      for (int64_t o = 0; o < n; ++o)
        newB.setDouble(o, bt.getDouble(bt.numElements() == 1 ? 0 : o) * scale(o));
      add->operands[add->operand(0) == bias ? 0 : 1] =
          addConstant(f, bias->name + "_scaled", newB, mul.loc);
    }
    return replaceValue(f, mul.result(), y);
  }
  return false;
}

bool lowerTrainingBatchNorm(Function &f, size_t at) {
  Op &bn = *f.ops[at];
  if (!bn.is(OpKind::BatchNormalizationTraining) || bn.results.size() != 3)
    return false;
  Value *x = bn.operand(0);
  size_t r = x->type.rank();
  if (!isFloat(x->type.dtype) || r < 2 || !x->type.shape[1].isStatic())
    return false;
  Shape channels = makeShape({x->type.shape[1].size});
  for (size_t i = 1; i <= 4; ++i) {
    const Value *v = bn.operand(i);
    if (!v || v->type.dtype != x->type.dtype || v->type.shape != channels)
      return false;
  }
  // The statistics over every axis but the channels' (population variance,
  // as the reference's moments), built as the gradient rules build them
  // (grad::normalize): a train step's rule recomputes the same ops.
  BatchNormLowering l{f, bn};
  GradBuilder b(f, bn, bn.result()->name + "_bn");
  std::vector<int64_t> axes{0}, spatial, outer{0};
  for (size_t d = 2; d < r; ++d) {
    axes.push_back(int64_t(d));
    spatial.push_back(int64_t(d - 1));
    outer.push_back(int64_t(d));
  }
  auto perChannel = [&](Value *v) { // [C] -> [C, 1, ...]
    return spatial.empty() ? v : b.op(OpKind::Unsqueeze, {v}, {{"axes", Attribute(spatial)}});
  };
  // y = x * a + c, a = scale * invStd and c = bias - mean * a per channel:
  // one kernel reads x and writes y (x - mean and xhat, which the backward
  // recomputes from x, are not written out).
  grad::Normalized n = grad::statistics(b, x, axes, bn.getFloat("epsilon"));
  Value *scale = perChannel(bn.operand(1));
  Value *a = b.mul(n.invStd, scale);
  Value *c = b.sub(perChannel(bn.operand(2)), b.mul(n.mean, a));
  Value *out = b.add(b.mul(x, a), c);
  // Running statistics: input * momentum + batch statistic * (1 - momentum).
  double momentum = bn.getFloat("momentum");
  auto running = [&](Value *old, Value *batch) {
    Value *flat = b.op(OpKind::Squeeze, {batch}, {{"axes", Attribute(outer)}});
    return b.add(b.scale(old, momentum), b.scale(flat, 1 - momentum));
  };
  Value *newMean = running(bn.operand(3), n.mean);
  l.finish(at, {out, newMean, running(bn.operand(4), n.var)});
  return true;
}

namespace {

// The channels of an inference BatchNormalization either lowering takes
// (float X of rank >= 2, static channels), or nullopt.
std::optional<int64_t> lowerableChannels(const Op &bn) {
  if (!bn.is(OpKind::BatchNormalization) || bn.results.size() != 1)
    return std::nullopt;
  const TensorType &xt = bn.operand(0)->type;
  if (!isFloat(xt.dtype) || xt.rank() < 2 || !xt.shape[1].isStatic())
    return std::nullopt;
  return xt.shape[1].size;
}

} // namespace

bool lowerBatchNormToAffine(Function &f, size_t at) {
  Op &bn = *f.ops[at];
  std::optional<int64_t> found = lowerableChannels(bn);
  if (!found)
    return false;
  Value *x = bn.operand(0);
  const TensorType &xt = x->type;
  int64_t channels = *found;
  std::optional<ChannelAffine> a = channelAffine(bn, channels);
  if (!a)
    return lowerRunTimeBatchNorm(f, at, channels, true);
  // [C, 1, ...]: broadcasts over the dims after the channels.
  std::vector<int64_t> shape(xt.rank() - 1, 1);
  shape[0] = channels;
  HostTensor scale(xt.dtype, shape), shift(xt.dtype, shape);
  for (int64_t c = 0; c < channels; ++c) {
    scale.setDouble(c, a->scale[size_t(c)]);
    shift.setDouble(c, a->shift(size_t(c)));
  }
  Value *y = bn.result();
  Value *sv = addConstant(f, y->name + "_bn_scale", scale, bn.loc);
  Value *bv = addConstant(f, y->name + "_bn_shift", shift, bn.loc);
  auto mul = std::make_unique<Op>(OpKind::Mul), add = std::make_unique<Op>(OpKind::Add);
  Value *scaled = f.newValue(f.uniqueName(y->name + "_bn_scaled"), xt);
  scaled->def = mul.get();
  mul->operands = {x, sv};
  mul->results = {scaled};
  mul->loc = add->loc = bn.loc;
  add->operands = {scaled, bv};
  add->results = {y};
  y->def = add.get();
  y->resultIndex = 0;
  f.ops[at] = std::move(add); // the BatchNormalization goes
  f.insertOp(at, std::move(mul));
  return true;
}

bool lowerBatchNormFormula(Function &f, size_t at) {
  std::optional<int64_t> c = lowerableChannels(*f.ops[at]);
  return c && lowerRunTimeBatchNorm(f, at, *c, false);
}

bool usedOnlyBy(const Function &f, const Value *v, const Op &user) {
  if (std::find(f.results.begin(), f.results.end(), v) != f.results.end())
    return false;
  for (const auto &op : f.ops)
    if (op.get() != &user &&
        std::find(op->operands.begin(), op->operands.end(), v) != op->operands.end())
      return false;
  return std::count(user.operands.begin(), user.operands.end(), v) == 1;
}

} // namespace tc
