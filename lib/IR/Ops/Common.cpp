#include "OpInference.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <cstring>

namespace tc::infer {

const TensorType &operandType(const Op &op, size_t i) {
  const Value *v = op.operand(i);
  if (!v)
    fail("operand ", i, " (", op.info().operands[std::min(i, op.info().operands.size() - 1)].name,
         ") is required");
  return v->type;
}

static Dim broadcastDim(const Dim &a, const Dim &b) {
  if (a == b)
    return a;
  if (a.isStatic() && b.isStatic()) {
    if (a.size == 1)
      return b;
    if (b.size == 1)
      return a;
    fail("cannot broadcast dimension ", a.size, " with ", b.size);
  }
  if (a.isStatic() && a.size == 1)
    return b;
  if (b.isStatic() && b.size == 1)
    return a;
  if (a.isStatic())
    return a; // b (symbolic/unknown) must equal a at run time
  if (b.isStatic())
    return b;
  return Dim::unknown(); // two different symbols, or unknown: either may be 1
}

Shape broadcast(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    Dim da = i < r - a.size() ? Dim::fixed(1) : a[i - (r - a.size())];
    Dim db = i < r - b.size() ? Dim::fixed(1) : b[i - (r - b.size())];
    out[i] = broadcastDim(da, db);
  }
  return out;
}

int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    fail(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail("dimension arithmetic overflows (", a, " * ", b, ")");
  return r;
}

int64_t checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail("dimension arithmetic overflows (", a, " + ", b, ")");
  return r;
}

Dim product(const Shape &s, size_t begin, size_t end) {
  if (std::all_of(s.begin() + begin, s.begin() + end, [](const Dim &d) { return d.isStatic(); })) {
    int64_t n = 1; // static: an overflow is the model's error
    for (size_t i = begin; i < end; ++i)
      n = checkedMul(n, s[i].size);
    return Dim::fixed(n);
  }
  return dimProduct(Shape(s.begin() + begin, s.begin() + end));
}

std::optional<std::vector<int64_t>> constantInts(const Value *v) {
  if (!v || !v->isConstant())
    return std::nullopt;
  auto n = staticNumElements(v->type.shape);
  if (!n)
    return std::nullopt;
  std::vector<int64_t> r(*n);
  if (v->type.dtype == DType::I64 && v->data->size == size_t(*n) * 8) {
    if (*n)
      std::memcpy(r.data(), v->data->ptr, r.size() * 8);
  } else if (v->type.dtype == DType::I32 && v->data->size == size_t(*n) * 4) {
    for (int64_t i = 0; i < *n; ++i) {
      int32_t x;
      std::memcpy(&x, v->data->ptr + i * 4, 4);
      r[i] = x;
    }
  } else {
    return std::nullopt;
  }
  return r;
}

} // namespace tc::infer

namespace tc::infer {

// Element i of a constant, any dtype, as a double.
double elementAsDouble(const Value &v, size_t i) {
  const uint8_t *p = v.data->ptr + i * dtypeSize(v.type.dtype);
  auto ld = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (v.type.dtype) {
  case DType::F32: return ld(float());
  case DType::F16: return halfToFloat(ld(uint16_t()));
  case DType::BF16: return bf16ToFloat(ld(uint16_t()));
  case DType::F64: return ld(double());
  case DType::I64: return double(ld(int64_t()));
  case DType::I32: return ld(int32_t());
  case DType::I16: return ld(int16_t());
  case DType::I8: return ld(int8_t());
  case DType::U64: return double(ld(uint64_t()));
  case DType::U32: return ld(uint32_t());
  case DType::U16: return ld(uint16_t());
  case DType::U8: return ld(uint8_t());
  case DType::Bool: return *p != 0;
  case DType::Str: fail("constant %", v.name, " holds strings, not numbers");
  }
  return 0;
}

// Element i of a constant of integer dtype, exactly (u64: the bit pattern).
int64_t elementAsInt(const Value &v, size_t i) {
  const uint8_t *p = v.data->ptr + i * dtypeSize(v.type.dtype);
  auto ld = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (v.type.dtype) {
  case DType::I64: return ld(int64_t());
  case DType::I32: return ld(int32_t());
  case DType::I16: return ld(int16_t());
  case DType::I8: return ld(int8_t());
  case DType::U64: return int64_t(ld(uint64_t()));
  case DType::U32: return ld(uint32_t());
  case DType::U16: return ld(uint16_t());
  case DType::U8: return ld(uint8_t());
  default: return int64_t(elementAsDouble(v, i));
  }
}

// The static length of run-time attribute operand i (rank <= 1, i32/i64).
int64_t runtimeIntsLength(const Op &op, size_t i) {
  const TensorType &t = operandType(op, i);
  const std::string &what = op.info().operands[i].name;
  if (t.rank() > 1 || (t.dtype != DType::I64 && t.dtype != DType::I32))
    fail("operand '", what, "' must be a 1-D i32 or i64 tensor, got ", t.str());
  auto n = staticNumElements(t.shape);
  if (!n)
    fail("operand '", what, "' has unknown length");
  if (*n > 1024)
    fail("operand '", what, "' has ", *n, " entries; tc supports rank <= 1024");
  return *n;
}

} // namespace tc::infer
