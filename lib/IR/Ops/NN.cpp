// Shape rules of matmul and convolution.
#include "OpInference.h"

namespace tc::infer {

static void requireFloat(const TensorType &t, const char *what) {
  if (!isFloat(t.dtype) && t.dtype != DType::I32 && t.dtype != DType::I64)
    fail(what, " has unsupported element type ", dtypeName(t.dtype));
}

// Two dims that must agree (a contraction): static mismatch is an error.
static void checkSameDim(const Dim &a, const Dim &b, const char *what) {
  if (a.isStatic() && b.isStatic() && a.size != b.size)
    fail(what, " mismatch: ", a.size, " vs ", b.size);
}

std::vector<TensorType> inferMatMul(const Op &op) {
  TensorType a = operandType(op, 0), b = operandType(op, 1);
  if (a.dtype != b.dtype)
    fail("operand types differ: ", a.str(), " vs ", b.str());
  requireFloat(a, "A");
  if (a.rank() == 0 || b.rank() == 0)
    fail("operands must have rank >= 1");
  bool aVec = a.rank() == 1, bVec = b.rank() == 1;
  if (aVec)
    a.shape.insert(a.shape.begin(), Dim::fixed(1));
  if (bVec)
    b.shape.push_back(Dim::fixed(1));
  checkSameDim(a.shape.back(), b.shape[b.rank() - 2], "contraction dimension");
  Shape batchA(a.shape.begin(), a.shape.end() - 2), batchB(b.shape.begin(), b.shape.end() - 2);
  Shape out = broadcast(batchA, batchB);
  if (!aVec)
    out.push_back(a.shape[a.rank() - 2]);
  if (!bVec)
    out.push_back(b.shape.back());
  return {TensorType{a.dtype, out}};
}

std::vector<TensorType> inferGemm(const Op &op) {
  const TensorType &a = operandType(op, 0), &b = operandType(op, 1);
  if (a.rank() != 2 || b.rank() != 2)
    fail("A and B must be 2-D, got ", a.str(), " and ", b.str());
  if (a.dtype != b.dtype)
    fail("operand types differ: ", a.str(), " vs ", b.str());
  requireFloat(a, "A");
  bool ta = op.getInt("transA"), tb = op.getInt("transB");
  Dim m = a.shape[ta ? 1 : 0], ka = a.shape[ta ? 0 : 1];
  Dim kb = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  checkSameDim(ka, kb, "contraction dimension");
  Shape out{m, n};
  if (const Value *c = op.operand(2)) {
    if (c->type.dtype != a.dtype)
      fail("C type ", c->type.str(), " differs from A ", a.str());
    if (c->type.rank() > 2 || broadcast(out, c->type.shape).size() != 2)
      fail("C ", c->type.str(), " does not broadcast to [M,N]");
    broadcast(out, c->type.shape); // throws on mismatch
  }
  return {TensorType{a.dtype, out}};
}

std::vector<TensorType> inferConv(const Op &op) {
  const TensorType &x = operandType(op, 0), &w = operandType(op, 1);
  if (x.rank() < 3)
    fail("X must be at least 3-D (N, C, spatial...), got ", x.str());
  if (w.rank() != x.rank())
    fail("W rank ", w.rank(), " differs from X rank ", x.rank());
  if (x.dtype != w.dtype)
    fail("operand types differ: ", x.str(), " vs ", w.str());
  requireFloat(x, "X");
  size_t sp = x.rank() - 2;
  int64_t group = op.getInt("group");
  if (group < 1)
    fail("group must be >= 1, got ", group);
  auto perAxis = [&](const char *name, int64_t dflt, size_t n) {
    std::vector<int64_t> v = op.getInts(name);
    if (v.empty())
      v.assign(n, dflt);
    if (v.size() != n)
      fail(name, " has ", v.size(), " values, expected ", n);
    return v;
  };
  std::vector<int64_t> strides = perAxis("strides", 1, sp), dil = perAxis("dilations", 1, sp),
                       pads = perAxis("pads", 0, 2 * sp);
  std::vector<int64_t> kernel = op.getInts("kernel_shape");
  if (kernel.empty())
    for (size_t i = 0; i < sp; ++i)
      kernel.push_back(w.shape[2 + i].isStatic() ? w.shape[2 + i].size : -1);
  if (kernel.size() != sp)
    fail("kernel_shape has ", kernel.size(), " values, expected ", sp);
  for (size_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dil[i] < 1)
      fail("strides and dilations must be >= 1");
    if (pads[i] < 0 || pads[i + sp] < 0)
      fail("pads must be >= 0");
  }
  const Dim &cin = x.shape[1], &wc = w.shape[1];
  if (cin.isStatic() && wc.isStatic() && cin.size != checkedMul(wc.size, group))
    fail("X has ", cin.size, " channels but W expects ", wc.size, " x group ", group);
  const Dim &m = w.shape[0];
  if (m.isStatic() && m.size % group != 0)
    fail("output channels ", m.size, " not divisible by group ", group);
  if (const Value *b = op.operand(2)) {
    if (b->type.rank() != 1 ||
        (m.isStatic() && b->type.shape[0].isStatic() && b->type.shape[0].size != m.size))
      fail("B must be 1-D of size M, got ", b->type.str());
  }
  const std::string &autoPad = op.getString("auto_pad");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID")
    fail("unknown auto_pad '", autoPad, "'");
  Shape out{x.shape[0], m};
  for (size_t i = 0; i < sp; ++i) {
    const Dim &in = x.shape[2 + i];
    if (!in.isStatic() || kernel[i] < 0) {
      out.push_back(Dim::unknown());
      continue;
    }
    if (kernel[i] < 1)
      fail("kernel_shape must be >= 1");
    int64_t effK = checkedAdd(checkedMul(dil[i], kernel[i] - 1), 1);
    int64_t o;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      o = (in.size + strides[i] - 1) / strides[i];
    else if (autoPad == "VALID")
      o = (in.size - effK) / strides[i] + 1;
    else
      o = (checkedAdd(checkedAdd(in.size, pads[i]), pads[i + sp]) - effK) / strides[i] + 1;
    if (o < 1)
      fail("spatial axis ", i, " of size ", in.size, " is smaller than the kernel");
    out.push_back(Dim::fixed(o));
  }
  return {TensorType{x.dtype, out}};
}

} // namespace tc::infer
