// The message of the tc::Error a test's call throws ("" for none), for
// tests that check an error's exact line.
#pragma once
#include "tc/Support/Error.h"
#include <string>

namespace tc {

template <typename F> std::string errorOf(F f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace tc
