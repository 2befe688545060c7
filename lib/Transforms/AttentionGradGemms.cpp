// attention-grad-gemms (tc-opt --target=cuda): an f32 AttentionGrad whose
// scores are few enough, and (option `forward`) a train step's f32 forward
// Attention (lowerForward, below), are rewritten into batched GEMMs and
// pointwise ops; the backward's:
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

// What the forward's and the backward's rewrites share: the checks, the
// logical dims, and the scores S = scale q k^T (+ mask, + causal -inf) in
// f32 (`scores`). Grouped-query heads: the GEMMs see q's H = Hkv * group
// heads as Hkv heads of group * Sq rows ([B, H, Sq, X] is [B, Hkv, group *
// Sq, X] in place: `grouped`, `perHead`), so dk and dv sum over each group
// inside the product.
struct Gemms {
  Function &f;
  const Op &g;
  Builder b;
  DType t = DType::F32;
  bool causal = false;
  double scale = 1;
  int64_t B = 0, H = 0, Sq = 0, D = 0, Dv = 0, Hkv = 0, Skv = 0;

  Gemms(Function &fn, const Op &op) : f(fn), g(op), b{{fn, op}} {}

  // Whether the rewrite applies to q, k, v and the mask of `g` (`others`:
  // more operands of q's type, static; `half`: f16 / bf16 too).
  bool fits(int64_t maxScores, std::vector<const Value *> others, bool half) {
    Value *q = g.operand(0), *k = g.operand(1), *v = g.operand(2), *mask = g.operand(3);
    t = q->type.dtype;
    if (t != DType::F32 && !(half && (t == DType::F16 || t == DType::BF16)))
      return false;
    others.insert(others.end(), {q, k, v});
    for (const Value *x : others)
      if (!x || x->type.dtype != t || !isStaticShape(x->type.shape))
        return false;
    if (mask && (!isStaticShape(mask->type.shape) || !isFloat(mask->type.dtype)))
      return false;
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
      return false;
    B = qd[0], H = qd[1], Sq = qd[2], D = qd[3], Dv = vd[3], Hkv = kd[1], Skv = kd[2];
    if (Hkv < 1 || H % Hkv || B * H * Sq * Skv > maxScores)
      return false;
    if (mask && !broadcasts(mask, {B, H, Sq, Skv}))
      return false;
    causal = g.getInt("causal") != 0;
    if (causal && Sq * Skv > (int64_t(1) << 20)) // its [Sq, Skv] constant stays small
      return false;
    scale = attentionScale(g, D);
    return true;
  }

  Value *grouped(Value *x) {
    std::vector<int64_t> d = staticDims(x->type.shape);
    return Hkv == H ? x : b.op(OpKind::Reshape, {x, b.ints({B, Hkv, H / Hkv * Sq, d[3]})});
  }
  Value *perHead(Value *x) {
    std::vector<int64_t> d = staticDims(x->type.shape);
    return Hkv == H ? x : b.op(OpKind::Reshape, {x, b.ints({B, H, Sq, d[3]})});
  }
  Value *cast(Value *x, DType to) {
    return x->type.dtype == to ? x : b.op(OpKind::Cast, {x}, {{"to", Attribute(to)}});
  }
  // Reduction `k` of `x` [B, H, Sq, X] over each row: [B, H, Sq, 1].
  Value *rows(OpKind k, Value *x) {
    return b.op(
        k, {x},
        {{"axes", Attribute(std::vector<int64_t>{3})}, {"keepdims", Attribute(int64_t(1))}});
  }

  // S [B, H, Sq, Skv] in f32 from the grouped q `qg` and k.
  Value *scores(Value *qg, Value *k) {
    Value *s = cast(perHead(b.matmul(qg, k, false, true, scale)), DType::F32);
    if (Value *mask = g.operand(3))
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
    return s;
  }

  // P = exp(S - lse) with the rows' lse [B, H, Sq, 1]: 0 in a row whose
  // keys are all hidden (exp(-inf - -inf) is NaN).
  Value *probabilities(Value *s, Value *rowLse) {
    Value *p = b.op(OpKind::Exp, {b.op(OpKind::Sub, {s, rowLse})});
    if (g.operand(3) || causal)
      p = b.op(OpKind::Where,
               {b.op(OpKind::Equal, {rowLse, b.scalar(-INFINITY)}), b.scalar(0.f), p});
    return p;
  }
};

// The rewrite of AttentionGrad `g` (its results: dq, dk, dv or the packed
// three, then dmask where it has one), or nothing where it does not apply.
std::optional<std::vector<Value *>> lower(Function &f, const Op &g, int64_t maxScores) {
  Value *out = g.operand(4), *dout = g.operand(5), *lse = g.operand(6);
  Gemms m(f, g);
  if (!lse || lse->type.dtype != DType::F32 || !isStaticShape(lse->type.shape) ||
      !m.fits(maxScores, {out, dout}, true))
    return std::nullopt;
  if (m.t != DType::F32 && m.D <= kCudaAttentionGradMaxHeadDim &&
      m.Dv <= kCudaAttentionGradMaxHeadDim)
    return std::nullopt; // the tensor-core kernel's
  Builder &b = m.b;
  Value *q = logical(b, g, kAttnQ, g.operand(0)), *k = logical(b, g, kAttnK, g.operand(1)),
        *v = logical(b, g, kAttnV, g.operand(2));
  out = logical(b, g, kAttnOut, out);
  dout = logical(b, g, kAttnDout, dout);
  Value *qg = m.grouped(q), *gg = m.grouped(dout);
  Value *rowLse = b.op(OpKind::Reshape, {lse, b.ints({m.B, m.H, m.Sq, 1})});
  Value *p = m.probabilities(m.scores(qg, k), rowLse);
  Value *dv = b.matmul(m.grouped(m.cast(p, m.t)), gg, true, false);
  Value *dp = m.cast(m.perHead(b.matmul(gg, v, false, true)), DType::F32);
  Value *rowD = m.rows(OpKind::ReduceSum,
                       b.op(OpKind::Mul, {m.cast(dout, DType::F32), m.cast(out, DType::F32)}));
  Value *dsHeads = m.cast(b.op(OpKind::Mul, {p, b.op(OpKind::Sub, {dp, rowD})}), m.t);
  Value *ds = m.grouped(dsHeads);
  Value *dq = m.perHead(b.matmul(ds, k, false, false, m.scale));
  Value *dk = b.matmul(ds, qg, true, false, m.scale);
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

// The rewrite of a train step's f32 forward Attention `a` (its results: the
// output and the rows' lse), in [B, H, S, D] (codes 0), or nothing:
//
//   S = scale q k^T (+ mask, + causal)   m = rowmax(S) (0 where -inf)
//   lse = m + log(rowsum(exp(S - m)))    out = exp(S - lse) v
//
// cuBLASLt's f32 GEMMs where the blocked f32 kernel (no tensor cores)
// recomputes the scores tile by tile (vit_b_16's fp32 step: 5.7 ms of
// forward attention, session 32).
std::optional<std::vector<Value *>> lowerForward(Function &f, const Op &a, int64_t maxScores) {
  if (a.results.size() != 2 || a.result(1)->type.dtype != DType::F32)
    return std::nullopt;
  for (int64_t code : a.getInts("layout"))
    if (code != 0)
      return std::nullopt;
  Gemms m(f, a);
  if (!m.fits(maxScores, {a.result()}, false) || a.result()->type.shape[0] != Dim::fixed(m.B))
    return std::nullopt;
  Builder &b = m.b;
  Value *s = m.scores(m.grouped(a.operand(0)), a.operand(1));
  Value *max = m.rows(OpKind::ReduceMax, s);
  max = b.op(OpKind::Where, {b.op(OpKind::Equal, {max, b.scalar(-INFINITY)}), b.scalar(0.f), max});
  Value *sum = m.rows(OpKind::ReduceSum, b.op(OpKind::Exp, {b.op(OpKind::Sub, {s, max})}));
  Value *rowLse = b.op(OpKind::Add, {max, b.op(OpKind::Log, {sum})});
  Value *p = m.probabilities(s, rowLse);
  Value *out = m.perHead(b.matmul(m.grouped(p), a.operand(2), false, false));
  return std::vector<Value *>{out, b.op(OpKind::Reshape, {rowLse, b.ints({m.B, m.H, m.Sq})})};
}

} // namespace

bool runAttentionGradGemmsPass(Module &m, const PassOptions &opts) {
  int64_t maxScores = opts.getInt("max-scores");
  bool forward = opts.getBool("forward");
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      std::optional<std::vector<Value *>> grads =
          o->is(OpKind::AttentionGrad)          ? lower(f, *o, maxScores)
          : o->is(OpKind::Attention) && forward ? lowerForward(f, *o, maxScores)
                                                : std::nullopt;
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
