#include "tc/Runtime/ArenaPacking.h"
#include <algorithm>
#include <utility>

namespace tc {

uint64_t packArena(std::vector<ArenaBlock> &blocks) {
  std::vector<size_t> order(blocks.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<size_t> placed;
  uint64_t arena = 0;
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (size_t bi : order) {
    ArenaBlock &b = blocks[bi];
    taken.clear();
    for (size_t pi : placed) {
      const ArenaBlock &p = blocks[pi];
      if (p.start <= b.end && b.start <= p.end)
        taken.push_back({p.offset, p.offset + p.bytes});
    }
    std::sort(taken.begin(), taken.end());
    uint64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b.bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    placed.push_back(bi);
  }
  return arena;
}

} // namespace tc
