// A Split whose parts fusion would inline (SplitSlices.cpp): the fuse pass
// makes each part a Slice first, a move with an index map that a pointwise
// group reads in place.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// Rewrites each static Split of f whose every part is read, only by
// pointwise ops and Concats (and none is a result of f), into one Slice a
// part. Returns whether any was.
bool splitsAsSlices(Function &f);

} // namespace tc
