#include "tc/Runtime/DimExpr.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <cstdint>

namespace tc {

namespace {

[[noreturn]] void overflows() { fail("size expression: the value overflows"); }

int64_t apply(DimExpr::Kind k, int64_t a, int64_t b) {
  int64_t r = 0;
  if (k == DimExpr::Kind::Max)
    return std::max(a, b);
  if (k == DimExpr::Kind::Add ? __builtin_add_overflow(a, b, &r) : __builtin_mul_overflow(a, b, &r))
    overflows();
  return r;
}

const char *opName(DimExpr::Kind k) {
  switch (k) {
  case DimExpr::Kind::Add: return "+";
  case DimExpr::Kind::Mul: return "*";
  case DimExpr::Kind::Max: return "max";
  default: return "align";
  }
}

// A recursive-descent reader of the text form.
struct Reader {
  std::string_view text;
  size_t pos = 0;

  [[noreturn]] void bad(const std::string &what) const {
    fail("size expression '", text, "': ", what, " at offset ", pos);
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  std::string_view token() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) &&
           text[pos] != '(' && text[pos] != ')')
      ++pos;
    if (pos == start)
      bad("expected a number, a symbol or '('");
    return text.substr(start, pos - start);
  }
  static bool isNumber(std::string_view t) {
    for (char c : t)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return false;
    return !t.empty();
  }
  int64_t number(std::string_view t) {
    if (!isNumber(t) || t.size() > 18)
      bad("expected a non-negative number, got '" + std::string(t) + "'");
    return std::stoll(std::string(t));
  }
  DimExpr expr() {
    skipSpace();
    if (pos < text.size() && text[pos] == '(') {
      ++pos;
      std::string_view op = token();
      DimExpr r;
      if (op == "align") {
        int64_t to = number(token());
        if (to <= 0)
          bad("align needs a multiple above 0");
        r = DimExpr::alignUp(expr(), to);
      } else if (op == "+" || op == "*" || op == "max") {
        r = expr();
        skipSpace();
        if (pos < text.size() && text[pos] == ')')
          bad("'" + std::string(op) + "' needs two operands or more");
        while (skipSpace(), pos < text.size() && text[pos] != ')') {
          DimExpr b = expr();
          r = op == "+" ? r + b : op == "*" ? r * b : DimExpr::max(r, b);
        }
      } else {
        bad("unknown operator '" + std::string(op) + "'");
      }
      skipSpace();
      if (pos >= text.size() || text[pos] != ')')
        bad("expected ')'");
      ++pos;
      return r;
    }
    std::string_view t = token();
    if (std::isdigit(static_cast<unsigned char>(t[0])))
      return DimExpr::constant(number(t));
    // A model's dim name.
    if (!std::isalpha(static_cast<unsigned char>(t[0])) && t[0] != '_')
      bad("'" + std::string(t) + "' is neither a number nor a symbol");
    return DimExpr::symbol(std::string(t));
  }
};

} // namespace

DimExpr DimExpr::constant(int64_t n) {
  if (n < 0)
    fail("size expression: negative constant ", n);
  DimExpr e;
  e.value_ = n;
  return e;
}

DimExpr DimExpr::symbol(std::string name) {
  DimExpr e;
  e.kind_ = Kind::Sym;
  e.symbol_ = std::move(name);
  return e;
}

DimExpr DimExpr::nary(Kind k, const DimExpr &a, const DimExpr &b) {
  if (a.isConstant() && b.isConstant())
    return constant(apply(k, a.value_, b.value_));
  // Identities keep a product of dims free of `* 1` and `+ 0`.
  int64_t unit = k == Kind::Mul ? 1 : 0;
  if (a.isConstant() && a.value_ == unit)
    return b;
  if (b.isConstant() && b.value_ == unit)
    return a;
  if (k == Kind::Mul && ((a.isConstant() && a.value_ == 0) || (b.isConstant() && b.value_ == 0)))
    return constant(0);
  DimExpr e;
  e.kind_ = k;
  for (const DimExpr *x : {&a, &b}) // flatten (+ (+ a b) c) into (+ a b c)
    if (x->kind_ == k)
      e.args_.insert(e.args_.end(), x->args_.begin(), x->args_.end());
    else
      e.args_.push_back(*x);
  return e;
}

DimExpr operator+(const DimExpr &a, const DimExpr &b) {
  return DimExpr::nary(DimExpr::Kind::Add, a, b);
}
DimExpr operator*(const DimExpr &a, const DimExpr &b) {
  return DimExpr::nary(DimExpr::Kind::Mul, a, b);
}
DimExpr DimExpr::max(const DimExpr &a, const DimExpr &b) {
  if (a == b)
    return a;
  return nary(Kind::Max, a, b);
}

DimExpr DimExpr::alignUp(const DimExpr &a, int64_t to) {
  if (to <= 0)
    fail("size expression: align to ", to);
  if (a.isConstant()) {
    if (a.value_ > INT64_MAX - (to - 1))
      overflows();
    return constant((a.value_ + to - 1) / to * to);
  }
  if (to == 1)
    return a;
  DimExpr e;
  e.kind_ = Kind::Align;
  e.value_ = to;
  e.args_ = {a};
  return e;
}

int64_t DimExpr::eval(const std::map<std::string, int64_t> &sizes) const {
  switch (kind_) {
  case Kind::Const: return value_;
  case Kind::Sym: {
    auto it = sizes.find(symbol_);
    if (it == sizes.end())
      fail("size expression: no size for symbolic dim '", symbol_, "'");
    return it->second;
  }
  case Kind::Align: return alignUp(constant(args_[0].eval(sizes)), value_).value_;
  default: {
    int64_t r = args_[0].eval(sizes);
    for (size_t i = 1; i < args_.size(); ++i)
      r = apply(kind_, r, args_[i].eval(sizes));
    return r;
  }
  }
}

std::string DimExpr::str() const {
  switch (kind_) {
  case Kind::Const: return std::to_string(value_);
  case Kind::Sym: return symbol_;
  case Kind::Align: return "(align " + std::to_string(value_) + " " + args_[0].str() + ")";
  default: {
    std::string s = std::string("(") + opName(kind_);
    for (const DimExpr &a : args_)
      s += " " + a.str();
    return s + ")";
  }
  }
}

DimExpr DimExpr::parse(std::string_view text) {
  Reader r{text};
  DimExpr e = r.expr();
  r.skipSpace();
  if (r.pos != text.size())
    r.bad("unexpected text after the expression");
  return e;
}

} // namespace tc
