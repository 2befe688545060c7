// Shape rules of matmul, convolution, pooling and normalization.
#include "OpInference.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/Layout.h"
#include "tc/IR/NNMath.h"
#include <set>
#include <tuple>

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
  // op(X): the stored operand with its last two axes swapped back.
  for (auto [t, name, vec] : {std::tuple{&a, "transA", aVec}, std::tuple{&b, "transB", bVec}})
    if (op.getInt(name)) {
      if (vec)
        fail(name, " on a 1-D operand ", t->str());
      std::swap(t->shape[t->rank() - 2], t->shape[t->rank() - 1]);
    }
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
    // One-way (unidirectional) broadcast: C stretches to [M,N], never the
    // other way round.
    const Shape &cs = c->type.shape;
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      const Dim &d = cs[i], &o = out[2 - cs.size() + i];
      ok = !(d.isStatic() && d.size != 1 && o.isStatic() && o.size != d.size);
    }
    if (!ok)
      fail("C ", c->type.str(), " does not broadcast to [M,N] = ", TensorType{a.dtype, out}.str());
  }
  return {TensorType{a.dtype, out}};
}

namespace {

// Conv's rule in ONNX's layout: X [N, C, spatial...], W [M, C/group, k...].
std::vector<TensorType> inferConvChannelsFirst(const Op &op, const TensorType &x,
                                               const TensorType &w) {
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
    if (w.shape[2 + i].isStatic() && kernel[i] >= 0 && kernel[i] != w.shape[2 + i].size)
      fail("kernel_shape ", kernel[i], " differs from W's spatial dim ", w.shape[2 + i].size);
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
  // ConvWeightGrad has explicit pads only.
  static const std::string notSet = "NOTSET";
  const std::string &autoPad = op.info().findAttr("auto_pad") ? op.getString("auto_pad") : notSet;
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID")
    fail("unknown auto_pad '", autoPad, "'");
  Shape out{x.shape[0], m};
  for (size_t i = 0; i < sp; ++i) {
    const Dim &in = x.shape[2 + i];
    if (in.isSymbolic() && kernel[i] >= 1 && strides[i] == 1) {
      // A symbolic length at stride 1 (a conv over a dynamic sequence:
      // ConvBERT's span convs) is in + pads - (k - 1) where that never
      // shrinks it; a shrinking window stays `?` (no size below the kernel's
      // could be told from the expression).
      int64_t effK = checkedAdd(checkedMul(dil[i], kernel[i] - 1), 1);
      int64_t grow = autoPad == "VALID" ? 1 - effK
                     : autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER"
                         ? 0
                         : pads[i] + pads[i + sp] + 1 - effK;
      out.push_back(grow >= 0 ? dimOf(exprOf(in) + DimExpr::integer(grow)) : Dim::unknown());
      continue;
    }
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
      o = in.size < effK ? 0 : (in.size - effK) / strides[i] + 1;
    else {
      int64_t padded = checkedAdd(checkedAdd(in.size, pads[i]), pads[i + sp]);
      // Truncating division would turn a negative span into size 1.
      o = padded < effK ? 0 : (padded - effK) / strides[i] + 1;
    }
    if (o < 1)
      fail("spatial axis ", i, " of size ", in.size, " is smaller than the kernel");
    out.push_back(Dim::fixed(o));
  }
  return {TensorType{x.dtype, out}};
}

} // namespace

// Conv's and ConvTranspose's result type by `channelsFirst` (their NCHW
// rule): as is for channels_last = 0; for channels_last = 1 (X and W with
// channels last: the channels-last pass) the rule on X and W permuted to
// channels first, its result permuted back.
static TensorType channelsLastAware(const Op &op,
                                    TensorType (*channelsFirst)(const Op &, const TensorType &,
                                                                const TensorType &)) {
  const TensorType &x = operandType(op, 0), &w = operandType(op, 1);
  int64_t last = op.getInt("channels_last");
  if (last == 0)
    return channelsFirst(op, x, w);
  if (last != 1)
    fail("channels_last must be 0 or 1, got ", last);
  if (x.rank() < 3 || w.rank() != x.rank())
    fail("X must be at least 3-D and W of the same rank, got ", x.str(), " and ", w.str());
  auto first = [](const TensorType &t) {
    return TensorType{t.dtype, permuteShape(t.shape, toChannelsFirstPerm(t.rank()))};
  };
  TensorType y = channelsFirst(op, first(x), first(w));
  return TensorType{y.dtype, permuteShape(y.shape, toChannelsLastPerm(y.rank()))};
}

// channels_last = 1 (the channels-last pass): X is [N, spatial..., C], W is
// [M, k..., C/group] and the result [N, spatial..., M].
std::vector<TensorType> inferConv(const Op &op) {
  return {channelsLastAware(op, [](const Op &o, const TensorType &x, const TensorType &w) {
    return inferConvChannelsFirst(o, x, w).at(0);
  })};
}

// The weight gradient of Conv(X, W): W's type from X, dY and the attributes,
// dY checked against the Conv's result for that W (either layout).
std::vector<TensorType> inferConvWeightGrad(const Op &op) {
  const TensorType &x = operandType(op, 0), &dy = operandType(op, 1);
  int64_t last = op.getInt("channels_last");
  if (last != 0 && last != 1)
    fail("channels_last must be 0 or 1, got ", last);
  if (x.rank() < 3 || dy.rank() != x.rank())
    fail("X must be at least 3-D and dY of the same rank, got ", x.str(), " and ", dy.str());
  if (x.dtype != dy.dtype)
    fail("operand types differ: ", x.str(), " vs ", dy.str());
  auto first = [&](const TensorType &t) {
    return last ? TensorType{t.dtype, permuteShape(t.shape, toChannelsFirstPerm(t.rank()))} : t;
  };
  TensorType xf = first(x), dyf = first(dy);
  size_t sp = x.rank() - 2;
  const std::vector<int64_t> &kernel = op.getInts("kernel_shape");
  if (kernel.size() != sp)
    fail("kernel_shape has ", kernel.size(), " values, expected ", sp);
  int64_t group = op.getInt("group");
  if (group < 1)
    fail("group must be >= 1, got ", group);
  const Dim &cin = xf.shape[1];
  if (cin.isStatic() && cin.size % group != 0)
    fail("X has ", cin.size, " channels, not divisible by group ", group);
  Shape w{dyf.shape[1], cin.isStatic() ? Dim::fixed(cin.size / group) : Dim::unknown()};
  if (!cin.isStatic() && group == 1)
    w[1] = cin;
  for (int64_t k : kernel) {
    if (k < 1)
      fail("kernel_shape must be >= 1");
    w.push_back(Dim::fixed(k));
  }
  TensorType wt{x.dtype, w};
  TensorType y = inferConvChannelsFirst(op, xf, wt).at(0);
  for (size_t i = 0; i < y.rank(); ++i)
    if (y.shape[i].isStatic() && dyf.shape[i].isStatic() && y.shape[i].size != dyf.shape[i].size)
      fail("dY ", dy.str(), " is not the result of the convolution of X ", x.str(), " by ",
           wt.str(), " (", TensorType{x.dtype, y.shape}.str(), " in NCHW)");
  return {last ? TensorType{x.dtype, permuteShape(w, toChannelsLastPerm(w.size()))} : wt};
}

// ---- Transposed convolution and pooling -------------------------------------

// A per-spatial-axis attribute: `n` values, or [] for `dflt` on every axis.
static std::vector<int64_t> perAxis(const Op &op, const char *name, int64_t dflt, size_t n) {
  std::vector<int64_t> v = op.getInts(name);
  if (v.empty())
    v.assign(n, dflt);
  if (v.size() != n)
    fail(name, " has ", v.size(), " values, expected ", n);
  return v;
}

static void requireFlag(const Op &op, const char *name) {
  int64_t v = op.getInt(name);
  if (v != 0 && v != 1)
    fail(name, " must be 0 or 1, got ", v);
}

static TensorType convTransposeTypeChannelsFirst(const Op &op, const TensorType &x,
                                                 const TensorType &w) {
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
  std::vector<int64_t> strides = perAxis(op, "strides", 1, sp),
                       dil = perAxis(op, "dilations", 1, sp), pads = perAxis(op, "pads", 0, 2 * sp),
                       outPad = perAxis(op, "output_padding", 0, sp);
  std::vector<int64_t> outShape = op.getInts("output_shape");
  if (!outShape.empty() && outShape.size() != sp)
    fail("output_shape has ", outShape.size(), " values, expected ", sp);
  std::vector<int64_t> kernel = op.getInts("kernel_shape");
  if (kernel.empty())
    for (size_t i = 0; i < sp; ++i)
      kernel.push_back(w.shape[2 + i].isStatic() ? w.shape[2 + i].size : -1);
  if (kernel.size() != sp)
    fail("kernel_shape has ", kernel.size(), " values, expected ", sp);
  for (size_t i = 0; i < sp; ++i)
    if (w.shape[2 + i].isStatic() && kernel[i] >= 0 && kernel[i] != w.shape[2 + i].size)
      fail("kernel_shape ", kernel[i], " differs from W's spatial dim ", w.shape[2 + i].size);
  const std::string &autoPad = op.getString("auto_pad");
  if (!nn::isAutoPad(autoPad))
    fail("unknown auto_pad '", autoPad, "'");
  const Dim &cin = x.shape[1], &wc = w.shape[0];
  if (cin.isStatic() && wc.isStatic() && cin.size != wc.size)
    fail("X has ", cin.size, " channels but W has ", wc.size);
  if (wc.isStatic() && wc.size % group != 0)
    fail("input channels ", wc.size, " not divisible by group ", group);
  Dim m = w.shape[1].isStatic() ? Dim::fixed(checkedMul(w.shape[1].size, group))
          : group == 1          ? w.shape[1]
                                : Dim::unknown();
  if (const Value *b = op.operand(2)) {
    if (b->type.dtype != x.dtype || b->type.rank() != 1 ||
        (m.isStatic() && b->type.shape[0].isStatic() && b->type.shape[0].size != m.size))
      fail("B must be 1-D of size ", m.str(), ", got ", b->type.str());
  }
  Shape out{x.shape[0], m};
  for (size_t i = 0; i < sp; ++i) {
    const Dim &in = x.shape[2 + i];
    int64_t os = outShape.empty() ? -1 : outShape[i];
    if (!outShape.empty() && os < 0)
      fail("output_shape must be >= 0");
    if (!in.isStatic() || kernel[i] < 0) {
      out.push_back(os >= 0 ? Dim::fixed(os) : Dim::unknown());
      continue;
    }
    out.push_back(Dim::fixed(nn::convTransposeWindow(in.size, kernel[i], strides[i], dil[i],
                                                     pads[i], pads[i + sp], outPad[i], os, autoPad)
                                 .out));
  }
  return TensorType{x.dtype, out};
}

// channels_last = 1 (the channels-last pass): X and the result are
// [N, spatial..., C], W is [C, k..., M/group] (the forward Conv's OHWI).
std::vector<TensorType> inferConvTranspose(const Op &op) {
  return {channelsLastAware(op, convTransposeTypeChannelsFirst)};
}

// Output type of a pooling op (MaxPool, AveragePool, LpPool) on NCHW data.
static TensorType poolTypeChannelsFirst(const Op &op, const TensorType &x, bool anyNumeric) {
  if (x.rank() < 3)
    fail("X must be at least 3-D (N, C, spatial...), got ", x.str());
  if (anyNumeric ? x.dtype == DType::Bool : !isFloat(x.dtype))
    fail("X has unsupported element type ", dtypeName(x.dtype));
  size_t sp = x.rank() - 2;
  const std::vector<int64_t> &kernel = op.getInts("kernel_shape");
  if (kernel.size() != sp)
    fail("kernel_shape has ", kernel.size(), " values, expected ", sp);
  std::vector<int64_t> strides = perAxis(op, "strides", 1, sp),
                       dil = perAxis(op, "dilations", 1, sp), pads = perAxis(op, "pads", 0, 2 * sp);
  const std::string &autoPad = op.getString("auto_pad");
  if (!nn::isAutoPad(autoPad))
    fail("unknown auto_pad '", autoPad, "'");
  requireFlag(op, "ceil_mode");
  bool ceil = op.getInt("ceil_mode");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  Shape out{x.shape[0], x.shape[1]};
  for (size_t i = 0; i < sp; ++i) {
    const Dim &in = x.shape[2 + i];
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1)
      fail("kernel_shape, strides and dilations must be >= 1");
    if (pads[i] < 0 || pads[i + sp] < 0)
      fail("pads must be >= 0");
    // The window's span less one: what padding must add for the size to stay.
    int64_t reach = checkedMul(dil[i], kernel[i] - 1);
    // Checks the attributes even when the size is unknown.
    nn::WindowAxis w = nn::poolWindow(in.isStatic() ? in.size : checkedAdd(reach, 1), kernel[i],
                                      strides[i], dil[i], pads[i], pads[i + sp], autoPad, ceil);
    if (in.isStatic()) {
      out.push_back(Dim::fixed(w.out));
    } else if (strides[i] == 1 &&
               (same || (autoPad == "NOTSET" && checkedAdd(pads[i], pads[i + sp]) == reach))) {
      out.push_back(in); // the size is kept
    } else {
      out.push_back(Dim::unknown());
    }
  }
  return TensorType{x.dtype, out};
}

// channels_last = 1 (the channels-last pass): X and the result are
// [N, spatial..., C].
static TensorType poolType(const Op &op, bool anyNumeric) {
  const TensorType &x = operandType(op, 0);
  int64_t last = op.getInt("channels_last");
  if (last == 0)
    return poolTypeChannelsFirst(op, x, anyNumeric);
  if (last != 1)
    fail("channels_last must be 0 or 1, got ", last);
  if (x.rank() < 3)
    fail("X must be at least 3-D (N, spatial..., C), got ", x.str());
  TensorType first{x.dtype, permuteShape(x.shape, toChannelsFirstPerm(x.rank()))};
  TensorType y = poolTypeChannelsFirst(op, first, anyNumeric);
  return {y.dtype, permuteShape(y.shape, toChannelsLastPerm(y.rank()))};
}

std::vector<TensorType> inferMaxPool(const Op &op) {
  TensorType y = poolType(op, true);
  requireFlag(op, "storage_order");
  if (op.results.size() > 2)
    fail("has at most 2 results (Y, Indices), got ", op.results.size());
  if (op.results.size() == 2 && op.getInt("channels_last"))
    fail("channels_last takes no Indices result");
  if (op.results.size() == 2)
    return {y, TensorType{DType::I64, y.shape}};
  return {y};
}

// dX has X's type; dY must be what MaxPool of X with these attributes gives.
std::vector<TensorType> inferMaxPoolGrad(const Op &op) {
  const TensorType &x = operandType(op, 0), &dy = operandType(op, 1);
  TensorType y = poolType(op, false);
  if (dy.dtype != x.dtype || dy.rank() != y.rank())
    fail("dY must be ", y.str(), " (MaxPool of X), got ", dy.str());
  for (size_t d = 0; d < y.rank(); ++d)
    if (y.shape[d].isStatic() && dy.shape[d].isStatic() && y.shape[d].size != dy.shape[d].size)
      fail("dY must be ", y.str(), " (MaxPool of X), got ", dy.str());
  return {x};
}

std::vector<TensorType> inferAveragePool(const Op &op) {
  requireFlag(op, "count_include_pad");
  return {poolType(op, false)};
}

std::vector<TensorType> inferLpPool(const Op &op) {
  if (op.getInt("p") < 1)
    fail("p must be >= 1, got ", op.getInt("p"));
  return {poolType(op, false)};
}

std::vector<TensorType> inferGlobalPool(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.rank() < 2)
    fail("X must be at least 2-D (N, C, spatial...), got ", x.str());
  if (!isFloat(x.dtype))
    fail("X has unsupported element type ", dtypeName(x.dtype));
  Shape out{x.shape[0], x.shape[1]};
  out.resize(x.rank(), Dim::fixed(1));
  return {TensorType{x.dtype, out}};
}

// ---- Normalization -------------------------------------------------------------

static const TensorType &floatInput(const Op &op, size_t i, size_t minRank) {
  const TensorType &x = operandType(op, i);
  if (!isFloat(x.dtype))
    fail("operand ", i, " (", op.info().operands[i].name, ") must be a float tensor, got ",
         x.str());
  if (x.rank() < minRank)
    fail("operand ", i, " (", op.info().operands[i].name, ") must have rank >= ", minRank, ", got ",
         x.str());
  return x;
}

// A 1-D per-channel parameter of `channels` entries.
static void requireChannelVector(const Op &op, size_t i, const Dim &channels) {
  const TensorType &t = floatInput(op, i, 1);
  if (t.rank() != 1 ||
      (channels.isStatic() && t.shape[0].isStatic() && t.shape[0].size != channels.size))
    fail(op.info().operands[i].name, " must be 1-D of size ", channels.str(), ", got ", t.str());
}

std::vector<TensorType> inferBatchNorm(const Op &op) {
  const TensorType &x = floatInput(op, 0, 2);
  // Per channel ([C]) or, for the legacy spatial = 0 form, per activation
  // (X's dims after N).
  Shape perActivation(x.shape.begin() + 1, x.shape.end());
  for (size_t i = 1; i < 5; ++i) {
    const TensorType &p = floatInput(op, i, 1);
    bool ok = p.rank() == 1 || p.rank() == perActivation.size();
    for (size_t d = 0; ok && d < p.rank(); ++d)
      ok = !p.shape[d].isStatic() || !perActivation[d].isStatic() ||
           p.shape[d].size == perActivation[d].size;
    if (!ok)
      fail(op.info().operands[i].name, " must be [C] or X's dims after N, got ", p.str(), " for X ",
           x.str());
  }
  return {x};
}

std::vector<TensorType> inferInstanceNorm(const Op &op) {
  const TensorType &x = floatInput(op, 0, 2);
  requireChannelVector(op, 1, x.shape[1]);
  requireChannelVector(op, 2, x.shape[1]);
  return {x};
}

// LayerNormalization's (and its gradient's) parameter operand i broadcasts
// (one way) to the normalized dims X[axis:].
static void requireNormalizedDims(const Op &op, size_t i, const TensorType &x, int64_t axis) {
  const TensorType &p = floatInput(op, i, 0);
  int64_t r = int64_t(x.rank());
  bool ok = int64_t(p.rank()) <= r - axis;
  for (size_t d = 0; ok && d < p.rank(); ++d) {
    const Dim &pd = p.shape[d], &xd = x.shape[size_t(r) - p.rank() + d];
    ok = !pd.isStatic() || pd.size == 1 || !xd.isStatic() || pd.size == xd.size;
  }
  if (!ok)
    fail(op.info().operands[i].name, " ", p.str(), " does not broadcast to the normalized dims of ",
         x.str(), " (from axis ", axis, ")");
}

std::vector<TensorType> inferLayerNorm(const Op &op) {
  const TensorType &x = floatInput(op, 0, 1);
  int64_t r = int64_t(x.rank());
  int64_t axis = normalizeAxis(op.getInt("axis"), r);
  for (size_t i = 1; i < 3; ++i) // Scale and B
    if (op.operand(i))
      requireNormalizedDims(op, i, x, axis);
  if (op.results.size() > 3)
    fail("has at most 3 results (Y, Mean, InvStdDev), got ", op.results.size());
  DType stash = op.attr("stash_type").type();
  if (!isFloat(stash))
    fail("stash_type must be a float type, got ", dtypeName(stash));
  Shape stat(x.shape.begin(), x.shape.begin() + axis);
  stat.resize(size_t(r), Dim::fixed(1));
  std::vector<TensorType> out{x};
  for (size_t i = 1; i < op.results.size(); ++i)
    out.push_back(TensorType{stash, stat});
  return out;
}

// X and dY of one shape and float type; Scale as LayerNormalization's.
std::vector<TensorType> inferLayerNormGrad(const Op &op) {
  const TensorType &x = floatInput(op, 0, 1);
  const TensorType &dy = floatInput(op, 2, 0);
  if (dy.dtype != x.dtype || dy.shape.size() != x.shape.size())
    fail("dY ", dy.str(), " must have X's type and shape ", x.str());
  for (size_t d = 0; d < x.rank(); ++d)
    if (dy.shape[d].isStatic() && x.shape[d].isStatic() && dy.shape[d].size != x.shape[d].size)
      fail("dY ", dy.str(), " must have X's type and shape ", x.str());
  requireNormalizedDims(op, 1, x, normalizeAxis(op.getInt("axis"), int64_t(x.rank())));
  if (op.results.size() > 2)
    fail("has at most 2 results (dX, dY * xhat), got ", op.results.size());
  return std::vector<TensorType>(std::max<size_t>(op.results.size(), 1), x);
}

std::vector<TensorType> inferGroupNorm(const Op &op) {
  const TensorType &x = floatInput(op, 0, 2);
  int64_t g = op.getInt("num_groups");
  if (g < 1)
    fail("num_groups must be >= 1, got ", g);
  const Dim &c = x.shape[1];
  if (c.isStatic() && c.size % g != 0)
    fail("num_groups ", g, " does not divide the ", c.size, " channels");
  requireChannelVector(op, 1, c);
  requireChannelVector(op, 2, c);
  if (!isFloat(op.attr("stash_type").type()))
    fail("stash_type must be a float type, got ", dtypeName(op.attr("stash_type").type()));
  return {x};
}

std::vector<TensorType> inferLpNorm(const Op &op) {
  const TensorType &x = floatInput(op, 0, 1);
  normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  int64_t p = op.getInt("p");
  if (p != 1 && p != 2)
    fail("p must be 1 or 2, got ", p);
  return {x};
}

std::vector<TensorType> inferSameFloatNN(const Op &op) {
  const TensorType &x = floatInput(op, 0, 0);
  std::set<int64_t> seen;
  for (int64_t a : op.getInts("axes"))
    if (!seen.insert(normalizeAxis(a, int64_t(x.rank()))).second)
      fail("axis ", a, " is listed twice");
  return {x};
}

std::vector<TensorType> inferLRN(const Op &op) {
  const TensorType &x = floatInput(op, 0, 2);
  if (op.getInt("size") < 1)
    fail("size must be >= 1, got ", op.getInt("size"));
  return {x};
}

} // namespace tc::infer
