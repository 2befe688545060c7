// Decoding of the Attention op's `layout` attribute (AttentionLayout.h).
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/OpAttrs.h"
#include "tc/Support/Error.h"
#include <cmath>

namespace tc {

size_t attentionTensorCount(const Op &op) { return op.is(OpKind::AttentionGrad) ? 8 : 4; }

size_t attentionGradOperand(size_t i) {
  static const size_t operand[] = {0, 1, 2, 4, 5};
  return i < 5 ? operand[i] : i - kAttnDq; // dq, dk, dv: results 0, 1, 2
}

int64_t attentionLayoutCode(const Op &op, size_t i) {
  const std::vector<int64_t> &codes = op.getInts("layout");
  if (codes.empty())
    return 0;
  size_t n = attentionTensorCount(op);
  const char *name = op.is(OpKind::AttentionGrad) ? "AttentionGrad" : "Attention";
  if (codes.size() != n)
    throw Error(std::string(name) + ": layout must have " + std::to_string(n) +
                (n == 4 ? " codes (q, k, v, result)" : " codes (q, k, v, out, dout, dq, dk, dv)") +
                ", got " + std::to_string(codes.size()));
  static const char *names[] = {"q", "k", "v", "out", "dout", "dq", "dk", "dv"};
  int64_t c = codes[i];
  if (c < 0 || ((i == kAttnOut || i == kAttnDout) && isPackedAttentionCode(c)) ||
      (c > kSeqFirst && c < kSeqFirstPacked) || c >= kSeqFirstPacked + kHeadsMajorPacked)
    throw Error(std::string(name) + ": layout code " + std::to_string(c) + " for " +
                (n == 4 && i == kAttnOut ? std::string("the result") : names[i]) +
                (i == kAttnOut || i == kAttnDout
                     ? " (0, 1 or " + std::to_string(kSeqFirst) + ")"
                     : " (0, 1, 2 + part, " + std::to_string(kHeadsMajorPacked) + " + part, " +
                           std::to_string(kSeqFirst) + " or " + std::to_string(kSeqFirstPacked) +
                           " + part)"));
  return c;
}

AttentionAxes attentionAxes(int64_t code) {
  if (code == 0)
    return {0, 1, 2, 3, -1};
  if (code == 1)
    return {0, 2, 1, 3, -1};
  if (code >= kSeqFirstPacked)
    return {1, 3, 0, 4, code - kSeqFirstPacked, 2};
  if (code == kSeqFirst)
    return {1, 2, 0, 3, -1};
  if (code >= kHeadsMajorPacked)
    return {0, 2, 1, 4, code - kHeadsMajorPacked, 3};
  return {0, 3, 1, 4, code - 2, 2};
}

Shape attentionPhysicalShape(const Shape &bhsd, int64_t code, int64_t parts) {
  AttentionAxes a = attentionAxes(code);
  Shape s(a.rank());
  s[a.batch] = bhsd[0];
  s[a.heads] = bhsd[1];
  s[a.tokens] = bhsd[2];
  s[a.features] = bhsd[3];
  if (a.part >= 0)
    s[a.partAxis] = Dim::fixed(parts);
  return s;
}

bool attentionGradPacked(const Op &op) {
  if (!op.is(OpKind::AttentionGrad))
    return false;
  int64_t dq = attentionLayoutCode(op, kAttnDq);
  return isPackedAttentionCode(dq) && attentionAxes(dq).part == 0 &&
         attentionLayoutCode(op, kAttnDk) == dq + 1 && attentionLayoutCode(op, kAttnDv) == dq + 2;
}

int attentionGradMaskResult(const Op &op) {
  if (!op.is(OpKind::AttentionGrad) || op.getInt("mask_grad") == 0)
    return -1;
  return attentionGradPacked(op) ? 1 : 3;
}

AttentionStrides attentionStrides(const AttentionAxes &a, const std::vector<int64_t> &dims) {
  auto stride = [&](size_t axis) {
    int64_t s = 1;
    for (size_t x = axis + 1; x < dims.size(); ++x)
      s *= dims[x];
    return s;
  };
  return {stride(a.batch), stride(a.heads), stride(a.tokens),
          a.part < 0 ? 0 : a.part * stride(a.partAxis)};
}

double attentionScale(const Op &op, int64_t headDim) {
  double s = op.getFloat("scale");
  return s == 0 ? 1.0 / std::sqrt(double(headDim)) : s;
}

} // namespace tc
