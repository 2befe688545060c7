// Character-level scanner for the .tcir text form, shared by the parser and
// by attribute parsing (op-table defaults). Every error carries file:line:col.
#pragma once
#include "tc/IR/Attribute.h"
#include <cstdint>
#include <string>
#include <string_view>

namespace tc {

// "..." with \" \\ \n \t and \xx hex escapes for anything not printable.
std::string quoteString(std::string_view s);
// True when `s` can be printed as a bare name after % or @.
bool isBareName(std::string_view s);

class Lexer {
public:
  Lexer(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  [[noreturn]] void error(const std::string &msg) const;
  void skipSpace(); // whitespace and // comments
  bool atEnd();
  char peek();
  bool consumeIf(char c);
  bool consumeIf(std::string_view word); // a whole keyword
  void expect(char c, std::string_view context = {});
  void expectKeyword(std::string_view word);
  void expectEnd();

  std::string parseIdent();  // [A-Za-z_][A-Za-z0-9_.]*
  std::string parseString(); // quoted
  std::string parseName();   // bare name or quoted string (after % or @)
  int64_t parseInt();
  double parseDouble(); // also nan, inf, -inf
  bool peekNumberStart();
  Attribute parseAttributeValue(AttrKind kind);

  size_t offset() const { return pos_; }
  // Offset of the next token (after whitespace and comments): where errors point.
  size_t tokenStart() {
    skipSpace();
    return pos_;
  }
  std::string_view rest() const { return text_.substr(pos_); }
  void advance(size_t n) { pos_ += n; }
  void seek(size_t p) { pos_ = p; }

private:
  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
};

} // namespace tc
