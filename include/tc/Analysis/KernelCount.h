// How many kernels a function will launch: every op except views (which
// alias memory) and constants; a Fused op is one kernel.
#pragma once
#include "tc/Analysis/Views.h"

namespace tc {

size_t countKernels(const Function &f);

} // namespace tc
