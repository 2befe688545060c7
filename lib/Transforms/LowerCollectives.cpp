// AllGather and ReduceScatter along an axis with larger axes before it (an
// LM head's columns gathered, [B, S, V/N] -> [B, S, V]) become the same
// collective along the leading axis between two Transposes: NCCL's
// collectives concatenate and split whole buffers, rank after rank, which is
// the leading axis of a contiguous tensor.
//
//   Y = AllGather(X) {axis = a}   ->   Xt = Transpose(X) {perm = [a, 0 .. a-1, a+1 ..]}
//                                      Yt = AllGather(Xt) {axis = 0}
//                                      Y  = Transpose(Yt) {perm = inverse}
//
// (codegen's outlining: the Transposes are kernels of their own.)
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"

namespace tc {

namespace {

bool needsLowering(const Op &op) {
  if (!op.is(OpKind::AllGather) && !op.is(OpKind::ReduceScatter))
    return false;
  const Shape &s = op.operand(0)->type.shape;
  int64_t axis = op.getInt("axis");
  if (axis < 0)
    axis += int64_t(s.size());
  for (int64_t a = 0; a < axis; ++a)
    if (!s[size_t(a)].isStatic() || s[size_t(a)].size != 1)
      return true;
  return false;
}

// `op` becomes the Transpose back; the moved operand and the leading-axis
// collective land before it (rewriteOpsInPlace).
bool lower(Function &f, Op &op) {
  if (!needsLowering(op))
    return false;
  Value *x = op.operand(0);
  int64_t r = int64_t(x->type.rank()), axis = op.getInt("axis");
  if (axis < 0)
    axis += r;
  std::vector<int64_t> perm{axis};
  std::vector<int64_t> inverse(static_cast<size_t>(r));
  for (int64_t a = 0; a < r; ++a)
    if (a != axis)
      perm.push_back(a);
  for (int64_t i = 0; i < r; ++i)
    inverse[size_t(perm[size_t(i)])] = i;
  const std::string base = op.result()->name + "_leading";
  Value *xt = addInferredOp(f, OpKind::Transpose, {x}, {{"perm", Attribute(perm)}}, base, op.loc);
  std::vector<std::pair<std::string, Attribute>> attrs = {{"axis", Attribute(int64_t(0))},
                                                          {"ranks", op.attr("ranks")}};
  if (op.is(OpKind::ReduceScatter))
    attrs.push_back({"reduction", op.attr("reduction")});
  Value *yt = addInferredOp(f, op.kind, {xt}, std::move(attrs), base, op.loc);
  op.kind = OpKind::Transpose;
  op.attrs.clear();
  op.operands = {yt};
  op.setAttr("perm", Attribute(inverse));
  return true;
}

} // namespace

bool runLowerCollectivesPass(Module &m, const PassOptions &) { return rewriteOpsInPlace(m, lower); }

} // namespace tc
