// Memory planning: every intermediate tensor of a function gets an offset in
// ONE arena. Liveness runs over the scheduled ops (fusion groups are single
// steps, and so is a multi-tensor run of them: tc/CodeGen/MultiTensor.h); views (Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, and a contiguous Slice at a byte offset: Views.h) alias their
// operand; a pointwise step may write over an operand that dies there (in place), unless a Slice
// view of it is read; then blocks are packed greedily, largest first, at the lowest offset free
// over their lifetime. Backends allocate `arenaBytes` once.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/ArenaPacking.h"
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace tc {

struct PlannedBuffer {
  const Value *value = nullptr;
  uint64_t bytes = 0;               // 0 for views
  uint64_t offset = 0;              // in the arena (views: their base's offset)
  size_t def = 0;                   // step that writes it
  size_t lastUse = 0;               // last step that reads it (SIZE_MAX: a function result)
  const Value *base = nullptr;      // views: the value whose storage they alias
  uint64_t viewOffset = 0;          // views: bytes past the start of base's storage
  bool partial = false;             // views: of a part of base (a Slice)
  const Value *inPlaceOf = nullptr; // written over this dying operand
};

struct MemoryPlan {
  std::string function;
  std::map<std::string, int64_t> assumedDims; // symbols not given, taken as 1
  std::vector<PlannedBuffer> buffers;         // in definition order
  uint64_t arenaBytes = 0;                    // predicted peak: the arena's size
  uint64_t naiveBytes = 0;                    // every intermediate in its own buffer
  uint64_t liveLowerBound = 0;                // most bytes live at any one step
  size_t views = 0, inPlace = 0;
  // The arena's blocks (offsets packed) and each buffer's block (SIZE_MAX:
  // none, a view of an argument or a constant): what repackArena redoes.
  std::vector<ArenaBlock> blocks;
  std::vector<size_t> blockOf;
  double compression() const { return arenaBytes ? double(naiveBytes) / double(arenaBytes) : 1.0; }
};

// Offsets are aligned to this (a CUDA global-memory transaction and AVX-512 line).
constexpr uint64_t kArenaAlignment = 256;

// Plans f's intermediates. `dims` sizes the symbolic dims; a symbol it does
// not give is taken as 1 and listed in assumedDims. Throws tc::Error when a
// size is unknown (`?`) (run shape inference or give --dim first).
MemoryPlan planMemory(const Function &f, const std::map<std::string, int64_t> &dims = {});

// "memory plan for @main: arena 1.2 MiB (predicted peak), naive 3.4 MiB, 2.83x ..."
// and, with `perBuffer`, one line per buffer.
void printMemoryPlan(const MemoryPlan &plan, std::ostream &os, bool perBuffer = false);

} // namespace tc
