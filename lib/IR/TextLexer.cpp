#include "tc/IR/TextLexer.h"
#include "tc/Support/Error.h"
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace tc {

static bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
         c == '-' || c == '/';
}

bool isBareName(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!isNameChar(c))
      return false;
  return true;
}

std::string quoteString(std::string_view s) {
  static const char *hex = "0123456789ABCDEF";
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      r += char(c);
    } else {
      r += '\\';
      r += hex[c >> 4];
      r += hex[c & 15];
    }
  }
  return r + "\"";
}

void Lexer::error(const std::string &msg) const {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  fail(file_, ":", line, ":", col, ": ", msg);
}

void Lexer::skipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else {
      break;
    }
  }
}

bool Lexer::atEnd() {
  skipSpace();
  return pos_ >= text_.size();
}

char Lexer::peek() {
  skipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool Lexer::consumeIf(char c) {
  if (peek() != c || atEnd())
    return false;
  ++pos_;
  return true;
}

bool Lexer::consumeIf(std::string_view word) {
  skipSpace();
  if (text_.substr(pos_, word.size()) != word)
    return false;
  size_t end = pos_ + word.size();
  if (end < text_.size() && isNameChar(text_[end]))
    return false;
  pos_ = end;
  return true;
}

void Lexer::expect(char c, std::string_view context) {
  if (consumeIf(c))
    return;
  std::string msg = std::string("expected '") + c + "'";
  if (!context.empty())
    msg += std::string(" ") + std::string(context);
  error(msg);
}

void Lexer::expectKeyword(std::string_view word) {
  if (!consumeIf(word))
    error("expected '" + std::string(word) + "'");
}

void Lexer::expectEnd() {
  if (!atEnd())
    error("unexpected trailing text");
}

std::string Lexer::parseIdent() {
  skipSpace();
  size_t start = pos_;
  if (pos_ < text_.size() &&
      (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
    ++pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
  }
  if (start == pos_)
    error("expected an identifier");
  return std::string(text_.substr(start, pos_ - start));
}

std::string Lexer::parseString() {
  skipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"')
    error("expected a string");
  ++pos_;
  std::string r;
  while (true) {
    if (pos_ >= text_.size())
      error("unterminated string");
    char c = text_[pos_++];
    if (c == '"')
      return r;
    if (c == '\n')
      error("newline in string");
    if (c != '\\') {
      r += c;
      continue;
    }
    if (pos_ >= text_.size())
      error("unterminated string");
    char e = text_[pos_];
    if (e == '"' || e == '\\') {
      r += e;
      ++pos_;
      continue;
    }
    auto hexv = [&](char h) -> int {
      if (h >= '0' && h <= '9')
        return h - '0';
      if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
      if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
      error("bad escape in string");
    };
    if (pos_ + 1 >= text_.size())
      error("bad escape in string");
    r += char(hexv(text_[pos_]) * 16 + hexv(text_[pos_ + 1]));
    pos_ += 2;
  }
}

std::string Lexer::parseName() {
  skipSpace();
  if (pos_ < text_.size() && text_[pos_] == '"')
    return parseString();
  size_t start = pos_;
  while (pos_ < text_.size() && isNameChar(text_[pos_]))
    ++pos_;
  if (start == pos_)
    error("expected a name");
  return std::string(text_.substr(start, pos_ - start));
}

bool Lexer::peekNumberStart() {
  char c = peek();
  return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' ||
         rest().starts_with("nan") || rest().starts_with("inf");
}

int64_t Lexer::parseInt() {
  skipSpace();
  const char *b = text_.data() + pos_, *e = text_.data() + text_.size();
  int64_t v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range)
    error("integer out of range");
  if (ec != std::errc() || (p < e && (*p == '.' || *p == 'e' || *p == 'E')))
    error("expected an integer");
  pos_ += p - b;
  return v;
}

double Lexer::parseDouble() {
  skipSpace();
  bool neg = false;
  std::string_view r = rest();
  if (r.starts_with("-inf") || r.starts_with("inf") || r.starts_with("nan")) {
    neg = r[0] == '-';
    bool isNan = r.starts_with("nan");
    pos_ += neg ? 4 : 3;
    if (isNan)
      return std::numeric_limits<double>::quiet_NaN();
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  const char *b = text_.data() + pos_, *e = text_.data() + text_.size();
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range)
    error("number out of range");
  if (ec != std::errc())
    error("expected a number");
  pos_ += p - b;
  return v;
}

Attribute Lexer::parseAttributeValue(AttrKind kind) {
  auto list = [&](auto parseOne) {
    std::vector<decltype(parseOne())> xs;
    expect('[');
    if (!consumeIf(']')) {
      do
        xs.push_back(parseOne());
      while (consumeIf(','));
      expect(']', "to close the list");
    }
    return xs;
  };
  switch (kind) {
  case AttrKind::Int: return Attribute(parseInt());
  case AttrKind::Float: return Attribute(parseDouble());
  case AttrKind::String: return Attribute(parseString());
  case AttrKind::Ints: return Attribute(list([&] { return parseInt(); }));
  case AttrKind::Floats: return Attribute(list([&] { return parseDouble(); }));
  case AttrKind::Strings: return Attribute(list([&] { return parseString(); }));
  case AttrKind::Type: {
    size_t at = pos_;
    std::string id = parseIdent();
    auto t = parseDType(id);
    if (!t) {
      pos_ = at;
      error("unknown element type '" + id + "'");
    }
    return Attribute(*t);
  }
  }
  error("bad attribute kind");
}

} // namespace tc
