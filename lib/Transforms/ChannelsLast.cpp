// channels-last: convolution chains run in NHWC (what cuDNN's tensor-core
// kernels want), with transposes only where the chain meets the rest of the
// graph. Walks the ops in order keeping, for each NCHW value, its NHWC twin:
//  - a Conv (rank >= 3) takes its input's twin (or a Transpose to NHWC),
//    gets OHWI weights (converted at compile time when constant) and
//    channels_last = 1; its result is an NHWC twin;
//  - a pointwise op with a twin operand runs on NHWC when every other operand
//    is a twin, a scalar, or a constant of the full rank or of rank - 1
//    (broadcast over the batch: permuted too); its result is a twin;
//  - any other op reading a twin reads a Transpose back to NCHW (shared);
//  - a returned twin is transposed back under its public name.
// canonicalize then cancels Transpose pairs the walk left behind.
#include "tc/IR/Layout.h"
#include "tc/IR/OpAttrs.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"
#include <unordered_map>

namespace tc {

namespace {

class ChannelsLast {
public:
  explicit ChannelsLast(Function &f) : f_(f) {}

  bool run() {
    std::vector<std::unique_ptr<Op>> old = std::move(f_.ops);
    f_.ops.clear();
    for (auto &owned : old) {
      Op &op = *owned;
      if (op.is(OpKind::Conv) && op.operand(0)->type.rank() >= 3 &&
          !attr<OpKind::Conv, "channels_last">(op))
        convert(op);
      else if (op.info().category == FusionCategory::Pointwise && runsOnTwins(op))
        retypePointwise(op);
      else
        for (Value *&v : op.operands)
          if (v && isTwin(v))
            v = toFirst(v);
      f_.ops.push_back(std::move(owned));
    }
    for (Value *&r : f_.results)
      if (isTwin(r)) {
        // The NCHW result takes the public name; the NHWC one says its layout.
        Value *back = transpose(r, toChannelsFirstPerm(r->type.rank()), "_nhwc");
        std::swap(back->name, r->name);
        r = back;
      }
    return changed_;
  }

private:
  Function &f_;
  bool changed_ = false;
  std::unordered_map<const Value *, Value *> twin_;     // NCHW value -> NHWC value
  std::unordered_map<const Value *, Value *> first_;    // NHWC value -> NCHW value
  std::unordered_map<const Value *, bool> isTwinValue_; // values produced in NHWC

  bool isTwin(const Value *v) const { return isTwinValue_.count(v) != 0; }

  Value *transpose(Value *v, const std::vector<int64_t> &perm, const std::string &suffix) {
    Shape s = permuteShape(v->type.shape, perm);
    Op *t = f_.addOp(OpKind::Transpose, {v}, {f_.uniqueName(v->name + suffix)},
                     {TensorType{v->type.dtype, s}}, v->def ? v->def->loc : Location{});
    t->setAttr("perm", Attribute(perm));
    changed_ = true;
    return t->result();
  }

  Value *constant(const Value *v, const std::vector<int64_t> &perm, const std::string &suffix) {
    HostTensor t = permuteAxes(constantTensor(*v), perm);
    return f_.addConstant(f_.uniqueName(v->name + suffix), t.type(),
                          TensorData::copyOf(t.bytes(), t.byteSize()), v->loc);
  }

  // v's NHWC form: itself if it is one, a cached twin, a permuted constant
  // or a Transpose.
  Value *toLast(Value *v) {
    if (isTwin(v))
      return v;
    if (auto it = twin_.find(v); it != twin_.end())
      return it->second;
    std::vector<int64_t> perm = toChannelsLastPerm(v->type.rank());
    Value *t = v->isConstant() ? constant(v, perm, "_nhwc") : transpose(v, perm, "_nhwc");
    isTwinValue_[t] = true;
    first_[t] = v;
    return twin_[v] = t;
  }

  Value *toFirst(Value *v) {
    if (auto it = first_.find(v); it != first_.end())
      return it->second;
    Value *t = transpose(v, toChannelsFirstPerm(v->type.rank()), "_nchw");
    first_[v] = t;
    twin_[t] = v;
    return t;
  }

  void convert(Op &op) {
    op.operands[0] = toLast(op.operands[0]);
    Value *w = op.operands[1];
    op.operands[1] = w->isConstant() ? constant(w, toChannelsLastPerm(w->type.rank()), "_ohwi")
                                     : transpose(w, toChannelsLastPerm(w->type.rank()), "_ohwi");
    op.setAttr("channels_last", Attribute(int64_t(1)));
    Value *y = op.result();
    y->type.shape = permuteShape(y->type.shape, toChannelsLastPerm(y->type.rank()));
    isTwinValue_[y] = true;
    changed_ = true;
  }

  // A pointwise op can run on NHWC when one operand is a twin and the rest
  // can follow (see the file comment).
  bool runsOnTwins(const Op &op) const {
    const Value *anchor = nullptr;
    for (const Value *v : op.operands)
      if (v && isTwin(v))
        anchor = v;
    if (!anchor)
      return false;
    size_t rank = anchor->type.rank();
    for (const Value *v : op.operands) {
      if (!v || isTwin(v) || v->type.rank() == 0)
        continue;
      bool fullRank = v->type.rank() == rank, batchless = v->type.rank() == rank - 1;
      if (!v->isConstant() && !(fullRank && twin_.count(v)))
        return false;
      if (v->isConstant() && !fullRank && !batchless)
        return false;
    }
    return true;
  }

  void retypePointwise(Op &op) {
    size_t rank = 0;
    for (const Value *v : op.operands)
      if (v && isTwin(v))
        rank = v->type.rank();
    for (Value *&v : op.operands) {
      if (!v || isTwin(v) || v->type.rank() == 0)
        continue;
      if (v->type.rank() == rank) {
        v = toLast(v);
      } else { // [C, H, W] -> [H, W, C]: the NHWC permutation without the batch axis
        std::vector<int64_t> perm;
        for (int64_t a : toChannelsLastPerm(rank))
          if (a > 0)
            perm.push_back(a - 1);
        v = constant(v, perm, "_hwc");
      }
    }
    std::vector<TensorType> types = inferResultTypes(op);
    for (size_t i = 0; i < op.results.size(); ++i) {
      op.results[i]->type = types.at(i);
      isTwinValue_[op.results[i]] = true;
    }
    changed_ = true;
  }
};

} // namespace

bool runChannelsLastPass(Module &m, const PassOptions &) {
  // The entry function only: Fused callees and control-flow bodies keep
  // their signatures (the pass runs before fusion).
  return ChannelsLast(m.main()).run();
}

} // namespace tc
