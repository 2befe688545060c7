#include "tc/IR/Attribute.h"
#include "tc/IR/TextLexer.h"
#include "tc/Support/Error.h"
#include <charconv>
#include <cmath>
#include <cstring>

namespace tc {

std::string_view attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int: return "int";
  case AttrKind::Float: return "float";
  case AttrKind::String: return "string";
  case AttrKind::Ints: return "ints";
  case AttrKind::Floats: return "floats";
  case AttrKind::Strings: return "strings";
  case AttrKind::Type: return "type";
  }
  return "?";
}

std::string formatDouble(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, end);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

void Attribute::kindMismatch(AttrKind want) const {
  fail("attribute is ", attrKindName(kind()), ", expected ", attrKindName(want));
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  // Compare floats by bits so that nan == nan and the comparison is total.
  if (kind() == AttrKind::Float)
    return std::memcmp(&std::get<double>(v_), &std::get<double>(o.v_), sizeof(double)) == 0;
  if (kind() == AttrKind::Floats) {
    const auto &a = floats(), &b = o.floats();
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  }
  return v_ == o.v_;
}

std::string Attribute::str() const {
  std::string r;
  auto list = [&](auto &xs, auto fmt) {
    r += '[';
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i)
        r += ", ";
      r += fmt(xs[i]);
    }
    r += ']';
  };
  switch (kind()) {
  case AttrKind::Int: return std::to_string(i());
  case AttrKind::Float: return formatDouble(f());
  case AttrKind::String: return quoteString(s());
  case AttrKind::Ints: list(ints(), [](int64_t x) { return std::to_string(x); }); break;
  case AttrKind::Floats: list(floats(), formatDouble); break;
  case AttrKind::Strings: list(strings(), quoteString); break;
  case AttrKind::Type: return std::string(dtypeName(type()));
  }
  return r;
}

Attribute parseAttribute(std::string_view text, AttrKind kind) {
  Lexer lex(text, "<attribute>");
  Attribute a = lex.parseAttributeValue(kind);
  lex.expectEnd();
  return a;
}

} // namespace tc
