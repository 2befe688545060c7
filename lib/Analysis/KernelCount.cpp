#include "tc/Analysis/KernelCount.h"

namespace tc {

bool isViewOp(const Op &op) {
  switch (op.kind) {
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: return true;
  default: return false;
  }
}

size_t countKernels(const Function &f) {
  size_t n = 0;
  for (const auto &op : f.ops)
    n += isViewOp(*op) ? 0 : 1;
  return n;
}

} // namespace tc
