// Which shape ops copy elements to computed positions, for the fuse pass
// (which outlines them for CUDA) and the kernel emitter (which generates them).
#pragma once
#include "tc/IR/OpTable.h"

namespace tc {

// Gather, Concat, Slice, Split, Expand, Pad, Tile: the CPU runtime copies
// them (MoveStep), CUDA generates kernels for them.
bool isElementMove(OpKind k);

} // namespace tc
