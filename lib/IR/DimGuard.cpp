#include "tc/IR/DimGuard.h"
#include "tc/Support/Error.h"

namespace tc {

std::string DimGuard::violation(const std::map<std::string, int64_t> &sizes) const {
  int64_t l = lhs.eval(sizes), r = rhs.eval(sizes);
  if (l <= r)
    return "";
  if (rhs.isConstant())
    return lhs.str() + " = " + std::to_string(l) + " exceeds " + std::to_string(r) +
           ", the largest this model supports";
  if (lhs.isConstant())
    return rhs.str() + " = " + std::to_string(r) + " is below " + std::to_string(l) +
           ", the smallest this model supports";
  return lhs.str() + " = " + std::to_string(l) + " exceeds " + rhs.str() + " = " +
         std::to_string(r) + ", which this model requires";
}

DimGuard DimGuard::parse(std::string_view text) {
  size_t at = text.find(" <= ");
  if (at == std::string_view::npos || text.find(" <= ", at + 1) != std::string_view::npos)
    fail("size guard '", text, "': expected 'LHS <= RHS'");
  return {DimExpr::parse(text.substr(0, at)), DimExpr::parse(text.substr(at + 4))};
}

} // namespace tc
