// A size as an expression of a model's symbolic dims: a symbolic dim of the
// IR that shape inference derives (Reshape's -1: total / known dims; Concat
// along a symbolic axis: a sum; a slice: a difference), and what the
// compiler stores for the runtime (buffer sizes and offsets in the
// artifact's shape-plan section), which evaluates it per shape.
//
// Canonical: a polynomial in atoms (symbols, max, align, exact quotients)
// with integer coefficients, so that equal expressions have equal text and
// code comparing Dim::symbol strings (broadcasting, fusion, views) sees them
// equal. Text form, as printed in IR types and stored:
//   `7`, `N`, `(+ N 1)`, `(* 64 N S)`, `(+ (* 2 N) -1)`, `(/ (* 3 N) 2)`,
//   `(max a b ...)`, `(align 256 a)`
// A sum lists its terms by their atoms' text, the constant last; a product
// its coefficient first, then its atoms in text order.
#pragma once
#include "tc/IR/Types.h"
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class DimExpr {
public:
  enum class Kind { Const, Sym, Add, Mul, Max, Align, Div };

  DimExpr() = default;                // the constant 0
  static DimExpr constant(int64_t n); // a size: n >= 0
  static DimExpr integer(int64_t n);  // any sign: a shape tensor's element (-1)
  static DimExpr symbol(std::string name);
  // Constant operands fold, so a static model's expressions are constants.
  friend DimExpr operator+(const DimExpr &a, const DimExpr &b);
  friend DimExpr operator-(const DimExpr &a, const DimExpr &b);
  friend DimExpr operator*(const DimExpr &a, const DimExpr &b);
  // `a / b` where the caller knows it is whole (Reshape's -1): the quotient
  // when b divides every term of a, else an exact-quotient atom whose
  // evaluation fails where it is not whole. b != 0.
  static DimExpr exactDiv(const DimExpr &a, const DimExpr &b);
  static DimExpr max(const DimExpr &a, const DimExpr &b);
  // `a` rounded up to a multiple of `to` (> 0).
  static DimExpr alignUp(const DimExpr &a, int64_t to);

  Kind kind() const { return kind_; }
  bool isConstant() const { return kind_ == Kind::Const; }
  int64_t constantValue() const { return value_; } // Const only
  // Whether an exact quotient occurs in it (not whole at every size).
  bool hasQuotient() const;
  // Whether it is >= 0 at every size (every symbol a size, >= 0): a
  // constant >= 0, or a sum of products with no negative coefficient.
  bool nonNegative() const;
  // The symbols it reads, added to `out`.
  void symbols(std::set<std::string> &out) const;

  // Throws tc::Error for a symbol `sizes` lacks, on overflow or on a
  // quotient that is not whole.
  int64_t eval(const std::map<std::string, int64_t> &sizes) const;
  // With the symbols `sizes` has replaced by their values.
  DimExpr substitute(const std::map<std::string, int64_t> &sizes) const;
  std::string str() const;
  // Throws tc::Error naming what is wrong.
  static DimExpr parse(std::string_view text);

  friend bool operator==(const DimExpr &a, const DimExpr &b) { return a.str() == b.str(); }

private:
  friend struct Poly;
  Kind kind_ = Kind::Const;
  int64_t value_ = 0; // Const: the value; Align: the multiple
  std::string symbol_;
  std::vector<DimExpr> args_;
};

// A dim as an expression (static: a constant; symbolic: its text parsed).
// Throws tc::Error for an unknown dim.
DimExpr exprOf(const Dim &d);
// The dim an expression describes: static when constant, else symbolic with
// the canonical text. Throws tc::Error for a negative constant.
Dim dimOf(const DimExpr &e);
// The size of `d` at `sizes` (a symbol's size, or its expression evaluated);
// nullopt for `?`, a symbol `sizes` lacks or a quotient not whole.
std::optional<int64_t> dimValue(const Dim &d, const std::map<std::string, int64_t> &sizes);
// `d` with the symbols `sizes` has replaced by their values (`?` stays).
Dim substituteDim(const Dim &d, const std::map<std::string, int64_t> &sizes);

// Shape arithmetic on dims, as shape rules need it: static stays static, a
// `?` operand gives `?`, and so does a result that is not a size (negative,
// overflowing, a quotient by 0 or of static dims that is not whole).
Dim dimProduct(const std::vector<Dim> &dims);
Dim dimSum(const Dim &a, const Dim &b);
Dim dimDifference(const Dim &a, const Dim &b);
// The exact quotient (Reshape's -1); `whole` also gives `?` where it would
// not be whole at every size (an integer division's floor).
Dim dimQuotient(const Dim &a, const Dim &b, bool whole = false);

} // namespace tc
