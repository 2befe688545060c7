// A small strict JSON reader (RFC 8259) and string quoting, for formats the
// runtime reads (the safetensors header). The tools and tc-prof use LLVM's
// llvm/Support/JSON.h; tcRuntime cannot: libtcrt links no compiler library
// (test/Runtime/tcrt-deps.test).
//
// The input is untrusted: every defect is a tc::Error, never a crash.
// Nesting is limited (kMaxJsonDepth) so a deep input cannot exhaust the stack.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

// One member of an object. Declared before JsonValue and defined after it:
// a std::pair of the still-incomplete JsonValue does not compile under
// clang with libstdc++ (the fuzz build), a vector of an incomplete struct does.
struct JsonMember;

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  // String: the decoded text (UTF-8). Number: the literal as written, which
  // the caller converts (see jsonInt64).
  std::string text;
  std::vector<JsonValue> items; // Array
  // Object: the members in input order; duplicate keys are kept for the
  // caller to reject or not.
  std::vector<JsonMember> members;

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isNumber() const { return kind == Kind::Number; }
  // The first member named `key`, or nullptr.
  const JsonValue *find(std::string_view key) const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

constexpr int kMaxJsonDepth = 64;

// Parses exactly one JSON value, with only whitespace (space, tab, CR, LF)
// around it. Strings must be valid UTF-8 and \u escapes well-formed
// (surrogates paired). Throws tc::Error "<what> at offset N".
JsonValue parseJson(std::string_view s);

// The value of a JSON number that is an integer in int64's range (no
// fraction, no exponent); nullopt for any other value.
std::optional<int64_t> jsonInt64(const JsonValue &v);

// `s` as a JSON string literal, quotes included: '"' and '\' escaped, control
// characters as \n \t ... or \u00XX, everything else (UTF-8 included) as is.
std::string quoteJson(std::string_view s);

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
// points past U+10FFFF).
bool isValidUtf8(std::string_view s);

} // namespace tc
