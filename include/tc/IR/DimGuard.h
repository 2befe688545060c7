// An assumption about a model's symbolic dims, `lhs <= rhs`, that a stored
// shape plan makes and the runtime checks at every new input shape: where a
// size would be `min(seq, 512)` (a Slice of a 512-entry position buffer to
// the sequence length), which no DimExpr expresses, codegen assumes the
// branch the model's own limits imply (`seq <= 512`) and plans `seq`.
// Text form, as stored: `seq <= 512`, `1 <= seq`, `(+ seq 1) <= n`.
#pragma once
#include "tc/IR/DimExpr.h"
#include <map>
#include <string>
#include <string_view>

namespace tc {

struct DimGuard {
  DimExpr lhs, rhs;

  // `lhs <= rhs` with its constants on one side, where the rest is a sum of
  // sizes, so that a message names the dim: `0 <= (+ seq -1)` is `1 <= seq`,
  // `(+ seq 3) <= 515` is `seq <= 512`.
  static DimGuard of(const DimExpr &lhs, const DimExpr &rhs);

  // Whether it holds at every size, so that no run need check it.
  bool always() const { return (rhs - lhs).nonNegative(); }
  // "" when it holds at `sizes`, else what is wrong, naming the dim, its
  // value and the limit: "seq = 600 exceeds 512, the largest this model
  // supports". Throws tc::Error for a symbol `sizes` lacks.
  std::string violation(const std::map<std::string, int64_t> &sizes) const;
  std::string str() const { return lhs.str() + " <= " + rhs.str(); }
  // Throws tc::Error naming what is wrong.
  static DimGuard parse(std::string_view text);

  friend bool operator==(const DimGuard &a, const DimGuard &b) {
    return a.lhs == b.lhs && a.rhs == b.rhs;
  }
};

} // namespace tc
