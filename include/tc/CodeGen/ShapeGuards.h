// Sizes a stored shape plan may assume (DimGuard.h): a Slice whose bounds
// are expressions of the symbolic dims (a position or mask buffer sliced to
// the sequence length: Shape -> Gather -> Slice, as exporters emit) has a
// size `min(seq, 512)` or `min(1, seq)`, which no DimExpr expresses, so
// shape inference leaves it `?` and no plan could be stored. Codegen assumes
// the bounds lie within the sliced axis, in order (`seq <= 512`: the buffer
// holds 512 entries; `1 <= seq`), types the Slice `seq - 0` and lets shape
// inference carry that downstream; the plan stores each assumption the
// sizes do not always meet as a guard, which the runtime checks per shape.
#pragma once
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/IR/IR.h"
#include <vector>

namespace tc {

// Refines `m`'s main in place (Slices of main, then shape inference over
// the module) and returns the guards the refined types rely on, each once.
std::vector<StoredGuard> assumeSliceBounds(Module &m);

} // namespace tc
