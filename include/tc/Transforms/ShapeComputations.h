// Shape computations: the ops a per-shape plan folds (ShapePlan.cpp runs
// fold-constants once the input sizes are known), so they run neither as
// kernels nor as host steps. The fuse pass keeps them out of groups and
// codegen does not count them as host steps: one definition for both.
#pragma once
#include "tc/IR/IR.h"
#include <unordered_set>

namespace tc {

// The ops of `f` (in f's order) whose results are known once the input
// sizes are: Shape / Size, and ops with a reference kernel that read only
// constants and such results, whose results are small enough for
// fold-constants' max-bytes (a 1-D integer shape vector of symbolic length
// counts as small) or which are views of them.
std::unordered_set<const Op *> shapeComputations(const Function &f);

} // namespace tc
