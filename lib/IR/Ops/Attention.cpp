// Shape rule of tc's fused Attention op (Ops.def): q [B, H, Sq, D],
// k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], mask broadcast to [B, H, Sq, Skv]
// (the batch of each B or 1; a mask's batch may also divide B: batch b
// reads mask batch b % MB, swin's windows); the result is [B, H, Sq, Dv] in
// q's type, and lse [B, H, Sq] when asked for. AttentionGrad's rule below.
// Each tensor's axes follow its `layout` code (tc/IR/AttentionLayout.h).
#include "OpInference.h"
#include "tc/IR/AttentionLayout.h"

namespace tc::infer {

namespace {

void checkDim(const Dim &a, const Dim &b, const char *what) {
  if (a.isStatic() && b.isStatic() && a.size != b.size)
    fail(what, " mismatch: ", a.size, " vs ", b.size);
}

// Tensor i's (AttentionTensor: operand `operand`) dims as [B, H, S, D] by
// its layout; throws on a rank or part that does not fit.
Shape logicalShape(const Op &op, size_t i, size_t operand) {
  const TensorType &t = operandType(op, operand);
  AttentionAxes a = attentionAxes(op, i);
  const char *names[] = {"q", "k", "v", "out", "dout"};
  if (t.rank() != a.rank())
    fail(names[i], " must be ",
         a.part < 0        ? "4-D"
         : a.partAxis == 3 ? "5-D (packed [B, S, H, N, D])"
         : a.tokens == 0   ? "5-D (packed [S, B, N, H, D])"
                           : "5-D (packed [B, S, N, H, D])",
         " by its layout, got ", t.str());
  const Dim &parts = a.part >= 0 ? t.shape[a.partAxis] : Dim::fixed(1);
  if (a.part >= 0 && parts.isStatic() && a.part >= parts.size)
    fail(names[i], " is part ", a.part, " of a packed tensor with ", parts.size, " parts");
  return attentionLogicalDims(a, t.shape);
}

// The mask (operand `i`, if any) broadcasts to the scores [MB | B, H, Sq,
// Skv] (its batch MB when 4-D, else B) and has q's type.
void checkMask(const Op &op, size_t i, DType t, const Dim &b, const Dim &h, const Dim &sq,
               const Dim &skv) {
  const Value *mask = op.operand(i);
  if (!mask)
    return;
  if (mask->type.dtype != t)
    fail("the mask must have q's type, got ", mask->type.str());
  if (mask->type.rank() > 4)
    fail("the mask must have rank <= 4, got ", mask->type.str());
  Shape scores{mask->type.rank() == 4 ? mask->type.shape[0] : b, h, sq, skv};
  Shape bc = broadcast(scores, mask->type.shape);
  for (size_t a = 0; a < 4; ++a)
    checkDim(bc[a], scores[a], "mask broadcast");
}

// kv_heads against k's heads, and q's heads a multiple of them.
void checkHeads(const Op &op, const Dim &h, const Dim &k) {
  int64_t kvHeads = op.getInt("kv_heads");
  if (kvHeads < 0)
    fail("kv_heads must be >= 0, got ", kvHeads);
  if (kvHeads > 0)
    checkDim(Dim::fixed(kvHeads), k, "kv_heads and k's heads");
  const Dim &hkv = kvHeads > 0 ? Dim::fixed(kvHeads) : k;
  if (hkv.isStatic() && h.isStatic() && (hkv.size == 0 || h.size % hkv.size))
    fail("q's ", h.size, " heads are not a multiple of the ", hkv.size, " kv heads");
}

// The log-sum-exp's type: f64 for f64 data, else f32.
DType lseType(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

} // namespace

std::vector<TensorType> inferAttention(const Op &op) {
  const TensorType &qt = operandType(op, 0), &kt = operandType(op, 1), &vt = operandType(op, 2);
  if (!isFloat(qt.dtype))
    fail("q must be a float tensor, got ", qt.str());
  if (kt.dtype != qt.dtype || vt.dtype != qt.dtype)
    fail("q, k and v must have one type: ", qt.str(), ", ", kt.str(), ", ", vt.str());
  Shape q = logicalShape(op, 0, 0), k = logicalShape(op, 1, 1), v = logicalShape(op, 2, 2);
  checkDim(q[3], k[3], "q and k head dim");
  checkDim(k[2], v[2], "k and v sequence length");
  checkDim(k[1], v[1], "k and v heads");
  // The batch broadcasts (numpy: each of q, k, v and a 4-D mask 1 or B),
  // or a 4-D mask's batch MB > 1 repeats over q's, k's and v's B (b % MB).
  Shape batch = broadcast(broadcast({q[0]}, {k[0]}), {v[0]});
  const Value *mask = op.operand(3);
  const Dim mb = mask && mask->type.rank() == 4 ? mask->type.shape[0] : Dim::fixed(1);
  if (mb.isStatic() && mb.size > 1 && batch[0] != Dim::fixed(1)) {
    if (batch[0].isStatic() && batch[0].size % mb.size)
      fail("the mask's batch ", mb.size, " neither broadcasts nor divides the batch ",
           batch[0].size);
  } else if (mask && mask->type.rank() == 4) {
    batch = broadcast(batch, {mb});
  }
  checkHeads(op, q[1], k[1]);
  checkMask(op, 3, qt.dtype, batch[0], q[1], q[2], k[2]);
  if (op.results.size() > 2)
    fail("has at most 2 results (the output and lse), got ", op.results.size());
  std::vector<TensorType> out;
  out.push_back(TensorType{
      qt.dtype, attentionPhysicalShape({batch[0], q[1], q[2], v[3]}, attentionLayoutCode(op, 3))});
  if (op.results.size() == 2)
    out.push_back(TensorType{lseType(qt.dtype), {batch[0], q[1], q[2]}});
  return out;
}

// AttentionGrad (Ops.def): q [B, H, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv,
// Skv, Dv], out and dout [B, H, Sq, Dv], lse [B, H, Sq], each by its layout
// code; results dq, dk, dv of q's, k's and v's types in theirs.
std::vector<TensorType> inferAttentionGrad(const Op &op) {
  const TensorType &qt = operandType(op, 0);
  if (!isFloat(qt.dtype))
    fail("q must be a float tensor, got ", qt.str());
  const char *names[] = {"q", "k", "v", "mask", "out", "dout", "lse"};
  for (size_t i : {1, 2, 4, 5})
    if (operandType(op, i).dtype != qt.dtype)
      fail(names[i], " must have q's type, got ", operandType(op, i).str());
  Shape q = logicalShape(op, kAttnQ, 0), k = logicalShape(op, kAttnK, 1),
        v = logicalShape(op, kAttnV, 2);
  checkDim(q[3], k[3], "q and k head dim");
  checkDim(k[2], v[2], "k and v sequence length");
  checkDim(k[1], v[1], "k and v heads");
  checkDim(q[0], k[0], "q and k batch");
  checkDim(q[0], v[0], "q and v batch");
  checkHeads(op, q[1], k[1]);
  Shape o{q[0], q[1], q[2], v[3]};
  for (size_t t : {kAttnOut, kAttnDout}) {
    Shape d = logicalShape(op, t, attentionGradOperand(t));
    for (size_t a = 0; a < 4; ++a)
      checkDim(d[a], o[a], names[attentionGradOperand(t)]);
  }
  const TensorType &lt = operandType(op, 6);
  if (!isFloat(lt.dtype) || lt.rank() != 3)
    fail("lse must be a 3-D float tensor [B, H, Sq], got ", lt.str());
  for (size_t a = 0; a < 3; ++a)
    checkDim(lt.shape[a], q[a], "lse");
  checkMask(op, 3, qt.dtype, q[0], q[1], q[2], k[2]);
  int64_t maskGrad = op.getInt("mask_grad");
  if (maskGrad != 0 && (maskGrad != 1 || !op.operand(3)))
    fail("mask_grad must be 0, or 1 with a mask, got ", maskGrad,
         op.operand(3) ? "" : " without a mask");
  const size_t extra = size_t(maskGrad); // dmask: the scores' shape
  const TensorType dmask{qt.dtype, {q[0], q[1], q[2], k[2]}};
  if (attentionGradPacked(op)) { // one tensor of the three parts
    checkDim(q[1], k[1], "packed dq, dk, dv: q and k heads");
    checkDim(q[2], k[2], "packed dq, dk, dv: q and k tokens");
    checkDim(q[3], v[3], "packed dq, dk, dv: q and v head dims");
    if (op.results.size() != 1 + extra)
      fail("has ", 1 + extra, " result",
           extra ? "s (dq, dk, dv packed; dmask)" : " (dq, dk, dv packed)", " by its layout, got ",
           op.results.size());
    std::vector<TensorType> out{
        TensorType{qt.dtype, attentionPhysicalShape(q, attentionLayoutCode(op, kAttnDq))}};
    if (extra)
      out.push_back(dmask);
    return out;
  }
  for (size_t t : {kAttnDq, kAttnDk, kAttnDv})
    if (isPackedAttentionCode(attentionLayoutCode(op, t)))
      fail("dq, dk and dv are packed only as parts 0, 1, 2 of one packing");
  if (op.results.size() != 3 + extra)
    fail("has ", 3 + extra, " results (dq, dk, dv", extra ? ", dmask" : "", "), got ",
         op.results.size());
  auto typed = [&](const Shape &d, size_t t) {
    return TensorType{qt.dtype, attentionPhysicalShape(d, attentionLayoutCode(op, t))};
  };
  std::vector<TensorType> out{typed(q, kAttnDq), typed(k, kAttnDk), typed(v, kAttnDv)};
  if (extra)
    out.push_back(dmask);
  return out;
}

} // namespace tc::infer
