// How many kernels a function will launch: every op except views (which
// alias memory) and constants; a Fused op is one kernel.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

bool isViewOp(const Op &op);
size_t countKernels(const Function &f);

} // namespace tc
