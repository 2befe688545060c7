// Shape rules of pointwise ops.
#include "OpInference.h"

namespace tc::infer {

static std::vector<TensorType> same(const Op &op, bool (*ok)(DType), const char *want) {
  const TensorType &t = operandType(op, 0);
  if (ok && !ok(t.dtype))
    fail("expects ", want, " input, got ", dtypeName(t.dtype));
  return {t};
}

std::vector<TensorType> inferSame(const Op &op) { return same(op, nullptr, ""); }
std::vector<TensorType> inferSameFloat(const Op &op) { return same(op, isFloat, "a float"); }
std::vector<TensorType> inferSameSigned(const Op &op) {
  return same(op, isSigned, "a signed numeric");
}
std::vector<TensorType> inferSameNumeric(const Op &op) {
  return same(op, [](DType t) { return t != DType::Bool; }, "a numeric");
}
std::vector<TensorType> inferSameBool(const Op &op) {
  return same(op, [](DType t) { return t == DType::Bool; }, "a bool");
}

std::vector<TensorType> inferGelu(const Op &op) {
  const std::string &a = op.getString("approximate");
  if (a != "none" && a != "tanh")
    fail("approximate must be \"none\" or \"tanh\", got \"", a, "\"");
  return inferSameFloat(op);
}

std::vector<TensorType> inferSoftmax(const Op &op) {
  std::vector<TensorType> r = inferSameFloat(op);
  normalizeAxis(op.getInt("axis"), int64_t(r[0].rank()));
  return r;
}

std::vector<TensorType> inferCast(const Op &op) {
  return {TensorType{op.attr("to").type(), operandType(op, 0).shape}};
}

// Both operands must share a dtype; `ok` restricts which.
static TensorType broadcastSame(const Op &op, bool (*ok)(DType), const char *want) {
  const TensorType &a = operandType(op, 0), &b = operandType(op, 1);
  if (a.dtype != b.dtype)
    fail("operand types differ: ", a.str(), " vs ", b.str());
  if (!ok(a.dtype))
    fail("expects ", want, " operands, got ", dtypeName(a.dtype));
  return TensorType{a.dtype, broadcast(a.shape, b.shape)};
}

static bool numeric(DType t) { return t != DType::Bool; }

std::vector<TensorType> inferBroadcastNumeric(const Op &op) {
  return {broadcastSame(op, numeric, "numeric")};
}

std::vector<TensorType> inferPow(const Op &op) {
  const TensorType &x = operandType(op, 0), &y = operandType(op, 1);
  if (!numeric(x.dtype) || !numeric(y.dtype))
    fail("expects numeric operands");
  return {TensorType{x.dtype, broadcast(x.shape, y.shape)}};
}

std::vector<TensorType> inferCompare(const Op &op) {
  TensorType t = broadcastSame(op, [](DType) { return true; }, "");
  t.dtype = DType::Bool;
  return {t};
}

std::vector<TensorType> inferLogical(const Op &op) {
  return {broadcastSame(op, [](DType t) { return t == DType::Bool; }, "bool")};
}

std::vector<TensorType> inferWhere(const Op &op) {
  const TensorType &c = operandType(op, 0), &x = operandType(op, 1), &y = operandType(op, 2);
  if (c.dtype != DType::Bool)
    fail("condition must be bool, got ", dtypeName(c.dtype));
  if (x.dtype != y.dtype)
    fail("X and Y types differ: ", x.str(), " vs ", y.str());
  return {TensorType{x.dtype, broadcast(c.shape, broadcast(x.shape, y.shape))}};
}

} // namespace tc::infer
