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

// ---- More elementwise ------------------------------------------------------

std::vector<TensorType> inferFloatPredicate(const Op &op) {
  TensorType t = same(op, isFloat, "a float")[0];
  t.dtype = DType::Bool;
  return {t};
}

std::vector<TensorType> inferSameInteger(const Op &op) { return same(op, isInteger, "an integer"); }

std::vector<TensorType> inferCastLike(const Op &op) {
  return {TensorType{operandType(op, 1).dtype, operandType(op, 0).shape}};
}

std::vector<TensorType> inferPRelu(const Op &op) {
  const TensorType &x = operandType(op, 0), &s = operandType(op, 1);
  if (x.dtype != s.dtype)
    fail("operand types differ: ", x.str(), " vs ", s.str());
  if (!numeric(x.dtype))
    fail("expects numeric operands, got ", dtypeName(x.dtype));
  // Unidirectional: slope broadcasts to X, the result has X's shape.
  if (s.rank() > x.rank())
    fail("slope ", s.str(), " does not broadcast to X ", x.str());
  for (size_t i = 0; i < s.rank(); ++i) {
    const Dim &sd = s.shape[i], &xd = x.shape[x.rank() - s.rank() + i];
    if (sd.isStatic() && sd.size != 1 && xd.isStatic() && sd.size != xd.size)
      fail("slope ", s.str(), " does not broadcast to X ", x.str());
  }
  return {x};
}

std::vector<TensorType> inferClip(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (!numeric(x.dtype))
    fail("expects a numeric input, got ", dtypeName(x.dtype));
  for (size_t i = 1; i < 3; ++i) {
    const Value *b = op.operand(i);
    if (!b)
      continue;
    const char *what = i == 1 ? "min" : "max";
    if (b->type.dtype != x.dtype)
      fail(what, " type ", b->type.str(), " differs from input ", x.str());
    auto n = staticNumElements(b->type.shape);
    if (b->type.rank() > 1 || (n && *n != 1))
      fail(what, " must be a scalar, got ", b->type.str());
  }
  return {x};
}

static std::vector<TensorType> variadic(const Op &op, bool (*ok)(DType), const char *want) {
  const TensorType &first = operandType(op, 0);
  if (!ok(first.dtype))
    fail("expects ", want, " inputs, got ", dtypeName(first.dtype));
  TensorType r = first;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const TensorType &t = operandType(op, i);
    if (t.dtype != first.dtype)
      fail("input ", i, " ", t.str(), " differs in type from input 0 ", first.str());
    r.shape = broadcast(r.shape, t.shape);
  }
  return {r};
}

std::vector<TensorType> inferVariadicNumeric(const Op &op) {
  return variadic(op, numeric, "numeric");
}
std::vector<TensorType> inferVariadicFloat(const Op &op) { return variadic(op, isFloat, "float"); }

std::vector<TensorType> inferMod(const Op &op) {
  TensorType t = broadcastSame(op, numeric, "numeric");
  int64_t fmod = op.getInt("fmod");
  if (fmod != 0 && fmod != 1)
    fail("fmod must be 0 or 1, got ", fmod);
  if (isFloat(t.dtype) && fmod != 1)
    fail("fmod must be 1 for float operands (", dtypeName(t.dtype), ")");
  return {t};
}

static bool isUnsignedInt(DType t) { return isInteger(t) && !isSigned(t); }

std::vector<TensorType> inferBitShift(const Op &op) {
  const std::string &dir = op.getString("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    fail("direction must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  return {broadcastSame(op, isUnsignedInt, "unsigned integer")};
}

std::vector<TensorType> inferBroadcastInteger(const Op &op) {
  return {broadcastSame(op, isInteger, "integer")};
}

} // namespace tc::infer
