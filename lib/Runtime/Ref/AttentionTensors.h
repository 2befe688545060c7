// What the reference kernels of Attention and AttentionGrad share: where
// a tensor's (b, h, s) row is by its layout code, and where the mask's
// element of score (b, h, i, j) is.
#pragma once
#include "Kernels.h"
#include "tc/IR/AttentionLayout.h"

namespace tc::ref {

// Tensor i's (AttentionTensor) dims as [B, H, S, D] and its strides, by
// its layout code; throws where `t` does not fit the code.
struct AttentionOperand {
  Dims d;
  AttentionStrides s;
  // Element offset of row (b, h, s); batch 1 broadcasts.
  int64_t row(int64_t b, int64_t h, int64_t tok) const {
    return (d[0] == 1 ? 0 : b) * s.batch + h * s.heads + tok * s.tokens + s.offset;
  }
};
AttentionOperand attentionOperand(const Op &op, size_t i, const HostTensor &t);

// Element offset of index (b, h, i, j) in a tensor of dims `d` (rank <= 4,
// right-aligned) broadcast to the 4-D index space.
inline int64_t broadcastOffset(const Dims &d, const int64_t (&idx)[4]) {
  int64_t off = 0, stride = 1;
  size_t r = d.size();
  for (size_t a = 0; a < r; ++a) {
    size_t axis = r - 1 - a;
    int64_t i = d[axis] == 1 ? 0 : idx[3 - a];
    off += i * stride;
    stride *= d[axis];
  }
  return off;
}

} // namespace tc::ref
