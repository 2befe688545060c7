// Sibling GEMMs -- MatMuls of ONE input by constant weights [K, N_i] of the
// same K and dtype (BERT's and LLaMA's separate q, k, v projections,
// LLaMA's gate and up) -- become one GEMM by the weights side by side:
//   y_i = MatMul(x, W_i) [+ b_i]
//   -> P = MatMul(x, [W_1 | W_2 | ...]) [+ [b_1 | b_2 | ...]], y_i = part i of P
// one launch instead of several, and a wider N that keeps more of the GPU
// busy at small M (a decode step's M is the batch). Parts of equal width
// that each go on to a head-split Reshape are one Split on the last axis:
// the packed qkv attention-layouts reads in place (GPT-2's c_attn), so this
// runs before attention-fusion; other parts are Slices, which fusion inlines
// into the pointwise group reading them (RoPE, SiLU(gate) * up). A bias (an
// Add of a constant [N_i] that is the MatMul's only use) joins the merged
// one; siblings without one add zeros.
//
// `trainable` (a train step before autodiff, tc-opt --merge-gemms=train):
// the weights are arguments instead (a Linear's as PyTorch exports it,
// Transpose(W_i) of W_i [N_i, K], or W_i [K, N_i] itself), and so may the
// biases be; the merged weight is an op of them, Transpose(Concat(W_i) on
// axis 0) (or a Concat on axis 1), the bias a Concat: autodiff gives each
// W_i the rows of the merged gradient that are its own (a Slice of axis 0:
// a view, no copy), one weight-gradient GEMM and one bias sum where there
// were one per sibling.
#include "tc/IR/MatMulViews.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <map>
#include <unordered_map>

namespace tc {

namespace {

// One GEMM of a sibling set, with its bias Add when it has one.
struct Sibling {
  Op *mm = nullptr;
  Op *biasAdd = nullptr; // Add(y, b) or Add(b, y), b a constant [N]
  const Value *bias = nullptr;
  int64_t n = 0;
  Value *out() const { return biasAdd ? biasAdd->result() : mm->result(); }
};

// The weight [K, N] of `mm`, else null: a constant, or (`trainable`, a train
// step before autodiff) an argument or Transpose(argument [N, K]).
const Value *siblingWeight(const Function &f, const Op &mm, bool trainable) {
  const Value *w = mm.operand(1);
  bool given = trainable ? isWeightArgument(f, w) &&
                               (!w->def || w->def->getInts("perm") == std::vector<int64_t>{1, 0})
                         : w->isConstant();
  if (!given || w->type.rank() != 2 || !isStaticShape(w->type.shape))
    return nullptr;
  const Value *x = mm.operand(0);
  if (x->type.rank() < 2 || x->type.dtype != w->type.dtype)
    return nullptr;
  return w;
}

// uses[v]: the ops reading v; returned values count as a use too.
using Uses = std::unordered_map<const Value *, std::vector<Op *>>;

Uses usesOf(Function &f, std::unordered_map<const Value *, int> &returned) {
  Uses u;
  for (auto &op : f.ops)
    for (const Value *v : op->operands)
      if (v)
        u[v].push_back(op.get());
  for (const Value *r : f.results)
    ++returned[r];
  return u;
}

// The bias Add of y (its only use), if any: a constant [N], or (`trainable`)
// an argument of f.
void findBias(Sibling &s, const Uses &u, const std::unordered_map<const Value *, int> &returned,
              bool trainable) {
  const Value *y = s.mm->result();
  auto it = u.find(y);
  if (returned.count(y) || it == u.end() || it->second.size() != 1)
    return;
  Op *add = it->second[0];
  if (!add->is(OpKind::Add))
    return;
  const Value *b = add->operand(0) == y ? add->operand(1) : add->operand(0);
  bool given = b->isConstant() || (trainable && b->isArgument());
  if (b == y || !given || b->type.rank() != 1 || b->type.dtype != y->type.dtype ||
      b->type.shape[0] != Dim::fixed(s.n) || add->result()->type != y->type)
    return;
  s.biasAdd = add;
  s.bias = b;
}

// The W_i side by side, or the biases end to end (`of` picks a sibling's
// constant; zeros where a sibling has none).
Value *concatColumns(Function &f, const std::vector<Sibling> &set, std::vector<int64_t> shape,
                     const Value *(*of)(const Sibling &)) {
  const Value *named = nullptr;
  DType dtype = set[0].mm->result()->type.dtype;
  HostTensor all(dtype, std::move(shape)); // zero-filled
  int64_t col = 0;
  for (const Sibling &s : set) {
    if (const Value *v = of(s)) {
      placeColumns(all, constantTensor(*v), col);
      named = named ? named : v;
    }
    col += s.n;
  }
  return f.addConstant(f.uniqueName(named->name + "_merged"), all.type(),
                       TensorData::copyOf(all.bytes(), all.byteSize()), named->loc);
}

// Concat(`parts`, axis) as a new op named after `name`.
Value *addConcat(Function &f, std::vector<Value *> parts, int64_t axis, const std::string &name,
                 const TensorType &t, Location loc) {
  Op *c = f.addOp(OpKind::Concat, std::move(parts), {f.uniqueName(name)}, {t}, loc);
  c->setAttr("axis", Attribute(axis));
  return c->result();
}

// A train step's merged weight [K, total] and bias [total] (`trainable`):
// ops of the siblings' arguments. All weights Transpose(W_i): the W_i [N_i,
// K] stacked, then one Transpose (a view gemm-views reads as transB, the
// gradient a row block of one [total, K] tensor per W_i); else the [K, N_i]
// side by side.
Value *argumentColumns(Function &f, const std::vector<Sibling> &set, int64_t k, int64_t total) {
  const Op &first = *set[0].mm;
  DType dtype = first.result()->type.dtype;
  bool transposed = std::all_of(set.begin(), set.end(),
                                [](const Sibling &s) { return s.mm->operand(1)->def != nullptr; });
  std::vector<Value *> parts;
  for (const Sibling &s : set) {
    Value *w = s.mm->operand(1);
    parts.push_back(transposed ? w->def->operand(0) : w);
  }
  std::string name = parts[0]->name + "_merged";
  if (!transposed)
    return addConcat(f, parts, 1, name, TensorType{dtype, {Dim::fixed(k), Dim::fixed(total)}},
                     first.loc);
  Value *rows = addConcat(f, parts, 0, name, TensorType{dtype, {Dim::fixed(total), Dim::fixed(k)}},
                          first.loc);
  Op *t = f.addOp(OpKind::Transpose, {rows}, {f.uniqueName(name + "_t")},
                  {TensorType{dtype, {Dim::fixed(k), Dim::fixed(total)}}}, first.loc);
  t->setAttr("perm", Attribute(std::vector<int64_t>{1, 0}));
  return t->result();
}

Value *argumentBias(Function &f, const std::vector<Sibling> &set, int64_t total) {
  const Op &first = *set[0].mm;
  DType dtype = first.result()->type.dtype;
  std::vector<Value *> parts;
  const Value *named = nullptr;
  for (const Sibling &s : set) {
    if (s.bias) {
      parts.push_back(const_cast<Value *>(s.bias));
      named = named ? named : s.bias;
      continue;
    }
    HostTensor zeros(dtype, {s.n}); // zero-filled
    parts.push_back(f.addConstant(f.uniqueName(s.out()->name + "_nobias"), zeros.type(),
                                  TensorData::copyOf(zeros.bytes(), zeros.byteSize()), first.loc));
  }
  return addConcat(f, parts, 0, named->name + "_merged", TensorType{dtype, {Dim::fixed(total)}},
                   first.loc);
}

// Slice(x, [start, end) of `axis`) as a new op named after `name`.
Value *addSlice(Function &f, Value *x, int64_t start, int64_t end, int64_t axis,
                const std::string &name, const TensorType &t, Location loc) {
  Value *starts = addIntsConstant(f, "merged_start", {start}, loc);
  Value *ends = addIntsConstant(f, "merged_end", {end}, loc);
  Value *axes = addIntsConstant(f, "merged_axis", {axis}, loc);
  return f.addOp(OpKind::Slice, {x, starts, ends, axes}, {f.uniqueName(name)}, {t}, loc)->result();
}

// A Reshape's shape operand for `to` from a tensor of shape `from`: static
// dims as they are, a symbolic one as 0 (copy the input's) where `from` has
// it at the same index, else -1; null when that needs two -1s.
Value *reshapeShape(Function &f, const Shape &from, const Shape &to, Location loc) {
  std::vector<int64_t> dims;
  int inferred = 0;
  for (size_t d = 0; d < to.size(); ++d) {
    if (to[d].isStatic() && to[d].size == 0)
      return nullptr; // 0 would mean "copy the input's"
    if (to[d].isStatic())
      dims.push_back(to[d].size);
    else if (d < from.size() && from[d] == to[d])
      dims.push_back(0);
    else if (++inferred == 1)
      dims.push_back(-1);
    else
      return nullptr;
  }
  return addIntsConstant(f, "merged_view_shape", dims, loc);
}

// The ops reading v (an op reading it twice counts twice).
std::vector<Op *> usersOf(Function &f, const Value *v) {
  std::vector<Op *> users;
  for (auto &op : f.ops)
    for (const Value *o : op->operands)
      if (o == v)
        users.push_back(op.get());
  return users;
}

// A Reshape, or a Transpose that moves only size-1 dims (canonicalize makes
// it one later: a decode step's [B, 1, H, D] -> [B, H, 1, D]).
bool isReshape(const Op &op) {
  if (op.is(OpKind::Reshape))
    return true;
  if (!op.is(OpKind::Transpose))
    return false;
  const Shape &in = op.operand(0)->type.shape;
  int64_t last = -1;
  for (int64_t p : op.getInts("perm")) {
    if (p < 0 || size_t(p) >= in.size())
      return false;
    if (in[size_t(p)] == Dim::fixed(1))
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

// A part Slice(X, [s, e) of axis a) read only by a Reshape becomes a Slice
// of a Reshape of X, so that the part is a move the pointwise group after
// it inlines (a RoPE reading q through [B, S, H, D] views), not a copy:
//   the Reshape splits axis a into [H, D] (D divides s, e and X's axis):
//     Slice(Reshape(X, [.., X_a / D, D]), [s/D, e/D) of axis a)
//   or keeps axis a whole and moves only size-1 dims around it:
//     Slice(Reshape(X, its shape with axis a's extent), same range, new axis)
// Repeats down a chain of Reshapes (isReshape); returns the last part.
Value *sinkThroughReshapes(Function &f, Value *part, int64_t a, int64_t s, int64_t e) {
  for (;;) {
    Op *slice = part->def;
    Value *x = slice->operand(0);
    std::vector<Op *> users = usersOf(f, part);
    if (users.size() != 1 || !isReshape(*users[0]) || users[0]->operand(0) != part ||
        std::find(f.results.begin(), f.results.end(), part) != f.results.end())
      return part;
    Op *r = users[0];
    const Shape &in = part->type.shape, &out = r->result()->type.shape, &xs = x->type.shape;
    Shape xv; // X's new view
    int64_t na = -1, ns = s, ne = e;
    size_t A = size_t(a);
    if (out.size() == in.size() + 1 && out[A + 1].isStatic() && in[A].isStatic() &&
        out[A].isStatic() && out[A].size * out[A + 1].size == in[A].size && xs[A].isStatic()) {
      int64_t D = out[A + 1].size;
      bool same = true;
      for (size_t d = 0; d < in.size(); ++d)
        if (d != A && !(in[d] == out[d < A ? d : d + 1]))
          same = false;
      if (!same || s % D || e % D || xs[A].size % D)
        return part;
      xv = out;
      xv[A] = Dim::fixed(xs[A].size / D);
      na = a, ns = s / D, ne = e / D;
    } else {
      // Axis a kept whole: the dims before it and after it the same up to 1s.
      auto nonOnes = [](const Shape &sh, size_t from, size_t to) {
        std::vector<Dim> v;
        for (size_t d = from; d < to; ++d)
          if (!(sh[d] == Dim::fixed(1)))
            v.push_back(sh[d]);
        return v;
      };
      for (size_t b = 0; b < out.size() && na < 0; ++b)
        if (out[b] == in[A] && nonOnes(in, 0, A) == nonOnes(out, 0, b) &&
            nonOnes(in, A + 1, in.size()) == nonOnes(out, b + 1, out.size()))
          na = int64_t(b);
      if (na < 0)
        return part;
      xv = out;
      xv[size_t(na)] = xs[A];
    }
    Value *shape = reshapeShape(f, xs, xv, r->loc);
    if (!shape)
      return part;
    Op *view = f.addOp(OpKind::Reshape, {x, shape}, {f.uniqueName(x->name + "_view")},
                       {TensorType{x->type.dtype, xv}}, r->loc);
    Value *next = addSlice(f, view->result(), ns, ne, na, part->name, r->result()->type, r->loc);
    if (!replaceValue(f, r->result(), next))
      return part;
    part = next;
    a = na, s = ns, e = ne;
  }
}

// Whether the set's parts are of equal widths and each goes on to a head
// split (a Reshape: what attention-layouts reads in place when attention
// takes it): one Split then, which attention reads packed.
bool headSplits(Function &f, const std::vector<Sibling> &set) {
  return std::all_of(set.begin(), set.end(), [&](const Sibling &s) {
    std::vector<Op *> users = usersOf(f, s.out());
    return s.n == set[0].n && users.size() == 1 && users[0]->is(OpKind::Reshape);
  });
}

// Adds the merged GEMM (before the op being visited: the set's first) and
// its parts; every sibling's output is then replaced by its part.
void merge(Function &f, std::vector<Sibling> &set, bool trainable) {
  Op &first = *set[0].mm;
  const Value *x = first.operand(0);
  int64_t k = first.operand(1)->type.shape[0].size, total = 0;
  bool anyBias = false;
  for (const Sibling &s : set) {
    total += s.n;
    anyBias |= s.bias != nullptr;
  }
  // A Split only for head splits: a Split is its own copy kernel
  // otherwise, where a Slice inlines into the pointwise group reading it
  // (LLaMA's SiLU(gate) * up).
  const bool oneSplit = headSplits(f, set);
  Shape shape = first.result()->type.shape;
  shape.back() = Dim::fixed(total);
  TensorType pt{first.result()->type.dtype, shape};
  Value *w = trainable ? argumentColumns(f, set, k, total)
                       : concatColumns(f, set, {k, total}, [](const Sibling &s) -> const Value * {
                           return s.mm->operand(1);
                         });
  std::string base = first.result()->name + "_merged";
  Op *mm =
      f.addOp(OpKind::MatMul, {const_cast<Value *>(x), w}, {f.uniqueName(base)}, {pt}, first.loc);
  Value *p = mm->result();
  if (anyBias) {
    Value *b = trainable ? argumentBias(f, set, total)
                         : concatColumns(f, set, {total},
                                         [](const Sibling &s) -> const Value * { return s.bias; });
    p = f.addOp(OpKind::Add, {p, b}, {f.uniqueName(base + "_bias")}, {pt}, first.loc)->result();
  }
  int64_t axis = int64_t(shape.size()) - 1;
  std::vector<Value *> parts;
  if (oneSplit) {
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (const Sibling &s : set) {
      names.push_back(f.uniqueName(s.out()->name + "_part"));
      types.push_back(s.out()->type);
    }
    Op *split = f.addOp(OpKind::Split, {p}, names, types, first.loc);
    split->setAttr("axis", Attribute(axis));
    parts = split->results;
  }
  std::vector<int64_t> begins; // each Slice part's first column
  for (int64_t col = 0; const Sibling &s : set) {
    if (!oneSplit)
      parts.push_back(
          addSlice(f, p, col, col + s.n, axis, s.out()->name + "_part", s.out()->type, first.loc));
    begins.push_back(col);
    col += s.n;
  }
  for (size_t i = 0; i < set.size(); ++i)
    if (!replaceValue(f, set[i].out(), parts[i]))
      fail("merge-gemms: cannot replace %", set[i].out()->name);
  if (!oneSplit)
    for (size_t i = 0; i < set.size(); ++i)
      sinkThroughReshapes(f, parts[i], axis, begins[i], begins[i] + set[i].n);
}

} // namespace

bool runMergeGemmsPass(Module &m, const PassOptions &opts) {
  const bool trainable = opts.getBool("trainable"), heads = opts.getBool("heads");
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    std::unordered_map<const Value *, int> returned;
    Uses u = usesOf(f, returned);
    // Siblings by (input, K); the sets in the program order of their first
    // sibling (not by pointer: the names merges make must not vary run to run).
    std::map<std::pair<const Value *, int64_t>, size_t> setOf;
    std::vector<std::vector<Sibling>> sets;
    for (auto &op : f.ops) {
      if (!isPlainMatMul(*op)) // gemm-views' transposed/scaled reads differ per sibling
        continue;
      const Value *w = siblingWeight(f, *op, trainable);
      if (!w)
        continue;
      Sibling s;
      s.mm = op.get();
      s.n = w->type.shape[1].size;
      findBias(s, u, returned, trainable);
      auto [it, fresh] = setOf.try_emplace({op->operand(0), w->type.shape[0].size}, sets.size());
      if (fresh)
        sets.emplace_back();
      sets[it->second].push_back(s);
    }
    for (std::vector<Sibling> &set : sets) {
      // replaceValue gives a returned output's name to its part; two
      // returned siblings would need two: leave such sets alone.
      int outputs = 0;
      for (const Sibling &s : set)
        outputs += returned.count(s.out()) ? 1 : 0;
      if (set.size() < 2 || outputs > 1 || (heads && !headSplits(f, set)))
        continue;
      // The new ops (appended by addOp) move to where the first sibling is.
      size_t added = f.ops.size();
      merge(f, set, trainable);
      auto at = std::find_if(f.ops.begin(), f.ops.end(),
                             [&](const std::unique_ptr<Op> &op) { return op.get() == set[0].mm; });
      std::rotate(at, f.ops.begin() + std::ptrdiff_t(added), f.ops.end());
      changed = true;
    }
    if (changed)
      eraseDeadOps(f);
  }
  return changed;
}

} // namespace tc
