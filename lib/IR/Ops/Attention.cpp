// Shape rule of tc's fused Attention op (Ops.def): q [B, H, Sq, D],
// k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], mask broadcast to [B, H, Sq, Skv]
// (the batch of each B or 1); the result is [B, H, Sq, Dv] in q's type.
#include "OpInference.h"

namespace tc::infer {

namespace {

void checkDim(const Dim &a, const Dim &b, const char *what) {
  if (a.isStatic() && b.isStatic() && a.size != b.size)
    fail(what, " mismatch: ", a.size, " vs ", b.size);
}

} // namespace

std::vector<TensorType> inferAttention(const Op &op) {
  const TensorType &q = operandType(op, 0), &k = operandType(op, 1), &v = operandType(op, 2);
  if (!isFloat(q.dtype))
    fail("q must be a float tensor, got ", q.str());
  if (k.dtype != q.dtype || v.dtype != q.dtype)
    fail("q, k and v must have one type: ", q.str(), ", ", k.str(), ", ", v.str());
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    fail("q, k and v must be [B, H, S, D], got ", q.str(), ", ", k.str(), ", ", v.str());
  checkDim(q.shape[3], k.shape[3], "q and k head dim");
  checkDim(k.shape[2], v.shape[2], "k and v sequence length");
  checkDim(k.shape[1], v.shape[1], "k and v heads");
  // The batch broadcasts (numpy: each of q, k, v and a 4-D mask 1 or B).
  Shape batch = broadcast(broadcast({q.shape[0]}, {k.shape[0]}), {v.shape[0]});
  if (const Value *mask = op.operand(3); mask && mask->type.rank() == 4)
    batch = broadcast(batch, {mask->type.shape[0]});
  int64_t kvHeads = op.getInt("kv_heads");
  if (kvHeads < 0)
    fail("kv_heads must be >= 0, got ", kvHeads);
  if (kvHeads > 0)
    checkDim(Dim::fixed(kvHeads), k.shape[1], "kv_heads and k's heads");
  const Dim &hkv = kvHeads > 0 ? Dim::fixed(kvHeads) : k.shape[1];
  if (hkv.isStatic() && q.shape[1].isStatic() && (hkv.size == 0 || q.shape[1].size % hkv.size))
    fail("q's ", q.shape[1].size, " heads are not a multiple of the ", hkv.size, " kv heads");
  if (const Value *mask = op.operand(3)) {
    if (mask->type.dtype != q.dtype)
      fail("the mask must have q's type, got ", mask->type.str());
    if (mask->type.rank() > 4)
      fail("the mask must have rank <= 4, got ", mask->type.str());
    Shape scores{batch[0], q.shape[1], q.shape[2], k.shape[2]};
    Shape b = broadcast(scores, mask->type.shape);
    for (size_t i = 0; i < 4; ++i)
      checkDim(b[i], scores[i], "mask broadcast");
  }
  return {TensorType{q.dtype, {batch[0], q.shape[1], q.shape[2], v.shape[3]}}};
}

} // namespace tc::infer
