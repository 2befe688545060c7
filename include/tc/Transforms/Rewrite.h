// Helpers shared by rewriting passes.
#pragma once
#include "tc/IR/IR.h"
#include <functional>
#include <unordered_map>

namespace tc {

// Replaces `from` by `to` everywhere. A function result keeps its public
// name: when `from` is returned, `to` takes over its name. Returns false
// (and changes nothing) when that cannot be done without changing the
// function's signature (`to` is an argument or already returned).
bool replaceValue(Function &f, Value *from, Value *to);

// `v` statically holds one element (GroupNorm(1)'s InstanceNormalization
// scale and bias: canonicalize, channels-last).
inline bool hasOneElement(const Value *v) {
  std::optional<int64_t> n = v ? staticNumElements(v->type.shape) : std::nullopt;
  return n && *n == 1;
}

// A train step's weight before autodiff: an argument of `f`, or a Transpose
// of one (a Linear's weight as PyTorch exports it; a tied LM head reads the
// embedding table so).
bool isWeightArgument(const Function &f, const Value *v);

// The one op reading `v` (one operand slot, not a result of f), or null.
// Scans the function: for a pass's few candidates, not for every op.
Op *soleReader(Function &f, const Value *v);

// The value of a one-element float constant (a scale, a fill).
std::optional<double> floatScalarConstant(const Value *v);

// `op` scales a tensor by a constant: Mul(x, c), Mul(c, x) or Div(x, c),
// c a non-zero one-element float constant and x of the result's shape.
// (attention-fusion and gemm-views fold such scales into the product.)
struct ScalarScale {
  Value *data;
  double factor; // c, or 1 / c for Div
};
std::optional<ScalarScale> scalarScale(const Op &op);

// Rebuilds each function's op list in order, calling `rewrite` on every op
// first: ops it adds with Function::addOp land right BEFORE that op (which
// may change itself in place, keeping its results). Returns whether any
// call returned true. (symmetric-conv-pads, patch-convs, align-gemms.)
bool rewriteOpsInPlace(Module &m, const std::function<bool(Function &, Op &)> &rewrite);
// The same over one function's ops (the fuse pass's reduction-runs split).
bool rewriteOpsInPlace(Function &f, const std::function<bool(Function &, Op &)> &rewrite);

// Zeros: a float constant of zeros, an Expand of one, or ConstantOfShape's
// default or zero fill (a scatter-add into zeros: an embedding's gradient).
bool isZeros(const Value *v);

// A new 1-D i64 constant (a Reshape's shape, Slice's starts, Gather's
// indices) named uniquely after `base`.
Value *addIntsConstant(Function &f, const std::string &base, const std::vector<int64_t> &values,
                       Location loc);

// Appends op `k` located at `loc`, its result typed by the op's shape rule
// and named uniquely "<base>_<op name in lower case>" (the lowering passes:
// lower-losses, lower-hardmax, lower-optimizers).
Value *addInferredOp(Function &f, OpKind k, std::vector<Value *> ins,
                     std::vector<std::pair<std::string, Attribute>> attrs, const std::string &base,
                     const Location &loc);

// Who reads each value of `f` (as built; not updated by later rewrites):
// the ops reading it, once per operand, and how often it is read, a
// function result counting 2 (a returned value is never a sole read).
struct ValueUses {
  std::unordered_map<const Value *, std::vector<Op *>> users;
  std::unordered_map<const Value *, int> count;
  explicit ValueUses(const Function &f);
  int operator[](const Value *v) const;
  // The ops reading `v` (once per operand read).
  const std::vector<Op *> &readers(const Value *v) const;
  bool returned(const Value *v) const;
  // The op that reads `v` once and alone (v not returned), or null.
  Op *sole(const Value *v) const;
};

// Appends ops for a rewrite of op `at`: named after its result, located at
// it, typed by their shape rules (addInferredOp); `ints` a 1-D i64
// constant (a shape).
struct AtOpBuilder {
  Function &f;
  const Op &at;
  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    return addInferredOp(f, k, std::move(ins), std::move(attrs), at.result()->name, at.loc);
  }
  Value *ints(const std::vector<int64_t> &v) {
    return addIntsConstant(f, at.result()->name + "_shape", v, at.loc);
  }
};

// `y` (made by a lowering) becomes the value `r` (the lowered op's result):
// r's readers and its place among the function's results stay. Given `f`,
// the lowering's own readers of y read r too.
void adoptValue(Value *r, Value *y, Function *f = nullptr);

// Erases ops none of whose results are used; returns whether any were.
bool eraseDeadOps(Function &f);

// `user` reads v once and nothing else reads it, nor is it a result of f
// (lib/Transforms/FoldBatchNorm.cpp).
bool usedOnlyBy(const Function &f, const Value *v, const Op &user);

// BatchNormalization(Conv|Gemm(x, W, B)) with constant parameters becomes
// Conv|Gemm(x, W', B') (lib/Transforms/FoldBatchNorm.cpp). The producer's
// result must have no other use.
bool foldBatchNormIntoProducer(Function &f, Op &bn);

// Mul(MatMul(x, W) [+ b], c) with constant W [K, N], b and c, c and b along
// the last axis (N values or one): a transformer's layer scale (BEiT,
// ConvNeXt, CaiT) becomes MatMul(x, W c) [+ b c], so the GEMM's epilogue is
// bias + residual, which cuBLASLt takes whole (FoldBatchNorm.cpp). The
// MatMul's and the Add's results must have no other use.
bool foldScaleIntoMatMul(Function &f, Op &mul);

// A BatchNormalization (constant parameters, static channels) that nothing
// folds into, f.ops[at], becomes Mul(x, s) + shift with [C, 1, ...] constants:
// pointwise ops every kernel family fuses (lib/Transforms/FoldBatchNorm.cpp).
bool lowerBatchNormToAffine(Function &f, size_t at);

// A BatchNormalization whose parameters are not all constants, f.ops[at],
// becomes the reference's formula over them unsqueezed to [C, 1, ...] by
// Unsqueeze ops (train-state, before autodiff: its statistics computed in
// the graph, its constants parameters that must stay one tensor each).
bool lowerBatchNormFormula(Function &f, size_t at);

// A BatchNormalizationTraining (ONNX's training_mode = 1 outside tc-opt
// --train, which makes its statistics state first), f.ops[at], becomes the
// reference's formula: ReduceMean statistics, pointwise normalization and
// running-statistics updates (lib/Transforms/FoldBatchNorm.cpp).
bool lowerTrainingBatchNorm(Function &f, size_t at);

// Why the lower-einsum pass leaves Einsum `e` alone ("" when it rewrites
// it; lib/Transforms/LowerEinsum.cpp).
std::string einsumObstacle(const Op &e);

// Why the lower-losses pass leaves NegativeLogLikelihoodLoss /
// SoftmaxCrossEntropyLoss `loss` alone ("" when it rewrites it;
// lib/Transforms/LowerLosses.cpp).
std::string lossObstacle(const Op &loss);
// Why the lower-hardmax pass leaves a Hardmax alone ("" when it lowers it).
std::string hardmaxObstacle(const Op &hardmax);
// Why the lower-recurrent pass leaves RNN / GRU / LSTM `rnn` alone ("" when
// it unrolls it; lib/Transforms/LowerRecurrent.cpp).
std::string recurrentObstacle(const Op &rnn);

// Why the lower-quantize pass leaves a quantization op alone ("" when it
// lowers it; lib/Transforms/LowerQuantize.cpp).
std::string quantizeObstacle(const Op &op);
// Why the lower-optimizers pass leaves Adagrad / Adam / Momentum `op` alone
// ("" when it rewrites it; lib/Transforms/LowerOptimizers.cpp).
std::string optimizerObstacle(const Op &op);

} // namespace tc
