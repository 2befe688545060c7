// attention-fusion: scaled-dot-product attention as exporters write it
// becomes one Attention op (Ops.def):
//
//   MatMul(Where(IsNaN(P), 0, P) | P, v)                       P @ v
//   P = Softmax(scores, axis = -1)
//   scores = [Where(C, ., -big)] MatMul(q', kT') [* c | / c] [+ bias] [+ mask]
//                                       (MPNet: a relative-position bias, then the
//                                        padding mask; the op's mask is their sum)
//                                       (TorchScript GPT-2: C the causal triangle)
//   q' = q [* c | / c]                  (torch dynamo scales q and kT by d^-1/4 each)
//   kT' = Transpose(k) [* c | / c]      (perm swapping the last two axes of k)
//       | Reshape(Transpose(Reshape(k, [-1, S, D]), [0, 2, 1]), [B, H, D, S])
//                                       (dynamo: shapes from Shape(k) -> Slice -> Concat,
//                                        or constants where k's dims are static)
//   k, v = Reshape(Expand(Unsqueeze(x, [2]), [B, Hkv, rep, S, D]), [B, Hkv * rep, S, D])
//                                       (grouped-query attention: x has Hkv heads; k^T's
//                                        first Reshape may read the Expand itself:
//                                        [B * Hkv * rep, S, D], canonicalize's merge at a
//                                        static batch, torch 2.11's export at a symbolic one)
//   mask = Where(C, 0, -big) with C a constant lower triangle (possibly
//          Expand'ed), or that folded to a constant: causal = 1 and no
//          mask; any other additive mask whose heads, queries and keys axes
//          are 1 or the scores' stays the mask operand (its batch
//          broadcasts with q's, k's and v's).
//   scores = Reshape(Reshape(s, [B / nW, nW, H, Sq, Skv]) + w, s's shape)
//          (swin's shifted windows: w [.., nW | 1, H | 1, Sq | 1, Skv]
//          becomes [nW, .., Skv], a mask whose batch b reads b % nW, added
//          to s's own mask, the relative-position bias; one constant when
//          both are)
//
// and BLOOM's batched form (heads merged into the batch, a constant ALiBi
// bias on the merged scores: fuseBmmAt). The op gives 0 for a row whose
// keys are all masked: what the IsNaN/Where tail gives, where a graph
// without the tail gives NaN.
//
// Every scale must be a one-element float constant; their product is the op's
// `scale`. The rewritten chain's intermediate values must have no other use
// (the rewrite leaves them dead).
#include "tc/IR/MatMulViews.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace tc {

namespace {

// Uses of every value (op operands and function results). Shape ops do not
// count: dynamo's k^T reads Shape(k), which the rewrite leaves dead too; nor
// do ops whose results only Shape ops read (dynamo's grouped k, reshaped to
// [B, H, S, D] only for its Shape, while k^T reshapes the Expand itself).
using UseCounts = std::unordered_map<const Value *, int>;

UseCounts countUses(const Function &f) {
  UseCounts uses;
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      if (v && !op->is(OpKind::Shape))
        ++uses[v];
  for (const Value *v : f.results)
    uses[v] += 2; // a result is never an intermediate
  // In reverse (readers before their operands): a value read only by such
  // ops frees its own operands too.
  for (auto it = f.ops.rbegin(); it != f.ops.rend(); ++it) {
    const Op &op = **it;
    bool shapeOnly = !op.is(OpKind::Shape) && !op.results.empty() &&
                     std::all_of(op.results.begin(), op.results.end(),
                                 [&](const Value *r) { return uses[r] == 0; });
    if (shapeOnly)
      for (const Value *v : op.operands)
        if (v)
          --uses[v];
  }
  return uses;
}

bool known(const Dim &a, const Dim &b) { return a == b && !a.isUnknown(); }

std::optional<std::vector<int64_t>> intsOf(const Value *v) {
  if (!v || !v->isConstant() || (v->type.dtype != DType::I64 && v->type.dtype != DType::I32))
    return std::nullopt;
  HostTensor t = constantTensor(*v);
  std::vector<int64_t> r;
  for (int64_t i = 0; i < t.numElements(); ++i)
    r.push_back(t.getInt(i));
  return r;
}

struct Matcher {
  Function &f;
  UseCounts &uses; // the pass's, recounted after each fusion (a missing value: 0)

  // `v` is produced by an op of kind `k` used only inside the chain (a
  // MatMul with ONNX's semantics: no views of gemm-views').
  Op *single(Value *v, OpKind k) {
    return v && v->def && v->def->is(k) && uses[v] == 1 &&
                   (k != OpKind::MatMul || isPlainMatMul(*v->def))
               ? v->def
               : nullptr;
  }

  // Which operand of Add `add` leads (through scales) to a MatMul (the
  // second where both do): the scores, the other an additive term; nullopt
  // where neither does.
  std::optional<size_t> scoresSide(const Op &add) {
    std::optional<size_t> side;
    for (size_t i = 0; i < 2; ++i) {
      double unused = 1;
      Value *x = peelScale(add.operand(i), unused);
      if (x->def && x->def->is(OpKind::MatMul))
        side = i;
    }
    return side;
  }

  // Peels Mul/Div by one-element constants off `v`, multiplying `scale`.
  Value *peelScale(Value *v, double &scale) {
    for (;;) {
      Op *op = v && v->def && uses[v] == 1 ? v->def : nullptr;
      std::optional<ScalarScale> s = op ? scalarScale(*op) : std::nullopt;
      if (!s)
        return v;
      scale *= s->factor;
      v = s->data;
    }
  }

  // A shape tensor as a list of elements: a constant, or dim `axis` of `src`.
  struct Elem {
    const Value *src = nullptr;
    int64_t n = 0; // the constant (src null) or the axis
    bool operator==(const Elem &o) const = default;
  };
  std::optional<std::vector<Elem>> shapeExpr(const Value *v) {
    if (auto c = intsOf(v)) {
      std::vector<Elem> r;
      for (int64_t x : *c)
        r.push_back({nullptr, x});
      return r;
    }
    const Op *op = v ? v->def : nullptr;
    if (!op)
      return std::nullopt;
    if (op->is(OpKind::Shape)) {
      int64_t rank = int64_t(op->operand(0)->type.rank());
      auto norm = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t(0), rank); };
      int64_t start = norm(op->getInt("start"));
      int64_t end = op->findAttr("end") ? norm(op->getInt("end")) : rank;
      std::vector<Elem> r;
      for (int64_t a = start; a < end; ++a)
        r.push_back({op->operand(0), a});
      return r;
    }
    if (op->is(OpKind::Concat) && op->getInt("axis") == 0) {
      std::vector<Elem> r;
      for (const Value *in : op->operands) {
        auto e = shapeExpr(in);
        if (!e)
          return std::nullopt;
        r.insert(r.end(), e->begin(), e->end());
      }
      return r;
    }
    if (op->is(OpKind::Slice) && op->operands.size() <= 3) {
      auto in = shapeExpr(op->operand(0));
      auto s = intsOf(op->operand(1)), e = intsOf(op->operand(2));
      if (!in || !s || !e || s->size() != 1 || e->size() != 1)
        return std::nullopt;
      int64_t n = int64_t(in->size());
      auto norm = [&](int64_t a) { return std::clamp(a < 0 ? a + n : a, int64_t(0), n); };
      int64_t b = norm((*s)[0]), end = norm((*e)[0]);
      return std::vector<Elem>(in->begin() + b, in->begin() + std::max(b, end));
    }
    return std::nullopt;
  }

  // k from k^T: Transpose(x) swapping the last two axes of k, or dynamo's
  // Reshape -> Transpose([0, 2, 1]) -> Reshape over Shape(k), whose first
  // Reshape may read grouped-query attention's Expand directly (see the
  // header): then the result is the group's x and `rep` its repeat. May
  // append a Transpose op to `fresh` (placed by the caller).
  Value *untranspose(Value *kt, std::vector<std::unique_ptr<Op>> &fresh, int64_t &rep) {
    rep = 1;
    if (Op *t = single(kt, OpKind::Transpose)) {
      const std::vector<int64_t> &p = t->getInts("perm");
      if (p.size() != 4)
        return nullptr;
      std::vector<int64_t> perm{p[0], p[1], p[3], p[2]};
      Value *x = t->operand(0);
      if (perm == std::vector<int64_t>{0, 1, 2, 3})
        return x;
      auto op = std::make_unique<Op>(OpKind::Transpose);
      op->operands = {x};
      op->setAttr("perm", Attribute(perm));
      op->loc = t->loc;
      Shape s;
      for (int64_t a : perm)
        s.push_back(x->type.shape[size_t(a)]);
      op->results.push_back(f.newValue(f.uniqueName(kt->name + "_k"), {x->type.dtype, s}));
      op->results.back()->def = op.get();
      Value *k = op->results.back();
      fresh.push_back(std::move(op));
      return k;
    }
    Op *r2 = single(kt, OpKind::Reshape);
    Op *t = r2 ? single(r2->operand(0), OpKind::Transpose) : nullptr;
    Op *r1 = t ? single(t->operand(0), OpKind::Reshape) : nullptr;
    if (!r1 || t->getInts("perm") != std::vector<int64_t>{0, 2, 1})
      return nullptr;
    Value *k = r1->operand(0);
    // ks: k's shape [B, H, S, D] (of the grouped Expand [B, Hkv, rep, S, D]:
    // its heads merged, static only).
    Shape ks = k->type.shape;
    const Value *sym = k; // whose dims the shape tensors may name
    if (k->type.rank() == 5) {
      k = grouped(k, rep);
      if (!k || !ks[1].isStatic())
        return nullptr;
      ks = {ks[0], Dim::fixed(ks[1].size * rep), ks[3], ks[4]};
      sym = nullptr;
    }
    if (k->type.rank() != 4)
      return nullptr;
    auto s1 = shapeExpr(r1->operand(1)), s2 = shapeExpr(r2->operand(1));
    // Element e is dim a of k: symbolically (a dim of k, or of any value
    // whose dim is provably the same: dynamo's grouped k), or as a constant
    // (folded when k's dims are static).
    auto is = [&](const Elem &e, int64_t a) {
      return (sym && e == Elem{sym, a}) ||
             (e.src && e.n < int64_t(e.src->type.rank()) &&
              known(e.src->type.shape[size_t(e.n)], ks[size_t(a)])) ||
             (!e.src && ks[size_t(a)].isStatic() && e.n == ks[size_t(a)].size);
    };
    auto merged = [&](const Elem &e) { // -1, or k0 * k1
      return (!e.src && e.n == -1) ||
             (!e.src && ks[0].isStatic() && ks[1].isStatic() && e.n == ks[0].size * ks[1].size);
    };
    if (!s1 || !s2 || s1->size() != 3 || s2->size() != 4 || !merged((*s1)[0]) || !is((*s1)[1], 2) ||
        !is((*s1)[2], 3) || !is((*s2)[0], 0) || !is((*s2)[1], 1) || !is((*s2)[2], 3) ||
        !is((*s2)[3], 2))
      return nullptr;
    return k;
  }

  // x and rep from grouped-query attention's Expand(Unsqueeze(x, [2])) to
  // [B, Hkv, rep, S, D] (B kept or broadcast from 1: the op broadcasts k/v's
  // batch too); null if `e5` is not that.
  Value *grouped(Value *e5, int64_t &rep) {
    Op *e = e5->def && e5->def->is(OpKind::Expand) && uses[e5] == 1 ? e5->def : nullptr;
    Op *u = e ? e->operand(0)->def : nullptr;
    if (!u || !u->is(OpKind::Unsqueeze) || uses[u->result()] != 1)
      return nullptr;
    Value *x = u->operand(0);
    const Shape &xs = x->type.shape, &es = e5->type.shape;
    std::optional<std::vector<int64_t>> axes =
        u->findAttr("axes") ? std::optional(u->getInts("axes")) : intsOf(u->operand(1));
    if (!axes || *axes != std::vector<int64_t>{2} || xs.size() != 4 || es.size() != 5 ||
        !es[2].isStatic() || !xs[1].isStatic() || !known(es[1], xs[1]) || !known(es[3], xs[2]) ||
        !known(es[4], xs[3]))
      return nullptr;
    rep = es[2].size;
    return x;
  }

  // x and rep from grouped-query attention's Reshape(Expand(Unsqueeze(x,
  // [2]))) to [B, Hkv * rep, S, D]; `kv` itself and rep 1 otherwise.
  Value *ungroup(Value *kv, int64_t &rep) {
    rep = 1;
    Op *r = kv->def && kv->def->is(OpKind::Reshape) && uses[kv] == 1 ? kv->def : nullptr;
    int64_t n = 1;
    Value *x = r ? grouped(r->operand(0), n) : nullptr;
    const Shape &rs = kv->type.shape;
    if (!x || rs.size() != 4 || !rs[1].isStatic() || rs[1].size != x->type.shape[1].size * n ||
        !known(rs[2], x->type.shape[2]) || !known(rs[3], x->type.shape[3]))
      return kv;
    rep = n;
    return x;
  }

  // A constant float mask [..., Sq, Skv]: 0 where key j is visible to
  // query i (j <= i + Skv - Sq), <= -1e30 elsewhere, in every leading slice.
  static bool causalConstant(const Value &m, int64_t rows, int64_t cols) {
    const Shape &s = m.type.shape;
    if (!isFloat(m.type.dtype) || s.size() < 2 || s[s.size() - 2] != Dim::fixed(rows) ||
        s.back() != Dim::fixed(cols))
      return false;
    HostTensor t = constantTensor(m);
    for (int64_t e = 0; e < t.numElements(); ++e) {
      int64_t i = e / cols % rows, j = e % cols;
      double x = t.getDouble(e);
      if (j <= i + cols - rows ? x != 0 : x > -1e30)
        return false;
    }
    return true;
  }

  // Where(C, 0, -big) with C a constant lower triangle aligned bottom-right
  // on [Sq, Skv] (leading dims 1), possibly Expand'ed over leading axes. It
  // may be shared by every layer: it dies with the last one's rewrite.
  bool causalMask(Value *m, const Dim &sq, const Dim &skv) {
    if (!m || !sq.isStatic() || !skv.isStatic() || sq.size > skv.size)
      return false;      // (Sq > Skv: the first rows see no key; the graph's softmax differs there)
    if (m->isConstant()) // folded: 0 on the triangle, -big above it
      return causalConstant(*m, sq.size, skv.size);
    Op *w = m->def && m->def->is(OpKind::Where) ? m->def : nullptr;
    std::optional<double> zero = w ? floatScalarConstant(w->operand(1)) : std::nullopt;
    std::optional<double> big = w ? floatScalarConstant(w->operand(2)) : std::nullopt;
    return zero && *zero == 0 && big && *big <= -1e30 &&
           causalCondition(w->operand(0), sq.size, skv.size);
  }

  // A constant bool [1.., Sq, Skv], true where key j is visible to query i
  // (bottom-right aligned), possibly Expand'ed over its leading axes.
  static bool causalCondition(const Value *c, int64_t rows, int64_t cols) {
    const Op *ex = c->def && c->def->is(OpKind::Expand) ? c->def : nullptr;
    if (ex) { // the Expand must keep the last two axes
      const Shape &es = ex->result()->type.shape;
      if (es.size() < 2 || es[es.size() - 2] != Dim::fixed(rows) || es.back() != Dim::fixed(cols))
        return false;
      c = ex->operand(0);
    }
    if (!c->isConstant() || c->type.dtype != DType::Bool || c->type.rank() < 2)
      return false;
    const Shape &s = c->type.shape;
    for (size_t i = 0; i + 2 < s.size(); ++i)
      if (s[i] != Dim::fixed(1))
        return false;
    if (s[s.size() - 2] != Dim::fixed(rows) || s.back() != Dim::fixed(cols))
      return false;
    HostTensor t = constantTensor(*c);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if ((t.getInt(i * cols + j) != 0) != (j <= i + cols - rows))
          return false;
    return true;
  }
};

// What a matcher found: the op's operands and attributes, and the ops it
// made (placed before the matched chain's last MatMul).
struct Parts {
  Value *q = nullptr, *k = nullptr, *v = nullptr;
  Value *mask = nullptr; // additive; a causal one becomes `causal`
  Value *bias = nullptr; // another additive term (BLOOM's ALiBi, swin's windows), added to the mask
  Value *hide = nullptr; // TorchScript GPT-2's causal Where condition
  double scale = 1;
  int64_t repK = 1, repV = 1;
  bool heads3 = false; // the 3-D form: q, k, v [B * H, S, D] seen as [B * H, 1, S, D]
  std::vector<std::unique_ptr<Op>> fresh;
};

// Where(IsNaN(p), 0, p) -> p: the op gives 0 for a fully masked row, as
// this tail does after a Softmax (and where a graph without it gives NaN).
Value *untail(Matcher &mt, Value *p) {
  Op *w = p->def && p->def->is(OpKind::Where) && mt.uses[p] == 1 ? p->def : nullptr;
  Op *nan = w ? w->operand(0)->def : nullptr;
  std::optional<double> zero = w ? floatScalarConstant(w->operand(1)) : std::nullopt;
  if (!nan || !nan->is(OpKind::IsNaN) || !zero || *zero != 0 || nan->operand(0) != w->operand(2) ||
      mt.uses[w->operand(0)] != 1 || mt.uses[w->operand(2)] != 2)
    return p;
  mt.uses[w->operand(2)] = 1;
  return w->operand(2);
}

// An Op of kind `k` over `operands` (with attribute `attr`, if named) made
// for the rewrite, its type inferred; null if that fails.
Value *freshOp(Function &f, Parts &parts, OpKind k, std::vector<Value *> operands,
               const std::string &name, const Location &loc,
               std::pair<const char *, std::vector<int64_t>> attr = {}) {
  auto op = std::make_unique<Op>(k);
  op->operands = std::move(operands);
  op->loc = loc;
  if (attr.first)
    op->setAttr(attr.first, Attribute(attr.second));
  std::vector<TensorType> types;
  try {
    types = op->info().infer(*op);
  } catch (const Error &) {
    return nullptr;
  }
  Value *out = f.newValue(f.uniqueName(name), types[0]);
  out->def = op.get();
  op->results.push_back(out);
  parts.fresh.push_back(std::move(op));
  return out;
}

// `v`, or the constant it is when its operands are constants (the mask
// and bias one tensor, computed once at compile time).
Value *folded(Function &f, Parts &parts, Value *v) {
  if (!v || parts.fresh.empty() || v->def != parts.fresh.back().get())
    return v;
  constexpr size_t kMaxBytes = 64 << 20;
  std::optional<std::vector<HostTensor>> t = evaluateConstantOp(*v->def, kMaxBytes);
  if (!t)
    return v;
  Location loc = v->def->loc;
  v->def = nullptr; // (an orphan value: no op reads it)
  parts.fresh.pop_back();
  const HostTensor &h = t->front();
  return f.addConstant(f.uniqueName(v->name), v->type, TensorData::copyOf(h.bytes(), h.byteSize()),
                       loc);
}

// Swin's shifted-window mask around the scores `s4`: Reshape(Reshape(s4,
// [B / nW, nW, H, Sq, Skv]) + w, s4's shape). Returns s4 and sets
// parts.bias to w as a 4-D mask [nW | 1, H | 1, Sq | 1, Skv] (the op's mask
// batch repeats: b reads b % nW); `scores` itself when it is not that.
Value *unwindow(Function &f, Matcher &mt, Parts &parts, Value *scores) {
  Op *back = mt.single(scores, OpKind::Reshape);
  Op *add = back ? mt.single(back->operand(0), OpKind::Add) : nullptr;
  if (!add)
    return scores;
  for (size_t s = 0; s < 2; ++s) {
    Op *r5 = mt.single(add->operand(s), OpKind::Reshape);
    Value *w = add->operand(1 - s), *s4 = r5 ? r5->operand(0) : nullptr;
    if (!s4 || s4->type.rank() != 4 || scores->type != s4->type ||
        add->result()->type.shape != add->operand(s)->type.shape)
      continue;
    const Shape &rs = r5->result()->type.shape, &ss = s4->type.shape, &ws = w->type.shape;
    if (rs.size() != 5 || !rs[1].isStatic() || rs[1].size < 1 || !known(rs[2], ss[1]) ||
        !known(rs[3], ss[2]) || !known(rs[4], ss[3]) || ws.size() > 5 || ws.size() < 4)
      continue;
    // w right-aligned on [B / nW, nW, H, Sq, Skv]: 1 on the first axis.
    Shape w4(ws.end() - 4, ws.end());
    if ((ws.size() == 5 && ws[0] != Dim::fixed(1)) ||
        (w4[0] != Dim::fixed(1) && !known(w4[0], rs[1])))
      continue;
    std::vector<int64_t> dims;
    for (const Dim &d : w4)
      if (d.isStatic())
        dims.push_back(d.size);
    if (dims.size() != 4)
      continue;
    Value *shape = addIntsConstant(f, w->name + "_windows_shape", dims, back->loc);
    parts.bias = folded(
        f, parts, freshOp(f, parts, OpKind::Reshape, {w, shape}, w->name + "_windows", back->loc));
    return parts.bias ? s4 : scores;
  }
  return scores;
}

// An additive term that broadcasts into the scores [B, H, Sq, Skv] without
// widening them: heads, queries and keys 1 or the scores' own (the batch
// broadcasts in the op too).
bool fitsScores(const Value *m, const TensorType &qt, const TensorType &kt) {
  const Shape &ms = m->type.shape;
  Shape scores4{Dim::unknown(), qt.shape[1], qt.shape[2], kt.shape[2]};
  if (ms.size() > 4 || m->type.dtype != qt.dtype)
    return false;
  for (size_t a = 0; a < ms.size(); ++a) {
    size_t axis = 4 - ms.size() + a;
    if (axis > 0 && ms[a] != Dim::fixed(1) && !known(ms[a], scores4[axis]))
      return false;
  }
  return true;
}

// Checks what a matcher found and replaces `old` (at or after f.ops[pos])
// by one Attention op placed at `pos`.
bool finish(Function &f, Matcher &mt, size_t pos, Value *old, Parts &pt) {
  Value *q = pt.q, *k = pt.k, *v = pt.v, *mask = pt.mask;
  const TensorType &qt = q->type, &kt = k->type, &vt = v->type;
  if (qt.rank() != 4 || kt.rank() != 4 || vt.rank() != 4 || kt.dtype != qt.dtype ||
      vt.dtype != qt.dtype || !std::isfinite(pt.scale))
    return false;
  // Heads: static, k's and v's equal and dividing q's (the MatMuls'
  // broadcast of one head is grouped attention with one kv head).
  int64_t repK = pt.repK;
  if (!qt.shape[1].isStatic() || !kt.shape[1].isStatic() || kt.shape[1] != vt.shape[1] ||
      repK != pt.repV || kt.shape[1].size == 0 || qt.shape[1].size % kt.shape[1].size ||
      (repK == 1 && kt.shape[1].size != 1 && kt.shape[1] != qt.shape[1]) ||
      (repK > 1 && kt.shape[1].size * repK != qt.shape[1].size))
    return false;
  if (!known(qt.shape[3], kt.shape[3]) || !known(kt.shape[2], vt.shape[2]))
    return false;
  if ((mask && !fitsScores(mask, qt, kt)) || (pt.bias && !fitsScores(pt.bias, qt, kt)))
    return false;
  const Dim &sq = qt.shape[2], &skv = kt.shape[2];
  if (pt.hide && !(sq.isStatic() && skv.isStatic() && sq.size <= skv.size &&
                   Matcher::causalCondition(pt.hide, sq.size, skv.size)))
    return false; // a Where that hides other scores than the causal ones
  bool causal = pt.hide || (mask && mt.causalMask(mask, sq, skv));
  if (causal && !pt.hide)
    mask = nullptr;
  if (pt.bias)
    mask = mask ? folded(f, pt,
                         freshOp(f, pt, OpKind::Add, {mask, pt.bias}, old->name + "_mask",
                                 old->def->loc))
                : pt.bias;
  if (!mask && pt.bias)
    return false;
  std::vector<Value *> operands{q, k, v};
  if (mask)
    operands.push_back(mask);
  Value *out = freshOp(f, pt, OpKind::Attention, operands, old->name + "_attention", old->def->loc);
  if (!out)
    return false;
  Op &op = *out->def;
  Value *result = out;
  if (pt.heads3) { // [B * H, 1, Sq, Dv] back to the chain's [B * H, Sq, Dv]
    result =
        freshOp(f, pt, OpKind::Squeeze, {out}, old->name + "_heads", old->def->loc, {"axes", {1}});
    if (!result || result->type != old->type)
      return false;
  }
  op.setAttr("causal", Attribute(int64_t(causal)));
  op.setAttr("scale", Attribute(pt.scale));
  if (kt.shape[1].size != qt.shape[1].size)
    op.setAttr("kv_heads", Attribute(kt.shape[1].size));
  std::vector<std::unique_ptr<Op>> ops;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    if (i == pos)
      for (auto &o : pt.fresh)
        ops.push_back(std::move(o));
    ops.push_back(std::move(f.ops[i]));
  }
  f.ops = std::move(ops);
  return replaceValue(f, old, result);
}

// Rewrites the attention ending in the 4-D MatMul `pv` (at position `pos` of f).
bool fuseAt(Function &f, size_t pos, UseCounts &uses) {
  Op &pv = *f.ops[pos];
  if (!isPlainMatMul(pv) || pv.result()->type.rank() != 4)
    return false;
  Matcher mt{f, uses};
  Parts pt;
  Op *sm = mt.single(untail(mt, pv.operand(0)), OpKind::Softmax);
  if (!sm || (sm->getInt("axis") != -1 && sm->getInt("axis") != 3))
    return false;
  Value *scores = unwindow(f, mt, pt, sm->operand(0));
  if (Op *add = mt.single(scores, OpKind::Add)) {
    size_t s = mt.scoresSide(*add).value_or(0);
    scores = add->operand(s);
    pt.mask = add->operand(1 - s);
    // MPNet's relative-position bias, then the padding mask: two terms,
    // summed into the op's mask (finish).
    Op *inner = pt.bias ? nullptr : mt.single(scores, OpKind::Add);
    if (std::optional<size_t> si = inner ? mt.scoresSide(*inner) : std::nullopt) {
      scores = inner->operand(*si);
      pt.bias = inner->operand(1 - *si);
    }
  }
  // TorchScript GPT-2: Where(causal, scores, finfo.min) replaces the hidden
  // scores (before the additive mask).
  if (Op *w = mt.single(scores, OpKind::Where)) {
    std::optional<double> fill = floatScalarConstant(w->operand(2));
    if (!fill || *fill > -1e30)
      return false;
    pt.hide = w->operand(0);
    scores = w->operand(1);
  }
  Op *qk = mt.single(mt.peelScale(scores, pt.scale), OpKind::MatMul);
  if (!qk)
    return false;
  pt.q = mt.peelScale(qk->operand(0), pt.scale);
  pt.k = mt.untranspose(mt.peelScale(qk->operand(1), pt.scale), pt.fresh, pt.repK);
  if (!pt.k)
    return false;
  pt.k = mt.peelScale(pt.k, pt.scale);
  if (pt.fresh.empty() && pt.repK == 1)
    pt.k = mt.ungroup(pt.k, pt.repK);
  pt.v = mt.ungroup(pv.operand(1), pt.repV);
  return finish(f, mt, pos, pv.result(), pt);
}

// Rewrites the 3-D form ending in the MatMul `pv` (f.ops[pos]): PyTorch's
// F.multi_head_attention_forward (WavLM, HuBERT-style encoders) keeps the
// heads merged into the batch throughout, no 4-D Softmax:
//
//   MatMul(Softmax(MatMul(q3', Transpose(x)) [* c | / c] [+ mask3], axis = -1), v3)
//
// q3, v3 [B * H, S, D]; Transpose(x) k^T [B * H, D, S] (x any permutation of
// k3's axes: WavLM's [S, B * H, D] with perm [1, 2, 0]); mask3 [B * H | 1,
// Sq | 1, Skv] or lower rank. The op runs them as [B * H, 1, S, D]
// (Unsqueeze: views) and its result is squeezed back.
bool fuse3dAt(Function &f, size_t pos, UseCounts &uses) {
  Op &pv = *f.ops[pos];
  if (!isPlainMatMul(pv) || pv.result()->type.rank() != 3)
    return false;
  Matcher mt{f, uses};
  Op *sm = mt.single(untail(mt, pv.operand(0)), OpKind::Softmax);
  if (!sm || (sm->getInt("axis") != -1 && sm->getInt("axis") != 2))
    return false;
  Parts pt;
  pt.heads3 = true;
  Value *scores = sm->operand(0), *mask3 = nullptr;
  if (Op *add = mt.single(scores, OpKind::Add)) {
    std::optional<size_t> s = mt.scoresSide(*add);
    if (!s)
      return false;
    scores = add->operand(*s);
    mask3 = add->operand(1 - *s);
  }
  Op *qk = mt.single(mt.peelScale(scores, pt.scale), OpKind::MatMul);
  Op *t = qk ? mt.single(mt.peelScale(qk->operand(1), pt.scale), OpKind::Transpose) : nullptr;
  if (!t || t->getInts("perm").size() != 3)
    return false;
  Value *q3 = mt.peelScale(qk->operand(0), pt.scale), *v3 = pv.operand(1);
  const Location &loc = pv.loc;
  const std::string name = pv.result()->name;
  // k3 = Transpose(x, perm p with its last two swapped), or x itself.
  const std::vector<int64_t> &p = t->getInts("perm");
  std::vector<int64_t> kp{p[0], p[2], p[1]};
  Value *k3 = t->operand(0);
  if (kp != std::vector<int64_t>{0, 1, 2} &&
      !(k3 = freshOp(f, pt, OpKind::Transpose, {k3}, name + "_k", loc, {"perm", kp})))
    return false;
  for (const Value *x : {q3, k3, v3})
    if (x->type.rank() != 3 || !known(x->type.shape[0], q3->type.shape[0]))
      return false;
  auto heads = [&](Value *x) {
    return freshOp(f, pt, OpKind::Unsqueeze, {x}, x->name + "_heads", loc, {"axes", {1}});
  };
  pt.q = heads(q3);
  pt.k = heads(k3);
  pt.v = heads(v3);
  if (mask3 && mask3->type.rank() == 3)
    pt.mask = heads(mask3);
  else
    pt.mask = mask3;
  if (!pt.q || !pt.k || !pt.v || (mask3 && !pt.mask))
    return false;
  return finish(f, mt, pos, pv.result(), pt);
}

// Rewrites BLOOM's batched form ending in the 3-D MatMul `pv` (f.ops[pos]):
// heads merged into the batch around a 4-D Softmax, an additive bias
// (ALiBi) on the merged scores:
//
//   Reshape(MatMul(Reshape(P, [-1, Sq, Skv]), Reshape(v, [-1, Skv, Dv])), [.., H, Sq, Dv])
//   P = Softmax(Reshape(s3 [+ bias], [.., H, Sq, Skv]) [+ mask])
//   s3 = MatMul(Reshape(q, [-1, Sq, D]), Transpose(Reshape(k, [-1, Skv, D]), [0, 2, 1])) [* c]
//
// q, k, v [B, H, S, D]; bias [B * H | 1, Sq | 1, Skv], static, becomes a 4-D
// mask (`split4`: one per bias value, shared by the layers); a run-time one
// (DeBERTa's relative-position terms) a Reshape of it to [B | 1, H | 1, Sq,
// Skv].
bool fuseBmmAt(Function &f, size_t pos, UseCounts &uses,
               std::unordered_map<const Value *, Value *> &split4) {
  Op &pv = *f.ops[pos];
  if (!isPlainMatMul(pv) || pv.result()->type.rank() != 3)
    return false;
  Matcher mt{f, uses};
  Op *out = nullptr;
  for (auto &o : f.ops)
    if (o->is(OpKind::Reshape) && o->operand(0) == pv.result())
      out = o.get();
  if (!out || mt.uses[pv.result()] != 1 || out->result()->type.rank() != 4)
    return false;
  // x [B, H, S, D] from Reshape(x) to [B * H, S, D] (the element count
  // makes dim 0 B * H). A view q or k may have other readers (DeBERTa's
  // relative-position terms read them too): the op reads x, they the view.
  auto merged = [&](Value *v3, bool shared = false) -> Value * {
    Op *r = shared && v3->def && v3->def->is(OpKind::Reshape) ? v3->def
                                                              : mt.single(v3, OpKind::Reshape);
    const Shape *xs = r ? &r->operand(0)->type.shape : nullptr;
    const Shape &rs = v3->type.shape;
    return xs && xs->size() == 4 && rs.size() == 3 && known(rs[1], (*xs)[2]) &&
                   known(rs[2], (*xs)[3])
               ? r->operand(0)
               : nullptr;
  };
  Parts pt;
  Value *p = merged(pv.operand(0));
  pt.v = merged(pv.operand(1));
  Op *sm = p ? mt.single(untail(mt, p), OpKind::Softmax) : nullptr;
  if (!sm || !pt.v || (sm->getInt("axis") != -1 && sm->getInt("axis") != 3))
    return false;
  Value *scores = sm->operand(0);
  if (Op *add = mt.single(scores, OpKind::Add)) {
    size_t s = add->operand(1)->def && add->operand(1)->def->is(OpKind::Reshape) ? 1 : 0;
    scores = add->operand(s);
    pt.mask = add->operand(1 - s);
  }
  Op *r4 = mt.single(scores, OpKind::Reshape);
  Value *s3 = r4 ? r4->operand(0) : nullptr;
  if (!s3 || s3->type.rank() != 3 || !known(scores->type.shape[2], s3->type.shape[1]) ||
      !known(scores->type.shape[3], s3->type.shape[2]))
    return false;
  Value *bias3 = nullptr;
  if (Op *add = mt.single(s3, OpKind::Add)) {
    double unused = 1;
    Value *x = mt.peelScale(add->operand(0), unused);
    size_t s = x->def && x->def->is(OpKind::MatMul) ? 0 : 1;
    s3 = add->operand(s);
    bias3 = add->operand(1 - s);
  }
  Op *qk = mt.single(mt.peelScale(s3, pt.scale), OpKind::MatMul);
  Op *t = qk ? mt.single(mt.peelScale(qk->operand(1), pt.scale), OpKind::Transpose) : nullptr;
  if (!t || t->getInts("perm") != std::vector<int64_t>{0, 2, 1})
    return false;
  pt.q = merged(mt.peelScale(qk->operand(0), pt.scale), true);
  pt.k = merged(t->operand(0), true);
  if (!pt.q || !pt.k)
    return false;
  // One head count throughout, and one batch: k and v merged as q is.
  const Shape &qs = pt.q->type.shape, &os = out->result()->type.shape;
  if (!known(pt.k->type.shape[0], qs[0]) || !known(pt.v->type.shape[0], qs[0]) ||
      !known(pt.k->type.shape[1], qs[1]) || !known(pt.v->type.shape[1], qs[1]) ||
      !known(scores->type.shape[1], qs[1]) || !known(os[1], qs[1]) || !known(os[2], qs[2]) ||
      !known(os[3], pt.v->type.shape[3]))
    return false;
  if (bias3 && !bias3->isConstant()) {
    // A run-time bias (DeBERTa's c2p + p2c terms) [B * H | 1, Sq, Skv]: its
    // [B | 1, H | 1, Sq, Skv] view is a mask term.
    const Shape &bs = bias3->type.shape;
    if (bias3->type.rank() != 3 || !bs[1].isStatic() || !bs[2].isStatic() || !qs[1].isStatic())
      return false;
    bool one = bs[0] == Dim::fixed(1);
    std::vector<int64_t> dims{one ? 1 : -1, one ? 1 : qs[1].size, bs[1].size, bs[2].size};
    Value *shape = addIntsConstant(f, bias3->name + "_heads_shape", dims, out->loc);
    pt.bias = freshOp(f, pt, OpKind::Reshape, {bias3, shape}, bias3->name + "_heads", out->loc);
    if (!pt.bias || (!one && !known(pt.bias->type.shape[0], qs[0])))
      return false;
  } else if (bias3) {
    const Shape &bs = bias3->type.shape;
    if (bias3->type.rank() != 3 || !bs[0].isStatic() || !bs[1].isStatic() || !bs[2].isStatic())
      return false;
    Shape b4;
    if (bs[0].size == 1)
      b4 = {Dim::fixed(1), Dim::fixed(1), bs[1], bs[2]};
    else if (qs[0].isStatic() && bs[0].size == qs[0].size * qs[1].size)
      b4 = {qs[0], qs[1], bs[1], bs[2]};
    else
      return false;
    Value *&b = split4[bias3];
    if (!b) // the same elements, as [B, H, Sq | 1, Skv]
      b = f.addConstant(f.uniqueName(bias3->name + "_heads"), {bias3->type.dtype, b4}, *bias3->data,
                        out->loc);
    pt.bias = b;
  }
  return finish(f, mt, pos, out->result(), pt);
}

// lse=1 (a train step's forward, before autodiff): each Attention op gets
// its second result, the rows' log-sum-exp, which its gradient rule hands
// AttentionGrad (no Sq x Skv probabilities kept for the backward).
bool addLseResults(Function &f) {
  bool changed = false;
  for (auto &op : f.ops) {
    if (!op->is(OpKind::Attention) || op->results.size() != 1)
      continue;
    Value *lse = f.newValue(f.uniqueName(op->result()->name + "_lse"), TensorType{});
    lse->def = op.get();
    op->results.push_back(lse);
    lse->type = op->info().infer(*op)[1];
    changed = true;
  }
  return changed;
}

} // namespace

bool runAttentionFusionPass(Module &m, const PassOptions &opts) {
  bool changed = false;
  for (auto &fn : m.functions) {
    Function &f = *fn;
    bool here = false;
    std::vector<const Op *> matmuls;
    for (const auto &op : f.ops)
      if (op->is(OpKind::MatMul))
        matmuls.push_back(op.get());
    std::unordered_map<const Value *, Value *> split4;
    // Use counts and MatMul positions once, again only after a fusion
    // changed the function (per MatMul they made the pass quadratic: 4.4 s
    // of bart_base's train-step compile).
    UseCounts uses = countUses(f);
    std::unordered_map<const Op *, size_t> position;
    auto positions = [&] {
      position.clear();
      for (size_t i = 0; i < f.ops.size(); ++i)
        position[f.ops[i].get()] = i;
    };
    positions();
    for (const Op *pv : matmuls) {
      auto at = position.find(pv);
      if (at == position.end()) // gone with an earlier fusion's chain
        continue;
      if (fuseAt(f, at->second, uses) || fuseBmmAt(f, at->second, uses, split4) ||
          fuse3dAt(f, at->second, uses)) {
        here = true;
        uses = countUses(f);
        positions();
      }
    }
    if (here || !split4.empty()) // (a bias made for a chain then left alone dies too)
      eraseDeadOps(f);
    changed |= here;
    if (opts.getBool("lse"))
      changed |= addLseResults(f);
  }
  return changed;
}

} // namespace tc
