// Packing storage blocks into one arena: the step of memory planning that
// depends on the sizes, shared by the compiler's planner (MemoryPlan.cpp)
// and the runtime, which packs the blocks an artifact's shape-plan section
// describes once their sizes are known (ShapePlan.cpp): one algorithm, so a
// runtime plan is the compiler's at every size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tc {

struct ArenaBlock {
  uint64_t bytes = 0;        // aligned
  size_t start = 0, end = 0; // the steps it is live over, both included
  uint64_t offset = 0;       // set by packArena
};

// Greedy, largest first (ties in order): each block at the lowest offset
// that no block with an overlapping lifetime occupies. Returns the arena's
// bytes.
uint64_t packArena(std::vector<ArenaBlock> &blocks);

} // namespace tc
