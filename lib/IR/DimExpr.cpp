#include "tc/IR/DimExpr.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <numeric>

namespace tc {

namespace {

[[noreturn]] void overflows() { fail("size expression: the value overflows"); }

int64_t checkedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    overflows();
  return r;
}
int64_t checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    overflows();
  return r;
}

const char *opName(DimExpr::Kind k) {
  switch (k) {
  case DimExpr::Kind::Add: return "+";
  case DimExpr::Kind::Mul: return "*";
  case DimExpr::Kind::Max: return "max";
  case DimExpr::Kind::Div: return "/";
  default: return "align";
  }
}

bool byText(const DimExpr &a, const DimExpr &b) { return a.str() < b.str(); }

} // namespace

// The canonical form's working representation: terms keyed by their atoms'
// text, each a coefficient (never 0) times atoms in text order.
struct Poly {
  struct Term {
    std::vector<DimExpr> atoms;
    int64_t coeff = 0;
  };
  std::map<std::string, Term> terms;

  static std::string keyOf(const std::vector<DimExpr> &atoms) {
    std::string k;
    for (const DimExpr &a : atoms)
      k += a.str() + '\x1f';
    return k;
  }
  void add(std::vector<DimExpr> atoms, int64_t coeff) {
    if (!coeff)
      return;
    std::string k = keyOf(atoms);
    auto [it, fresh] = terms.try_emplace(k, Term{std::move(atoms), 0});
    it->second.coeff = checkedAdd(it->second.coeff, coeff);
    if (!it->second.coeff)
      terms.erase(it);
  }
  static Poly of(const DimExpr &e) {
    Poly p;
    switch (e.kind_) {
    case DimExpr::Kind::Const: p.add({}, e.value_); break;
    case DimExpr::Kind::Add:
      for (const DimExpr &a : e.args_)
        p = p + of(a);
      break;
    case DimExpr::Kind::Mul:
      p.add({}, 1);
      for (const DimExpr &a : e.args_)
        p = p * of(a);
      break;
    default: p.add({e}, 1);
    }
    return p;
  }
  friend Poly operator+(Poly a, const Poly &b) {
    for (const auto &[k, t] : b.terms)
      a.add(t.atoms, t.coeff);
    return a;
  }
  friend Poly operator*(const Poly &a, const Poly &b) {
    Poly r;
    for (const auto &[ka, ta] : a.terms)
      for (const auto &[kb, tb] : b.terms) {
        std::vector<DimExpr> atoms = ta.atoms;
        atoms.insert(atoms.end(), tb.atoms.begin(), tb.atoms.end());
        std::stable_sort(atoms.begin(), atoms.end(), byText);
        r.add(std::move(atoms), checkedMul(ta.coeff, tb.coeff));
      }
    return r;
  }
  // The quotient when `d` (one term) divides every term, else nullopt.
  std::optional<Poly> dividedBy(const Term &d) const {
    Poly q;
    for (const auto &[k, t] : terms) {
      if (t.coeff % d.coeff)
        return std::nullopt;
      std::vector<DimExpr> rest = t.atoms;
      for (const DimExpr &a : d.atoms) {
        auto it = std::find(rest.begin(), rest.end(), a);
        if (it == rest.end())
          return std::nullopt;
        rest.erase(it);
      }
      q.add(std::move(rest), t.coeff / d.coeff);
    }
    return q;
  }
  static DimExpr node(DimExpr::Kind k, std::vector<DimExpr> args) {
    DimExpr e;
    e.kind_ = k;
    e.args_ = std::move(args);
    return e;
  }
  DimExpr expr() const {
    std::vector<DimExpr> sum;
    std::optional<DimExpr> constant;
    for (const auto &[k, t] : terms) {
      DimExpr term;
      if (t.atoms.empty()) {
        constant = DimExpr::constant(0);
        constant->value_ = t.coeff;
        continue;
      }
      if (t.coeff == 1 && t.atoms.size() == 1) {
        term = t.atoms[0];
      } else {
        std::vector<DimExpr> args;
        if (t.coeff != 1) {
          args.push_back(DimExpr());
          args.back().value_ = t.coeff;
        }
        args.insert(args.end(), t.atoms.begin(), t.atoms.end());
        term = node(DimExpr::Kind::Mul, std::move(args));
      }
      sum.push_back(std::move(term));
    }
    if (constant)
      sum.push_back(*constant);
    if (sum.empty())
      return DimExpr();
    return sum.size() == 1 ? sum[0] : node(DimExpr::Kind::Add, std::move(sum));
  }
};

namespace {

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
  bool at(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
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
    if (!t.empty() && t[0] == '-')
      t.remove_prefix(1);
    return !t.empty() &&
           std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit((unsigned char)c); });
  }
  int64_t number(std::string_view t) {
    if (!isNumber(t) || t.size() > 18)
      bad("expected a number, got '" + std::string(t) + "'");
    return std::stoll(std::string(t));
  }
  DimExpr expr() {
    if (!at('(')) {
      std::string_view t = token();
      if (isNumber(t)) // a sum's constant may be negative: (+ S -1)
        return t[0] == '-' ? DimExpr() - DimExpr::constant(-number(t))
                           : DimExpr::constant(number(t));
      // A model's dim name: an IR identifier.
      if ((!std::isalpha(static_cast<unsigned char>(t[0])) && t[0] != '_') ||
          !std::all_of(t.begin(), t.end(), [](char c) {
            return std::isalnum((unsigned char)c) || c == '_' || c == '.';
          }))
        bad("'" + std::string(t) + "' is neither a number nor a symbol");
      return DimExpr::symbol(std::string(t));
    }
    ++pos;
    std::string_view op = token();
    DimExpr r;
    if (op == "align") {
      int64_t to = number(token());
      if (to <= 0)
        bad("align needs a multiple above 0");
      r = DimExpr::alignUp(expr(), to);
    } else if (op == "/") {
      DimExpr a = expr();
      DimExpr b = expr();
      if (b.isConstant() && !b.constantValue())
        bad("division by 0");
      r = DimExpr::exactDiv(a, b);
    } else if (op == "+" || op == "*" || op == "max") {
      r = expr();
      if (at(')'))
        bad("'" + std::string(op) + "' needs two operands or more");
      while (!at(')') && pos < text.size()) {
        DimExpr b = expr();
        r = op == "+" ? r + b : op == "*" ? r * b : DimExpr::max(r, b);
      }
    } else {
      bad("unknown operator '" + std::string(op) + "'");
    }
    if (!at(')'))
      bad("expected ')'");
    ++pos;
    return r;
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

DimExpr DimExpr::integer(int64_t n) {
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

DimExpr operator+(const DimExpr &a, const DimExpr &b) {
  if (a.isConstant() && b.isConstant()) {
    DimExpr e;
    e.value_ = checkedAdd(a.value_, b.value_);
    return e;
  }
  return (Poly::of(a) + Poly::of(b)).expr();
}
DimExpr operator-(const DimExpr &a, const DimExpr &b) {
  Poly minus;
  minus.add({}, -1);
  return (Poly::of(a) + minus * Poly::of(b)).expr();
}
DimExpr operator*(const DimExpr &a, const DimExpr &b) {
  if (a.isConstant() && b.isConstant()) {
    DimExpr e;
    e.value_ = checkedMul(a.value_, b.value_);
    return e;
  }
  return (Poly::of(a) * Poly::of(b)).expr();
}

DimExpr DimExpr::exactDiv(const DimExpr &a, const DimExpr &b) {
  if (b.isConstant() && !b.value_)
    fail("size expression: ", a.str(), " divided by 0");
  if (a.isConstant() && b.isConstant()) {
    if (a.value_ % b.value_)
      fail("size expression: ", a.value_, " / ", b.value_, " is not whole");
    DimExpr e;
    e.value_ = a.value_ / b.value_;
    return e;
  }
  if (a == b)
    return constant(1);
  Poly pa = Poly::of(a), pb = Poly::of(b);
  if (pb.terms.size() == 1) {
    if (std::optional<Poly> q = pa.dividedBy(pb.terms.begin()->second))
      return q->expr();
    // Cancel what every term shares with the divisor: its atoms, the
    // coefficients' common factor ((/ (* 4 N) (* 6 S N)) is (/ 2 (* 3 S))).
    Poly::Term common{{}, pb.terms.begin()->second.coeff};
    for (const auto &[k, t] : pa.terms)
      common.coeff = std::gcd(common.coeff, t.coeff);
    common.coeff = common.coeff < 0 ? -common.coeff : common.coeff;
    for (const DimExpr &atom : pb.terms.begin()->second.atoms) {
      Poly::Term with = common;
      with.atoms.push_back(atom);
      if (pa.dividedBy(with) && pb.dividedBy(with))
        common = with;
    }
    pa = *pa.dividedBy(common);
    pb = *pb.dividedBy(common);
  }
  DimExpr num = pa.expr(), den = pb.expr();
  if (den.isConstant() && den.value_ == 1)
    return num;
  if (num.isConstant() && den.isConstant())
    return exactDiv(num, den); // whole or an error
  return Poly::node(Kind::Div, {num, den});
}

DimExpr DimExpr::max(const DimExpr &a, const DimExpr &b) {
  if (a.isConstant() && b.isConstant())
    return a.value_ >= b.value_ ? a : b;
  std::vector<DimExpr> args;
  for (const DimExpr *x : {&a, &b}) // flatten (max (max a b) c) into (max a b c)
    if (x->kind_ == Kind::Max)
      args.insert(args.end(), x->args_.begin(), x->args_.end());
    else
      args.push_back(*x);
  std::sort(args.begin(), args.end(), byText);
  args.erase(std::unique(args.begin(), args.end()), args.end());
  return args.size() == 1 ? args[0] : Poly::node(Kind::Max, std::move(args));
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
  DimExpr e = Poly::node(Kind::Align, {a});
  e.value_ = to;
  return e;
}

bool DimExpr::hasQuotient() const {
  return kind_ == Kind::Div ||
         std::any_of(args_.begin(), args_.end(), [](const DimExpr &a) { return a.hasQuotient(); });
}

void DimExpr::symbols(std::set<std::string> &out) const {
  if (kind_ == Kind::Sym)
    out.insert(symbol_);
  for (const DimExpr &a : args_)
    a.symbols(out);
}

bool DimExpr::nonNegative() const {
  switch (kind_) {
  case Kind::Const: return value_ >= 0;
  case Kind::Add:
  case Kind::Mul: // a product's coefficient is its constant operand
    return std::all_of(args_.begin(), args_.end(),
                       [](const DimExpr &a) { return a.nonNegative(); });
  default: return true; // a symbol, max, align or quotient of sizes
  }
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
  case Kind::Div: {
    int64_t n = args_[0].eval(sizes), d = args_[1].eval(sizes);
    if (!d || n % d)
      fail("size expression ", str(), ": ", n, " / ", d, " is not whole");
    return n / d;
  }
  default: {
    int64_t r = args_[0].eval(sizes);
    for (size_t i = 1; i < args_.size(); ++i) {
      int64_t b = args_[i].eval(sizes);
      r = kind_ == Kind::Max   ? std::max(r, b)
          : kind_ == Kind::Add ? checkedAdd(r, b)
                               : checkedMul(r, b);
    }
    return r;
  }
  }
}

DimExpr DimExpr::substitute(const std::map<std::string, int64_t> &sizes) const {
  switch (kind_) {
  case Kind::Const: return *this;
  case Kind::Sym: {
    auto it = sizes.find(symbol_);
    return it == sizes.end() ? *this : constant(it->second);
  }
  case Kind::Align: return alignUp(args_[0].substitute(sizes), value_);
  case Kind::Div: return exactDiv(args_[0].substitute(sizes), args_[1].substitute(sizes));
  default: {
    DimExpr r = args_[0].substitute(sizes);
    for (size_t i = 1; i < args_.size(); ++i) {
      DimExpr b = args_[i].substitute(sizes);
      r = kind_ == Kind::Max ? max(r, b) : kind_ == Kind::Add ? r + b : r * b;
    }
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

DimExpr exprOf(const Dim &d) {
  if (d.isStatic())
    return DimExpr::constant(d.size);
  if (!d.isSymbolic())
    fail("size expression of a dim of unknown size");
  return d.symbol[0] == '(' ? DimExpr::parse(d.symbol) : DimExpr::symbol(d.symbol);
}

Dim dimOf(const DimExpr &e) {
  if (e.isConstant()) {
    if (e.constantValue() < 0)
      fail("size expression: a negative size (", e.constantValue(), ")");
    return Dim::fixed(e.constantValue());
  }
  return Dim::sym(e.str());
}

std::optional<int64_t> dimValue(const Dim &d, const std::map<std::string, int64_t> &sizes) {
  if (d.isStatic())
    return d.size;
  if (!d.isSymbolic())
    return std::nullopt;
  if (auto it = sizes.find(d.symbol); it != sizes.end())
    return it->second;
  if (d.symbol[0] != '(')
    return std::nullopt;
  try {
    return exprOf(d).eval(sizes);
  } catch (const Error &) {
    return std::nullopt;
  }
}

Dim substituteDim(const Dim &d, const std::map<std::string, int64_t> &sizes) {
  if (!d.isSymbolic())
    return d;
  if (auto it = sizes.find(d.symbol); it != sizes.end())
    return Dim::fixed(it->second);
  return d.symbol[0] == '(' ? dimOf(exprOf(d).substitute(sizes)) : d;
}

namespace {

// `f` over the dims' expressions; `?` for a `?` operand or a result that is
// not a size.
template <typename F> Dim arith(std::initializer_list<const Dim *> dims, F f) {
  std::vector<DimExpr> xs;
  for (const Dim *d : dims) {
    if (d->isUnknown())
      return Dim::unknown();
    xs.push_back(exprOf(*d));
  }
  try {
    DimExpr r = f(xs);
    return r.isConstant() && r.constantValue() < 0 ? Dim::unknown() : dimOf(r);
  } catch (const Error &) {
    return Dim::unknown();
  }
}

} // namespace

Dim dimProduct(const std::vector<Dim> &dims) {
  DimExpr r = DimExpr::constant(1);
  for (const Dim &d : dims) {
    if (d.isUnknown())
      return Dim::unknown();
    try {
      r = r * exprOf(d);
    } catch (const Error &) {
      return Dim::unknown();
    }
  }
  return dimOf(r);
}

Dim dimSum(const Dim &a, const Dim &b) {
  return arith({&a, &b}, [](auto &x) { return x[0] + x[1]; });
}

Dim dimDifference(const Dim &a, const Dim &b) {
  return arith({&a, &b}, [](auto &x) { return x[0] - x[1]; });
}

Dim dimQuotient(const Dim &a, const Dim &b, bool whole) {
  return arith({&a, &b}, [&](auto &x) {
    DimExpr q = DimExpr::exactDiv(x[0], x[1]);
    if (whole && q.hasQuotient())
      fail("not whole at every size");
    return q;
  });
}

} // namespace tc
