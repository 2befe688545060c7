// Expands that the pointwise ops reading them would broadcast anyway
// (ExpandBroadcasts.cpp): the fuse pass drops them first.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// In f: Cast(Expand(x)) read alone becomes Expand(Cast(x)) (the cast over
// the small tensor); then an Expand whose every reader is a pointwise op
// that reads an operand of the Expand's shape too, and has that shape,
// gives them x itself (they broadcast it). Returns whether any changed.
bool dropBroadcastExpands(Function &f);

} // namespace tc
