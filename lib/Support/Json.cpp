#include "tc/Support/Json.h"
#include "tc/Support/Error.h"
#include <cstdio>

namespace tc {

namespace {

// The length of the well-formed UTF-8 sequence starting at s[pos] (a byte
// >= 0x80), or 0 when it is not one (RFC 3629's table: no overlong forms,
// no surrogates, nothing past U+10FFFF).
size_t utf8SequenceLength(std::string_view s, size_t pos) {
  auto at = [&](size_t i) { return pos + i < s.size() ? uint8_t(s[pos + i]) : 0; };
  auto cont = [](uint8_t b, uint8_t lo = 0x80, uint8_t hi = 0xbf) { return b >= lo && b <= hi; };
  uint8_t b0 = at(0);
  if (b0 >= 0xc2 && b0 <= 0xdf)
    return cont(at(1)) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    uint8_t lo = b0 == 0xe0 ? 0xa0 : 0x80, hi = b0 == 0xed ? 0x9f : 0xbf;
    return cont(at(1), lo, hi) && cont(at(2)) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    uint8_t lo = b0 == 0xf0 ? 0x90 : 0x80, hi = b0 == 0xf4 ? 0x8f : 0xbf;
    return cont(at(1), lo, hi) && cont(at(2)) && cont(at(3)) ? 4 : 0;
  }
  return 0;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | cp >> 6);
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | cp >> 12);
    out += char(0x80 | (cp >> 6 & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | cp >> 18);
    out += char(0x80 | (cp >> 12 & 0x3f));
    out += char(0x80 | (cp >> 6 & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
public:
  explicit Parser(std::string_view s) : s_(s) {}

  JsonValue parseDocument() {
    skipSpace();
    JsonValue v = value(0);
    skipSpace();
    if (pos_ != s_.size())
      bad("unexpected " + describe(pos_) + " after the value");
    return v;
  }

private:
  [[noreturn]] void bad(const std::string &what) const { fail(what, " at offset ", pos_); }

  // The byte at `i` for a message: 'x' when printable, else its hex value.
  std::string describe(size_t i) const {
    if (i >= s_.size())
      return "end of input";
    unsigned char c = uint8_t(s_[i]);
    if (c >= 0x20 && c < 0x7f)
      return std::string("'") + char(c) + "'";
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", c);
    return std::string("byte ") + buf;
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool atEnd() const { return pos_ >= s_.size(); }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (atEnd() || peek() != c)
      bad(std::string("expected '") + c + "', found " + describe(pos_));
    ++pos_;
  }

  JsonValue value(int depth) {
    if (atEnd())
      bad("unexpected end of input");
    JsonValue v;
    switch (peek()) {
    case '{': return object(depth + 1);
    case '[': return array(depth + 1);
    case '"':
      v.kind = JsonValue::Kind::String;
      v.text = string();
      return v;
    case 't':
    case 'f':
      v.kind = JsonValue::Kind::Bool;
      v.boolean = peek() == 't';
      literal(v.boolean ? "true" : "false");
      return v;
    case 'n': literal("null"); return v;
    default:
      if (peek() == '-' || isDigit(peek()))
        return number();
      bad("unexpected " + describe(pos_));
    }
  }

  void checkDepth(int depth) const {
    if (depth > kMaxJsonDepth)
      bad("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }

  JsonValue object(int depth) {
    checkDepth(depth);
    JsonValue v;
    v.kind = JsonValue::Kind::Object;
    expect('{');
    skipSpace();
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      skipSpace();
      if (peek() != '"')
        bad("expected a string key, found " + describe(pos_));
      std::string key = string();
      skipSpace();
      expect(':');
      skipSpace();
      v.members.push_back({std::move(key), value(depth)});
      skipSpace();
      if (atEnd())
        bad("unterminated object");
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      expect(',');
    }
  }

  JsonValue array(int depth) {
    checkDepth(depth);
    JsonValue v;
    v.kind = JsonValue::Kind::Array;
    expect('[');
    skipSpace();
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      skipSpace();
      v.items.push_back(value(depth));
      skipSpace();
      if (atEnd())
        bad("unterminated array");
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      expect(',');
    }
  }

  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word)
      bad("unexpected " + describe(pos_));
    pos_ += word.size();
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  JsonValue number() {
    size_t start = pos_;
    auto digits = [&] {
      if (!isDigit(peek()))
        bad("expected a digit, found " + describe(pos_));
      while (!atEnd() && isDigit(peek()))
        ++pos_;
    };
    if (peek() == '-')
      ++pos_;
    if (peek() == '0')
      ++pos_; // no leading zeros: "01" ends the number at "0"
    else
      digits();
    if (peek() == '.') {
      ++pos_;
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      digits();
    }
    JsonValue v;
    v.kind = JsonValue::Kind::Number;
    v.text = std::string(s_.substr(start, pos_ - start));
    return v;
  }

  uint32_t hex4() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      char c = peek();
      if (atEnd())
        bad("unterminated \\u escape");
      v <<= 4;
      if (isDigit(c))
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= uint32_t(c - 'A' + 10);
      else
        bad("bad hex digit " + describe(pos_) + " in a \\u escape");
    }
    return v;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (atEnd())
        bad("unterminated string");
      unsigned char c = uint8_t(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20)
        bad("unescaped control character " + describe(pos_) + " in a string");
      if (c >= 0x80) {
        size_t n = utf8SequenceLength(s_, pos_);
        if (!n)
          bad("invalid UTF-8 in a string");
        out.append(s_.substr(pos_, n));
        pos_ += n;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (atEnd())
        bad("unterminated string");
      char e = s_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = hex4();
        if (cp >= 0xdc00 && cp <= 0xdfff)
          bad("unpaired low surrogate in a \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (s_.substr(pos_, 2) != "\\u")
            bad("unpaired high surrogate in a \\u escape");
          pos_ += 2;
          uint32_t lo = hex4();
          if (lo < 0xdc00 || lo > 0xdfff)
            bad("unpaired high surrogate in a \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        appendUtf8(out, cp);
        break;
      }
      default: bad("bad escape \\" + describe(pos_ - 1) + " in a string");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

} // namespace

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const auto &[k, v] : members)
    if (k == key)
      return &v;
  return nullptr;
}

JsonValue parseJson(std::string_view s) { return Parser(s).parseDocument(); }

std::optional<int64_t> jsonInt64(const JsonValue &v) {
  if (!v.isNumber() || v.text.empty())
    return std::nullopt;
  std::string_view t = v.text;
  bool negative = t.front() == '-';
  if (negative)
    t.remove_prefix(1);
  if (t.empty())
    return std::nullopt;
  uint64_t mag = 0;
  const uint64_t limit = negative ? uint64_t(1) << 63 : uint64_t(INT64_MAX);
  for (char c : t) {
    if (!isDigit(c))
      return std::nullopt; // a fraction or an exponent
    uint64_t d = uint64_t(c - '0');
    if (mag > (limit - d) / 10)
      return std::nullopt;
    mag = mag * 10 + d;
  }
  return negative ? int64_t(0 - mag) : int64_t(mag);
}

std::string quoteJson(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = uint8_t(ch);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  return out + "\"";
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (uint8_t(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = utf8SequenceLength(s, i);
    if (!n)
      return false;
    i += n;
  }
  return true;
}

} // namespace tc
