// User-facing errors. Everything a user can get wrong (a malformed file, a bad
// flag, an op with the wrong arity) is reported by throwing tc::Error; the tool
// driver catches it and prints ONE line: `tc-X: error: <where>: <what>`.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace tc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &msg) : std::runtime_error(msg) {}
};

// Builds a message from streamable pieces: throw error("bad dim ", d).
template <typename... Args> [[noreturn]] void fail(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}

} // namespace tc
