// attention-layouts: the Attention op reads q, k, v and writes its result
// in the layout the projections use (its `layout` attribute,
// tc/IR/AttentionLayout.h), so the head split/merge copies go:
//
//   q = Transpose(x [B, S, H, D], perm [0, 2, 1, 3])      -> x, code 1
//   q = Squeeze(Slice(T, [p], [p + 1], axes [0]), [0])     -> P, code 2 + p
//     | Gather(T, p, axis 0)
//       T = Transpose(P [B, S, N, H, D], perm [2, 0, 3, 1, 4])   (ViT, Swin)
//   x = Reshape(Split(P3 [B, S, N * H * D], last axis)[p], [B, S, H, D])
//                                                          -> Reshape(P3, [0, 0, N, H, D]), 2 + p
//                                                             (GPT-2's c_attn)
//   Transpose(Reshape*(out) [same shape], perm [0, 2, 1, 3])  -> out, result code 1
//
// (the same for k and v). A shared producer (T, the Split) is absorbed only
// when every use of it is, so its copy disappears; a Transpose with another
// use stays as it is.
#include "StridedView.h"
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/ConstantInts.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <map>
#include <unordered_map>

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

struct Uses {
  std::unordered_map<const Value *, std::vector<Op *>> users;
  std::unordered_map<const Value *, int> count; // op operands + function results
  explicit Uses(Function &f) {
    for (auto &op : f.ops)
      for (Value *v : op->operands)
        if (v) {
          users[v].push_back(op.get());
          ++count[v];
        }
    for (const Value *v : f.results)
      count[v] += 2; // never absorbed
  }
  int operator[](const Value *v) const {
    auto it = count.find(v);
    return it == count.end() ? 0 : it->second;
  }
};

bool isOp(const Value *v, OpKind k) { return v && v->def && v->def->is(k); }

// A Reshape of `x` to `dims` (ONNX's: 0 keeps x's dim, -1 the one left) typed
// `shape`, its result named after `name`; not yet in f.ops (the caller places
// it). `out` is its result.
std::unique_ptr<Op> detachedReshape(Function &f, Value *x, const std::vector<int64_t> &dims,
                                    const Shape &shape, const std::string &name,
                                    const Location &loc, Value *&out) {
  Value *c = addIntsConstant(f, name + "_shape", dims, loc);
  auto op = std::make_unique<Op>(OpKind::Reshape);
  op->operands = {x, c};
  op->loc = loc;
  out = f.newValue(f.uniqueName(name), TensorType{x->type.dtype, shape});
  out->def = op.get();
  op->results.push_back(out);
  return op;
}

// The function's Attention ops, in order.
std::vector<Op *> attentionsOf(Function &f) {
  std::vector<Op *> attentions;
  for (auto &op : f.ops)
    if (op->is(OpKind::Attention))
      attentions.push_back(op.get());
  return attentions;
}

bool sameDim(const Dim &a, const Dim &b) { return a == b && !a.isUnknown(); }

// The scalar index `p` that Squeeze(Slice(T, [p], [p + 1], axes [0]), [0])
// or Gather(T, p, axis 0) takes of T (`x` the result); null when `x` is
// neither. `chain` gets the values that die with the rewrite.
Value *partOf(const Uses &u, Value *x, int64_t &p, std::vector<Value *> &chain) {
  if (isOp(x, OpKind::Gather) && x->def->getInt("axis") == 0) {
    std::optional<Ints> idx = infer::constantInts(x->def->operand(1));
    if (!idx || idx->size() != 1 || x->def->operand(1)->type.rank() != 0)
      return nullptr;
    p = (*idx)[0];
    chain.push_back(x);
    return x->def->operand(0);
  }
  if (!isOp(x, OpKind::Squeeze) || x->def->operands.size() > 1 ||
      x->def->getInts("axes") != Ints{0})
    return nullptr;
  Value *s = x->def->operand(0);
  if (!isOp(s, OpKind::Slice) || u[s] != 1 || s->def->operands.size() < 4 ||
      s->def->operands.size() > 5)
    return nullptr;
  const Op &sl = *s->def;
  auto starts = infer::constantInts(sl.operand(1)), ends = infer::constantInts(sl.operand(2)),
       axes = infer::constantInts(sl.operand(3));
  std::optional<Ints> steps = sl.operand(4) ? infer::constantInts(sl.operand(4)) : Ints{1};
  if (!starts || !ends || !axes || !steps || starts->size() != 1 || *axes != Ints{0} ||
      *steps != Ints{1} || (*starts)[0] < 0 || (*ends)[0] != (*starts)[0] + 1)
    return nullptr;
  p = (*starts)[0];
  chain.push_back(s);
  chain.push_back(x);
  return sl.operand(0);
}

// One operand rewrite: attention `op`'s operand `i` becomes `to` with code.
struct Absorb {
  Op *op;
  size_t i;
  Value *to;
  int64_t code;
};

struct Rewriter {
  Function &f;
  Uses u;
  explicit Rewriter(Function &fn) : f(fn), u(fn) {}
  std::vector<Absorb> todo;
  // Shared producers (the ViT Transpose, the GPT-2 Split) -> the rewrites
  // through them; applied only when they cover every use.
  std::map<Op *, std::vector<Absorb>> shared;
  std::map<Op *, int> sharedUses;                 // uses of the producer's results
  std::unordered_map<const Op *, Value *> packed; // Split -> its Reshape to [B, S, N, H, D]
  std::vector<std::unique_ptr<Op>> fresh;         // (placed after their Split)

  // Operand `i` of attention `a` in a packed or [B, S, H, D] form.
  void operand(Op &a, size_t i) {
    Value *x = a.operand(i);
    if (u[x] != 1 || x->type.rank() != 4)
      return;
    std::vector<Value *> chain;
    int64_t p = 0;
    if (isOp(x, OpKind::Transpose) && x->def->getInts("perm") == Ints{0, 2, 1, 3}) {
      Value *bshd = x->def->operand(0);
      if (Op *split = splitPart(bshd, p)) {
        shared[split].push_back({&a, i, nullptr, 2 + p});
        return;
      }
      todo.push_back({&a, i, bshd, 1});
      return;
    }
    Value *t = partOf(u, x, p, chain);
    if (!t || !isOp(t, OpKind::Transpose) || t->def->getInts("perm") != Ints{2, 0, 3, 1, 4})
      return;
    for (Value *c : chain)
      if (u[c] != 1)
        return;
    Value *p5 = t->def->operand(0);
    if (p5->type.shape[2].isStatic() && p >= p5->type.shape[2].size)
      return;
    shared[t->def].push_back({&a, i, p5, 2 + p});
    sharedUses[t->def] = u[t];
  }

  // The Split `bshd` = Reshape(Split(P3)[p], [B, S, H, D]) reads part p of,
  // when its parts are equal and each H * D wide; null otherwise.
  Op *splitPart(Value *bshd, int64_t &p) {
    if (!isOp(bshd, OpKind::Reshape) || u[bshd] != 1)
      return nullptr;
    Value *part = bshd->def->operand(0);
    Op *split = part->def && part->def->is(OpKind::Split) ? part->def : nullptr;
    if (!split || u[part] != 1 || split->operands.size() > 1)
      return nullptr;
    const Shape &ps = split->operand(0)->type.shape, &bs = bshd->type.shape;
    int64_t axis = split->getInt("axis");
    if (ps.size() != 3 || (axis != 2 && axis != -1) || !bs[2].isStatic() || !bs[3].isStatic() ||
        !sameDim(bs[0], ps[0]) || !sameDim(bs[1], ps[1]))
      return nullptr;
    for (size_t r = 0; r < split->results.size(); ++r) {
      const Dim &w = split->results[r]->type.shape[2];
      if (!w.isStatic() || w.size != bs[2].size * bs[3].size)
        return nullptr;
      if (split->results[r] == part)
        p = int64_t(r);
    }
    sharedUses[split] = int(split->results.size());
    return split;
  }

  // P3 [B, S, N * H * D] as [B, S, N, H, D] (a Reshape: a view).
  Value *packedOf(Op &split, const Shape &bshd) {
    Value *&r = packed[&split];
    if (r)
      return r;
    Value *p3 = split.operand(0);
    int64_t n = int64_t(split.results.size());
    Shape s{p3->type.shape[0], p3->type.shape[1], Dim::fixed(n), bshd[2], bshd[3]};
    fresh.push_back(detachedReshape(f, p3, {0, 0, n, bshd[2].size, bshd[3].size}, s,
                                    p3->name + "_heads", split.loc, r));
    return r;
  }

  // Sets code `code` of tensor `i` of `a` (q, k, v, result) and operand i to
  // `to`; false (and `a` unchanged) when its shape rule rejects them or
  // gives another result type.
  static bool relayout(Op &a, size_t i, Value *to, int64_t code) {
    Ints before = a.getInts("layout"), codes = before.empty() ? Ints(4, 0) : before;
    Value *old = i < 3 ? a.operand(i) : nullptr;
    codes[i] = code;
    if (i < 3)
      a.operands[i] = to;
    a.setAttr("layout", Attribute(codes));
    try {
      if (a.info().infer(a)[0] == a.result()->type)
        return true;
    } catch (const Error &) {
    }
    if (i < 3)
      a.operands[i] = old;
    a.setAttr("layout", Attribute(before));
    return false;
  }

  // The user of `y` when it is its only one, with one result.
  Op *soleUser(const Value *y) {
    auto it = u.users.find(y);
    return u[y] == 1 && it != u.users.end() && it->second[0]->results.size() == 1 ? it->second[0]
                                                                                  : nullptr;
  }

  // The result through identity Reshapes into Transpose [0, 2, 1, 3].
  bool result(Op &a) {
    Value *y = a.result();
    Op *t = soleUser(y);
    while (t && t->is(OpKind::Reshape) && t->operand(0) == y && t->result()->type == y->type) {
      y = t->result();
      t = soleUser(y);
    }
    if (!t || !t->is(OpKind::Transpose) || t->getInts("perm") != Ints{0, 2, 1, 3})
      return false;
    TensorType old = a.result()->type;
    a.result()->type = t->result()->type;
    if (!relayout(a, 3, nullptr, 1) || !replaceValue(f, t->result(), a.result())) {
      a.result()->type = old;
      return false;
    }
    return true;
  }

  bool run() {
    std::vector<Op *> attentions = attentionsOf(f);
    for (Op *a : attentions)
      for (size_t i = 0; i < 3; ++i)
        if (attentionLayoutCode(*a, i) == 0)
          operand(*a, i);
    bool changed = false;
    for (const Absorb &r : todo)
      changed |= relayout(*r.op, r.i, r.to, r.code);
    for (auto &[producer, rs] : shared) {
      if (int(rs.size()) != sharedUses[producer])
        continue; // the copy stays for another use
      for (const Absorb &r : rs) {
        Value *to = r.to;
        if (!to) // a Split part: the [B, S, H, D] Reshape of it has the dims
          to = packedOf(*producer, r.op->operand(r.i)->def->operand(0)->type.shape);
        changed |= relayout(*r.op, r.i, to, r.code);
      }
    }
    for (Op *a : attentions)
      changed |= result(*a);
    placeFresh();
    if (changed)
      eraseDeadOps(f);
    return changed;
  }

  // Each new Reshape right after the Split it replaces.
  void placeFresh() {
    if (fresh.empty())
      return;
    std::vector<std::unique_ptr<Op>> ops;
    for (auto &op : f.ops) {
      Op *at = op.get();
      ops.push_back(std::move(op));
      for (auto &n : fresh)
        if (n && n->operand(0) == at->operand(0) && at->is(OpKind::Split))
          ops.push_back(std::move(n));
    }
    f.ops = std::move(ops);
  }
};

// What the patterns above leave: any chain of view ops (StridedView.h)
// between a buffer and an Attention operand, or between its result and the
// next computing op, that one of the layout codes reads or writes in place.
// CoAtNet's attention over a channels-last 1x1 conv: Transpose to NCHW,
// Reshape to heads, Split into q, k, v, Transpose each to [B, H, S, D] is
// part p of the conv output as [B, S, H, 3, D] (kHeadsMajorPacked + p), and
// its result's way back to channels-last is the result in [B, S, H, D].
struct ViewRewriter {
  Function &f;
  Uses u;
  explicit ViewRewriter(Function &fn) : f(fn), u(fn) {}
  std::map<std::pair<Value *, Ints>, Value *> reshapes; // (base, dims) -> its Reshape
  std::map<Op *, std::vector<std::unique_ptr<Op>>> before, after;

  // The view chain ending in `x`: its base (no view op's result) and the
  // ops from the base on; nullopt without one, past a strided view, or where
  // a value of the chain has another reader (its copy would stay: nothing
  // gained).
  std::optional<StridedView> backTo(Value *x, Value *&base) {
    std::vector<Op *> chain;
    base = x;
    while (base->def && isStridedViewOp(*base->def) && chain.size() < 16) {
      if (u[base] != 1)
        return std::nullopt;
      chain.push_back(base->def);
      base = base->def->operand(0);
    }
    if (chain.empty())
      return std::nullopt;
    StridedView v = StridedView::rowMajor(base->type.shape);
    Value *at = base;
    for (size_t k = chain.size(); k-- > 0;) {
      Value *res = k ? chain[k - 1]->operand(0) : x;
      std::optional<StridedView> next = applyViewOp(v, *chain[k], res);
      if (!next || chain[k]->operand(0) != at)
        return std::nullopt;
      v = *next;
      at = res;
    }
    return v;
  }

  // A Reshape of `base` to `dims` (Shape `shape`), one per pair, placed
  // before attention `a`; null when base's elements are not dims' (-1 for
  // the one dim that is not static).
  Value *reshapeOf(Op &a, Value *base, const Shape &shape) {
    // The product of the static dims and the dims that are not (at most one,
    // a named one, the same on both sides).
    struct Count {
      int64_t known = 1;
      std::vector<Dim> open;
      explicit Count(const Shape &s) {
        for (const Dim &d : s)
          d.isStatic() ? void(known *= d.size) : open.push_back(d);
      }
    } want(shape), have(base->type.shape);
    if (want.known != have.known || want.open != have.open || want.open.size() > 1 ||
        (!want.open.empty() && want.open[0].isUnknown()))
      return nullptr;
    Ints dims;
    for (const Dim &d : shape)
      dims.push_back(d.isStatic() ? d.size : -1);
    if (base->type.shape == shape)
      return base;
    Value *&r = reshapes[{base, dims}];
    if (!r)
      before[&a].push_back(
          detachedReshape(f, base, dims, shape, base->name + "_attention_view", a.loc, r));
    return r;
  }

  // Operand i of `a` ([B, H, S, D], code 0) read in place where its chain's
  // strides are those of a code.
  bool operand(Op &a, size_t i) {
    Value *x = a.operand(i), *base = nullptr;
    const Shape &xs = x->type.shape;
    std::optional<StridedView> v = backTo(x, base);
    if (!v || xs.size() != 4 || !xs[1].isStatic() || !xs[2].isStatic() || !xs[3].isStatic())
      return false;
    const Dim &B = xs[0];
    int64_t H = xs[1].size, S = xs[2].size, D = xs[3].size;
    int64_t sb = v->strides[0], sh = v->strides[1], ss = v->strides[2], off = v->offset;
    if (v->strides[3] != 1 || sh <= 0 || ss <= 0 || (!(B.isStatic() && B.size == 1) && sb < 0))
      return false;
    auto batchFits = [&](int64_t inner) { return (B.isStatic() && B.size == 1) || sb == inner; };
    Shape shape;
    int64_t code = -1;
    if (sh == D && ss == H * D && off == 0 && batchFits(S * H * D)) {
      shape = {B, Dim::fixed(S), Dim::fixed(H), Dim::fixed(D)};
      code = 1;
    } else if (sh == D && ss % (H * D) == 0 && off % (H * D) == 0 && ss / (H * D) > off / (H * D) &&
               batchFits(S * ss)) {
      shape = {B, Dim::fixed(S), Dim::fixed(ss / (H * D)), Dim::fixed(H), Dim::fixed(D)};
      code = 2 + off / (H * D);
    } else if (sh % D == 0 && ss == H * sh && off % D == 0 && off / D < sh / D &&
               batchFits(S * ss)) {
      shape = {B, Dim::fixed(S), Dim::fixed(H), Dim::fixed(sh / D), Dim::fixed(D)};
      code = kHeadsMajorPacked + off / D;
    }
    if (code < 0)
      return false;
    Value *to = reshapeOf(a, base, shape);
    return to && Rewriter::relayout(a, i, to, code);
  }

  // The result written as [B, S, H, D] where the views after it (each the
  // sole reader of the last) then leave that buffer as it is.
  bool result(Op &a) {
    Value *y = a.result();
    const Shape &ys = y->type.shape;
    if (ys.size() != 4 || !ys[1].isStatic() || !ys[2].isStatic() || !ys[3].isStatic())
      return false;
    int64_t H = ys[1].size, S = ys[2].size, D = ys[3].size;
    StridedView v{ys, {S * H * D, D, H * D, 1}, 0};
    Value *end = y;
    size_t steps = 0;
    for (Op *t = nullptr; u[end] == 1 && (t = u.users[end][0]) && isStridedViewOp(*t) &&
                          t->operand(0) == end && t->results.size() == 1 && steps < 16;
         ++steps) {
      std::optional<StridedView> next = applyViewOp(v, *t, t->result());
      if (!next)
        return false;
      v = *next;
      end = t->result();
    }
    if (!steps || !v.isRowMajor())
      return false;
    // The Reshape back to the last view's shape, when it is another: its dims
    // static but the batch's (0: the result's own).
    const Shape &want = end->type.shape;
    Shape bshd{ys[0], ys[2], ys[1], ys[3]};
    Ints dims;
    if (want != bshd)
      for (size_t k = 0; k < want.size(); ++k) {
        if (!want[k].isStatic() && (k != 0 || want[0] != ys[0]))
          return false;
        dims.push_back(want[k].isStatic() ? want[k].size : 0);
      }
    TensorType old = y->type;
    y->type = TensorType{old.dtype, bshd};
    if (!Rewriter::relayout(a, 3, nullptr, 1)) {
      y->type = old;
      return false;
    }
    Value *to = y;
    if (want != bshd)
      after[&a].push_back(detachedReshape(f, y, dims, want, y->name + "_view", a.loc, to));
    if (replaceValue(f, end, to))
      return true;
    // Undone: the result keeps [B, H, S, D].
    after[&a].clear();
    y->type = old;
    Ints codes = a.getInts("layout");
    codes[3] = 0;
    a.setAttr("layout", Attribute(codes));
    return false;
  }

  bool run() {
    bool changed = false;
    for (Op *a : attentionsOf(f)) {
      for (size_t i = 0; i < 3; ++i)
        if (attentionLayoutCode(*a, i) == 0)
          changed |= operand(*a, i);
      if (attentionLayoutCode(*a, 3) == 0)
        changed |= result(*a);
    }
    if (!changed)
      return false;
    std::vector<std::unique_ptr<Op>> ops;
    for (auto &op : f.ops) {
      Op *at = op.get();
      for (auto &n : before[at])
        ops.push_back(std::move(n));
      ops.push_back(std::move(op));
      for (auto &n : after[at])
        ops.push_back(std::move(n));
    }
    f.ops = std::move(ops);
    eraseDeadOps(f);
    return true;
  }
};

} // namespace

bool runAttentionLayoutsPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fn : m.functions) {
    changed |= Rewriter(*fn).run();
    changed |= ViewRewriter(*fn).run();
  }
  return changed;
}

} // namespace tc
