// Channels-last layout helpers shared by Conv's shape rule, its reference
// kernel and the channels-last pass. A permutation `p` maps result axis i
// to operand axis p[i] (Transpose's convention).
#pragma once
#include "tc/IR/Types.h"
#include <vector>

namespace tc {

// NCHW -> NHWC: [0, 2, 3, ..., r-1, 1].
inline std::vector<int64_t> toChannelsLastPerm(size_t rank) {
  std::vector<int64_t> p{0};
  for (size_t i = 2; i < rank; ++i)
    p.push_back(int64_t(i));
  if (rank > 1)
    p.push_back(1);
  return p;
}

// NHWC -> NCHW: [0, r-1, 1, 2, ..., r-2].
inline std::vector<int64_t> toChannelsFirstPerm(size_t rank) {
  std::vector<int64_t> p{0};
  if (rank > 1)
    p.push_back(int64_t(rank - 1));
  for (size_t i = 1; i + 1 < rank; ++i)
    p.push_back(int64_t(i));
  return p;
}

inline Shape permuteShape(const Shape &s, const std::vector<int64_t> &perm) {
  Shape out;
  for (int64_t a : perm)
    out.push_back(s[size_t(a)]);
  return out;
}

} // namespace tc
