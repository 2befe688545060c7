// gemm-views (CUDA's pre-fusion pipeline): a MatMul operand made by a
// Transpose swapping only its last two axes, or by a Mul/Div by a scalar
// constant, is read in place as a view of the GEMM instead:
//
//   MatMul(q, Transpose(k, [.., r-1, r-2]) / c)  ->  MatMul(q, k){transB = 1, alpha = 1/c}
//
// cuBLASLt takes op(B) = B^T and alpha for free, where the Transpose and the
// scale were a copy kernel of their own (DeBERTa's k^T / sqrt(d) and
// relative-position keys: 120 copy kernels, 18% of its device time on the
// H200). The Transpose and the scale stay while something else reads them
// (DCE drops them otherwise). Two forms a train step makes as well:
//
//   MatMul(x, Cast(Transpose(W)))  ->  MatMul(x, Cast(W)){transB = 1}
//   Transpose(MatMul(a, b))        ->  MatMul(b, a){transA = !transB, transB = !transA}
//
// mixed precision casts nn.Linear's W^T for the product (a transpose kernel
// and a cast kernel a weight, both in the forward: the cast of W is all
// autocast does), and a weight's gradient is the transpose of the product
// autodiff writes for W^T (a transpose kernel a weight, f32 or half, in
// the backward): C^T = B^T A^T reads both operands in place.
//
// Batch axes must stay in place: a perm moving one is a copy cuBLASLt's
// strided batches cannot read. Only CUDA runs the pass: oneDNN is not given
// these views (OneDnnCall refuses them), and the CPU's generated kernel
// would only trade a copy for strided reads.
#include "tc/IR/MatMulViews.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

namespace tc {

namespace {

// A Transpose that swaps the last two axes of a rank >= 2 tensor and keeps
// every other axis where it is.
bool swapsLastTwo(const Op &op) {
  if (!op.is(OpKind::Transpose))
    return false;
  size_t r = op.operand(0)->type.rank();
  std::vector<int64_t> p = attr<OpKind::Transpose, "perm">(op);
  if (p.empty() && r == 2) // no perm: the axes reversed
    p = {1, 0};
  if (r < 2 || p.size() != r)
    return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (p[i] != int64_t(i))
      return false;
  return p[r - 2] == int64_t(r - 1) && p[r - 1] == int64_t(r - 2);
}

// Sets attribute `name` of `mm`, leaving it out where it is the default
// (an imported MatMul prints as before).
void setOrDrop(Op &mm, const char *name, Attribute a, bool isDefault) {
  if (!isDefault)
    return mm.setAttr(name, std::move(a));
  std::erase_if(mm.attrs, [&](const auto &kv) { return kv.first == name; });
}

// A float-to-float Cast of a Transpose that swaps the last two axes.
const Op *castOfSwap(const Op &op) {
  if (!op.is(OpKind::Cast) || !op.operand(0) || !isFloat(op.operand(0)->type.dtype) ||
      !isFloat(op.result()->type.dtype))
    return nullptr;
  const Op *t = op.operand(0)->def;
  return t && swapsLastTwo(*t) ? t : nullptr;
}

// Peels the views off operand `side` of `mm` (toggling its trans attribute,
// scaling alpha; only scales without `transposes`); a Cast of a Transpose
// becomes a Cast of the Transpose's input, added to `f` before `mm` (one
// Cast per value and type is kept afterwards: dedupeCasts).
// Returns whether any was.
bool peel(Function &f, Op &mm, size_t side, double &alpha, bool transposes = true) {
  const char *trans = side == 0 ? "transA" : "transB";
  bool t = mm.getInt(trans) != 0, changed = false;
  Value *v = mm.operand(side);
  for (Op *def = v->def; def; def = v->def) {
    if (std::optional<ScalarScale> s = scalarScale(*def)) {
      alpha *= s->factor;
      v = s->data;
    } else if (transposes && swapsLastTwo(*def)) {
      t = !t;
      v = def->operand(0);
    } else if (const Op *swap = transposes ? castOfSwap(*def) : nullptr) {
      t = !t;
      v = addInferredOp(f, OpKind::Cast, {swap->operand(0)},
                        {{"to", Attribute(def->result()->type.dtype)}}, v->name, def->loc);
    } else {
      break;
    }
    changed = true;
  }
  if (!changed)
    return false;
  mm.operands[side] = v;
  setOrDrop(mm, trans, Attribute(int64_t(t)), !t);
  return true;
}

// A's batches are strided batches of cuBLASLt's when A is read transposed
// (no rows to fold into one GEMM): B's batch must then be A's, or either
// side's a single matrix. Grouped keys ([b, h] x [b, 1]) are not: A stays a
// copy there rather than the GEMM a host step.
bool transposedAIsBatched(const Op &mm) {
  Shape ba = mm.operand(0)->type.shape, bb = mm.operand(1)->type.shape;
  ba.resize(ba.size() >= 2 ? ba.size() - 2 : 0);
  bb.resize(bb.size() >= 2 ? bb.size() - 2 : 0);
  auto single = [](const Shape &s) {
    return std::all_of(s.begin(), s.end(), [](const Dim &d) { return d == Dim::fixed(1); });
  };
  size_t r = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), r - ba.size(), Dim::fixed(1));
  bb.insert(bb.begin(), r - bb.size(), Dim::fixed(1));
  return ba == bb || single(ba) || single(bb);
}

bool viewOperands(Function &f, Op &mm) {
  if (!mm.is(OpKind::MatMul) || !isFloat(mm.result()->type.dtype))
    return false;
  double alpha = mm.getFloat("alpha");
  // (Peeling keeps every operand's batch axes: the check holds before and after.)
  bool a = peel(f, mm, 0, alpha, transposedAIsBatched(mm));
  bool b = peel(f, mm, 1, alpha);
  if (a || b)
    setOrDrop(mm, "alpha", Attribute(alpha), alpha == 1.0);
  return a || b;
}

// Transpose(MatMul(a, b)) becomes MatMul(b, a) with both sides' trans
// flipped, in place of the Transpose (its result, name and readers stay),
// when nothing else reads the product. Returns whether it did.
bool transposeProduct(const Function &f, const std::unordered_map<const Value *, size_t> &reads,
                      Op &t) {
  if (!swapsLastTwo(t))
    return false;
  const Value *c = t.operand(0);
  Op *mm = c->def;
  if (!mm || !mm->is(OpKind::MatMul) || !isFloat(c->type.dtype) ||
      mm->operand(0)->type.rank() < 2 || mm->operand(1)->type.rank() < 2 ||
      std::find(f.results.begin(), f.results.end(), c) != f.results.end())
    return false;
  if (reads.at(c) != 1)
    return false;
  bool ta = mm->getInt("transA") != 0, tb = mm->getInt("transB") != 0;
  double alpha = mm->getFloat("alpha");
  Op swapped(OpKind::MatMul);
  swapped.operands = {mm->operand(1), mm->operand(0)};
  if (!tb && !transposedAIsBatched(swapped)) // b would be read transposed
    return false;
  t.kind = OpKind::MatMul;
  t.operands = swapped.operands;
  t.attrs.clear();
  t.loc = mm->loc; // the GEMM's node and phase
  setOrDrop(t, "transA", Attribute(int64_t(!tb)), tb);
  setOrDrop(t, "transB", Attribute(int64_t(!ta)), ta);
  setOrDrop(t, "alpha", Attribute(alpha), alpha == 1.0);
  return true;
}

} // namespace

// One Cast per (value, type): the Casts peel makes (a tied head's
// Cast(Transpose(table)) -> Cast(table)) beside another Cast of the same
// value, earlier (the forward's, which rematerialize may still recompute
// for the backward) or later (mixed precision's for the backward's GEMM),
// would be two kernels each reading it; the later one's readers read the
// earlier one.
void dedupeCasts(Function &f) {
  std::map<std::pair<const Value *, DType>, Value *> first;
  std::unordered_map<const Value *, Value *> replaced;
  for (auto &op : f.ops) {
    for (Value *&v : op->operands)
      if (auto it = replaced.find(v); v && it != replaced.end())
        v = it->second;
    bool returned = std::find(f.results.begin(), f.results.end(), op->result()) != f.results.end();
    if (op->is(OpKind::Cast) && op->operand(0) && !returned) {
      auto [it, fresh] =
          first.emplace(std::make_pair(op->operand(0), op->result()->type.dtype), op->result());
      if (!fresh)
        replaced[op->result()] = it->second;
    }
  }
}

bool runGemmViewsPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fp : m.functions) {
    std::unordered_map<const Value *, size_t> reads; // operand slots reading each value
    for (const auto &op : fp->ops)
      for (const Value *v : op->operands)
        ++reads[v];
    bool here = rewriteOpsInPlace(*fp, [&](Function &f, Op &op) {
      bool swapped = transposeProduct(f, reads, op);
      return viewOperands(f, op) || swapped;
    });
    if (here) {
      dedupeCasts(*fp);
      eraseDeadOps(*fp);
    }
    changed |= here;
  }
  return changed;
}

} // namespace tc
