// Shape rules of the losses (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss), the training-mode forms (BatchNormalizationTraining,
// Dropout) and the optimizers of ai.onnx.preview.training (Adagrad, Adam,
// Momentum).
#include "OpInference.h"

namespace tc::infer {

static const TensorType &floatOperand(const Op &op, size_t i) {
  const TensorType &t = operandType(op, i);
  if (!isFloat(t.dtype))
    fail("operand ", i, " (", op.info().operands[std::min(i, op.info().operands.size() - 1)].name,
         ") must be a float tensor, got ", t.str());
  return t;
}

static bool sameDim(const Dim &a, const Dim &b) {
  return !a.isStatic() || !b.isStatic() || a.size == b.size;
}

// input/scores [N, C, d...], target/labels [N, d...] (i32/i64), weight [C].
std::vector<TensorType> inferLoss(const Op &op) {
  const TensorType &x = floatOperand(op, 0);
  const TensorType &t = operandType(op, 1);
  const auto &names = op.info().operands;
  if (x.rank() < 2)
    fail(names[0].name, " must be [N, C, d...] (rank >= 2), got ", x.str());
  if (t.dtype != DType::I32 && t.dtype != DType::I64)
    fail(names[1].name, " must be an i32 or i64 tensor, got ", t.str());
  bool ok = t.rank() + 1 == x.rank() && sameDim(t.shape[0], x.shape[0]);
  for (size_t d = 1; ok && d < t.rank(); ++d)
    ok = sameDim(t.shape[d], x.shape[d + 1]);
  if (!ok)
    fail(names[1].name, " ", t.str(), " must be ", names[0].name, "'s shape without axis 1 (",
         x.str(), ")");
  if (op.operand(2)) {
    const TensorType &w = floatOperand(op, 2);
    if (w.dtype != x.dtype || w.rank() != 1 || !sameDim(w.shape[0], x.shape[1]))
      fail(names[2].name, " must be ", dtypeName(x.dtype), " [C] with C = ", x.shape[1].str(),
           ", got ", w.str());
  }
  if (op.getInts("ignore_index").size() > 1)
    fail("ignore_index must have at most one value, got ", op.getInts("ignore_index").size());
  const std::string &red = op.getString("reduction");
  if (red != "none" && red != "sum" && red != "mean")
    fail("reduction must be none, sum or mean, got '", red, "'");
  size_t maxResults = op.is(OpKind::SoftmaxCrossEntropyLoss) ? 2 : 1;
  if (op.results.size() > maxResults)
    fail("has at most ", maxResults, " results, got ", op.results.size());
  std::vector<TensorType> out{TensorType{x.dtype, red == "none" ? t.shape : Shape{}}};
  if (op.results.size() > 1)
    out.push_back(x); // log_prob
  return out;
}

std::vector<TensorType> inferBatchNormTraining(const Op &op) {
  const TensorType &x = floatOperand(op, 0);
  if (x.rank() < 2)
    fail("X must have rank >= 2, got ", x.str());
  for (size_t i = 1; i < 5; ++i) {
    const TensorType &p = floatOperand(op, i);
    if (p.rank() != 1 || !sameDim(p.shape[0], x.shape[1]))
      fail(op.info().operands[i].name, " must be 1-D of size ", x.shape[1].str(), ", got ",
           p.str());
  }
  const TensorType &mean = operandType(op, 3), &var = operandType(op, 4);
  return {x, mean, var};
}

std::vector<TensorType> inferDropout(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (op.operand(1)) {
    const TensorType &r = floatOperand(op, 1);
    if (r.rank() != 0)
      fail("ratio must be a scalar, got ", r.str());
  }
  if (op.operand(2)) {
    const TensorType &t = operandType(op, 2);
    if (t.dtype != DType::Bool || t.rank() != 0)
      fail("training_mode must be a bool scalar, got ", t.str());
  }
  if (op.results.size() > 2)
    fail("has at most 2 results (output, mask), got ", op.results.size());
  std::vector<TensorType> out{x};
  if (op.results.size() > 1)
    out.push_back(TensorType{DType::Bool, x.shape});
  return out;
}

std::vector<TensorType> inferPhiloxDropout(const Op &op) {
  const TensorType &x = floatOperand(op, 0);
  for (size_t i : {1, 2}) {
    const TensorType &t = operandType(op, i);
    if (t.dtype != DType::I64 || t.rank() != 0)
      fail(op.info().operands[i].name, " must be an i64 scalar, got ", t.str());
  }
  double r = op.getFloat("ratio");
  if (!(r >= 0 && r < 1))
    fail("ratio must be in [0, 1), got ", r);
  if (op.getInt("stream") < 0 || op.getInt("stream") > 0xFFFFFFFFll)
    fail("stream must be in [0, 2^32), got ", op.getInt("stream"));
  return {x};
}

// Operands R, T, then n tensors of each of the groups (X, G, H for Adagrad;
// X, G, V, H for Adam; X, G, V for Momentum); results: each group but G.
std::vector<TensorType> inferOptimizer(const Op &op) {
  size_t groups = op.is(OpKind::Adam) ? 4 : 3;
  const TensorType &r = floatOperand(op, 0), &t = operandType(op, 1);
  if (r.rank() != 0)
    fail("R must be a float scalar, got ", r.str());
  if (t.dtype != DType::I64 || t.rank() != 0)
    fail("T must be an i64 scalar, got ", t.str());
  size_t m = op.operands.size() - 2;
  if (m == 0 || m % groups != 0)
    fail("expects R, T and ", groups, " tensors per optimized tensor, got ", m,
         " tensors after R and T");
  size_t n = m / groups;
  if (op.results.size() != (groups - 1) * n)
    fail("updates ", n, " tensors and so has ", (groups - 1) * n, " results, got ",
         op.results.size());
  if (op.is(OpKind::Momentum)) {
    const std::string &mode = op.getString("mode");
    if (mode != "standard" && mode != "nesterov")
      fail("mode must be \"standard\" or \"nesterov\", got '", mode, "'");
  }
  std::vector<TensorType> out(op.results.size());
  for (size_t i = 0; i < n; ++i) {
    const TensorType &x = floatOperand(op, 2 + i);
    for (size_t g = 1; g < groups; ++g) {
      const TensorType &o = floatOperand(op, 2 + g * n + i);
      if (o != x)
        fail("operand ", 2 + g * n + i, " ", o.str(), " must have the type of X", i + 1, " ",
             x.str());
    }
    for (size_t g = 0; g + 1 < groups; ++g)
      out[g * n + i] = x;
  }
  return out;
}

} // namespace tc::infer
