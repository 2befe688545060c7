// Views: ops whose result is bytes of their operand already in memory, so
// no kernel runs them and the memory plan aliases the result to the
// operand's storage (at a byte offset for a Slice).
#pragma once
#include "tc/IR/DimExpr.h"
#include "tc/IR/IR.h"
#include <cstdint>
#include <map>
#include <optional>

namespace tc {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, and a contiguous Slice.
bool isViewOp(const Op &op);

// A Slice whose result is one contiguous run of its operand's row-major
// bytes, decided from the types alone so that it stays true once symbolic
// dims get sizes: steps 1, constant starts (and axes), every axis inside
// the one sliced kept whole, every axis outside it of size 1 in the result
// (vit's q/k/v from the stacked [3,B,H,S,D] qkv), and a stride of the cut
// axis that is a multiple of kViewAlignment bytes, so that the view starts
// as aligned as kernels read. The operand is not a constant (a constant's
// slice folds; weights live outside the arena).
bool isContiguousSlice(const Op &op);
constexpr uint64_t kViewAlignment = 16;

// How many bytes into its operand a view's result starts: 0 for the
// reshaping views, the first element's offset for a contiguous Slice
// (symbolic dims sized by `dims`, those it lacks taken as 1); nullopt for
// any other op.
std::optional<uint64_t> viewByteOffset(const Op &op,
                                       const std::map<std::string, int64_t> &dims = {});
// The same as an expression of the symbolic dims (vit's k and v start a
// batch's worth of q in); nullopt also where a symbolic dim clamps a start.
std::optional<DimExpr> viewByteOffsetExpr(const Op &op);

} // namespace tc
