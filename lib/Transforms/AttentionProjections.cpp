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
// for perms p that keep the last axis. The projections then run
// batch-first, q, k, v and the result are batch-first views of them, and a
// train step's backward (autodiff runs after this) has no Transposes
// around the projections' gradients either. The output side is taken only
// where K <= N (never more bytes moved should the Transpose stay).
#include "StridedView.h"
#include "tc/IR/ConstantInts.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <functional>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

struct Readers {
  std::unordered_map<const Value *, std::vector<Op *>> of;
  std::set<const Value *> returned;
  explicit Readers(Function &f) {
    for (auto &op : f.ops)
      for (Value *v : op->operands)
        if (v)
          of[v].push_back(op.get());
    for (const Value *v : f.results)
      returned.insert(v);
  }
  const std::vector<Op *> &operator[](const Value *v) {
    static const std::vector<Op *> none;
    auto it = of.find(v);
    return it == of.end() ? none : it->second;
  }
  // The one reader of `v` (read once, not returned), or null.
  Op *sole(const Value *v) {
    const std::vector<Op *> &r = (*this)[v];
    return r.size() == 1 && !returned.count(v) ? r[0] : nullptr;
  }
};

bool isAttention(const Op &op) { return op.is(OpKind::Attention); }

// A perm of rank r that keeps the last axis where it is.
bool keepsLast(const Ints &perm, size_t r) {
  return perm.size() == r && perm.back() == int64_t(r) - 1;
}

// Whether every reader of `v`, through view ops, is an Attention's q, k or
// v (and there is one).
bool feedsAttentionOnly(Readers &rd, const Value *v, int depth = 0) {
  if (rd.returned.count(v) || rd[v].empty() || depth > 16)
    return false;
  for (Op *op : rd[v]) {
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
std::optional<Rewrite> inputSide(Readers &rd, Value *p) {
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
std::optional<Rewrite> outputSide(Readers &rd, Value *y) {
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

} // namespace

bool runAttentionProjectionsPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fn : m.functions) {
    Function &f = *fn;
    Readers rd(f);
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
