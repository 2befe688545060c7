// A value as a strided view of another value's row-major buffer: what a chain
// of data-movement ops (Transpose, Reshape / Squeeze / Unsqueeze / Flatten,
// Slice, Split, a Gather of one constant index) makes of its source without
// copying. attention-layouts uses it to find the layout in which Attention can
// read an operand straight from the buffer its chain of copies started from.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <vector>

namespace tc {

struct StridedView {
  Shape sizes;
  // In elements; -1 where outside a symbolic dim, or where the axis is
  // `merged`.
  std::vector<int64_t> strides;
  int64_t offset = 0;
  // An axis a Reshape merged from axes whose strides do not chain (a
  // sequence-first [S, B, E] viewed as [S, B * H, D]): its sub-axes, outer
  // first, as (size, stride); empty for a plain axis. A later Reshape may
  // split it again along them (to [S, B, H, D]); nothing else reads it.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> merged;

  // `s` row-major with offset 0.
  static StridedView rowMajor(const Shape &s);
  // The same sizes, strides and offset as rowMajor(sizes).
  bool isRowMajor() const;
};

// Whether `op` moves data without computing (its operand 0 the data): the
// ops applyViewOp follows. Wider than Analysis/Views.h's isViewOp (what
// aliases its operand's storage): a Transpose is a strided view, not an alias.
bool isStridedViewOp(const Op &op);

// `v` (operand 0 of `op`) as seen through `op`'s result `result`; nullopt
// where the result is no strided view of v's buffer (splitting an axis
// across its merged sub-axes, a step other than 1, a non-constant index or
// bound, a size that is not static where it must be).
std::optional<StridedView> applyViewOp(const StridedView &v, const Op &op, const Value *result);

} // namespace tc
