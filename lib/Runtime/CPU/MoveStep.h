// Data-movement steps (Gather, Concat, Split, Slice) of a planned CPU run:
// row copies over the arena at sizes fixed by the plan, with the reference
// kernels' checks (an out-of-range index is the same one-line error), and
// none of the fallback's per-step scratch function and copies.
#pragma once
#include "tc/IR/IR.h"
#include <functional>

namespace tc {

// Reads `bufs` = the op's operands then results (static shapes). Slice reads
// its bounds on each run (they may be computed at run time) and fails with
// one line when they select other sizes than the plan's. Empty when the op
// is not one of these (or moves strings): it runs on the reference kernels.
using MoveStep = std::function<void(void *const *bufs)>;
MoveStep makeMoveStep(const Op &op);

} // namespace tc
