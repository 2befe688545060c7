// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss become ops the
// kernel families compile, so a loss needs no family of its own and no host
// step (tc-opt before fusion; codegen's outlining runs it too, for IR that
// did not go through tc-opt -O1+). For input [N, C, d...] (SCE: its
// LogSoftmax over axis 1, which is also the log_prob result) and
// targets t [N, d...]:
//
//   tf   = Cast(Unsqueeze(t, 1), f32)         [N, 1, d...]; ignore_index -> -1
//   pick = Where(Equal(iota, tf), x * w, 0)   [N, C, d...]; iota [1, C, 1...] = c
//   none: -ReduceSum(pick, axis 1)   sum: -ReduceSum(pick)
//   mean: -ReduceSum(pick) / ReduceSum(Where(Equal(iota, tf), w, 0))   (weights)
//         -ReduceSum(pick) / ReduceSum(ignored ? 0 : 1)                 (ignore_index)
//         -C * ReduceMean(pick)                                         (neither)
//
// SCE whose log_prob nothing reads goes by rows instead: pick is
// w_t (x_t - ReduceLogSumExp(x, axis 1)), [N, 1, d...], 0 where ignored,
// x_t a GatherElements of the target's score (of the half scores where
// an AMP step casts them to f32), so no [N, C] value is written: the
// logsumexp's row reduction reads x once (-C * ReduceMean becomes
// -ReduceMean).
//
// The label's log probability is picked by a compare against the class
// index, not gathered: the pick is pointwise, so it fuses into the
// LogSoftmax's epilogue (or the ReduceSum's prologue), and the weight of
// the label's class rides along as a broadcast operand. The targets are
// cast to f32 first (a pointwise kernel of N x d elements): the Reduction
// families compute in float and take no integer operands. An ignored
// target becomes -1, which matches no class, so its loss and weight are 0;
// a target outside [0, C) also picks nothing (the reference kernel fails
// on it; ONNX leaves it undefined). Kernels: the Cast, the LogSoftmax
// (SCE), the numerator's reduction and, for a mean with weights or
// ignore_index, the denominator's (which takes the Div as its epilogue).
// What stays a loss op (then a host step, named by codegen): a class count
// C known only at run time (the class index is a constant).
#include "tc/IR/OpTable.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <map>
#include <unordered_set>

namespace tc {

namespace {

class LossLowering {
public:
  LossLowering(Function &f, const Op &loss) : f_(f), loc_(loss.loc), base_(loss.result()->name) {}

  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    return addInferredOp(f_, k, std::move(ins), std::move(attrs), base_, loc_);
  }

  Value *constant(const std::string &name, const HostTensor &t) {
    return f_.addConstant(f_.uniqueName(base_ + "_" + name), t.type(),
                          TensorData::copyOf(t.bytes(), t.byteSize()), loc_);
  }

  Value *scalar(const std::string &name, DType t, double v) {
    HostTensor h(t, {});
    isFloat(t) ? h.setDouble(0, v) : h.setInt(0, int64_t(v));
    return constant(name, h);
  }

private:
  Function &f_;
  Location loc_;
  std::string base_;
};

// A by-rows loss's logsumexp of its scores, which the loss's gradient rule
// computes too (a later op of the same value): it reads this one.
using RowStatistics = std::map<const Value *, Value *>;

bool isRowLogSumExp(const Op &op) {
  return op.is(OpKind::ReduceLogSumExp) && op.getInts("axes") == std::vector<int64_t>{1} &&
         op.getInt("keepdims") == 1;
}

// The lowered loss's value, or null when the op stays (nothing added).
// `logProbRead`: SoftmaxCrossEntropyLoss's log_prob has readers.
Value *lower(Function &f, const Op &loss, bool logProbRead, RowStatistics &lses) {
  if (!lossObstacle(loss).empty())
    return nullptr;
  Value *x = loss.operand(0), *t = loss.operand(1), *w = loss.operand(2);
  const TensorType &xt = x->type;
  size_t r = xt.rank();
  int64_t C = xt.shape[1].size;
  DType ft = xt.dtype;
  LossLowering lw(f, loss);
  // Softmax cross-entropy without log_prob readers: by rows (below).
  bool byRows = loss.is(OpKind::SoftmaxCrossEntropyLoss) && !logProbRead;
  if (loss.is(OpKind::SoftmaxCrossEntropyLoss) && logProbRead) { // log_prob: the LogSoftmax's
    x = lw.op(OpKind::LogSoftmax, {x}, {{"axis", Attribute(int64_t(1))}});
    adoptValue(loss.result(1), x);
    x = loss.result(1);
  }
  // The targets [N, 1, d...]; `ignored` where they equal ignore_index.
  Value *targets = lw.op(OpKind::Unsqueeze, {t}, {{"axes", Attribute(std::vector<int64_t>{1})}});
  Value *ignored = nullptr;
  const std::vector<int64_t> &ignore = loss.getInts("ignore_index");
  DType it = t->type.dtype;
  if (!ignore.empty())
    ignored = lw.op(OpKind::Equal, {targets, lw.scalar("ignore_index", it, double(ignore[0]))});
  Value *zero = lw.scalar("zero", ft, 0);
  // The weights along axis 1 ([1, C, 1...]).
  std::vector<int64_t> iotaShape(r, 1);
  iotaShape[1] = C;
  Value *wb = nullptr;
  if (w) {
    TensorType bt{ft, makeShape(iotaShape)};
    if (w->isConstant()) {
      wb = f.addConstant(f.uniqueName(w->name + "_classes"), bt, *w->data, w->loc);
    } else {
      std::vector<int64_t> axes{0};
      for (size_t d = 2; d < r; ++d)
        axes.push_back(int64_t(d));
      wb = lw.op(OpKind::Unsqueeze, {w}, {{"axes", Attribute(axes)}});
    }
  }
  // [N, C, d...]: whether class c is the target's, by a compare of the
  // targets as f32 (ignored ones -1, which match no class) against the
  // class index.
  auto labels = [&] {
    Value *tu =
        ignored ? lw.op(OpKind::Where, {ignored, lw.scalar("ignored", it, -1), targets}) : targets;
    HostTensor iota(DType::F32, iotaShape);
    for (int64_t c = 0; c < C; ++c)
      iota.setDouble(c, double(c));
    return lw.op(OpKind::Equal, {lw.constant("classes", iota),
                                 lw.op(OpKind::Cast, {tu}, {{"to", Attribute(DType::F32)}})});
  };
  auto sum = [&](Value *v, std::vector<int64_t> axes, int64_t keepdims = 0) {
    return lw.op(OpKind::ReduceSum, {v},
                 {{"axes", Attribute(std::move(axes))}, {"keepdims", Attribute(keepdims)}});
  };
  // What the loss negates and sums (over axis 1 for `none`, all for the
  // rest), and each target's weight where not all are 1 (the mean's
  // denominator, summed).
  Value *pick, *counted = nullptr;
  Value *label = byRows && !wb ? nullptr : labels();
  if (wb) // the weight of each target's class: a second compare, fused into its reduction
    counted = lw.op(OpKind::Where, {label, wb, zero});
  else if (ignored)
    counted = lw.op(OpKind::Where, {ignored, zero, lw.scalar("one", ft, 1)});
  if (byRows) {
    // log p_t = x_t - logsumexp(x), [N, 1, d...]: the logsumexp a row
    // reduction reading x once, x_t gathered (from the half scores an AMP
    // step casts), where a LogSoftmax writes [N, C] f32 log probabilities
    // for a pick to read back (an LM head's 1024 x 50265 logits: 0.2 GB
    // written and read a step). A target out of [0, C) is a gather fault.
    Value *lse =
        lw.op(OpKind::ReduceLogSumExp, {x},
              {{"axes", Attribute(std::vector<int64_t>{1})}, {"keepdims", Attribute(int64_t(1))}});
    lses.emplace(x, lse);
    Value *src = x;
    if (x->def && x->def->is(OpKind::Cast) && isFloat(x->def->operand(0)->type.dtype) &&
        dtypeSize(x->def->operand(0)->type.dtype) < dtypeSize(ft))
      src = x->def->operand(0);
    Value *idx = ignored // gathered at class 0, then masked
                     ? lw.op(OpKind::Where, {ignored, lw.scalar("ignored_at", it, 0), targets})
                     : targets;
    Value *xt = lw.op(OpKind::GatherElements, {src, idx}, {{"axis", Attribute(int64_t(1))}});
    if (src != x)
      xt = lw.op(OpKind::Cast, {xt}, {{"to", Attribute(ft)}});
    pick = lw.op(OpKind::Sub, {xt, lse});
    if (wb) {
      counted = sum(counted, {1}, 1);
      pick = lw.op(OpKind::Mul, {pick, counted});
    }
    if (ignored)
      pick = lw.op(OpKind::Where, {ignored, zero, pick});
  } else {
    pick = lw.op(OpKind::Where, {label, wb ? lw.op(OpKind::Mul, {x, wb}) : x, zero});
  }
  const std::string &reduction = loss.getString("reduction");
  if (reduction == "none")
    return lw.op(OpKind::Neg, {sum(pick, {1})});
  if (reduction == "sum")
    return lw.op(OpKind::Neg, {sum(pick, {})});
  if (!counted) { // every target counts once: the mean over N, d... (C x over all by classes)
    Value *mean = lw.op(OpKind::ReduceMean, {pick}, {{"keepdims", Attribute(int64_t(0))}});
    return lw.op(OpKind::Mul, {mean, lw.scalar("minus_classes", ft, byRows ? -1.0 : -double(C))});
  }
  return lw.op(OpKind::Div, {lw.op(OpKind::Neg, {sum(pick, {})}), sum(counted, {})});
}

} // namespace

std::string lossObstacle(const Op &loss) {
  const TensorType &xt = loss.operand(0)->type;
  if (xt.rank() < 2 || !isFloat(xt.dtype))
    return "an input that is not float [N, C, d...]";
  if (!xt.shape[1].isStatic())
    return "a class count C known only at run time (the class index is a constant)";
  return "";
}

bool runLowerLossesPass(Module &m, const PassOptions &) {
  bool changed = false;
  auto isLoss = [](const auto &o) {
    return o->is(OpKind::NegativeLogLikelihoodLoss) || o->is(OpKind::SoftmaxCrossEntropyLoss);
  };
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(), isLoss))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    std::unordered_set<const Value *> read(f.results.begin(), f.results.end());
    for (const auto &o : old)
      read.insert(o->operands.begin(), o->operands.end());
    RowStatistics lses;
    for (auto &o : old) {
      if (auto it = lses.find(o->operand(0)); it != lses.end() && isRowLogSumExp(*o)) {
        adoptValue(o->result(), it->second, &f); // the loss's backward: the forward's
        it->second = o->result();
        continue;
      }
      if (!isLoss(o)) {
        f.ops.push_back(std::move(o));
        continue;
      }
      size_t mark = f.ops.size();
      Value *y = lower(f, *o, o->results.size() > 1 && read.count(o->result(1)), lses);
      if (!y) {
        f.ops.erase(f.ops.begin() + std::ptrdiff_t(mark), f.ops.end());
        f.ops.push_back(std::move(o));
        continue;
      }
      adoptValue(o->result(), y);
      changed = true;
    }
    f.removeUnusedConstants();
  }
  return changed;
}

} // namespace tc
