// Einsum becomes Transpose / Unsqueeze / Reshape / ReduceSum / MatMul (or
// Mul), so the matmul paths (cuBLASLt, oneDNN, the Contraction family) take
// it. Two operands: a label of one operand only that the result lacks is
// summed first; then each label is a batch label (both operands and the
// result), a row label (the first operand and the result), a column label
// (the second and the result) or a contracted label (both operands, not the
// result). Without contracted labels the product is a broadcast Mul over the
// result's axes. Otherwise a MatMul over [batch..., rows but the last...,
// columns but the last..., M, N]: an operand lacking an axis has it as
// size 1 (broadcast), several contracted labels merge into one axis
// (Reshape [0, ..., -1]: dims may stay symbolic); several column labels merge
// into one N where the leading axes would otherwise broadcast partly (rows or
// batch labels beside columns: cuBLASLt's batches are equal or one side's).
// One operand: ReduceSum and
// Transpose. What stays an Einsum (a host step; the classifier says why,
// einsumObstacle): a label repeated in one term (diagonals), more than two
// operands, non-float data.
#include "tc/IR/NNMath.h"
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <numeric>

namespace tc {

namespace {

using Labels = std::vector<int>;

bool contains(const Labels &ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }
size_t indexOf(const Labels &ls, int l) {
  return size_t(std::find(ls.begin(), ls.end(), l) - ls.begin());
}
bool distinct(Labels ls) {
  std::sort(ls.begin(), ls.end());
  return std::adjacent_find(ls.begin(), ls.end()) == ls.end();
}

// Appends ops to `f` (in order) for one Einsum, tracking each value's labels.
class Lowering {
public:
  Lowering(Function &f, const Op &e) : f_(f), loc_(e.loc), base_(e.result()->name) {}

  struct Term {
    Value *v;
    Labels labels; // one per axis; -1: an inserted size-1 axis
  };

  Value *op(OpKind k, std::vector<Value *> ins,
            std::vector<std::pair<std::string, Attribute>> attrs) {
    Op *o = f_.addOp(k, std::move(ins), {f_.uniqueName(base_ + "_" + std::string(opInfo(k).name))},
                     {TensorType{}}, loc_);
    for (auto &[n, a] : attrs)
      o->setAttr(n, std::move(a));
    o->result()->type = opInfo(k).infer(*o).at(0);
    return o->result();
  }

  // The term's axes reordered to `order` (labels it has).
  Term permute(const Term &t, const Labels &order) {
    std::vector<int64_t> perm;
    for (int l : order)
      perm.push_back(int64_t(indexOf(t.labels, l)));
    std::vector<int64_t> id(perm.size());
    std::iota(id.begin(), id.end(), 0);
    if (perm == id)
      return {t.v, order};
    return {op(OpKind::Transpose, {t.v}, {{"perm", Attribute(perm)}}), order};
  }

  // Sums the axes whose labels are not in `keep`.
  Term sumOut(const Term &t, const Labels &keep) {
    std::vector<int64_t> axes;
    Labels rest;
    for (size_t i = 0; i < t.labels.size(); ++i)
      contains(keep, t.labels[i]) ? rest.push_back(t.labels[i]) : axes.push_back(int64_t(i));
    if (axes.empty())
      return t;
    return {op(OpKind::ReduceSum, {t.v},
               {{"axes", Attribute(axes)}, {"keepdims", Attribute(int64_t(0))}}),
            rest};
  }

  // `t` (its labels a subsequence of `layout`) with size-1 axes where it
  // lacks one of layout's labels; those among the first `batch` axes before
  // its first own axis are left to MatMul's broadcast.
  Term fill(const Term &t, const Labels &layout, size_t batch) {
    std::vector<int64_t> axes;
    Labels out;
    bool leading = true;
    for (size_t i = 0; i < layout.size(); ++i) {
      bool has = contains(t.labels, layout[i]);
      leading &= !has && i < batch;
      if (leading)
        continue;
      if (!has)
        axes.push_back(int64_t(out.size()));
      out.push_back(has ? layout[i] : -1);
    }
    if (axes.empty())
      return t;
    return {op(OpKind::Unsqueeze, {t.v}, {{"axes", Attribute(axes)}}), out};
  }

  // Merges the last `n` axes into one (Reshape [0, ..., 0, -1]).
  Value *mergeLast(Value *v, size_t n) {
    size_t r = v->type.rank();
    if (n <= 1)
      return v;
    std::vector<int64_t> shape(r - n, 0);
    shape.push_back(-1);
    Value *s = addIntsConstant(f_, base_ + "_shape", shape, loc_);
    return op(OpKind::Reshape, {v, s}, {});
  }

  // Splits the last axis into `dims` (at most one of them not static: -1).
  Value *splitLast(Value *v, const std::vector<Dim> &dims) {
    std::vector<int64_t> shape(v->type.rank() - 1, 0);
    for (const Dim &d : dims)
      shape.push_back(d.isStatic() ? d.size : -1);
    Value *s = addIntsConstant(f_, base_ + "_shape", shape, loc_);
    return op(OpKind::Reshape, {v, s}, {});
  }

private:
  Function &f_;
  Location loc_;
  std::string base_;
};

// The labels of `ls` that term `t` has, in ls's order.
Labels ownOf(const Lowering::Term &t, const Labels &ls) {
  Labels r;
  for (int l : ls)
    if (contains(t.labels, l))
      r.push_back(l);
  return r;
}

// Why `e` cannot be lowered ("" when it can).
std::string obstacle(const Op &e, const nn::EinsumSpec &spec) {
  if (e.operands.empty() || e.operands.size() > 2)
    return "more than two operands";
  if (!isFloat(e.result()->type.dtype))
    return "non-float data";
  for (const Labels &in : spec.inputs)
    if (!distinct(in))
      return "a label repeated in one term (a diagonal)";
  if (!distinct(spec.output))
    return "a label repeated in the result";
  for (int l : spec.output)
    if (std::none_of(spec.inputs.begin(), spec.inputs.end(),
                     [&](const Labels &in) { return contains(in, l); }))
      return "a result label no operand has";
  return "";
}

// Appends e's lowering to f; returns its result, or null when it cannot.
Value *lower(Function &f, const Op &e) {
  std::vector<size_t> ranks;
  for (const Value *v : e.operands)
    ranks.push_back(v->type.rank());
  nn::EinsumSpec spec = nn::parseEinsum(e.getString("equation"), ranks);
  if (!obstacle(e, spec).empty())
    return nullptr;
  const Labels &out = spec.output;
  Lowering lw(f, e);
  if (e.operands.size() == 1) {
    Lowering::Term t = lw.sumOut({e.operand(0), spec.inputs[0]}, out);
    return lw.permute(t, out).v;
  }
  Lowering::Term a{e.operand(0), spec.inputs[0]}, b{e.operand(1), spec.inputs[1]};
  // Labels of one operand only that the result lacks are summed first.
  Labels keepA = out, keepB = out;
  keepA.insert(keepA.end(), b.labels.begin(), b.labels.end());
  keepB.insert(keepB.end(), a.labels.begin(), a.labels.end());
  a = lw.sumOut(a, keepA);
  b = lw.sumOut(b, keepB);
  Labels batch, rows, cols, sum; // in the operands' order: fewer transposes
  for (int l : a.labels)
    (!contains(out, l) ? sum : contains(b.labels, l) ? batch : rows).push_back(l);
  for (int l : b.labels)
    if (!contains(a.labels, l))
      cols.push_back(l);
  if (sum.empty()) { // no contraction: a broadcast product, Mul over the result's axes
    a = lw.fill(lw.permute(a, ownOf(a, out)), out, out.size());
    b = lw.fill(lw.permute(b, ownOf(b, out)), out, out.size());
    return lw.op(OpKind::Mul, {a.v, b.v}, {});
  }
  // The MatMul's layout: [batch, rows..., cols..., M, N]; K contracted.
  constexpr int kOne = -1;    // a size-1 axis (no row, column or contracted label)
  constexpr int kMerged = -2; // N: every column label merged (below)
  constexpr int kSum = -3;    // K: several contracted labels merged
  // Columns beside rows or batch labels in the leading axes would broadcast
  // there partly (MaxViT's relative position bias 'nhw,ixh->nixw': [n, 1] x
  // [1, i]), which cuBLASLt turns down: then every column label merges into
  // one N, split back after the MatMul, and B's leading axes are the batch
  // labels alone (A's rows: more rows of B's GEMMs). The split takes the
  // columns' sizes: all but one static.
  Labels merged;
  if (cols.size() >= 2 && (!batch.empty() || rows.size() >= 2)) {
    size_t unknown = 0;
    for (int l : cols)
      unknown += !b.v->type.shape[indexOf(b.labels, l)].isStatic();
    if (unknown <= 1)
      merged.swap(cols);
  }
  std::vector<Dim> mergedDims;
  for (int l : merged)
    mergedDims.push_back(b.v->type.shape[indexOf(b.labels, l)]);
  int m = rows.empty() ? kOne : rows.back();
  int n = !merged.empty() ? kMerged : cols.empty() ? kOne : cols.back();
  if (!rows.empty())
    rows.pop_back();
  if (!cols.empty())
    cols.pop_back();
  Labels lead = batch;
  lead.insert(lead.end(), rows.begin(), rows.end());
  lead.insert(lead.end(), cols.begin(), cols.end());
  auto layout = [&](const Labels &tail) {
    Labels l = lead;
    l.insert(l.end(), tail.begin(), tail.end());
    return l;
  };
  // A: [lead..., M, K...]; B: [lead..., K..., N], or [lead..., N, K...] to
  // merge several K (then transposed back).
  Labels aTail{m}, bTail;
  aTail.insert(aTail.end(), sum.begin(), sum.end());
  if (sum.size() == 1)
    bTail = sum, bTail.push_back(n);
  else
    bTail = Labels{n}, bTail.insert(bTail.end(), sum.begin(), sum.end());
  a = lw.permute(a, ownOf(a, layout(aTail)));
  Lowering::Term af = lw.fill(a, layout(aTail), lead.size());
  Value *av = lw.mergeLast(af.v, sum.size()), *bv = nullptr;
  auto swapLast = [&](Value *v) {
    std::vector<int64_t> perm(v->type.rank());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return lw.op(OpKind::Transpose, {v}, {{"perm", Attribute(perm)}});
  };
  if (merged.empty()) {
    b = lw.permute(b, ownOf(b, layout(bTail)));
    Lowering::Term bf = lw.fill(b, layout(bTail), lead.size());
    bv = lw.mergeLast(bf.v, sum.size());
    if (sum.size() > 1)
      bv = swapLast(bv);
  } else {
    // B [batch..., K, N]: with one contracted label [batch..., K, columns...]
    // merged; with several [batch..., columns..., K...] merged, transposed,
    // the columns merged.
    Labels order = batch;
    int k = sum.size() == 1 ? sum[0] : kSum;
    if (sum.size() == 1) {
      order.push_back(k);
      order.insert(order.end(), merged.begin(), merged.end());
      b = lw.permute(b, order);
    } else {
      order.insert(order.end(), merged.begin(), merged.end());
      order.insert(order.end(), sum.begin(), sum.end());
      b = lw.permute(b, order);
      Value *v = lw.mergeLast(b.v, sum.size());
      std::vector<int64_t> perm(v->type.rank());
      std::iota(perm.begin(), perm.end(), 0);
      std::rotate(perm.begin() + std::ptrdiff_t(batch.size()), perm.end() - 1, perm.end());
      b.v = lw.op(OpKind::Transpose, {v}, {{"perm", Attribute(perm)}});
    }
    Labels kn = batch;
    kn.push_back(k);
    kn.push_back(kMerged);
    b = {lw.mergeLast(b.v, merged.size()), kn};
    bv = lw.fill(b, layout({k, kMerged}), lead.size()).v;
  }
  Value *y = lw.op(OpKind::MatMul, {av, bv}, {});
  // Drop the size-1 M / N, then the result's order.
  Labels got = lead;
  std::vector<int64_t> drop;
  if (m == kOne)
    drop.push_back(int64_t(lead.size()));
  else
    got.push_back(m);
  if (n == kOne)
    drop.push_back(int64_t(lead.size() + 1));
  else
    got.push_back(n);
  if (!drop.empty())
    y = lw.op(OpKind::Squeeze, {y}, {{"axes", Attribute(drop)}});
  if (n == kMerged) {
    got.pop_back();
    got.insert(got.end(), merged.begin(), merged.end());
    y = lw.splitLast(y, mergedDims);
  }
  return lw.permute({y, got}, out).v;
}

} // namespace

std::string einsumObstacle(const Op &e) {
  std::vector<size_t> ranks;
  for (const Value *v : e.operands)
    ranks.push_back(v ? v->type.rank() : 0);
  return obstacle(e, nn::parseEinsum(e.getString("equation"), ranks));
}

bool runLowerEinsumPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(),
                     [](const auto &o) { return o->is(OpKind::Einsum); }))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      if (!o->is(OpKind::Einsum)) {
        f.ops.push_back(std::move(o));
        continue;
      }
      size_t mark = f.ops.size();
      Value *y = lower(f, *o);
      if (!y) {
        f.ops.insert(f.ops.begin() + std::ptrdiff_t(mark), std::move(o));
        continue;
      }
      // The lowering's last value takes the Einsum's place (and name).
      Value *r = o->result();
      bool fresh = std::any_of(f.ops.begin() + std::ptrdiff_t(mark), f.ops.end(),
                               [&](const auto &n) { return n.get() == y->def; });
      if (!fresh) // 'ij->ij': the operand itself
        y = Lowering(f, *o).op(OpKind::Identity, {y}, {});
      Op *def = y->def;
      def->results[y->resultIndex] = r;
      r->def = def;
      r->resultIndex = y->resultIndex;
      r->type = y->type;
      changed = true;
    }
  }
  return changed;
}

} // namespace tc
