// What the reference kernels of Attention and AttentionGrad share: where
// the mask's element of score (b, h, i, j) is.
#pragma once
#include "Kernels.h"

namespace tc::ref {

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
