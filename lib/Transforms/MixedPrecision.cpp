// mixed-precision: runs matmul/conv and pointwise math in f16 or bf16, the
// way autocast does, and keeps in f32 what loses accuracy in a 10- or 7-bit
// mantissa: reductions (softmax, layer/group norm statistics, means, sums),
// exp/log/pow and friends, comparisons, and the function's outputs. With
// io=low the function's f32 inputs and outputs are in the low type instead
// (a model converted to half, as onnxconverter's keep_io_types=False): the
// caller hands over and gets back half floats, and a decode step's KV
// caches stay half between steps (no cast of the whole cache each token).
//
// Every op's precision class comes from the op table (Ops.def): `Low` (its
// float operands are cast to the low type), `F32` (low operands are cast
// back up: always exact), `Follow` for data movement (Reshape, Transpose,
// Concat, ...: runs in the type of its data operand), or `Keep` (left
// alone: Cast, Shape, integer ops). Only values that were f32 before the
// pass change type; f64 and integer values are left alone. Constants are
// converted at compile time; activations get one shared Cast per (value,
// type). Result dtypes are then re-inferred from the op table. The fuse pass
// afterwards absorbs the casts into the neighbouring kernels.
//
// policy=autocast follows PyTorch's autocast one step further: a pointwise
// op with an f32 operand as large as its result stays f32 (autocast runs
// only its listed ops in half and promotes the rest), so a residual stream
// that starts f32 (an embedding) stays f32 with its gradient, at the cost of
// twice its bytes. Broadcast operands (biases, masks) and constants don't
// promote. A per-channel statistic does (a lowered batch norm's x * a + c,
// its mean and rstd folded into a and c): the normalization runs in f32 as
// cuDNN's does inside, and its result is rounded to half once, at the next
// op that runs in half. In f16, a and c are rounded and x * a + c cancels
// where a channel's mean is far above its spread (repvgg_a2's identity
// batch norms on ReLU outputs: |mean| / std up to 10.5 at initialization,
// 10x f16's rounding in the normalized values). Measure before making it
// the default.
//
// In a train step, under either policy, a weight's preprocessing (pointwise
// math on parameters and constants alone: NFNet's weight standardization,
// weight norm's g * v / |v|) stays f32, as autocast runs it (its operands
// are f32 parameters; only the conv or GEMM reading it runs in half), and
// so do the backward ops of those nodes: in half the standardized weight
// was rounded three times, not once (nfnet_l0's AMP gradients 3x PyTorch's
// error, its losses 1.7e-2 off at step 30). Weight-sized work, not
// activation-sized: free.
//
// Also in a train step: a pointwise op reading a float constant tensor that
// the low type cannot hold exactly (a frozen table: ESM's rotary cos/sin)
// stays f32, as PyTorch promotes an f16 tensor times an f32 one; in f16 the
// rounded table turned every query and key a little (esm2_t12's q/k
// gradients 3-4x autocast's error), and so does the pointwise math of its
// size on its result, up to the GEMM that casts it (q * cos + rotate(q) *
// sin is one f32 value, as in PyTorch). A train step's weights are arguments,
// so its constants are few; at inference every weight is one, and this
// would keep every bias add f32.
//
// And in a train step: a pointwise op whose one reader is a sum or a mean,
// directly or through others of its size (a reduction's prologue: a batch
// norm's (x - mean)^2 for its variance, its backward's dy * xhat for the
// scale's gradient) runs in f32 from half operands widened in the
// reduction's kernel, as cuDNN's batch norm does inside. In half, dy * xhat overflowed where the
// loss scale made dy large (repvgg_a2's identity batch norms: xhat up to 10): steps skipped that
// PyTorch did not skip, its losses 6.7e-3 off at step 30. It is read once,
// in the reduction's kernel: free.
#include "tc/IR/TrainSignature.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// The operands that carry the data a Follow op moves (the rest are indices,
// shapes or axes).
bool isDataOperand(const Op &op, size_t i) {
  switch (op.kind) {
  case OpKind::Concat: return true;
  case OpKind::Pad: return i == 0 || i == 2; // data and constant_value
  default: return i == 0;
  }
}

bool isWorkingFloat(DType t, DType low) { return t == DType::F32 || t == low; }

// Operands that stay f32 in a Low op: AttentionGrad's log-sum-exp (its
// exp(s - lse) would lose the probabilities' accuracy in a half type).
bool keepsF32(const Op &op, size_t i) { return op.is(OpKind::AttentionGrad) && i == 6; }

class MixedPrecision {
public:
  MixedPrecision(Function &f, DType low, bool lowIO, bool autocast,
                 std::unordered_set<const Value *> params)
      : f_(f), low_(low), lowIO_(lowIO), autocast_(autocast), train_(!params.empty()),
        weightOnly_(std::move(params)) {
    for (Value *a : f.args) {
      noteF32(a);
      if (lowIO && a->type.dtype == DType::F32) { // ops that need f32 cast it back up
        a->type.dtype = low;
        changed_ = true;
      }
    }
    for (Value *c : f.constants)
      noteF32(c);
    for (auto &op : f.ops)
      for (Value *r : op->results)
        noteF32(r);
    noteWeightPreprocessing();
    if (train_)
      noteReductionPrologues();
  }

  bool run() {
    std::vector<std::unique_ptr<Op>> old = std::move(f_.ops);
    f_.ops.clear();
    for (auto &owned : old) {
      Op &op = *owned;
      retype(op);
      f_.ops.push_back(std::move(owned));
    }
    // A train step's argument casts (its weights' half copies) go first,
    // together: one multi-tensor launch (MultiTensorRuns) instead of a cast
    // kernel before each layer's GEMMs (roberta's AMP step: 72 launches,
    // 476 us of its 6.3 ms on the H200). The peak stays: a copy still dies
    // after its last forward reader (the backward recasts it, rematerialize),
    // and the forward's start holds fewer activations than its end. Not at
    // inference, whose arguments are activations (a decode step's caches:
    // all cast at the start, all would be live at once).
    if (std::any_of(f_.ops.begin(), f_.ops.end(),
                    [](const std::unique_ptr<Op> &o) { return o->loc.phase != Phase::Forward; }))
      std::stable_partition(f_.ops.begin(), f_.ops.end(), [&](const std::unique_ptr<Op> &o) {
        return argumentCasts_.count(o.get()) != 0;
      });
    // Outputs keep the type the caller expects (f32, or the low type with
    // io=low), and their public names.
    const DType io = lowIO_ ? low_ : DType::F32;
    for (Value *&r : f_.results) {
      if (r->type.dtype == io || !wasF32_.count(r) || !isWorkingFloat(r->type.dtype, low_))
        continue;
      // The public name moves to the cast; the other one says its type.
      std::string name = f_.uniqueName(r->name + "_" + std::string(dtypeName(r->type.dtype)));
      Op *cast = f_.addOp(OpKind::Cast, {r}, {name}, {TensorType{io, r->type.shape}},
                          r->def ? r->def->loc : Location{});
      cast->setAttr("to", Attribute(io));
      std::swap(cast->result()->name, r->name);
      r = cast->result();
      changed_ = true;
    }
    return changed_;
  }

private:
  Function &f_;
  DType low_;
  bool lowIO_;
  bool autocast_;
  bool train_; // a train step (it has parameters)
  bool changed_ = false;
  std::unordered_set<const Value *> wasF32_;
  std::map<std::pair<const Value *, DType>, Value *> casts_;
  std::unordered_set<const Op *> argumentCasts_; // placed first (run)
  // Values computed from parameters and constants alone (starting with the
  // parameters), and the forward nodes of the pointwise math among them.
  std::unordered_set<const Value *> weightOnly_;
  std::unordered_set<std::string> weightNodes_;

  bool weightPointwise(const Op &op) const {
    return op.info().category == FusionCategory::Pointwise &&
           op.info().precision == PrecisionClass::Low;
  }

  void noteWeightPreprocessing() {
    if (weightOnly_.empty())
      return;
    for (auto &op : f_.ops) {
      if (op->loc.phase != Phase::Forward)
        continue;
      bool reads = false, only = true;
      for (const Value *v : op->operands) {
        if (!v || v->isConstant())
          continue;
        if (weightOnly_.count(v))
          reads = true;
        else
          only = false;
      }
      if (!reads || !only)
        continue;
      for (const Value *r : op->results)
        weightOnly_.insert(r);
      if (weightPointwise(*op) && !op->loc.node.empty())
        weightNodes_.insert(op->loc.node);
    }
  }

  // Pointwise ops whose one reader is a sum or mean, directly or through
  // others of their size (see the header).
  std::unordered_set<const Op *> prologue_;

  void noteReductionPrologues() {
    const ValueUses uses(f_);
    auto sums = [](const Op &r, const Value *v) {
      return (r.is(OpKind::ReduceSum) || r.is(OpKind::ReduceMean) ||
              r.is(OpKind::ReduceSumSquare)) &&
             r.operand(0) == v;
    };
    // Readers come after their producers: last op first.
    for (auto it = f_.ops.rbegin(); it != f_.ops.rend(); ++it) {
      const Op &op = **it;
      if (!weightPointwise(op) || op.results.size() != 1 || op.result()->type.dtype != DType::F32 ||
          uses.returned(op.result()))
        continue;
      // One reader (an op may read it twice: x * x), so the f32 value lives
      // only inside the reduction's kernel.
      const std::vector<Op *> &rs = uses.readers(op.result());
      if (rs.empty() ||
          std::any_of(rs.begin(), rs.end(), [&](const Op *r) { return r != rs.front(); }))
        continue;
      const Op &r = *rs.front();
      if (sums(r, op.result()) || (prologue_.count(&r) && sameSize(r.result(), op.result())))
        prologue_.insert(&op);
    }
  }

  // Results kept f32 by such a constant, and the pointwise math on them of
  // their size (the rotary's q * cos + rotate(q) * sin: f32 until the GEMM).
  std::unordered_set<const Value *> promoted_;
  // policy=autocast: batch norms' x * a + c computed in f32 (half to their readers).
  std::unordered_set<const Value *> normalized_;
  static bool sameSize(const Value *a, const Value *b) {
    std::optional<int64_t> n = staticNumElements(b->type.shape);
    return a->type.shape == b->type.shape || (n && staticNumElements(a->type.shape) == n);
  }

  // A float tensor constant that `low_` rounds (cached per constant).
  mutable std::unordered_map<const Value *, bool> inexact_;
  bool inexactConstant(const Value *v) const {
    if (!v || !v->isConstant() || !wasF32_.count(v) || v->type.dtype != DType::F32 ||
        hasOneElement(v))
      return false;
    auto [it, fresh] = inexact_.try_emplace(v, false);
    if (fresh) {
      HostTensor t = constantTensor(*v);
      HostTensor back = convertTo(convertTo(t, low_), DType::F32);
      it->second = std::memcmp(t.bytes(), back.bytes(), t.byteSize()) != 0;
    }
    return it->second;
  }

  // A weight's preprocessing or its gradient (see the header).
  bool weightMath(const Op &op) const {
    if (!weightPointwise(op) || op.results.size() != 1)
      return false;
    if (op.loc.phase == Phase::Backward)
      return !op.loc.node.empty() && weightNodes_.count(op.loc.node);
    return weightOnly_.count(op.result()) != 0;
  }

  void noteF32(const Value *v) {
    if (v->type.dtype == DType::F32)
      wasF32_.insert(v);
  }

  // `v` in dtype `t`: a converted constant or a (shared) Cast appended to
  // the function's op list, which run() is rebuilding in order.
  Value *castTo(Value *v, DType t) {
    auto key = std::make_pair(static_cast<const Value *>(v), t);
    if (auto it = casts_.find(key); it != casts_.end())
      return it->second;
    std::string name = f_.uniqueName(v->name + "_" + std::string(dtypeName(t)));
    TensorType type{t, v->type.shape};
    Value *out;
    if (v->isConstant()) {
      HostTensor dst = convertTo(constantTensor(*v), t);
      out = f_.addConstant(name, type, TensorData::copyOf(dst.bytes(), dst.byteSize()), v->loc);
    } else if (const Op *rs = v->def;
               rs && rs->is(OpKind::RankSlice) && rs->operand(0)->isConstant()) {
      // A rank's part of a weight: the part of the converted weight, so no
      // Cast runs at each call (and a rank uploads the part in `t`).
      Op *part = f_.addOp(OpKind::RankSlice, {castTo(rs->operand(0), t)}, {name}, {type}, rs->loc);
      part->attrs = rs->attrs;
      out = part->result();
    } else {
      Op *cast = f_.addOp(OpKind::Cast, {v}, {name}, {type}, v->def ? v->def->loc : Location{});
      cast->setAttr("to", Attribute(t));
      if (v->isArgument())
        argumentCasts_.insert(cast);
      out = cast->result();
    }
    wasF32_.insert(out); // a working-precision copy of an f32 value
    return casts_[key] = out;
  }

  void convertOperand(Op &op, size_t i, DType t) {
    Value *v = op.operands[i];
    if (!v || !wasF32_.count(v) || v->type.dtype == t || !isWorkingFloat(v->type.dtype, low_))
      return;
    op.operands[i] = castTo(v, t);
    changed_ = true;
  }

  // Statistics: f32 reductions' results and the small pointwise values
  // computed from them (a lowered batch norm's per-channel mean, variance,
  // 1 / sqrt(var + eps) and its backward's per-channel terms, up to
  // rstd^3), which stay f32 as cuDNN's and PyTorch's batch norms keep them:
  // in a half type a channel whose mean is far above its spread loses the
  // variance, and rstd^3 overflows (a NaN loss where PyTorch trains;
  // test/Training/amp-batchnorm-stats.test). Per-channel sizes: free.
  static constexpr int64_t kStatElements = int64_t(1) << 16;
  std::unordered_set<const Value *> stats_;
  bool statisticSized(const Op &op) const {
    std::optional<int64_t> n = staticNumElements(op.result()->type.shape);
    return n && *n <= kStatElements &&
           std::any_of(op.operands.begin(), op.operands.end(),
                       [&](const Value *v) { return v && stats_.count(v); });
  }
  bool statistic(const Op &op) const {
    return op.info().category == FusionCategory::Pointwise && op.results.size() == 1 &&
           statisticSized(op);
  }

  // policy=autocast: an f32 activation as large as `op`'s result.
  bool promotes(const Op &op) const {
    return std::any_of(op.operands.begin(), op.operands.end(), [&](const Value *v) {
      return v && !v->isConstant() && v->type.dtype == DType::F32 && wasF32_.count(v) &&
             !normalized_.count(v) && sameSize(v, op.result());
    });
  }

  void retype(Op &op) {
    PrecisionClass p = op.info().precision;
    if (p == PrecisionClass::Keep)
      return;
    // A train step's loss and its gradient stay f32 (TrainSignature.h).
    if (p == PrecisionClass::Low && op.loc.node == kLossNode)
      p = PrecisionClass::F32;
    bool stat = p == PrecisionClass::Low && statistic(op);
    if (stat || (p == PrecisionClass::Low && weightMath(op)))
      p = PrecisionClass::F32;
    // A reduction's prologue: f32, its half operands widened by Casts of its
    // own (CSE merges equal ones; fuse gives each reading kernel its own
    // again, splitWideningCasts, so none is stored in f32).
    // An f32 activation it reads (a softmax's probabilities, for its
    // backward's dP * P) is read as the half copy the other readers read,
    // or its producer would store it in f32 as well (mvitv2_tiny: 219 MiB).
    if (p == PrecisionClass::Low && prologue_.count(&op)) {
      for (Value *&v : op.operands) {
        if (v && !autocast_ && v->type.dtype == DType::F32 && wasF32_.count(v) &&
            !v->isConstant() && !promoted_.count(v) && !(v->def && prologue_.count(v->def)) &&
            sameSize(v, op.result()))
          v = castTo(v, low_);
        if (v && v->type.dtype == low_ && wasF32_.count(v) && !v->isConstant()) {
          Op *cast = f_.addOp(OpKind::Cast, {v}, {f_.uniqueName(v->name + "_f32")},
                              {TensorType{DType::F32, v->type.shape}}, op.loc);
          cast->setAttr("to", Attribute(DType::F32));
          wasF32_.insert(cast->result());
          v = cast->result();
          changed_ = true;
        }
      }
      p = PrecisionClass::F32;
    }
    // The promotions below apply to a one-result pointwise op still in half.
    auto lowPointwise = [&] {
      return p == PrecisionClass::Low && op.info().category == FusionCategory::Pointwise &&
             op.results.size() == 1;
    };
    auto reads = [&](const std::function<bool(const Value *)> &pred) {
      return std::any_of(op.operands.begin(), op.operands.end(),
                         [&](const Value *v) { return v && pred(v); });
    };
    bool promoted = false;
    if (lowPointwise() && reads([&](const Value *v) {
          return (train_ && inexactConstant(v)) || (promoted_.count(v) && sameSize(v, op.result()));
        }))
      p = PrecisionClass::F32, promoted = true;
    // policy=autocast: a batch norm's x * a + c (a, c its statistics) in f32,
    // its result rounded at its readers (cuDNN's is half): no chain.
    if (autocast_ && lowPointwise() &&
        reads([&](const Value *v) { return stats_.count(v) != 0; })) {
      p = PrecisionClass::F32;
      normalized_.insert(op.result());
    }
    if (autocast_ && lowPointwise() && promotes(op))
      p = PrecisionClass::F32;
    // A weight's gradient summed from its uses' parts (a tied table's head
    // and embedding gradients) is summed in f32, as PyTorch accumulates an
    // f32 parameter's .grad: in half the two parts cancelled to 4% off
    // (session 48's tied-head step).
    if (p == PrecisionClass::Low && (op.is(OpKind::Add) || op.is(OpKind::Sum)) &&
        op.loc.phase == Phase::Backward &&
        std::find(f_.results.begin(), f_.results.end(), op.result()) != f_.results.end())
      p = PrecisionClass::F32;
    // Other readers of a promoted value read it rounded to the low type
    // once, as it would be stored: saved for the backward, it takes the
    // bytes it took before (no f32 activation kept), and an f32 reader
    // widens that copy.
    if (!promoted)
      for (Value *&v : op.operands)
        if (v && promoted_.count(v) && v->type.dtype == DType::F32) {
          v = castTo(v, low_);
          changed_ = true;
        }
    DType want = p == PrecisionClass::Low ? low_ : DType::F32;
    // The loss's gradient leaves the loss in the low type: its readers
    // (the head's GEMMs, the bias gradient's sum, a padded head's Pad)
    // read one half copy, as autocast's backward reads the half gradient,
    // so the loss's backward writes [N, C] once, in half (an LM head's
    // 1024 x 50265: 0.2 GB a step less written, half as much read). F32
    // ops widen it again in their prologue.
    if (op.loc.node != kLossNode)
      for (Value *&v : op.operands)
        if (v && v->def && v->def->loc.node == kLossNode && v->def->loc.phase == Phase::Backward &&
            v->type.dtype == DType::F32 && wasF32_.count(v)) {
          v = castTo(v, low_);
          changed_ = true;
        }
    if (p == PrecisionClass::Follow) {
      const Value *data = op.operand(0);
      if (!data || !isWorkingFloat(data->type.dtype, low_))
        return;
      want = data->type.dtype;
    }
    for (size_t i = 0; i < op.operands.size(); ++i)
      if ((p != PrecisionClass::Follow || isDataOperand(op, i)) && !keepsF32(op, i))
        convertOperand(op, i, want);
    // Result dtypes follow the operands (the shapes do not change).
    std::vector<TensorType> types = inferResultTypes(op);
    for (size_t r = 0; r < op.results.size() && r < types.size(); ++r)
      if (op.results[r]->type.dtype != types[r].dtype) {
        op.results[r]->type.dtype = types[r].dtype;
        changed_ = true;
      }
    // (policy=autocast: an f32 op's small result from statistics is one
    // too: rstd = 1 / sqrt(var + eps), whose product with the scale is a
    // batch norm's a. Not under fast: each a would be a cast launch more.)
    if (stat ||
        (op.info().category == FusionCategory::Reduction && op.results.size() == 1 &&
         op.result()->type.dtype == DType::F32) ||
        (autocast_ && p == PrecisionClass::F32 && op.info().category == FusionCategory::Pointwise &&
         op.results.size() == 1 && op.result()->type.dtype == DType::F32 && statisticSized(op)))
      stats_.insert(op.result());
    if (promoted)
      promoted_.insert(op.result());
  }
};

} // namespace

bool runMixedPrecisionPass(Module &m, const PassOptions &opts) {
  const std::string &type = opts.get("type");
  DType low;
  if (type == "f16" || type == "fp16")
    low = DType::F16;
  else if (type == "bf16")
    low = DType::BF16;
  else
    fail("mixed-precision: type must be f16 or bf16, not '", type, "'");
  // Only the entry function: callees (If/Loop bodies) keep their signatures,
  // and the ops that call them run in f32.
  const std::string &io = opts.get("io");
  if (io != "f32" && io != "low")
    fail("mixed-precision: io must be f32 or low, not '", io, "'");
  const std::string &policy = opts.get("policy");
  if (policy != "fast" && policy != "autocast")
    fail("mixed-precision: policy must be fast or autocast, not '", policy, "'");
  // A train step's parameters: the first `params` of its trailing state.
  std::unordered_set<const Value *> params;
  if (std::optional<TrainSignature> sig = trainSignature(m); sig && !sig->eval) {
    const std::vector<Value *> &args = m.main().args;
    for (size_t i = args.size() - sig->state; i < args.size() - sig->state + sig->params; ++i)
      params.insert(args[i]);
  }
  return MixedPrecision(m.main(), low, io == "low", policy == "autocast", std::move(params)).run();
}

} // namespace tc
