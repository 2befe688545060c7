// gradientRule(OpKind): Gradients.def as a table indexed by op kind.
#include "GradRules.h"
#include <array>

namespace tc {

GradFn gradientRule(OpKind k) {
  static const std::array<GradFn, size_t(OpKind::NumOps)> table = [] {
    std::array<GradFn, size_t(OpKind::NumOps)> t{};
#define TC_GRAD(OP, FN) t[size_t(OpKind::OP)] = &grad::FN;
#include "tc/IR/Gradients.def"
#undef TC_GRAD
    return t;
  }();
  return size_t(k) < table.size() ? table[size_t(k)] : nullptr;
}

} // namespace tc
