// attention-grad-gemms (tc-opt --target=cuda): an f32 AttentionGrad whose
// scores are few enough is rewritten into batched GEMMs and pointwise ops,
//
//   S  = scale q k^T (+ mask, + causal -inf)     P  = exp(S - lse)
//   dv = P^T dout                                dP = dout v^T
//   dS = P (dP - rowsum(dout * out))             dq = scale dS k
//   dk = scale dS^T q
//
// which cuBLASLt runs at the f32 roofline, where the generated f32 kernel
// (AttentionGrad.cpp's blocked one: no tensor cores in f32) ran at a few
// percent of it: vit_b_16's fp32 step spent 35.6 of 128 ms there (12 x 3 ms,
// docs/training.md, session 34). It costs the [B, H, Sq, Skv] scores in
// memory for the op's span (freed after it): at most max-scores elements.
// Rows whose keys are all hidden (lse = -inf) get P = 0, as the kernel.
// Grouped-query heads: a kv head's query heads are one GEMM's rows. f16 and
// bf16 keep the tensor-core kernel, but for head dims past its largest
// (kCudaAttentionGradMaxHeadDim: Gemma's 256), which would be a host step:
// those take the GEMMs in their type (f32 accumulation) with the softmax
// terms in f32 (P and dS cast to the GEMMs' type).
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <cmath>

namespace tc {

namespace {

struct Builder : AtOpBuilder {
  Value *scalar(float v) {
    return f.addConstant(f.uniqueName(at.result()->name + "_c"), TensorType{DType::F32, {}},
                         TensorData::copyOf(&v, sizeof v), at.loc);
  }
  Value *matmul(Value *a, Value *b, bool ta, bool tb, double alpha = 1.0) {
    return op(OpKind::MatMul, {a, b},
              {{"alpha", Attribute(alpha)},
               {"transA", Attribute(int64_t(ta))},
               {"transB", Attribute(int64_t(tb))}});
  }
};

// A mask of rank <= 4 that numpy-broadcasts to `scores` (the op's own rule
// lets a batch that divides B repeat, which Add's broadcasting does not).
bool broadcasts(const Value *mask, const std::vector<int64_t> &scores) {
  std::vector<int64_t> m = staticDims(mask->type.shape);
  if (m.size() > scores.size())
    return false;
  for (size_t i = 0; i < m.size(); ++i) {
    int64_t want = scores[scores.size() - m.size() + i];
    if (m[i] != 1 && m[i] != want)
      return false;
  }
  return true;
}

// Where tensor `t` of `g` keeps (batch, heads, tokens, features): its
// code's axes, those of a packed one after its part's Slice is reshaped
// away.
std::vector<int64_t> logicalAxes(const Op &g, size_t t) {
  AttentionAxes a = attentionAxes(g, t);
  std::vector<int64_t> axes{int64_t(a.batch), int64_t(a.heads), int64_t(a.tokens),
                            int64_t(a.features)};
  if (a.part >= 0)
    for (int64_t &x : axes)
      x -= x > int64_t(a.partAxis);
  return axes;
}

// Tensor `t` of `g` (operand `x`) as [B, H, S, D] whatever its layout code
// (attention-layouts may have given it one): a Transpose of it, of a
// packed part its Slice first, which gemm-views and fusion fold.
Value *logical(Builder &b, const Op &g, size_t t, Value *x) {
  int64_t code = attentionLayoutCode(g, t);
  if (code == 0)
    return x;
  AttentionAxes a = attentionAxes(code);
  if (a.part >= 0) {
    std::vector<int64_t> d = staticDims(x->type.shape), kept;
    for (size_t i = 0; i < d.size(); ++i)
      if (i != a.partAxis)
        kept.push_back(d[i]);
    Value *part = b.op(OpKind::Slice,
                       {x, b.ints({a.part}), b.ints({a.part + 1}), b.ints({int64_t(a.partAxis)})});
    x = b.op(OpKind::Reshape, {part, b.ints(kept)});
  }
  return b.op(OpKind::Transpose, {x}, {{"perm", Attribute(logicalAxes(g, t))}});
}

// The rewrite of AttentionGrad `g` (its results: dq, dk, dv or the packed
// three, then dmask where it has one), or nothing where it does not apply.
std::optional<std::vector<Value *>> lower(Function &f, const Op &g, int64_t maxScores) {
  Value *q = g.operand(0), *k = g.operand(1), *v = g.operand(2), *mask = g.operand(3),
        *out = g.operand(4), *dout = g.operand(5), *lse = g.operand(6);
  DType t = q->type.dtype;
  bool half = t == DType::F16 || t == DType::BF16;
  for (const Value *x : {q, k, v, out, dout, lse})
    if (!x || x->type.dtype != (x == lse ? DType::F32 : t) || !isStaticShape(x->type.shape))
      return std::nullopt;
  if (t != DType::F32 && !half)
    return std::nullopt;
  if (mask && (!isStaticShape(mask->type.shape) || !isFloat(mask->type.dtype)))
    return std::nullopt;
  // [B, H, S, D] by the layout codes (the op's shape rule checked ranks).
  auto logicalDims = [&](size_t i, const Value *x) {
    AttentionAxes a = attentionAxes(g, i);
    std::vector<int64_t> d = staticDims(x->type.shape);
    return d.size() != a.rank() ? std::vector<int64_t>{} : attentionLogicalDims(a, d);
  };
  std::vector<int64_t> qd = logicalDims(kAttnQ, q), kd = logicalDims(kAttnK, k),
                       vd = logicalDims(kAttnV, v);
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4 || qd[0] != kd[0] || vd[0] != kd[0] ||
      vd[1] != kd[1] || vd[2] != kd[2])
    return std::nullopt;
  int64_t B = qd[0], H = qd[1], Sq = qd[2], D = qd[3], Hkv = kd[1], Skv = kd[2];
  if (Hkv < 1 || H % Hkv || B * H * Sq * Skv > maxScores)
    return std::nullopt;
  if (half && D <= kCudaAttentionGradMaxHeadDim && vd[3] <= kCudaAttentionGradMaxHeadDim)
    return std::nullopt; // the tensor-core kernel's
  std::vector<int64_t> scores{B, H, Sq, Skv};
  if (mask && !broadcasts(mask, scores))
    return std::nullopt;
  bool causal = g.getInt("causal") != 0;
  if (causal && Sq * Skv > (int64_t(1) << 20)) // its [Sq, Skv] constant stays small
    return std::nullopt;
  double scale = attentionScale(g, D);
  Builder b{{f, g}};
  q = logical(b, g, kAttnQ, q);
  k = logical(b, g, kAttnK, k);
  v = logical(b, g, kAttnV, v);
  out = logical(b, g, kAttnOut, out);
  dout = logical(b, g, kAttnDout, dout);
  // Grouped-query heads: the GEMMs see q's H = Hkv * group heads as Hkv
  // heads of group * Sq rows ([B, H, Sq, X] is [B, Hkv, group * Sq, X] in
  // place), so dk and dv sum over each group inside the product.
  int64_t rows = H / Hkv * Sq;
  auto grouped = [&](Value *x) {
    std::vector<int64_t> d = staticDims(x->type.shape);
    return Hkv == H ? x : b.op(OpKind::Reshape, {x, b.ints({B, Hkv, rows, d[3]})});
  };
  auto perHead = [&](Value *x) {
    std::vector<int64_t> d = staticDims(x->type.shape);
    return Hkv == H ? x : b.op(OpKind::Reshape, {x, b.ints({B, H, Sq, d[3]})});
  };
  auto cast = [&](Value *x, DType to) {
    return x->type.dtype == to ? x : b.op(OpKind::Cast, {x}, {{"to", Attribute(to)}});
  };
  Value *qg = grouped(q), *gg = grouped(dout);
  Value *s = cast(perHead(b.matmul(qg, k, false, true, scale)), DType::F32);
  if (mask)
    s = b.op(OpKind::Add, {s, cast(mask, DType::F32)});
  if (causal) { // key j hidden from query i when j > i + Skv - Sq
    std::vector<float> hide(size_t(Sq * Skv));
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Skv; ++j)
        hide[size_t(i * Skv + j)] = j > i + Skv - Sq ? -INFINITY : 0.f;
    Value *c = f.addConstant(f.uniqueName(g.result()->name + "_causal"),
                             TensorType{DType::F32, {Dim::fixed(Sq), Dim::fixed(Skv)}},
                             TensorData::copyOf(hide.data(), hide.size() * sizeof(float)), g.loc);
    s = b.op(OpKind::Add, {s, c});
  }
  Value *rowLse = b.op(OpKind::Reshape, {lse, b.ints({B, H, Sq, 1})});
  Value *p = b.op(OpKind::Exp, {b.op(OpKind::Sub, {s, rowLse})});
  if (mask || causal) // exp(-inf - -inf) is NaN: such a row's P is 0
    p = b.op(OpKind::Where, {b.op(OpKind::Equal, {rowLse, b.scalar(-INFINITY)}), b.scalar(0.f), p});
  Value *dv = b.matmul(grouped(cast(p, t)), gg, true, false);
  Value *dp = cast(perHead(b.matmul(gg, v, false, true)), DType::F32);
  Value *rowD =
      b.op(OpKind::ReduceSum, {b.op(OpKind::Mul, {cast(dout, DType::F32), cast(out, DType::F32)})},
           {{"axes", Attribute(std::vector<int64_t>{3})}, {"keepdims", Attribute(int64_t(1))}});
  Value *dsHeads = cast(b.op(OpKind::Mul, {p, b.op(OpKind::Sub, {dp, rowD})}), t);
  Value *ds = grouped(dsHeads);
  Value *dq = perHead(b.matmul(ds, k, false, false, scale));
  Value *dk = b.matmul(ds, qg, true, false, scale);
  std::vector<Value *> grads{dq, dk, dv};
  for (size_t r = 0; r < 3; ++r) // a result in another code: the inverse Transpose
    if (attentionLayoutCode(g, kAttnDq + r) != 0) {
      std::vector<int64_t> axes = logicalAxes(g, kAttnDq + r), perm(4);
      for (size_t i = 0; i < 4; ++i)
        perm[size_t(axes[i])] = int64_t(i);
      grads[r] = b.op(OpKind::Transpose, {grads[r]}, {{"perm", Attribute(perm)}});
    }
  if (attentionGradPacked(g)) { // the three parts side by side: one result
    int64_t axis = int64_t(attentionAxes(g, kAttnDq).partAxis);
    for (Value *&x : grads)
      x = b.op(OpKind::Unsqueeze, {x}, {{"axes", Attribute(std::vector<int64_t>{axis})}});
    grads = {b.op(OpKind::Concat, grads, {{"axis", Attribute(axis)}})};
  }
  if (attentionGradMaskResult(g) >= 0)
    grads.push_back(dsHeads);
  return grads;
}

} // namespace

bool runAttentionGradGemmsPass(Module &m, const PassOptions &opts) {
  int64_t maxScores = opts.getInt("max-scores");
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      std::optional<std::vector<Value *>> grads =
          o->is(OpKind::AttentionGrad) ? lower(f, *o, maxScores) : std::nullopt;
      if (!grads) {
        f.ops.push_back(std::move(o));
        continue;
      }
      for (size_t i = 0; i < grads->size(); ++i) // dmask (dS) is read inside too
        adoptValue(o->results[i], (*grads)[i], &f);
      changed = true;
    }
  }
  return changed;
}

} // namespace tc
