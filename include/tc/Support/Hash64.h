// hash64: a fast 64-bit hash of bytes (the XXH64 algorithm), what the
// artifact's checksums are. Not cryptographic: it catches damage (flipped
// bits, zeroed runs, truncation), not tampering.
#pragma once
#include <cstdint>
#include <string_view>

namespace tc {

uint64_t hash64(std::string_view bytes, uint64_t seed = 0);

} // namespace tc
