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
//         -ReduceSum(pick) / ReduceSum(tf >= 0 ? 1 : 0)                (ignore_index)
//         -C * ReduceMean(pick)                                         (neither)
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

// The lowered loss's value, or null when the op stays (nothing added).
Value *lower(Function &f, const Op &loss) {
  if (!lossObstacle(loss).empty())
    return nullptr;
  Value *x = loss.operand(0), *t = loss.operand(1), *w = loss.operand(2);
  const TensorType &xt = x->type;
  size_t r = xt.rank();
  int64_t C = xt.shape[1].size;
  DType ft = xt.dtype;
  LossLowering lw(f, loss);
  if (loss.is(OpKind::SoftmaxCrossEntropyLoss)) {
    x = lw.op(OpKind::LogSoftmax, {x}, {{"axis", Attribute(int64_t(1))}});
    if (loss.results.size() > 1) { // log_prob: the LogSoftmax's result
      adoptValue(loss.result(1), x);
      x = loss.result(1);
    }
  }
  // The targets as f32 [N, 1, d...], ignored ones -1.
  Value *tu = lw.op(OpKind::Unsqueeze, {t}, {{"axes", Attribute(std::vector<int64_t>{1})}});
  const std::vector<int64_t> &ignore = loss.getInts("ignore_index");
  if (!ignore.empty()) {
    DType it = t->type.dtype;
    Value *ignored = lw.op(OpKind::Equal, {tu, lw.scalar("ignore_index", it, double(ignore[0]))});
    tu = lw.op(OpKind::Where, {ignored, lw.scalar("ignored", it, -1), tu});
  }
  Value *tf = lw.op(OpKind::Cast, {tu}, {{"to", Attribute(DType::F32)}});
  // The class index along axis 1.
  std::vector<int64_t> iotaShape(r, 1);
  iotaShape[1] = C;
  HostTensor iota(DType::F32, iotaShape);
  for (int64_t c = 0; c < C; ++c)
    iota.setDouble(c, double(c));
  Value *classes = lw.constant("classes", iota);
  // The weights along axis 1.
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
  Value *zero = lw.scalar("zero", ft, 0);
  Value *label = lw.op(OpKind::Equal, {classes, tf});
  Value *pick = lw.op(OpKind::Where, {label, wb ? lw.op(OpKind::Mul, {x, wb}) : x, zero});
  const std::string &reduction = loss.getString("reduction");
  auto sum = [&](Value *v, std::vector<int64_t> axes) {
    return lw.op(OpKind::ReduceSum, {v},
                 {{"axes", Attribute(std::move(axes))}, {"keepdims", Attribute(int64_t(0))}});
  };
  if (reduction == "none")
    return lw.op(OpKind::Neg, {sum(pick, {1})});
  if (reduction == "sum")
    return lw.op(OpKind::Neg, {sum(pick, {})});
  if (!wb && ignore.empty()) { // every target counts once: the mean over N, d... is C x over all
    Value *mean = lw.op(OpKind::ReduceMean, {pick}, {{"keepdims", Attribute(int64_t(0))}});
    return lw.op(OpKind::Mul, {mean, lw.scalar("minus_classes", ft, -double(C))});
  }
  Value *num = lw.op(OpKind::Neg, {sum(pick, {})});
  Value *counted;
  if (wb) // the weight of each target's class: a second compare, fused into its reduction
    counted = lw.op(OpKind::Where, {lw.op(OpKind::Equal, {classes, tf}), wb, zero});
  else
    counted = lw.op(OpKind::Where,
                    {lw.op(OpKind::GreaterOrEqual, {tf, lw.scalar("first", DType::F32, 0)}),
                     lw.scalar("one", ft, 1), zero});
  return lw.op(OpKind::Div, {num, sum(counted, {})});
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
    for (auto &o : old) {
      if (!isLoss(o)) {
        f.ops.push_back(std::move(o));
        continue;
      }
      size_t mark = f.ops.size();
      Value *y = lower(f, *o);
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
