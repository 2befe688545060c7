// A size as an expression of a model's symbolic dims: what the compiler
// stores for the runtime (buffer offsets and sizes in the artifact's
// shape-plan section) so that the runtime evaluates a shape's plan instead of
// re-deriving it from the IR. Constants, symbols, sums, products, max and
// align-up: enough for a byte size (dtype size x dims) and an arena offset.
// Text form, as stored: `7`, `N`, `(+ a b ...)`, `(* a b ...)`,
// `(max a b ...)`, `(align 256 a)`.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class DimExpr {
public:
  enum class Kind { Const, Sym, Add, Mul, Max, Align };

  DimExpr() = default; // the constant 0
  static DimExpr constant(int64_t n);
  static DimExpr symbol(std::string name);
  // Constant operands fold, so a static model's expressions are constants.
  friend DimExpr operator+(const DimExpr &a, const DimExpr &b);
  friend DimExpr operator*(const DimExpr &a, const DimExpr &b);
  static DimExpr max(const DimExpr &a, const DimExpr &b);
  // `a` rounded up to a multiple of `to` (> 0).
  static DimExpr alignUp(const DimExpr &a, int64_t to);

  Kind kind() const { return kind_; }
  bool isConstant() const { return kind_ == Kind::Const; }
  int64_t constantValue() const { return value_; } // Const only

  // Throws tc::Error for a symbol `sizes` lacks, or on overflow.
  int64_t eval(const std::map<std::string, int64_t> &sizes) const;
  std::string str() const;
  // Throws tc::Error naming what is wrong.
  static DimExpr parse(std::string_view text);

  friend bool operator==(const DimExpr &a, const DimExpr &b) { return a.str() == b.str(); }

private:
  static DimExpr nary(Kind k, const DimExpr &a, const DimExpr &b);
  Kind kind_ = Kind::Const;
  int64_t value_ = 0; // Const: the value; Align: the multiple
  std::string symbol_;
  std::vector<DimExpr> args_;
};

} // namespace tc
