#include "tc/Analysis/KernelCount.h"

namespace tc {

size_t countKernels(const Function &f) {
  size_t n = 0;
  for (const auto &op : f.ops)
    n += isViewOp(*op) ? 0 : 1;
  return n;
}

} // namespace tc
