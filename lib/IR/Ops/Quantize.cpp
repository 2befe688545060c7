// Shape rules of the quantization ops: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and the integer / quantized Conv and MatMul, whose
// result shapes are Conv's and MatMul's (computed by those rules).
#include "OpInference.h"

namespace tc::infer {

static bool isQuantType(DType t) {
  return t == DType::U8 || t == DType::I8 || t == DType::U16 || t == DType::I16;
}

static void requireQuantType(const TensorType &t, const char *what) {
  if (!isQuantType(t.dtype))
    fail(what, " must be u8, i8, u16 or i16, got ", t.str());
}

static bool oneElement(const TensorType &t) {
  auto n = staticNumElements(t.shape);
  return t.rank() <= 1 && (!n || *n == 1);
}

// A scale (operand `si`) and optional zero point (`zi`) for data `x`: one
// value, or 1-D with x's size along the `axis` attribute (only read then),
// or (block_size > 0) of x's rank with ceil(size / block_size) along axis.
static void checkQuantParams(const Op &op, size_t si, size_t zi, const TensorType &x) {
  const TensorType &s = operandType(op, si);
  const std::string &sn = op.info().operands[si].name;
  if (!isFloat(s.dtype))
    fail(sn, " must be a float tensor, got ", s.str());
  int64_t block = op.getInt("block_size");
  if (block < 0)
    fail("block_size must be >= 0, got ", block);
  if (block > 0) {
    if (s.rank() != x.rank() || x.rank() == 0)
      fail("blocked ", sn, " ", s.str(), " must have the rank of x ", x.str());
    int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
    for (size_t i = 0; i < x.rank(); ++i) {
      const Dim &d = x.shape[i], &p = s.shape[i];
      if (!d.isStatic() || !p.isStatic())
        continue;
      int64_t want = int64_t(i) == axis ? (d.size + block - 1) / block : d.size;
      if (p.size != want)
        fail("blocked ", sn, " ", s.str(), " must have ", want, " along axis ", i, " of x ",
             x.str(), " (block_size ", block, ")");
    }
  } else if (!oneElement(s)) {
    if (s.rank() != 1 || x.rank() == 0)
      fail(sn, " must hold one value or be 1-D along axis, got ", s.str());
    int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
    const Dim &along = x.shape[size_t(axis)];
    if (s.shape[0].isStatic() && along.isStatic() && s.shape[0].size != along.size)
      fail(sn, " ", s.str(), " does not match size ", along.size, " of axis ", axis, " of ",
           x.str());
  }
  if (const Value *z = op.operand(zi)) {
    // One value each may differ in rank (onnxruntime's quantizer writes a
    // scale [1] and a zero point []).
    if (z->type.shape != s.shape && !(oneElement(s) && oneElement(z->type)))
      fail(op.info().operands[zi].name, " ", z->type.str(), " differs in shape from ", sn, " ",
           s.str());
  }
}

std::vector<TensorType> inferQuantizeLinear(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (!isFloat(x.dtype) && x.dtype != DType::I32)
    fail("x must be a float or i32 tensor, got ", x.str());
  checkQuantParams(op, 1, 2, x);
  DType out = DType::U8;
  if (const Value *z = op.operand(2)) {
    requireQuantType(z->type, "y_zero_point");
    out = z->type.dtype;
  }
  if (op.getInt("saturate") != 0 && op.getInt("saturate") != 1)
    fail("saturate must be 0 or 1, got ", op.getInt("saturate"));
  return {TensorType{out, x.shape}};
}

std::vector<TensorType> inferDequantizeLinear(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (!isQuantType(x.dtype) && x.dtype != DType::I32)
    fail("x must be u8, i8, u16, i16 or i32, got ", x.str());
  checkQuantParams(op, 1, 2, x);
  if (const Value *z = op.operand(2); z && z->type.dtype != x.dtype)
    fail("x_zero_point ", z->type.str(), " differs in type from x ", x.str());
  return {TensorType{operandType(op, 1).dtype, x.shape}};
}

std::vector<TensorType> inferDynamicQuantizeLinear(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.dtype != DType::F32)
    fail("x must be an f32 tensor, got ", x.str());
  return {TensorType{DType::U8, x.shape}, TensorType{DType::F32, {}}, TensorType{DType::U8, {}}};
}

// Data operand `di` (u8 or i8) and its optional zero point `zi`: the same
// type, one value or (where `perIndex` >= 0 is given) 1-D of that size.
static void checkIntegerInput(const Op &op, size_t di, size_t zi, const Dim *perIndex) {
  const TensorType &d = operandType(op, di);
  const std::string &dn = op.info().operands[di].name;
  if (d.dtype != DType::U8 && d.dtype != DType::I8)
    fail(dn, " must be u8 or i8, got ", d.str());
  const Value *z = op.operand(zi);
  if (!z)
    return;
  const std::string &zn = op.info().operands[zi].name;
  if (z->type.dtype != d.dtype)
    fail(zn, " ", z->type.str(), " differs in type from ", dn, " ", d.str());
  if (oneElement(z->type))
    return;
  if (!perIndex || z->type.rank() != 1)
    fail(zn, " must hold one value", perIndex ? " or be 1-D" : "", ", got ", z->type.str());
  if (z->type.shape[0].isStatic() && perIndex->isStatic() &&
      z->type.shape[0].size != perIndex->size)
    fail(zn, " ", z->type.str(), " must have ", perIndex->size, " values");
}

// Conv's result for x and w of these shapes, with op's attributes.
static TensorType convResult(const Op &op, const TensorType &x, const TensorType &w,
                             const Value *bias) {
  Function scratch;
  Value *xv = scratch.addArgument("x", TensorType{DType::I32, x.shape});
  Value *wv = scratch.addArgument("w", TensorType{DType::I32, w.shape});
  Value *bv = bias ? scratch.addArgument("B", bias->type) : nullptr;
  Op *conv = scratch.addOp(OpKind::Conv, {xv, wv, bv}, {"y"}, {TensorType{}});
  conv->attrs = op.attrs;
  return inferConv(*conv)[0];
}

// MatMul's result for a and b of these shapes.
static TensorType matmulResult(const TensorType &a, const TensorType &b) {
  Function scratch;
  Value *av = scratch.addArgument("a", TensorType{DType::I32, a.shape});
  Value *bv = scratch.addArgument("b", TensorType{DType::I32, b.shape});
  Op *mm = scratch.addOp(OpKind::MatMul, {av, bv}, {"y"}, {TensorType{}});
  return inferMatMul(*mm)[0];
}

static const Dim *dimOrNull(const TensorType &t, size_t i) {
  return i < t.rank() ? &t.shape[i] : nullptr;
}

std::vector<TensorType> inferConvInteger(const Op &op) {
  const TensorType &x = operandType(op, 0), &w = operandType(op, 1);
  checkIntegerInput(op, 0, 2, nullptr);
  checkIntegerInput(op, 1, 3, dimOrNull(w, 0));
  return {TensorType{DType::I32, convResult(op, x, w, nullptr).shape}};
}

std::vector<TensorType> inferMatMulInteger(const Op &op) {
  const TensorType &a = operandType(op, 0), &b = operandType(op, 1);
  checkIntegerInput(op, 0, 2, a.rank() >= 2 ? dimOrNull(a, a.rank() - 2) : nullptr);
  checkIntegerInput(op, 1, 3, b.rank() >= 2 ? dimOrNull(b, b.rank() - 1) : nullptr);
  return {TensorType{DType::I32, matmulResult(a, b).shape}};
}

// A float scale (all of one type): one value, or (perIndex given) 1-D of that size.
static void checkScale(const Op &op, size_t si, const Dim *perIndex) {
  const TensorType &s = operandType(op, si);
  const std::string &sn = op.info().operands[si].name;
  if (!isFloat(s.dtype) || s.dtype != operandType(op, 1).dtype)
    fail(sn, " must be a float tensor of the type of the first scale, got ", s.str());
  if (oneElement(s))
    return;
  if (!perIndex || s.rank() != 1)
    fail(sn, " must hold one value", perIndex ? " or be 1-D" : "", ", got ", s.str());
  if (s.shape[0].isStatic() && perIndex->isStatic() && s.shape[0].size != perIndex->size)
    fail(sn, " ", s.str(), " must have ", perIndex->size, " values");
}

// y_scale and y_zero_point (operands 6, 7): one value each; the result type.
static DType quantizedResult(const Op &op) {
  checkScale(op, 6, nullptr);
  const TensorType &z = operandType(op, 7);
  if (z.dtype != DType::U8 && z.dtype != DType::I8)
    fail("y_zero_point must be u8 or i8, got ", z.str());
  if (!oneElement(z))
    fail("y_zero_point must hold one value, got ", z.str());
  return z.dtype;
}

std::vector<TensorType> inferQLinearConv(const Op &op) {
  const TensorType &x = operandType(op, 0), &w = operandType(op, 3);
  checkIntegerInput(op, 0, 2, nullptr);
  checkIntegerInput(op, 3, 5, dimOrNull(w, 0));
  checkScale(op, 1, nullptr);
  checkScale(op, 4, dimOrNull(w, 0));
  DType out = quantizedResult(op);
  const Value *bias = op.operand(8);
  if (bias && bias->type.dtype != DType::I32)
    fail("B must be i32, got ", bias->type.str());
  return {TensorType{out, convResult(op, x, w, bias).shape}};
}

std::vector<TensorType> inferQLinearMatMul(const Op &op) {
  const TensorType &a = operandType(op, 0), &b = operandType(op, 3);
  const Dim *rows = a.rank() >= 2 ? dimOrNull(a, a.rank() - 2) : nullptr;
  const Dim *cols = b.rank() >= 2 ? dimOrNull(b, b.rank() - 1) : nullptr;
  checkIntegerInput(op, 0, 2, rows);
  checkIntegerInput(op, 3, 5, cols);
  checkScale(op, 1, rows);
  checkScale(op, 4, cols);
  DType out = quantizedResult(op);
  return {TensorType{out, matmulResult(a, b).shape}};
}

} // namespace tc::infer
