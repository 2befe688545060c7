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
// (DCE drops them otherwise). Batch axes must stay in place: a perm moving
// one is a copy cuBLASLt's strided batches cannot read. Only CUDA runs the
// pass: oneDNN is not given these views (OneDnnCall refuses them), and the
// CPU's generated kernel would only trade a copy for strided reads.
#include "tc/IR/MatMulViews.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
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

// Peels the views off operand `side` of `mm` (toggling its trans attribute,
// scaling alpha; only scales without `transposes`). Returns whether any was.
bool peel(Op &mm, size_t side, double &alpha, bool transposes = true) {
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

bool viewOperands(Op &mm) {
  if (!mm.is(OpKind::MatMul) || !isFloat(mm.result()->type.dtype))
    return false;
  double alpha = mm.getFloat("alpha");
  // (Peeling keeps every operand's batch axes: the check holds before and after.)
  bool a = peel(mm, 0, alpha, transposedAIsBatched(mm));
  bool b = peel(mm, 1, alpha);
  if (a || b)
    setOrDrop(mm, "alpha", Attribute(alpha), alpha == 1.0);
  return a || b;
}

} // namespace

bool runGemmViewsPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &f : m.functions) {
    bool here = false;
    for (auto &op : f->ops)
      here |= viewOperands(*op);
    if (here)
      eraseDeadOps(*f);
    changed |= here;
  }
  return changed;
}

} // namespace tc
