// How a data-movement op's result coordinates map to its operands': the
// index arithmetic a pointwise kernel does to read through the op instead
// of a copy kernel writing its result. The fuse pass inlines an op that has
// a map into the pointwise group consuming it (Fusion.cpp); the emitter
// follows the map from the consumer's index (Kernels/InlinedLoads.cpp).
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <vector>

namespace tc {

struct MoveMap {
  // Slice: result axis d reads operand index start[d] + c * step[d]
  // (0 and 1 on the axes it keeps whole).
  std::vector<int64_t> start, step;
  // Concat: the joined axis; part k covers [offsets[k], offsets[k + 1]).
  size_t axis = 0;
  std::vector<int64_t> offsets;
  // Transpose: result axis d is operand axis perm[d].
  std::vector<int64_t> perm;
  // Tile: result axis d reads operand index c % dim d, repeats[d] times.
  std::vector<int64_t> repeats;
  // Expand reads its operand broadcast (numpy's trailing alignment).
  // Pad (constant zeros): result axis d reads operand index c - before[d],
  // a zero outside the operand's extent.
  std::vector<int64_t> before;
};

// The map of `op`, or nullopt when it has none a kernel can follow at
// compile-time-known positions: Slice with constant starts/ends/axes/steps
// over static axes, Concat along a static axis, Transpose keeping the last
// axis (so consecutive threads still read consecutive elements), Expand
// whose '?' result dims are its operand's, Tile with constant repeats, Pad
// with zeros (mode constant, value 0, no crops) around static axes.
// Results of rank 0 have none.
std::optional<MoveMap> moveMap(const Op &op);

} // namespace tc
