// A number a knob's environment variable gives (TC_CACHE_MAX_MB,
// TC_CUDA_PROGRAM_KB, ...).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <optional>

namespace tc {

// The decimal number in environment variable `name`; nullopt when it is
// unset or not wholly a number (the knob's default then holds).
inline std::optional<uint64_t> envNumber(const char *name) {
  const char *text = std::getenv(name);
  char *end = nullptr;
  unsigned long long v = text ? std::strtoull(text, &end, 10) : 0;
  if (!text || end == text || *end)
    return std::nullopt;
  return v;
}

} // namespace tc
