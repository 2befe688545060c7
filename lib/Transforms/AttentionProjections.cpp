// attention-projections: a Transpose that turns the tokens sequence-first
// around an attention's projections moves to the attention side of them,
// where attention-layouts reads it in place. torchvision's
// MultiheadAttention (batch_first, as ViT calls it) transposes its input
// [B, S, E] to [S, B, E] before the packed in_proj and its output back
// after out_proj; both projections are row-wise (each token's row by the
// weight), so
//
//   Add(b, MatMul(Transpose(x, p), W))  ->  Transpose(Add(b, MatMul(x, W)), p)
//       (every reader of the sum a view chain into q, k or v)
//   Transpose(Reshape(Gemm(X, W, b), [.., N]), p)
//                                       ->  Reshape(Gemm(Reshape(Transpose(
//                                             Reshape(X, [.., K]), p), [M, K]), W, b), ..)
//       (X a view chain from the attention's result; the same for a MatMul
//        of a 3-D X)
//
// for perms p that keep the last axis; and Llama's rotary embeddings,
// x cos + rotate_half(x) sin on the head split Transpose(x, [0, 2, 1, 3])
// of q and k (ops on the last axis only), run on x itself with the
// Transpose after them (cos and sin, [.., 1, S, D], transposed instead:
// small). The projections then run
// batch-first, q, k, v and the result are batch-first views of them, and a
// train step's backward (autodiff runs after this) has no Transposes
// around the projections' gradients either. The output side is taken only
// where K <= N (never more bytes moved should the Transpose stay).
#include "StridedView.h"
#include "tc/IR/ConstantInts.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

bool isAttention(const Op &op) { return op.is(OpKind::Attention); }

// A perm of rank r that keeps the last axis where it is.
bool keepsLast(const Ints &perm, size_t r) {
  return perm.size() == r && perm.back() == int64_t(r) - 1;
}

// Whether every reader of `v`, through view ops, is an Attention's q, k or
// v (and there is one).
bool feedsAttentionOnly(const ValueUses &rd, const Value *v, int depth = 0) {
  if (rd.returned(v) || rd.readers(v).empty() || depth > 16)
    return false;
  for (Op *op : rd.readers(v)) {
    if (isAttention(*op)) {
      for (size_t k = 0; k < op->operands.size(); ++k)
        if (op->operands[k] == v && k > 2)
          return false;
      continue;
    }
    if (!isStridedViewOp(*op) || op->operand(0) != v)
      return false;
    for (const Value *r : op->results)
      if (!feedsAttentionOnly(rd, r, depth + 1))
        return false;
  }
  return true;
}

// A 2-D weight (a MatMul's or Gemm's B): the projection is row-wise.
bool isWeight(const Value *w) { return w && w->type.rank() == 2; }

struct Builder : AtOpBuilder {
  Value *transpose(Value *x, const Ints &perm) {
    return op(OpKind::Transpose, {x}, {{"perm", Attribute(perm)}});
  }
};

// One rewrite: right before op `anchor` the new ops are made (`make`; its
// operands are all defined by then), then `from` is replaced by what it
// returned.
struct Rewrite {
  Op *anchor;
  Value *from;
  std::function<Value *(Builder &)> make;
};

// The input side: `p` = [Add(b, )] MatMul(Transpose(x, perm), W).
std::optional<Rewrite> inputSide(const ValueUses &rd, Value *p) {
  Op *add = p->def && p->def->is(OpKind::Add) ? p->def : nullptr;
  Value *m = p;
  Value *bias = nullptr;
  if (add) {
    for (size_t i = 0; i < 2; ++i) {
      Value *o = add->operand(i);
      if (o->def && o->def->is(OpKind::MatMul) && rd.sole(o) == add) {
        m = o;
        bias = add->operand(1 - i);
      }
    }
    if (m == p || !bias || bias->type.rank() > 1)
      return std::nullopt;
  }
  Op *mm = m->def;
  if (!mm || !mm->is(OpKind::MatMul) || !isWeight(mm->operand(1)))
    return std::nullopt;
  Value *t = mm->operand(0);
  if (!t->def || !t->def->is(OpKind::Transpose) || rd.sole(t) != mm)
    return std::nullopt;
  Ints perm = t->def->getInts("perm");
  Value *x = t->def->operand(0);
  if (!keepsLast(perm, x->type.rank()) || x->type.rank() < 3)
    return std::nullopt;
  bool addFirst = add && add->operand(0) == bias;
  Value *w = mm->operand(1);
  return Rewrite{add ? add : mm, p, [=](Builder &b) {
                   Value *y = b.op(OpKind::MatMul, {x, w});
                   if (bias)
                     y = b.op(OpKind::Add, addFirst ? std::vector<Value *>{bias, y}
                                                    : std::vector<Value *>{y, bias});
                   return b.transpose(y, perm);
                 }};
}

// The output side from attention result `y`: the view chain y -> .. -> X
// (each value read once) into G = Gemm(X, W, b) | MatMul(X, W), then
// [Reshape] and a Transpose keeping the last axis.
std::optional<Rewrite> outputSide(const ValueUses &rd, Value *y) {
  Value *x = y;
  Op *g = rd.sole(x);
  for (int steps = 0; g && isStridedViewOp(*g) && g->results.size() == 1 && steps < 16; ++steps) {
    x = g->result();
    g = rd.sole(x);
  }
  if (!g || x == y || g->operand(0) != x || !isWeight(g->operand(1)))
    return std::nullopt;
  bool gemm = g->is(OpKind::Gemm);
  if (gemm ? g->getInt("transA") != 0 : !g->is(OpKind::MatMul))
    return std::nullopt;
  // A Gemm's C must be the same for every row (a bias), or the rows'
  // order would matter.
  if (const Value *c = gemm ? g->operand(2) : nullptr) {
    const Shape &cs = c->type.shape;
    if (cs.size() > 2 || (cs.size() == 2 && !(cs[0].isStatic() && cs[0].size == 1)))
      return std::nullopt;
  }
  Value *gy = g->result();
  Op *r = rd.sole(gy);
  Value *rows = gy; // G's result as [.., N] (G's own or a Reshape of it)
  if (r && r->is(OpKind::Reshape)) {
    rows = r->result();
    r = rd.sole(rows);
  }
  if (!r || !r->is(OpKind::Transpose) || !isStaticShape(rows->type.shape) ||
      !isStaticShape(x->type.shape))
    return std::nullopt;
  Ints perm = r->getInts("perm");
  std::vector<int64_t> rd4 = staticDims(rows->type.shape), xd = staticDims(x->type.shape);
  size_t rank = rd4.size();
  if (!keepsLast(perm, rank) || rank < 3 || xd.empty())
    return std::nullopt;
  int64_t k = xd.back(), n = rd4.back();
  if (k > n)
    return std::nullopt;
  // G's rows before the Transpose: M = product of rows' leading dims.
  int64_t m = 1;
  for (size_t a = 0; a + 1 < rank; ++a)
    m *= rd4[a];
  int64_t xm = 1;
  for (size_t a = 0; a + 1 < xd.size(); ++a)
    xm *= xd[a];
  if (xm != m)
    return std::nullopt;
  Value *z = r->result();
  std::vector<int64_t> zd = staticDims(z->type.shape);
  Ints lead(rd4.begin(), rd4.end() - 1);
  const Op *gop = g;
  (void)gemm;
  return Rewrite{r, z, [=](Builder &b) {
                   Ints split = lead;
                   split.push_back(k);
                   Value *xs = b.op(OpKind::Reshape, {x, b.ints(split)});
                   Value *xt = b.transpose(xs, perm);
                   // G's operand as it was: the rows' rank, or [M, K].
                   Value *x2 = xd.size() == rank ? xt : b.op(OpKind::Reshape, {xt, b.ints({m, k})});
                   std::vector<Value *> ins(gop->operands.begin(), gop->operands.end());
                   ins[0] = x2;
                   Value *out = b.op(gop->kind, ins,
                                     std::vector<std::pair<std::string, Attribute>>(
                                         gop->attrs.begin(), gop->attrs.end()));
                   return b.op(OpKind::Reshape, {out, b.ints(zd)});
                 }};
}

// Whether op `op` of a region acts on the last axis only (or on none):
// Mul, Add, Sub, Neg elementwise, a Slice or Concat along the last axis.
bool lastAxisOnly(const Op &op) {
  size_t r = op.result()->type.rank();
  switch (op.kind) {
  case OpKind::Mul:
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Neg: return true;
  case OpKind::Concat: {
    int64_t a = op.getInt("axis");
    return a == -1 || a == int64_t(r) - 1;
  }
  case OpKind::Slice: {
    if (op.operands.size() < 4 || !op.operand(3))
      return false;
    std::optional<Ints> axes = infer::constantInts(op.operand(3));
    return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == int64_t(r) - 1);
  }
  default: return false;
  }
}

// Rotary embeddings (Llama's q and k): the head split's Transpose [0, 2,
// 1, 3] read by a region of last-axis-only ops (x cos + rotate_half(x) sin)
// whose result is the attention operand `x`. The region runs on the
// projection's [B, S, H, D] instead (its other operands, [.., 1, S, D] or
// [D], transposed the same way: small) and the Transpose moves to its end,
// where attention-layouts reads it in place.
std::optional<Rewrite> rotarySide(const ValueUses &rd, const Function &f, Value *x) {
  const Ints perm{0, 2, 1, 3};
  std::vector<Op *> region;
  std::set<const Value *> inside;
  Value *source = nullptr; // the Transpose's result
  std::vector<Value *> work{x};
  while (!work.empty()) {
    Value *v = work.back();
    work.pop_back();
    if (inside.count(v))
      continue;
    Op *d = v->def;
    if (!d)
      return std::nullopt;
    if (d->is(OpKind::Transpose) && d->getInts("perm") == perm && v->type.rank() == 4) {
      if (source && source != v)
        return std::nullopt; // one head split only
      source = v;
      inside.insert(v);
      continue;
    }
    if (d->results.size() != 1 || !lastAxisOnly(*d) || v->type.rank() != 4)
      return std::nullopt;
    inside.insert(v);
    region.push_back(d);
    for (size_t k = 0; k < d->operands.size(); ++k) {
      Value *o = d->operands[k];
      if (!o || (d->is(OpKind::Slice) && k > 0))
        continue;
      // An operand with v's batch, heads and tokens is in the region; any
      // other (cos, sin) broadcasts over the heads.
      const Shape &os = o->type.shape, &vs = v->type.shape;
      if (os.size() == 4 && os[0] == vs[0] && os[1] == vs[1] && os[2] == vs[2])
        work.push_back(o);
    }
  }
  if (!source || region.empty())
    return std::nullopt;
  // Every value of the region is read inside it only (x: by attention).
  for (const Value *v : inside) {
    if (v == x)
      continue;
    for (Op *r : rd.readers(v))
      if (std::find(region.begin(), region.end(), r) == region.end())
        return std::nullopt;
    if (rd.returned(v))
      return std::nullopt;
  }
  // The others: rank 4 with 1 head (transposed), or rank <= 1.
  for (Op *op : region)
    for (size_t k = 0; k < op->operands.size(); ++k) {
      const Value *o = op->operands[k];
      if (!o || inside.count(o) || (op->is(OpKind::Slice) && k > 0))
        continue;
      const Shape &os = o->type.shape;
      if (!(os.size() <= 1 || (os.size() == 4 && os[1] == Dim::fixed(1))))
        return std::nullopt;
    }
  Value *bshd = source->def->operand(0);
  Op *last = x->def;
  // The region in op order: each op is made again on primed operands.
  std::vector<Op *> sorted;
  for (const auto &op : f.ops)
    if (std::find(region.begin(), region.end(), op.get()) != region.end())
      sorted.push_back(op.get());
  return Rewrite{last, x, [=](Builder &b) {
                   std::map<const Value *, Value *> primed{{source, bshd}};
                   std::map<const Value *, Value *> sides;
                   Value *out = nullptr;
                   for (Op *op : sorted) {
                     std::vector<Value *> ins;
                     for (size_t k = 0; k < op->operands.size(); ++k) {
                       Value *o = op->operands[k];
                       if (!o || (op->is(OpKind::Slice) && k > 0) || o->type.rank() <= 1) {
                         ins.push_back(o);
                       } else if (auto it = primed.find(o); it != primed.end()) {
                         ins.push_back(it->second);
                       } else {
                         Value *&t = sides[o];
                         if (!t)
                           t = b.transpose(o, perm);
                         ins.push_back(t);
                       }
                     }
                     out = b.op(op->kind, ins,
                                std::vector<std::pair<std::string, Attribute>>(op->attrs.begin(),
                                                                               op->attrs.end()));
                     primed[op->result()] = out;
                   }
                   return b.transpose(out, perm);
                 }};
}

} // namespace

bool runAttentionProjectionsPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fn : m.functions) {
    Function &f = *fn;
    ValueUses rd(f);
    std::vector<Rewrite> todo;
    std::set<const Value *> planned;
    for (auto &op : f.ops) {
      if (!isAttention(*op))
        continue;
      // The projections whose view chains end in q, k, v.
      for (size_t i = 0; i < 3; ++i) {
        Value *v = op->operand(i);
        for (int steps = 0; v->def && isStridedViewOp(*v->def) && steps < 16; ++steps)
          v = v->def->operand(0);
        if (planned.count(v) || !feedsAttentionOnly(rd, v))
          continue;
        if (std::optional<Rewrite> w = inputSide(rd, v)) {
          planned.insert(v);
          todo.push_back(std::move(*w));
        }
      }
      for (size_t i = 0; i < 2; ++i) // q and k through rotary embeddings
        if (std::optional<Rewrite> w = rotarySide(rd, f, op->operand(i));
            w && !planned.count(w->from)) {
          planned.insert(w->from);
          todo.push_back(std::move(*w));
        }
      if (std::optional<Rewrite> w = outputSide(rd, op->result()))
        todo.push_back(std::move(*w));
    }
    if (todo.empty())
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    std::vector<std::pair<Value *, Value *>> replace;
    for (auto &o : old) {
      for (Rewrite &w : todo)
        if (w.anchor == o.get()) {
          Builder b{{f, *o}};
          replace.push_back({w.from, w.make(b)});
        }
      f.ops.push_back(std::move(o));
    }
    for (auto &[from, to] : replace)
      if (to && from->type == to->type)
        changed |= replaceValue(f, from, to);
    eraseDeadOps(f);
  }
  return changed;
}

} // namespace tc
