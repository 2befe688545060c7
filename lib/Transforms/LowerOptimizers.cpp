// The ai.onnx.preview.training optimizers Adagrad, Adam and Momentum become
// pointwise ops (tc-opt before fusion; codegen's outlining runs it too): per
// tensor X_i with gradient G_i and state, the reference's formulas
// (lib/Runtime/Ref/Training.cpp) in its order, with L2 regularization
// g = norm_coefficient * X + G:
//
//   Adagrad   H' = H + g * g;  X' = X - rate * g / (sqrt(H') + eps),
//             rate = R / (1 + T * decay_factor)
//   Momentum  V' = alpha * V + beta_T * g (beta_T = T > 0 ? beta : 1);
//             X' = X - R * V' (standard), X - R * (g + alpha * V') (nesterov)
//   Adam      V' = alpha * V + (1 - alpha) * g; H' = beta * H + (1 - beta) * g * g;
//             X' = (1 - norm_coefficient_post) * (X - rate * V' / (sqrt(H') + eps)),
//             rate = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
//
// The scalar rate is a small kernel of its own; each tensor's update one
// pointwise kernel writing X' and its state. What stays (a host step, named
// by codegen): tensors that are not float, R or T not one element.
#include "tc/IR/OpTable.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"

namespace tc {

namespace {

class Builder {
public:
  Builder(Function &f, const Op &at) : f_(f), at_(at) {}

  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    return addInferredOp(f_, k, std::move(ins), std::move(attrs), at_.result()->name, at_.loc);
  }
  Value *scalar(DType t, double v) {
    HostTensor h(t, {});
    h.setDouble(0, v);
    return f_.addConstant(f_.uniqueName(at_.result()->name + "_k"), h.type(),
                          TensorData::copyOf(h.bytes(), h.byteSize()), at_.loc);
  }
  Value *add(Value *a, Value *b) { return op(OpKind::Add, {a, b}); }
  Value *sub(Value *a, Value *b) { return op(OpKind::Sub, {a, b}); }
  Value *mul(Value *a, Value *b) { return op(OpKind::Mul, {a, b}); }
  Value *div(Value *a, Value *b) { return op(OpKind::Div, {a, b}); }

private:
  Function &f_;
  const Op &at_;
};

size_t stateGroups(const Op &op) { return op.is(OpKind::Adam) ? 4 : 3; }

// The lowered results in the op's order, or empty when it stays.
std::vector<Value *> lower(Function &f, const Op &op) {
  if (!optimizerObstacle(op).empty())
    return {};
  size_t groups = stateGroups(op), n = (op.operands.size() - 2) / groups;
  DType ft = op.operand(2)->type.dtype;
  Builder b(f, op);
  Value *R = op.operand(0), *T = op.operand(1);
  if (R->type.dtype != ft)
    R = b.op(OpKind::Cast, {R}, {{"to", Attribute(ft)}});
  // T as a float, and T > 0: made where used (nothing dead for the fuse pass).
  auto tf = [&] { return b.op(OpKind::Cast, {T}, {{"to", Attribute(ft)}}); };
  auto started = [&] { return b.op(OpKind::Greater, {T, b.scalar(T->type.dtype, 0)}); };
  auto k = [&](double v) { return b.scalar(ft, v); };
  double nc = op.getFloat("norm_coefficient");
  // The per-call scalars.
  Value *rate = R, *betaT = nullptr;
  if (op.is(OpKind::Adagrad)) {
    rate = b.div(R, b.add(k(1), b.mul(tf(), k(op.getFloat("decay_factor")))));
  } else if (op.is(OpKind::Momentum)) {
    betaT = b.op(OpKind::Where, {started(), k(op.getFloat("beta")), k(1)});
  } else {
    double alpha = op.getFloat("alpha"), beta = op.getFloat("beta");
    Value *t = tf();
    Value *num = b.mul(R, b.op(OpKind::Sqrt, {b.sub(k(1), b.op(OpKind::Pow, {k(beta), t}))}));
    Value *corrected = b.div(num, b.sub(k(1), b.op(OpKind::Pow, {k(alpha), t})));
    rate = b.op(OpKind::Where, {started(), corrected, R});
  }
  std::vector<Value *> out(op.results.size(), nullptr);
  for (size_t i = 0; i < n; ++i) {
    Value *x = op.operand(2 + i), *g0 = op.operand(2 + n + i), *s1 = op.operand(2 + 2 * n + i);
    Value *g = b.add(b.mul(k(nc), x), g0);
    if (op.is(OpKind::Adagrad)) {
      Value *h = b.add(s1, b.mul(g, g));
      Value *step =
          b.div(b.mul(rate, g), b.add(b.op(OpKind::Sqrt, {h}), k(op.getFloat("epsilon"))));
      out[i] = b.sub(x, step);
      out[n + i] = h;
    } else if (op.is(OpKind::Momentum)) {
      double alpha = op.getFloat("alpha");
      Value *v = b.add(b.mul(k(alpha), s1), b.mul(betaT, g));
      bool nesterov = op.getString("mode") == "nesterov";
      out[i] = b.sub(x, b.mul(R, nesterov ? b.add(g, b.mul(k(alpha), v)) : v));
      out[n + i] = v;
    } else {
      double alpha = op.getFloat("alpha"), beta = op.getFloat("beta");
      Value *s2 = op.operand(2 + 3 * n + i);
      Value *v = b.add(b.mul(k(alpha), s1), b.mul(k(1 - alpha), g));
      Value *h = b.add(b.mul(k(beta), s2), b.mul(b.mul(k(1 - beta), g), g));
      Value *xn = b.sub(
          x, b.div(b.mul(rate, v), b.add(b.op(OpKind::Sqrt, {h}), k(op.getFloat("epsilon")))));
      out[i] = b.mul(k(1 - op.getFloat("norm_coefficient_post")), xn);
      out[n + i] = v;
      out[2 * n + i] = h;
    }
  }
  return out;
}

bool isOptimizer(const Op &o) {
  return o.is(OpKind::Adagrad) || o.is(OpKind::Adam) || o.is(OpKind::Momentum);
}

} // namespace

std::string optimizerObstacle(const Op &op) {
  size_t groups = stateGroups(op);
  if (op.operands.size() < 2 + groups || (op.operands.size() - 2) % groups != 0)
    return "an operand count that is not R, T and the tensor groups";
  for (size_t i = 0; i < 2; ++i)
    if (!op.operand(i) || staticNumElements(op.operand(i)->type.shape) != std::optional<int64_t>(1))
      return "an R or T that is not one element";
  if (!isFloat(op.operand(0)->type.dtype) || !isInteger(op.operand(1)->type.dtype))
    return "an R that is not float or a T that is not an integer";
  size_t n = (op.operands.size() - 2) / groups;
  for (size_t i = 2; i < op.operands.size(); ++i) {
    const Value *v = op.operand(i);
    if (!v || !isFloat(v->type.dtype) || v->type.dtype != op.operand(2)->type.dtype ||
        v->type.shape != op.operand(2 + (i - 2) % n)->type.shape)
      return "tensors that are not float, of one type and of their X's shape";
  }
  return "";
}

bool runLowerOptimizersPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(), [](const auto &o) { return isOptimizer(*o); }))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      std::vector<Value *> ys = isOptimizer(*o) ? lower(f, *o) : std::vector<Value *>{};
      if (ys.empty()) {
        f.ops.push_back(std::move(o));
        continue;
      }
      for (size_t r = 0; r < ys.size(); ++r)
        adoptValue(o->results[r], ys[r], &f);
      changed = true;
    }
    f.removeUnusedConstants();
  }
  return changed;
}

} // namespace tc
