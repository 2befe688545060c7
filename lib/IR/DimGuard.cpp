#include "tc/IR/DimGuard.h"
#include "tc/Support/Error.h"
#include <set>

namespace tc {

DimGuard DimGuard::of(const DimExpr &lhs, const DimExpr &rhs) {
  DimExpr slack = rhs - lhs; // >= 0
  std::set<std::string> syms;
  slack.symbols(syms);
  std::map<std::string, int64_t> zero;
  for (const std::string &s : syms)
    zero[s] = 0;
  DimExpr c;
  try { // the constant term: every symbol 0 (a quotient atom may not allow it)
    c = DimExpr::integer(slack.eval(zero));
  } catch (const Error &) {
    return {lhs, rhs};
  }
  DimExpr sizes = slack - c;
  if (sizes.nonNegative()) // sizes + c >= 0: -c <= sizes
    return {DimExpr() - c, sizes};
  if (DimExpr flipped = DimExpr() - sizes; flipped.nonNegative()) // c - flipped >= 0
    return {flipped, c};
  return {lhs, rhs};
}

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
