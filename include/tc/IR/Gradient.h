// Gradient rules: how the autodiff pass (lib/Transforms/Autodiff.cpp) carries
// cotangents back through each op kind. A rule is IR-building code: given a
// forward op and the cotangents of its results, it appends ordinary IR ops
// that compute the cotangents of its operands, so every later pass and both
// backends treat the backward like any other code. The rules live in
// lib/IR/Gradients/ by op family; which op kind has one is the op table's
// fact, listed in include/tc/IR/Gradients.def.
#pragma once
#include "tc/IR/IR.h"
#include <string>
#include <utility>
#include <vector>

namespace tc {

// Appends the ops of one rule to a function, each at the end, named after
// the forward op's first result and carrying its location (so a diagnostic
// or a profile names the ONNX node a backward op differentiates) with the
// builder's `phase`: backward for a rule's ops.
class GradBuilder {
public:
  GradBuilder(Function &f, const Op &fwd);
  // For code that is no op's gradient (losses, optimizers): `fwd` only
  // gives the location (and the phase, unless set); values are named after
  // `base`.
  GradBuilder(Function &f, const Op &fwd, std::string base);

  Function &f;
  const Op &fwd;
  Phase phase; // of the ops and constants it makes (append-optimizer: Optimizer)
  Location loc() const {
    Location l = fwd.loc;
    l.phase = phase;
    return l;
  }

  // An op of kind `k` with result types from the op table's shape rule.
  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs = {});
  std::vector<Value *> ops(OpKind k, std::vector<Value *> ins, size_t numResults,
                           std::vector<std::pair<std::string, Attribute>> attrs = {});

  // Constants. `like` gives the dtype (a float scalar of like's dtype).
  Value *scalar(double v, const Value *like);
  Value *ints(const std::vector<int64_t> &v);
  Value *zerosLike(const Value *v);

  Value *add(Value *a, Value *b) { return op(OpKind::Add, {a, b}); }
  Value *sub(Value *a, Value *b) { return op(OpKind::Sub, {a, b}); }
  Value *mul(Value *a, Value *b) { return op(OpKind::Mul, {a, b}); }
  Value *div(Value *a, Value *b) { return op(OpKind::Div, {a, b}); }
  Value *neg(Value *a) { return op(OpKind::Neg, {a}); }
  Value *scale(Value *a, double s) { return s == 1.0 ? a : mul(a, scalar(s, a)); }
  Value *where(Value *c, Value *a, Value *b) { return op(OpKind::Where, {c, a, b}); }
  Value *castTo(Value *v, DType t);
  // Static shapes only: autodiff requires them (dims()).
  Value *reshape(Value *v, const std::vector<int64_t> &dims);
  Value *transpose(Value *v, const std::vector<int64_t> &perm);
  Value *swapLastTwo(Value *v);
  Value *reduceSum(Value *v, const std::vector<int64_t> &axes, bool keepdims);
  Value *reduceMean(Value *v, const std::vector<int64_t> &axes, bool keepdims);
  Value *expandTo(Value *v, const std::vector<int64_t> &dims);
  // v zero-padded along `axis` by `before` and `after` elements (negative:
  // cropped); v itself when both are 0.
  Value *padAxis(Value *v, size_t axis, int64_t before, int64_t after);
  // The sum of cotangent `g` over the axes an operand of dims `to` was
  // broadcast along (numpy rules), reshaped to `to`.
  Value *unbroadcast(Value *g, const std::vector<int64_t> &to);

  // The static dims of `v`; a tc::Error naming the forward op otherwise.
  std::vector<int64_t> dims(const Value *v) const;

private:
  std::string base_;
};

// A rule: fills `operandGrads` (one slot per operand of `b.fwd`, nullptr on
// entry) for the operands in `wanted` (float operands some parameter reaches);
// `resultGrads` has one entry per result, nullptr where none flows back.
// It may leave a slot empty (no gradient flows: an index, a mask).
using GradFn = void (*)(GradBuilder &b, const std::vector<Value *> &resultGrads,
                        const std::vector<bool> &wanted, std::vector<Value *> &operandGrads);

// The rule of op kind `k`, or nullptr (lib/IR/Gradients/Registry.cpp, from Gradients.def).
GradFn gradientRule(OpKind k);

namespace grad {
// x normalized over `axes` with its own statistics (lib/IR/Gradients/NN.cpp):
// the mean, x - mean (read by the variance), the population variance (kept
// dims), 1 / sqrt(var + eps) and xhat. The one way these ops are built: a
// batch norm's lowering (lowerTrainingBatchNorm) and the rules that
// recompute them make the same ops, which CSE merges.
struct Normalized {
  Value *mean, *centered, *var, *invStd, *xhat;
};
// The statistics alone (xhat null).
Normalized statistics(GradBuilder &b, Value *x, const std::vector<int64_t> &axes, double eps);
// The statistics and xhat = (x - mean) * invStd.
Normalized normalize(GradBuilder &b, Value *x, const std::vector<int64_t> &axes, double eps);
// xhat as an affine map of x, x * invStd + (-mean * invStd): it reads x and
// two small tensors, not x - mean, so a batch norm's backward recomputes it
// from the saved x and its forward (x * a + c) never writes x - mean or
// xhat out (resnet50's AMP step wrote both per batch norm).
Value *affineNormalized(GradBuilder &b, Value *x, const Normalized &n);
} // namespace grad

} // namespace tc
