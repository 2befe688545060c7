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
//
// A train step's AttentionGrad (tensors q, k, v, out, dout, dq, dk, dv)
// takes the same codes: a q, k or v that the forward Attention and its
// AttentionGrad both read is absorbed for both (all of its reads are
// attention operands), the forward's result in [B, S, H, D] is the `out`
// its AttentionGrad reads in that layout, dout = Transpose(x [B, S, H, D])
// is x (code 1), and dq, dk, dv are written as [B, S, H, D] where a
// Transpose [0, 2, 1, 3] (the gradient of the forward's head split) reads
// them.
#include "StridedView.h"
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/ConstantInts.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

// The sole reader of `y`, when it has one result; else null.
Op *soleUser(const ValueUses &u, const Value *y) {
  Op *op = u.sole(y);
  return op && op->results.size() == 1 ? op : nullptr;
}

bool isOp(const Value *v, OpKind k) { return v && v->def && v->def->is(k); }

// `v`, the strided view of `y`, through the chain of views from `first`
// (a reader of y) on, each the sole reader of the value before it, up to
// the op `stop` (not taken) or 16 views. `end` gets the last value reached,
// `steps` the views taken; nullopt where a view does not apply to v.
std::optional<StridedView> followViews(const ValueUses &u, StridedView v, Value *y, Op *first,
                                       const Op *stop, Value *&end, size_t &steps) {
  end = y;
  steps = 0;
  for (Op *t = first; t && t != stop && isStridedViewOp(*t) && t->operand(0) == end &&
                      t->results.size() == 1 && steps < 16;
       ++steps, t = soleUser(u, end)) {
    std::optional<StridedView> next = applyViewOp(v, *t, t->result());
    if (!next)
      return std::nullopt;
    v = *next;
    end = t->result();
  }
  return v;
}

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

// The function's Attention and AttentionGrad ops, in order.
std::vector<Op *> attentionsOf(Function &f) {
  std::vector<Op *> attentions;
  for (auto &op : f.ops)
    if (op->is(OpKind::Attention) || op->is(OpKind::AttentionGrad))
      attentions.push_back(op.get());
  return attentions;
}

// The tensor (AttentionTensor) that operand `k` of attention op `op` is;
// -1 for the mask and the log-sum-exp.
int tensorOfOperand(const Op &op, size_t k) {
  if (k < 3)
    return int(k);
  return op.is(OpKind::AttentionGrad) && (k == 4 || k == 5) ? int(k) - 1 : -1;
}

// New ops into f.ops: those of `before[op]` right before op, of
// `after[op]` right after it.
using PlacedOps = std::map<Op *, std::vector<std::unique_ptr<Op>>>;
void placeAround(Function &f, PlacedOps &before, PlacedOps &after) {
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
}

// One read of a value by an attention op: its tensor `t`.
struct Slot {
  Op *op;
  size_t t;
};

// Every read of `x` when each is an attention op's q, k or v (`only` -1)
// or its tensor `only`, in code 0 (the first reader in op order first);
// empty when another op or a function result reads it.
std::vector<Slot> slotsOf(const ValueUses &u, Value *x, int only) {
  std::vector<Slot> slots;
  auto it = u.users.find(x);
  if (it == u.users.end())
    return slots;
  std::vector<Op *> ops;
  for (Op *op : it->second)
    if (std::find(ops.begin(), ops.end(), op) == ops.end())
      ops.push_back(op);
  for (Op *op : ops)
    for (size_t k = 0; k < op->operands.size(); ++k) {
      if (op->operands[k] != x)
        continue;
      int t =
          op->is(OpKind::Attention) || op->is(OpKind::AttentionGrad) ? tensorOfOperand(*op, k) : -1;
      if (t < 0 || (only < 0 ? t > int(kAttnV) : t != only) ||
          attentionLayoutCode(*op, size_t(t)) != 0)
        return {};
      slots.push_back({op, size_t(t)});
    }
  if (int(slots.size()) != u[x])
    return {};
  return slots;
}

// Whether `a`'s shape rule takes its operands and attributes and gives its
// results' types.
bool resultsFit(const Op &a) {
  try {
    std::vector<TensorType> types = a.info().infer(a);
    if (types.size() < a.results.size())
      return false;
    for (size_t r = 0; r < a.results.size(); ++r)
      if (types[r] != a.results[r]->type)
        return false;
    return true;
  } catch (const Error &) {
    return false;
  }
}

// Sets code `code` of tensor `t` of attention op `a` and, where `to` is
// given, the operand that tensor is to `to`; false (and `a` unchanged)
// when its shape rule rejects them or gives other result types.
bool relayout(Op &a, size_t t, Value *to, int64_t code) {
  Ints before = a.getInts("layout"),
       codes = before.empty() ? Ints(attentionTensorCount(a), 0) : before;
  bool grad = a.is(OpKind::AttentionGrad);
  size_t k = grad && t < kAttnDq ? attentionGradOperand(t) : t;
  bool operand = to && t < (grad ? size_t(kAttnDq) : size_t(kAttnOut));
  Value *old = operand ? a.operands[k] : nullptr;
  codes[t] = code;
  if (operand)
    a.operands[k] = to;
  a.setAttr("layout", Attribute(codes));
  if (resultsFit(a))
    return true;
  if (operand)
    a.operands[k] = old;
  a.setAttr("layout", Attribute(before));
  return false;
}

// The AttentionGrads that read `y` as their `out` (in code 0), when one
// other op reads it once (`other`); `other` null where that is not so.
std::vector<Slot> outReaders(const ValueUses &u, Value *y, Op *&other) {
  std::vector<Slot> readers;
  other = nullptr;
  auto it = u.users.find(y);
  if (it == u.users.end())
    return readers;
  for (Op *op : it->second) {
    if (!op->is(OpKind::AttentionGrad)) {
      if (other) { // read twice, or by two ops
        other = nullptr;
        return {};
      }
      other = op;
      continue;
    }
    for (size_t k = 0; k < op->operands.size(); ++k)
      if (op->operands[k] == y && (k != 4 || attentionLayoutCode(*op, kAttnOut) != 0)) {
        other = nullptr;
        return {};
      }
    if (std::none_of(readers.begin(), readers.end(), [&](const Slot &s) { return s.op == op; }))
      readers.push_back({op, kAttnOut});
  }
  if (u[y] != int(readers.size()) + 1)
    other = nullptr;
  return readers;
}

// Result `r` of attention op `a` (its output; AttentionGrad's dq, dk, dv)
// written in unpacked code `code` (1: [B, S, H, D]; kSeqFirst) instead of
// [B, H, S, D], and each AttentionGrad in `readers` (of it as `out`)
// reading it so: all of them or, returning nullopt, none. `undo` puts them
// back.
struct ResultRelayout {
  Value *y = nullptr;
  TensorType old;
  std::vector<std::pair<Op *, Ints>> codes;
  void undo() {
    for (auto &[op, c] : codes)
      op->setAttr("layout", Attribute(c));
    y->type = old;
  }
};
std::optional<ResultRelayout> writeCode(Op &a, size_t r, const std::vector<Slot> &readers,
                                        int64_t code) {
  ResultRelayout done;
  done.y = a.results[r];
  done.old = done.y->type;
  if (done.old.shape.size() != 4)
    return std::nullopt;
  done.y->type = TensorType{done.old.dtype, attentionPhysicalShape(done.old.shape, code)};
  std::vector<Slot> all{{&a, a.is(OpKind::AttentionGrad) ? kAttnDq + r : size_t(kAttnOut)}};
  all.insert(all.end(), readers.begin(), readers.end());
  for (const Slot &x : all) {
    done.codes.push_back({x.op, x.op->getInts("layout")});
    if (!relayout(*x.op, x.t, nullptr, code)) {
      done.undo();
      return std::nullopt;
    }
  }
  return done;
}

bool sameDim(const Dim &a, const Dim &b) { return a == b && !a.isUnknown(); }

// The scalar index `p` that Squeeze(Slice(T, [p], [p + 1], axes [0]), [0])
// or Gather(T, p, axis 0) takes of T (`x` the result); null when `x` is
// neither. `chain` gets the values that die with the rewrite.
Value *partOf(const ValueUses &u, Value *x, int64_t &p, std::vector<Value *> &chain) {
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

// One operand rewrite: attention `op`'s tensor `i` (q, k, v or dout)
// becomes `to` with code.
struct Absorb {
  Op *op;
  size_t i;
  Value *to;
  int64_t code;
};

struct Rewriter {
  Function &f;
  ValueUses u;
  explicit Rewriter(Function &fn) : f(fn), u(fn) {}
  std::vector<Absorb> todo;
  // Shared producers (the ViT Transpose, the GPT-2 Split) -> the rewrites
  // through them; applied only when they cover every use, in the order the
  // producers were first met (not by address: the constants the rewrites
  // make would be listed in a different order from run to run).
  std::map<Op *, std::vector<Absorb>> shared;
  std::vector<Op *> sharedOrder;
  std::vector<Absorb> &sharedOf(Op *producer) {
    auto [it, fresh] = shared.try_emplace(producer);
    if (fresh)
      sharedOrder.push_back(producer);
    return it->second;
  }
  std::map<Op *, int> sharedUses;                 // uses of the producer's results
  std::map<Op *, int> covered;                    // of them, those the rewrites replace
  std::unordered_map<const Op *, Value *> packed; // Split -> its Reshape to [B, S, N, H, D]
  std::vector<std::unique_ptr<Op>> fresh;         // (placed after their Split)

  // q, k or v `x` read in a packed or [B, S, H, D] form by every
  // attention op that reads it (a forward and its AttentionGrad).
  void operand(Value *x) {
    std::vector<Slot> slots = slotsOf(u, x, -1);
    if (slots.empty() || x->type.rank() != 4)
      return;
    auto absorb = [&](std::vector<Absorb> &into, Value *to, int64_t code) {
      for (const Slot &s : slots)
        into.push_back({s.op, s.t, to, code});
    };
    std::vector<Value *> chain;
    int64_t p = 0;
    if (isOp(x, OpKind::Transpose) && x->def->getInts("perm") == Ints{0, 2, 1, 3}) {
      Value *bshd = x->def->operand(0);
      if (Op *split = splitPart(bshd, p)) {
        absorb(sharedOf(split), nullptr, 2 + p);
        ++covered[split];
        return;
      }
      absorb(todo, bshd, 1);
      return;
    }
    Value *t = partOf(u, x, p, chain);
    if (!t || !isOp(t, OpKind::Transpose) || t->def->getInts("perm") != Ints{2, 0, 3, 1, 4})
      return;
    for (Value *c : chain)
      if (c != x && u[c] != 1)
        return;
    Value *p5 = t->def->operand(0);
    if (p5->type.shape[2].isStatic() && p >= p5->type.shape[2].size)
      return;
    absorb(sharedOf(t->def), p5, 2 + p);
    ++covered[t->def];
    sharedUses[t->def] = u[t];
  }

  // AttentionGrad `g`'s dout = Transpose(x [B, S, H, D], perm [0, 2, 1, 3])
  // read as x (code 1).
  void dout(Op &g) {
    Value *x = g.operand(5);
    if (slotsOf(u, x, kAttnDout).size() == 1 && isOp(x, OpKind::Transpose) &&
        x->def->getInts("perm") == Ints{0, 2, 1, 3})
      todo.push_back({&g, kAttnDout, x->def->operand(0), 1});
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

  // Result `r` of `a` (Attention's output; AttentionGrad's dq, dk, dv)
  // through identity Reshapes into Transpose [0, 2, 1, 3]: written in
  // [B, S, H, D]. AttentionGrads may read an output as `out` besides.
  bool result(Op &a, size_t r) {
    Value *y = a.results[r];
    Op *t = nullptr;
    std::vector<Slot> readers = outReaders(u, y, t);
    if (!t || t->results.size() != 1)
      return false;
    Value *z = y;
    while (t && t->is(OpKind::Reshape) && t->operand(0) == z && t->result()->type == z->type) {
      z = t->result();
      t = soleUser(u, z);
    }
    if (!t || !t->is(OpKind::Transpose) || t->getInts("perm") != Ints{0, 2, 1, 3})
      return false;
    std::optional<ResultRelayout> done = writeCode(a, r, readers, 1);
    if (!done)
      return false;
    if (done->y->type != t->result()->type || !replaceValue(f, t->result(), y)) {
      done->undo();
      return false;
    }
    return true;
  }

  bool run() {
    std::vector<Op *> attentions = attentionsOf(f);
    std::set<Value *> seen;
    for (Op *a : attentions) {
      for (size_t i = 0; i < 3; ++i)
        if (seen.insert(a->operand(i)).second)
          operand(a->operand(i));
      if (a->is(OpKind::AttentionGrad))
        dout(*a);
    }
    bool changed = false;
    for (const Absorb &r : todo)
      changed |= relayout(*r.op, r.i, r.to, r.code);
    for (Op *producer : sharedOrder) {
      if (covered[producer] != sharedUses[producer])
        continue; // the copy stays for another use
      for (const Absorb &r : shared[producer]) {
        Value *to = r.to;
        if (!to) // a Split part: the [B, S, H, D] Reshape of it has the dims
          to = packedOf(*producer, r.op->operand(r.i)->def->operand(0)->type.shape);
        changed |= relayout(*r.op, r.i, to, r.code);
      }
    }
    for (Op *a : attentions) {
      bool grad = a->is(OpKind::AttentionGrad);
      for (size_t r = 0; r < (grad ? 3 : 1); ++r)
        if (attentionLayoutCode(*a, grad ? kAttnDq + r : size_t(kAttnOut)) == 0)
          changed |= result(*a, r);
    }
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
  ValueUses u;
  explicit ViewRewriter(Function &fn) : f(fn), u(fn) {}
  std::map<std::pair<Value *, Ints>, Value *> reshapes; // (base, dims) -> its Reshape
  PlacedOps before, after;

  // The view chain ending in `x` (whose readers the caller has checked):
  // its base (no view op's result) and the ops from the base on; nullopt
  // without one or past a strided view. `shared` gets the chain's values
  // with other readers (ViT's permuted qkv, which q, k and v are taken
  // from): the rewrite is worth it only where every reader's chain is
  // rewritten too (else the copies stay).
  std::optional<StridedView> backTo(Value *x, Value *&base, std::vector<Value *> &shared) {
    std::vector<Op *> chain;
    base = x;
    while (base->def && isStridedViewOp(*base->def) && chain.size() < 16) {
      if (base != x && u[base] != 1)
        shared.push_back(base);
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

  // An operand rewrite: every read of a value (`slots`) reads `base` as
  // `shape` in code `code`, worth it where each of `shared` (values of the
  // view chain with other readers) has all its readers' chains rewritten.
  struct Plan {
    std::vector<Slot> slots;
    Value *base;
    Shape shape;
    int64_t code;
    std::vector<Value *> shared;
  };
  std::vector<Plan> plans;
  std::map<Value *, int> covered; // shared value -> plans through it

  // Plans value `x` ([B, H, S, D], code 0), each of whose reads is tensor
  // `only` of an attention op (-1: q, k or v), read in place where its
  // chain's strides are those of a code (q, k, v: any; dout: unpacked).
  void operand(Value *x, int only) {
    std::vector<Slot> slots = slotsOf(u, x, only);
    if (slots.empty())
      return;
    Value *base = nullptr;
    const Shape &xs = x->type.shape;
    std::vector<Value *> shared;
    std::optional<StridedView> v = backTo(x, base, shared);
    if (!v || xs.size() != 4 || !xs[1].isStatic() || !xs[2].isStatic() || !xs[3].isStatic())
      return;
    const Dim &B = xs[0];
    int64_t H = xs[1].size, S = xs[2].size, D = xs[3].size;
    int64_t sb = v->strides[0], sh = v->strides[1], ss = v->strides[2], off = v->offset;
    // One head (the 3-D form's [B * H, 1, S, D]): its stride is free.
    if (H == 1)
      sh = D;
    if (v->strides[3] != 1 || sh <= 0 || ss <= 0 || (!(B.isStatic() && B.size == 1) && sb < 0))
      return;
    auto batchFits = [&](int64_t inner) { return (B.isStatic() && B.size == 1) || sb == inner; };
    Shape shape;
    int64_t code = -1;
    // Sequence-first (a static batch of more than 1: its stride is within a
    // token's): the token stride spans the batch.
    const bool seqFirst = B.isStatic() && B.size > 1 && sb > 0 && ss == B.size * sb;
    const Dim b = B, s = Dim::fixed(S), h = Dim::fixed(H), d = Dim::fixed(D);
    if (sh == D && ss == H * D && off == 0 && batchFits(S * H * D)) {
      shape = {b, s, h, d};
      code = 1;
    } else if (seqFirst && sh == D && sb == H * D && off == 0) {
      shape = {s, b, h, d};
      code = kSeqFirst;
    } else if (only >= 0) {
      return; // dout: unpacked codes only
    } else if (seqFirst && sh == D && sb % (H * D) == 0 && off % (H * D) == 0 &&
               off / (H * D) < sb / (H * D)) {
      shape = {s, b, Dim::fixed(sb / (H * D)), h, d};
      code = kSeqFirstPacked + off / (H * D);
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
      return;
    for (Value *c : shared)
      ++covered[c];
    plans.push_back({std::move(slots), base, std::move(shape), code, std::move(shared)});
  }

  // The plans whose shared values are covered.
  bool applyPlans() {
    bool changed = false;
    for (const Plan &p : plans) {
      if (std::any_of(p.shared.begin(), p.shared.end(),
                      [&](Value *c) { return covered[c] != u[c]; }))
        continue;
      Value *to = reshapeOf(*p.slots[0].op, p.base, p.shape);
      for (const Slot &s : p.slots)
        changed |= to && relayout(*s.op, s.t, to, p.code);
    }
    return changed;
  }

  // Result `r` of `a` (Attention's output; AttentionGrad's dq, dk, dv)
  // written as [B, S, H, D] where the views after it (each the sole reader
  // of the last; AttentionGrads may read an output as `out` besides) then
  // leave that buffer as it is.
  bool result(Op &a, size_t r) {
    Value *y = a.results[r];
    Op *first = nullptr;
    std::vector<Slot> readers = outReaders(u, y, first);
    if (!first)
      return false;
    const Shape &ys = y->type.shape;
    if (ys.size() != 4 || !ys[1].isStatic() || !ys[2].isStatic() || !ys[3].isStatic())
      return false;
    int64_t H = ys[1].size, S = ys[2].size, D = ys[3].size;
    // The views after y, from y written in `code` (its strides `st`): the
    // last view's value, when they leave that buffer row-major.
    auto follow = [&](std::vector<int64_t> st) -> Value * {
      Value *end = nullptr;
      size_t steps = 0;
      std::optional<StridedView> v =
          followViews(u, StridedView{ys, std::move(st), 0, {}}, y, first, nullptr, end, steps);
      return v && steps && v->isRowMajor() ? end : nullptr;
    };
    int64_t code = 1;
    Value *end = follow({S * H * D, D, H * D, 1});
    if (!end && ys[0].isStatic() && ys[0].size > 1) { // sequence-first
      code = kSeqFirst;
      end = follow({H * D, D, ys[0].size * H * D, 1});
    }
    if (!end)
      return false;
    // The Reshape back to the last view's shape, when it is another: its dims
    // static but, in [B, S, H, D], the batch's (0: the result's own).
    const Shape &want = end->type.shape;
    Shape physical = attentionPhysicalShape(ys, code);
    Ints dims;
    if (want != physical)
      for (size_t k = 0; k < want.size(); ++k) {
        if (!want[k].isStatic() && (k != 0 || want[0] != ys[0] || code != 1))
          return false;
        dims.push_back(want[k].isStatic() ? want[k].size : 0);
      }
    std::optional<ResultRelayout> done = writeCode(a, r, readers, code);
    if (!done)
      return false;
    Value *to = y;
    if (want != physical)
      after[&a].push_back(detachedReshape(f, y, dims, want, y->name + "_view", a.loc, to));
    if (replaceValue(f, end, to))
      return true;
    // Undone: the result keeps [B, H, S, D].
    if (want != physical)
      after[&a].pop_back();
    done->undo();
    return false;
  }

  bool run() {
    std::set<Value *> seen;
    std::vector<Op *> attentions = attentionsOf(f);
    for (Op *a : attentions) {
      for (size_t i = 0; i < 3; ++i)
        if (seen.insert(a->operand(i)).second)
          operand(a->operand(i), -1);
      if (a->is(OpKind::AttentionGrad))
        operand(a->operand(5), kAttnDout);
    }
    bool changed = applyPlans();
    for (Op *a : attentions) {
      bool grad = a->is(OpKind::AttentionGrad);
      for (size_t r = 0; r < (grad ? 3 : 1); ++r)
        if (attentionLayoutCode(*a, grad ? kAttnDq + r : size_t(kAttnOut)) == 0)
          changed |= result(*a, r);
    }
    if (!changed)
      return false;
    placeAround(f, before, after);
    eraseDeadOps(f);
    return true;
  }
};

// A train step's AttentionGrad whose dq, dk, dv the backward concatenates
// into the qkv projection's gradient (GPT-2: Concat of their [B, S, H * D]
// views; torchvision: Concat of [1, S, B, E] views along a new axis, then
// a Transpose to [S, B, 3, E]): where the Concat and the views after it
// leave one packed buffer of the three row-major, the op writes that
// buffer (dq, dk, dv the codes of its parts 0, 1, 2; one result) and the
// Concat's copy goes.
struct PackRewriter {
  Function &f;
  ValueUses u;
  explicit PackRewriter(Function &fn) : f(fn), u(fn) {}
  PlacedOps after;

  // `v` through the views from `y` on to the value `stop` reads (`stop`
  // null: to the last sole-reader view); `end` gets the last value.
  std::optional<StridedView> follow(StridedView v, Value *y, const Op *stop, Value *&end) {
    size_t steps = 0;
    return followViews(u, std::move(v), y, soleUser(u, y), stop, end, steps);
  }

  // The Concat the view chains from g's three results end in, each at its
  // own index in order; null where they do not.
  Op *concatOf(Op &g) {
    Op *c = nullptr;
    for (size_t r = 0; r < 3; ++r) {
      Value *end = g.results[r];
      Op *t = soleUser(u, end);
      while (t && isStridedViewOp(*t) && t->operand(0) == end) {
        end = t->result();
        t = soleUser(u, end);
      }
      if (!t || !t->is(OpKind::Concat) || t->operands.size() != 3 || t->operands[r] != end ||
          (c && c != t))
        return nullptr;
      c = t;
    }
    return c;
  }

  // Packing code `family` (2, kSeqFirstPacked or kHeadsMajorPacked), when
  // the Concat `c` of g's results and the views after it leave that packed
  // buffer (dims `pdims`) row-major: the last view's value, else null.
  Value *fits(Op &g, Op &c, int64_t family, const std::vector<int64_t> &pdims) {
    std::vector<StridedView> parts;
    for (size_t r = 0; r < 3; ++r) {
      Value *y = g.results[r];
      AttentionAxes ya = attentionAxes(g, kAttnDq + r), pa = attentionAxes(family + int64_t(r));
      AttentionStrides ps = attentionStrides(pa, pdims);
      StridedView v{y->type.shape, std::vector<int64_t>(4, 0), ps.offset, {}};
      v.strides[ya.batch] = ps.batch;
      v.strides[ya.heads] = ps.heads;
      v.strides[ya.tokens] = ps.tokens;
      v.strides[ya.features] = 1;
      Value *end = nullptr;
      std::optional<StridedView> w = follow(v, y, &c, end);
      if (!w || end != c.operands[r])
        return nullptr;
      parts.push_back(*w);
    }
    // The three as one view along the Concat's axis.
    const StridedView &p0 = parts[0];
    int64_t rank = int64_t(p0.sizes.size()), axis = c.getInt("axis");
    axis += axis < 0 ? rank : 0;
    if (axis < 0 || axis >= rank || !p0.sizes[size_t(axis)].isStatic())
      return nullptr;
    int64_t n = p0.sizes[size_t(axis)].size;
    for (const StridedView &p : parts)
      for (size_t a = 0; a < p.sizes.size(); ++a)
        if (p.sizes[a] != p0.sizes[a] ||
            (p.strides[a] != p0.strides[a] && p.sizes[a] != Dim::fixed(1)) ||
            (a < p.merged.size() && !p.merged[a].empty()))
          return nullptr;
    int64_t step = parts[1].offset - parts[0].offset;
    if (step <= 0 || parts[2].offset - parts[1].offset != step ||
        (n > 1 && step != n * p0.strides[size_t(axis)]))
      return nullptr;
    StridedView whole = p0;
    whole.sizes[size_t(axis)] = Dim::fixed(3 * n);
    whole.strides[size_t(axis)] = n > 1 ? p0.strides[size_t(axis)] : step;
    Value *end = nullptr;
    std::optional<StridedView> w = follow(whole, c.result(), nullptr, end);
    return w && w->isRowMajor() ? end : nullptr;
  }

  bool pack(Op &g) {
    if (g.results.size() != 3)
      return false;
    for (size_t r = 0; r < 3; ++r) // (three results: no code is packed)
      if (!isStaticShape(g.results[r]->type.shape))
        return false;
    Op *c = concatOf(g);
    if (!c)
      return false;
    // [B, H, S, D] of dq, dk, dv: one for all three parts.
    auto logical = [&](size_t r) {
      return attentionLogicalDims(attentionAxes(g, kAttnDq + r),
                                  staticDims(g.results[r]->type.shape));
    };
    std::vector<int64_t> bhsd = logical(0);
    if (logical(1) != bhsd || logical(2) != bhsd)
      return false;
    Shape lshape;
    for (int64_t d : bhsd)
      lshape.push_back(Dim::fixed(d));
    for (int64_t family : {int64_t(2), kSeqFirstPacked, kHeadsMajorPacked}) {
      Shape pshape = attentionPhysicalShape(lshape, family);
      Value *end = fits(g, *c, family, staticDims(pshape));
      if (!end)
        continue;
      // The packed op, then (where the last view has other dims) a Reshape.
      Ints codes = g.getInts("layout");
      if (codes.empty())
        codes = Ints(8, 0);
      for (size_t r = 0; r < 3; ++r)
        codes[kAttnDq + r] = family + int64_t(r);
      auto op = std::make_unique<Op>(OpKind::AttentionGrad);
      op->operands = g.operands;
      op->attrs = g.attrs;
      op->setAttr("layout", Attribute(codes));
      op->loc = g.loc;
      Value *packed = f.newValue(f.uniqueName(g.results[0]->name + "_packed"),
                                 TensorType{g.results[0]->type.dtype, pshape});
      packed->def = op.get();
      op->results.push_back(packed);
      if (!resultsFit(*op))
        return false;
      Value *to = packed;
      std::vector<std::unique_ptr<Op>> made;
      made.push_back(std::move(op));
      if (end->type.shape != pshape)
        made.push_back(detachedReshape(f, packed, staticDims(end->type.shape), end->type.shape,
                                       packed->name + "_view", g.loc, to));
      if (!replaceValue(f, end, to))
        return false;
      for (auto &m : made)
        after[&g].push_back(std::move(m));
      return true;
    }
    return false;
  }

  bool run() {
    bool changed = false;
    for (Op *g : attentionsOf(f))
      if (g->is(OpKind::AttentionGrad))
        changed |= pack(*g);
    if (!changed)
      return false;
    PlacedOps none;
    placeAround(f, none, after);
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
    changed |= PackRewriter(*fn).run();
  }
  return changed;
}

} // namespace tc
