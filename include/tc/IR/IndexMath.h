// Index arithmetic that a shape rule and a reference kernel must agree on
// exactly (the rule sizes the result, the kernel fills it).
#pragma once
#include <algorithm>
#include <cstdint>

namespace tc {

// One axis of an ONNX Slice: the first index read and how many are read.
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
};

// ONNX Slice semantics on an axis of size `dim` (>= 0) for any int64
// start/end and a nonzero step: negative start/end count from the end; then
// for step > 0 both clamp to [0, dim], for step < 0 start clamps to
// [0, dim - 1] and end to [-1, dim - 1]. No intermediate overflows.
inline SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0)
    start += dim; // start >= INT64_MIN and dim >= 0: no overflow
  if (end < 0)
    end += dim;
  SliceRange r;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start)
      r.count = int64_t((uint64_t(end - start) - 1) / uint64_t(step) + 1);
  } else {
    if (dim == 0)
      return r;
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (start > end)
      r.count = int64_t((uint64_t(start - end) - 1) / (uint64_t(0) - uint64_t(step)) + 1);
  }
  r.start = start;
  return r;
}

} // namespace tc
