#include "tc/Runtime/CudaLibraryPlan.h"
#include "tc/IR/AttentionLayout.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace tc {

namespace {

int argIndex(const Function &group, const Value *v) {
  auto it = std::find(group.args.begin(), group.args.end(), v);
  return it == group.args.end() ? -1 : int(it - group.args.begin());
}

int64_t product(const std::vector<int64_t> &d, size_t from = 0, size_t to = SIZE_MAX) {
  to = std::min(to, d.size());
  return std::accumulate(d.begin() + long(std::min(from, to)), d.begin() + long(to), int64_t(1),
                         std::multiplies<>());
}

std::string dimsText(const std::vector<int64_t> &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// `d` broadcasts as `shape` by leading 1s alone (a bias [C] against [1,C,1,1]).
bool rightAligned(std::vector<int64_t> d, const std::vector<int64_t> &shape) {
  if (d.size() > shape.size())
    return false;
  d.insert(d.begin(), shape.size() - d.size(), 1);
  return d == shape;
}

// The epilogue's ops folded into the call: an Add of a group argument shaped
// like `biasShape` (right-aligned, leading 1s) and, where `full` is given
// (a GEMM's result shape), an Add of a group argument of that very shape
// and dtype `fullType` (a residual: cuBLASLt's C with beta 1), in either
// order, straight after the anchor; then (`acts`) Relu or a tanh Gelu,
// which cuBLASLt applies after both (act(A B + C + bias)); all of the
// epilogue or nothing.
struct Fold {
  int bias = -1, c = -1;
  bool relu = false, geluTanh = false, all = false;
};
Fold foldEpilogue(const Function &group, const std::vector<TensorType> &args,
                  const std::vector<int64_t> &biasShape, bool acts,
                  const std::vector<int64_t> *full = nullptr, DType fullType = DType::F32) {
  Fold f;
  const Value *chain = group.ops.front()->result();
  size_t next = 1;
  for (int adds = 0; adds < 2 && next < group.ops.size(); ++adds) {
    const Op *add = group.ops[next].get();
    if (!add->is(OpKind::Add) || (add->operand(0) != chain && add->operand(1) != chain))
      break;
    const Value *other = add->operand(0) == chain ? add->operand(1) : add->operand(0);
    int i = other == chain ? -1 : argIndex(group, other);
    if (i < 0)
      break;
    std::vector<int64_t> d = staticDims(args[size_t(i)].shape);
    if (f.bias < 0 && rightAligned(d, biasShape))
      f.bias = i;
    else if (f.c < 0 && full && d == *full && args[size_t(i)].dtype == fullType)
      f.c = i;
    else
      break;
    chain = add->result();
    ++next;
  }
  if (acts && next < group.ops.size() && group.ops[next]->operand(0) == chain) {
    const Op &op = *group.ops[next];
    // Only exact matches: cuBLASLt's GELU is the tanh approximation.
    f.relu = op.is(OpKind::Relu);
    f.geluTanh = op.is(OpKind::Gelu) && op.getString("approximate") == "tanh";
    next += f.relu || f.geluTanh;
  }
  // With several results the epilogue kernel writes them all.
  f.all = next == group.ops.size() && group.results.size() == 1;
  return f.all ? f : Fold{};
}

bool libraryDType(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

std::vector<int64_t> intsOr(const Op &op, const char *name, size_t n, int64_t fill) {
  std::vector<int64_t> v = op.getInts(name);
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

} // namespace

std::string GemmDesc::epilogueText() const {
  if (castF32)
    return "cast_f32";
  std::string e = bias >= 0 ? "bias" : "";
  if (residual)
    e += (e.empty() ? "" : ",") + std::string("residual");
  if (relu || geluTanh)
    e += (e.empty() ? "" : ",") + std::string(relu ? "relu" : "gelu_tanh");
  return e;
}

std::string GemmDesc::describe() const {
  std::ostringstream s;
  s << "gemm " << dtypeName(dtype) << " m=" << m << " n=" << n << " k=" << k << " batch=" << batch;
  if (transA || transB)
    s << " trans=" << (transA ? "A" : "") << (transB ? "B" : "");
  if (batch > 1)
    s << " strides=" << strideA << "," << strideB << "," << strideD;
  if (alpha != 1 || c >= 0)
    s << " alpha=" << alpha << " beta=" << beta;
  std::string e = epilogueText();
  if (!e.empty())
    s << " epilogue=" << e;
  return s.str();
}

std::optional<GemmDesc> describeGemm(const Function &group, const std::vector<TensorType> &args,
                                     const TensorType &result, std::string &why, bool fold) {
  GemmDesc g;
  const Op &anchor = *group.ops.front();
  g.a = argIndex(group, anchor.operand(0));
  g.b = argIndex(group, anchor.operand(1));
  if (g.a < 0 || g.b < 0) {
    why = "a MatMul operand that is not a group argument";
    return std::nullopt;
  }
  const TensorType &at = args[size_t(g.a)], &bt = args[size_t(g.b)];
  g.dtype = result.dtype;
  // f64 too (CUBLAS_COMPUTE_64F), without cuBLASLt's epilogues (not given
  // f64): a bias or activation stays in the epilogue kernel.
  bool f64 = g.dtype == DType::F64;
  if (!(libraryDType(g.dtype) || f64) || at.dtype != g.dtype || bt.dtype != g.dtype) {
    why = std::string("cuBLASLt is given f32, f16, bf16 and f64, not ") +
          std::string(dtypeName(at.dtype));
    return std::nullopt;
  }
  std::vector<int64_t> ad = staticDims(at.shape), bd = staticDims(bt.shape);
  // Gemm's transA/transB/alpha, or the views gemm-views gave a MatMul: A
  // stored [.., K, M], B [.., N, K], the product scaled.
  g.transA = anchor.getInt("transA") != 0;
  g.transB = anchor.getInt("transB") != 0;
  g.alpha = float(anchor.getFloat("alpha"));
  if (anchor.is(OpKind::Gemm)) {
    g.m = ad[g.transA ? 1 : 0];
    g.k = ad[g.transA ? 0 : 1];
    g.n = bd[g.transB ? 0 : 1];
  } else {
    // numpy matmul: a 1-D A is a row [1,K], a 1-D B a column [K,1]; the
    // result drops that dim, the bytes are the same.
    if (ad.size() == 1)
      ad.insert(ad.begin(), 1);
    if (bd.size() == 1)
      bd.push_back(1);
    g.m = ad[ad.size() - (g.transA ? 1 : 2)];
    g.k = ad[ad.size() - (g.transA ? 2 : 1)];
    g.n = bd[bd.size() - (g.transB ? 2 : 1)];
    std::vector<int64_t> ba(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
    size_t rank = std::max(ba.size(), bb.size());
    ba.insert(ba.begin(), rank - ba.size(), 1);
    bb.insert(bb.begin(), rank - bb.size(), 1);
    int64_t na = product(ba), nb = product(bb);
    // B shared over A's trailing batch dims (multi-query and grouped k/v:
    // [b, h, M, K] x [b, 1, K, N]): A and D being contiguous, those dims are
    // more rows of each GEMM and the batch is the leading dims alone.
    size_t p = rank;
    while (p > 0 && bb[p - 1] == 1)
      --p;
    // A transposed ([.., K, M]) has no such rows: its batches stay batches.
    bool rowsFold = !g.transA && std::equal(ba.begin(), ba.begin() + std::ptrdiff_t(p), bb.begin());
    if (nb == 1 && !g.transA) { // B shared by every batch: A's batches are rows of one GEMM
      g.m *= na;
    } else if (na == 1 || nb == 1 || ba == bb) {
      g.batch = std::max(na, nb);
      g.strideA = na == 1 ? 0 : g.m * g.k;
      g.strideB = nb == 1 ? 0 : g.k * g.n;
      g.strideD = g.m * g.n;
    } else if (rowsFold) {
      g.batch = nb;
      g.m *= na / nb;
      g.strideA = g.m * g.k;
      g.strideB = g.k * g.n;
      g.strideD = g.m * g.n;
    } else {
      why = "MatMul batch dims " + dimsText(ba) + " x " + dimsText(bb) +
            " broadcast partly (cuBLASLt is given equal batch dims or one side shared)";
      return std::nullopt;
    }
  }
  if (g.k == 0) {
    why = "an empty K";
    return std::nullopt;
  }
  // Gemm's C: a full m x n matrix scaled by beta, or a per-column bias.
  if (anchor.is(OpKind::Gemm) && anchor.operand(2)) {
    int ci = argIndex(group, anchor.operand(2));
    std::vector<int64_t> cd = ci < 0 ? std::vector<int64_t>{} : staticDims(args[size_t(ci)].shape);
    cd.insert(cd.begin(), 2 - std::min<size_t>(cd.size(), 2), 1);
    float beta = float(anchor.getFloat("beta"));
    if (ci >= 0 && cd == std::vector<int64_t>{g.m, g.n}) {
      g.c = ci;
      g.beta = beta;
    } else if (ci >= 0 && cd == std::vector<int64_t>{1, g.n} && beta == 1 && !f64) {
      g.bias = ci;
    } else {
      why = "Gemm C " + dimsText(cd) + (beta != 1 ? " with beta other than 1" : "") +
            (f64 ? " in f64 (cuBLASLt is given a full C there)"
                 : " (cuBLASLt is given a full C or a per-column bias)");
      return std::nullopt;
    }
  }
  std::vector<int64_t> rd = staticDims(result.shape);
  std::vector<int64_t> perColumn(rd.size(), 1);
  if (!rd.empty())
    perColumn.back() = g.n;
  if (!fold)
    return g;
  // MatMul then a Cast of its f16/bf16 result to f32, nothing else: D in f32.
  if (group.ops.size() == 2 && group.results.size() == 1 && g.c < 0 && g.bias < 0 &&
      (g.dtype == DType::F16 || g.dtype == DType::BF16)) {
    const Op &cast = *group.ops[1];
    if (cast.is(OpKind::Cast) && cast.operand(0) == anchor.result() &&
        cast.result()->type.dtype == DType::F32) {
      g.castF32 = true;
      g.epilogueFolded = true;
      return g;
    }
  }
  // A residual Add is C where the op has none (MatMul; Gemm without C).
  Fold f = foldEpilogue(group, args, perColumn, true, g.c < 0 ? &rd : nullptr, g.dtype);
  if (f.all && !(f.bias >= 0 && g.bias >= 0) && !(f64 && (f.bias >= 0 || f.relu || f.geluTanh))) {
    g.bias = f.bias >= 0 ? f.bias : g.bias;
    if (f.c >= 0) {
      g.c = f.c;
      g.beta = 1;
      g.residual = true;
    }
    g.relu = f.relu;
    g.geluTanh = f.geluTanh;
    g.epilogueFolded = true;
  }
  return g;
}

std::string ConvPointwise::name() const {
  switch (mode) {
  case Mode::Add: return perChannel ? "bias" : "add";
  case Mode::Mul: return perChannel ? "scale" : "mul";
  case Mode::Relu: return "relu";
  case Mode::Sigmoid: return "sigmoid";
  case Mode::Tanh: return "tanh";
  case Mode::Gelu: return "gelu";
  case Mode::GeluTanh: return "gelu_tanh";
  }
  return "?";
}

std::string ConvDesc::fusedText() const {
  std::string s = bias >= 0 ? "bias" : "";
  for (const ConvPointwise &p : fused)
    s += (s.empty() ? "" : ",") + p.name();
  return s;
}

namespace {

// The epilogue as a chain of ops the graph API fuses after a convolution:
// each op reads the previous one's result (first the anchor's) and, if
// binary, a group argument of the anchor's dtype that is per channel
// (`perChannel`, right-aligned) or of the result's shape; the last writes
// the group's one result. Empty when any op is not such a link.
std::vector<ConvPointwise> fusedChain(const Function &group, const std::vector<TensorType> &args,
                                      const std::vector<int64_t> &perChannel,
                                      const std::vector<int64_t> &full, DType dtype) {
  using Mode = ConvPointwise::Mode;
  std::vector<ConvPointwise> chain;
  const Value *at = group.ops.front()->result();
  if (group.results.size() != 1)
    return {};
  for (size_t i = 1; i < group.ops.size(); ++i) {
    const Op &op = *group.ops[i];
    ConvPointwise p;
    if (op.is(OpKind::Add) || op.is(OpKind::Mul)) {
      p.mode = op.is(OpKind::Add) ? Mode::Add : Mode::Mul;
      const Value *other = op.operand(0) == at ? op.operand(1) : op.operand(0);
      if ((op.operand(0) != at && op.operand(1) != at) || other == at)
        return {};
      p.operand = argIndex(group, other);
      if (p.operand < 0 || args[size_t(p.operand)].dtype != dtype)
        return {};
      std::vector<int64_t> d = staticDims(args[size_t(p.operand)].shape);
      p.perChannel = rightAligned(d, perChannel);
      if (!p.perChannel && d != full)
        return {};
    } else if (op.operands.size() == 1 && op.operand(0) == at) {
      if (op.is(OpKind::Relu))
        p.mode = Mode::Relu;
      else if (op.is(OpKind::Sigmoid))
        p.mode = Mode::Sigmoid;
      else if (op.is(OpKind::Tanh))
        p.mode = Mode::Tanh;
      else if (op.is(OpKind::Gelu))
        p.mode = op.getString("approximate") == "tanh" ? Mode::GeluTanh : Mode::Gelu;
      else
        return {};
    } else {
      return {};
    }
    if (op.results.size() != 1 || op.result()->type.dtype != dtype)
      return {};
    at = op.result();
    chain.push_back(p);
  }
  return at == group.results[0] ? chain : std::vector<ConvPointwise>{};
}

} // namespace

std::string ConvDesc::describe(bool withBias) const {
  auto list = [](const std::vector<int> &v, const char *sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? sep : "") + std::to_string(v[i]);
    return s;
  };
  std::ostringstream s;
  s << (pass == Pass::Forward        ? "conv "
        : pass == Pass::BackwardData ? "conv-bwd-data "
                                     : "conv-bwd-filter ")
    << dtypeName(dtype) << (channelsLast ? " nhwc" : "") << " x=" << list(x, "x")
    << " w=" << list(w, "x") << " pads=" << list(pads, ",") << " strides=" << list(strides, ",")
    << " dilations=" << list(dilations, ",") << " groups=" << groups;
  if (bias >= 0 && withBias)
    s << " bias";
  if (exact)
    s << " exact";
  return s.str();
}

namespace {

// ConvTranspose (backward data) and ConvWeightGrad (backward filter): the
// forward convolution's dims and attributes, cuDNN's order.
std::optional<ConvDesc> describeConvBackward(const Function &group,
                                             const std::vector<TensorType> &args,
                                             const TensorType &result, std::string &why) {
  using Pass = ConvDesc::Pass;
  const Op &anchor = *group.ops.front();
  ConvDesc c;
  bool data = anchor.is(OpKind::ConvTranspose);
  c.pass = data ? Pass::BackwardData : Pass::BackwardFilter;
  const char *name = data ? "ConvTranspose" : "ConvWeightGrad";
  if (group.ops.size() != 1) {
    why = std::string("a ") + name + " with an epilogue";
    return std::nullopt;
  }
  int a0 = argIndex(group, anchor.operand(0)), a1 = argIndex(group, anchor.operand(1));
  if (a0 < 0 || a1 < 0) {
    why = std::string("a ") + name + " operand that is not a group argument";
    return std::nullopt;
  }
  const TensorType &t0 = args[size_t(a0)], &t1 = args[size_t(a1)];
  c.dtype = result.dtype;
  if (!libraryDType(c.dtype) || t0.dtype != c.dtype || t1.dtype != c.dtype) {
    why = std::string("cuDNN is given f32, f16 and bf16, not ") + std::string(dtypeName(t0.dtype));
    return std::nullopt;
  }
  if (data &&
      (anchor.getString("auto_pad") != "NOTSET" || !anchor.getInts("output_shape").empty())) {
    why = "ConvTranspose with auto_pad or output_shape";
    return std::nullopt;
  }
  c.channelsLast = anchor.getInt("channels_last") != 0;
  size_t sp = t0.rank() - 2;
  if (sp < 1 || sp > 3) {
    why = std::string("a ") + name + " with " + std::to_string(sp) + " spatial axes";
    return std::nullopt;
  }
  auto ints = [](const std::vector<int64_t> &v) { return std::vector<int>(v.begin(), v.end()); };
  auto cudnnOrder = [&](const TensorType &t) {
    std::vector<int> d = ints(staticDims(t.shape));
    if (c.channelsLast)
      std::rotate(d.begin() + 1, d.end() - 1, d.end());
    return d;
  };
  if (data) { // dy, w -> dx
    c.grad = a0, c.weights = a1;
    c.y = cudnnOrder(t0), c.w = cudnnOrder(t1), c.x = cudnnOrder(result);
    if (const Value *b = anchor.operand(2)) {
      c.bias = argIndex(group, b);
      if (c.bias < 0) {
        why = "a ConvTranspose bias that is not a group argument";
        return std::nullopt;
      }
    }
  } else { // x, dy -> dw
    c.input = a0, c.grad = a1;
    c.x = cudnnOrder(t0), c.y = cudnnOrder(t1), c.w = cudnnOrder(result);
  }
  std::vector<int64_t> strides = intsOr(anchor, "strides", sp, 1);
  std::vector<int64_t> dil = intsOr(anchor, "dilations", sp, 1);
  std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0);
  // The forward convolution with the leading pads on both sides must give
  // dy's size: then it is the same convolution (the trailing pads only
  // differ where no window reaches).
  for (size_t i = 0; i < sp; ++i) {
    int64_t effK = dil[i] * (c.w[2 + i] - 1) + 1, padded = c.x[2 + i] + 2 * pads[i];
    if (padded < effK || (padded - effK) / strides[i] + 1 != c.y[2 + i]) {
      why = std::string("a ") + name + " whose pads cuDNN's symmetric ones cannot state";
      return std::nullopt;
    }
  }
  c.pads = ints({pads.begin(), pads.begin() + long(sp)});
  c.strides = ints(strides);
  c.dilations = ints(dil);
  if (sp == 1)
    for (auto *v : {&c.x, &c.w, &c.y, &c.pads, &c.strides, &c.dilations})
      v->insert(v->begin() + (v->size() > 2 ? 2 : 0), v == &c.pads ? 0 : 1);
  c.groups = int(anchor.getInt("group"));
  c.epilogueFolded = true; // a lone op: nothing after the call (ConvTranspose's B: cudnnAddTensor)
  return c;
}

} // namespace

std::optional<ConvDesc> describeConv(const Function &group, const std::vector<TensorType> &args,
                                     const TensorType &result, std::string &why) {
  const Op &anchor = *group.ops.front();
  if (anchor.is(OpKind::ConvTranspose) || anchor.is(OpKind::ConvWeightGrad))
    return describeConvBackward(group, args, result, why);
  ConvDesc c;
  c.input = argIndex(group, anchor.operand(0));
  c.weights = argIndex(group, anchor.operand(1));
  if (c.input < 0 || c.weights < 0) {
    why = "a Conv operand that is not a group argument";
    return std::nullopt;
  }
  const TensorType &xt = args[size_t(c.input)], &wt = args[size_t(c.weights)];
  c.dtype = result.dtype;
  if (!libraryDType(c.dtype) || xt.dtype != c.dtype || wt.dtype != c.dtype) {
    why = std::string("cuDNN is given f32, f16 and bf16, not ") + std::string(dtypeName(xt.dtype));
    return std::nullopt;
  }
  if (anchor.getString("auto_pad") != "NOTSET") {
    why = "Conv with auto_pad";
    return std::nullopt;
  }
  c.channelsLast = anchor.getInt("channels_last") != 0;
  size_t sp = xt.rank() - 2;
  if (sp < 1 || sp > 3) {
    why = "a Conv with " + std::to_string(sp) + " spatial axes";
    return std::nullopt;
  }
  std::vector<int64_t> strides = intsOr(anchor, "strides", sp, 1);
  std::vector<int64_t> dil = intsOr(anchor, "dilations", sp, 1);
  std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0);
  for (size_t i = 0; i < sp; ++i)
    if (pads[i] != pads[i + sp]) {
      why = "asymmetric Conv pads (cuDNN's are symmetric)";
      return std::nullopt;
    }
  auto ints = [](const std::vector<int64_t> &v) { return std::vector<int>(v.begin(), v.end()); };
  // cuDNN's order: channels second (the memory order is the strides' business).
  auto cudnnOrder = [&](const TensorType &t) {
    std::vector<int> d = ints(staticDims(t.shape));
    if (c.channelsLast)
      std::rotate(d.begin() + 1, d.end() - 1, d.end());
    return d;
  };
  c.x = cudnnOrder(xt);
  c.w = cudnnOrder(wt);
  c.y = cudnnOrder(result);
  c.pads = ints({pads.begin(), pads.begin() + long(sp)});
  c.strides = ints(strides);
  c.dilations = ints(dil);
  if (sp == 1) // cuDNN's tensors have 4 or 5 dims: a 1-D conv is 2-D with H = 1
    for (auto *v : {&c.x, &c.w, &c.y, &c.pads, &c.strides, &c.dilations})
      v->insert(v->begin() + (v->size() > 2 ? 2 : 0), v == &c.pads ? 0 : 1);
  c.groups = int(anchor.getInt("group"));
  c.exact = anchor.getInt("exact") != 0;
  if (const Value *b = anchor.operand(2)) {
    c.bias = argIndex(group, b);
    if (c.bias < 0) {
      why = "a Conv bias that is not a group argument";
      return std::nullopt;
    }
  }
  std::vector<int64_t> perChannel(xt.rank(), 1); // of the result as the IR has it
  perChannel[c.channelsLast ? xt.rank() - 1 : 1] = c.y[1];
  Fold f = foldEpilogue(group, args, perChannel, false);
  if (f.all && !(f.bias >= 0 && c.bias >= 0)) {
    c.bias = f.bias >= 0 ? f.bias : c.bias;
    c.epilogueFolded = true;
  } else if (c.dtype != DType::F32 && !(c.groups > 1 && c.w[1] == 1) && !c.exact) {
    // f32 stays on the legacy API, whose FMA math type keeps TF32 out.
    // Depthwise convs (one channel per group) neither: the runtime fusion
    // engines cuDNN 9 picks for them ran 10-30x slower than the conv + bias
    // graph and our epilogue kernel (mobilenet_v3's 3x3/5x5 + bias + relu:
    // 150-430 us vs ~12 us; deeplabv3's 1.2-2.3 ms; zoo profiles, session 18).
    c.fused = fusedChain(group, args, perChannel, staticDims(result.shape), c.dtype);
  }
  return c;
}

std::string AttentionDesc::describe(bool strides) const {
  auto list = [](const std::vector<int64_t> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? "," : "") + std::to_string(v[i]);
    return s;
  };
  std::ostringstream s;
  s << "attention " << dtypeName(dtype) << " b=" << batch << " h=" << heads << "/" << kvHeads
    << " sq=" << sq << " skv=" << skv << " d=" << dim
    << (causal ? " causal" : "")
    // The key's scale round-trips the float (a plan holds the value).
    << " scale=" << std::setprecision(strides ? 9 : 6) << scale;
  if (mask)
    s << " mask=" << dtypeName(maskType) << "[" << list(mask->dims) << "]";
  // The strides (and offsets) are part of what a plan is made for.
  if (!strides)
    return s.str();
  s << " strides";
  for (const View *t : {&q, &k, &v, &o})
    s << " " << list(t->strides) << (t->offset ? "+" + std::to_string(t->offset) : "");
  if (mask)
    s << " " << list(mask->strides);
  return s.str();
}

std::optional<AttentionDesc> describeAttention(const Function &group,
                                               const std::vector<TensorType> &args,
                                               const TensorType &result, std::string &why) {
  const Op &op = *group.ops.front();
  if (group.ops.size() == 1 && op.is(OpKind::AttentionGrad)) {
    why = "the attention backward (cuDNN's SDPA backward is not wired)";
    return std::nullopt;
  }
  if (group.ops.size() != 1 || !op.is(OpKind::Attention)) {
    why = "a fused prologue or epilogue";
    return std::nullopt;
  }
  if (op.results.size() > 1) {
    why = "the rows' log-sum-exp result (a train step's forward: cuDNN's stats output is not "
          "wired)";
    return std::nullopt;
  }
  AttentionDesc a;
  // Operand `i` (0 q, 1 k, 2 v, 3 the result) as a 4-D view.
  auto view = [&](size_t i, const TensorType &t, int arg) {
    AttentionAxes axes = attentionAxes(op, i);
    std::vector<int64_t> d = staticDims(t.shape);
    AttentionStrides st = attentionStrides(axes, d);
    return AttentionDesc::View{
        arg, attentionLogicalDims(axes, d), {st.batch, st.heads, st.tokens, 1}, st.offset};
  };
  int qa = argIndex(group, op.operand(0)), ka = argIndex(group, op.operand(1)),
      va = argIndex(group, op.operand(2));
  if (qa < 0 || ka < 0 || va < 0) {
    why = "an Attention operand that is not a group argument";
    return std::nullopt;
  }
  a.dtype = result.dtype;
  for (int i : {qa, ka, va})
    if (args[size_t(i)].dtype != a.dtype)
      a.dtype = DType::F32; // mixed: refused below
  if (a.dtype != DType::F16 && a.dtype != DType::BF16) {
    why = std::string("cuDNN's flash attention takes f16 and bf16, not ") +
          std::string(dtypeName(result.dtype));
    return std::nullopt;
  }
  a.q = view(0, args[size_t(qa)], qa);
  a.k = view(1, args[size_t(ka)], ka);
  a.v = view(2, args[size_t(va)], va);
  a.o = view(3, result, -1);
  a.batch = a.q.dims[0];
  a.heads = a.q.dims[1];
  a.sq = a.q.dims[2];
  a.dim = a.q.dims[3];
  a.kvHeads = a.k.dims[1];
  a.skv = a.k.dims[2];
  a.causal = op.getInt("causal") != 0;
  a.scale = float(attentionScale(op, a.dim));
  if (a.k.dims[0] != a.batch || a.v.dims[0] != a.batch) {
    why = "k or v broadcast along the batch";
    return std::nullopt;
  }
  if (a.v.dims[3] != a.dim || a.dim % 8 || a.dim > 256) {
    why = "head dims " + std::to_string(a.dim) + "/" + std::to_string(a.v.dims[3]) +
          " (cuDNN: equal, a multiple of 8 up to 256)";
    return std::nullopt;
  }
  if (a.kvHeads <= 0 || a.heads % a.kvHeads || a.v.dims[1] != a.kvHeads) {
    why = "kv heads that do not divide the heads";
    return std::nullopt;
  }
  if (a.causal && a.sq != a.skv) {
    // tc's causal diagonal is bottom-right aligned; cuDNN's composite graph
    // masks top-left: the same only for square scores.
    why = "causal with Sq != Skv";
    return std::nullopt;
  }
  if (const Value *m = op.operand(3)) {
    int ma = argIndex(group, m);
    if (ma < 0) {
      why = "an Attention mask that is not a group argument";
      return std::nullopt;
    }
    const TensorType &mt = args[size_t(ma)];
    std::vector<int64_t> d = staticDims(mt.shape);
    if (d.size() > 4) {
      why = "a mask of rank " + std::to_string(d.size());
      return std::nullopt;
    }
    d.insert(d.begin(), 4 - d.size(), 1);
    std::vector<int64_t> full{a.batch, a.heads, a.sq, a.skv};
    for (size_t i = 0; i < 4; ++i)
      if (d[i] != full[i] && (d[i] != 1 || i == 3)) {
        why = "a mask of dims " + dimsText(d) + " (cuDNN broadcasts dims of 1 only)";
        return std::nullopt;
      }
    std::vector<int64_t> st(4, 1);
    for (size_t i = 3; i-- > 0;)
      st[i] = st[i + 1] * d[i + 1];
    a.mask = AttentionDesc::View{ma, d, st, 0};
    a.maskType = mt.dtype;
    if (!libraryDType(a.maskType)) {
      why = "a mask of " + std::string(dtypeName(a.maskType));
      return std::nullopt;
    }
  }
  return a;
}

} // namespace tc
