// Decoding of the Attention op's `layout` attribute (AttentionLayout.h).
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/OpAttrs.h"
#include "tc/Support/Error.h"
#include <cmath>

namespace tc {

int64_t attentionLayoutCode(const Op &op, size_t i) {
  const std::vector<int64_t> &codes = attr<OpKind::Attention, "layout">(op);
  if (codes.empty())
    return 0;
  if (codes.size() != 4)
    throw Error("Attention: layout must have 4 codes (q, k, v, result), got " +
                std::to_string(codes.size()));
  int64_t c = codes[i];
  if (c < 0 || (i == 3 && c > 1))
    throw Error("Attention: layout code " + std::to_string(c) + " for " +
                (i == 3 ? "the result" : "operand " + std::to_string(i)) +
                (i == 3 ? " (0 or 1)"
                        : " (0, 1, 2 + part or " + std::to_string(kHeadsMajorPacked) + " + part)"));
  return c;
}

AttentionAxes attentionAxes(int64_t code) {
  if (code == 0)
    return {0, 1, 2, 3, -1};
  if (code == 1)
    return {0, 2, 1, 3, -1};
  if (code >= kHeadsMajorPacked)
    return {0, 2, 1, 4, code - kHeadsMajorPacked, 3};
  return {0, 3, 1, 4, code - 2, 2};
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
