#include "tc/Support/Hash64.h"
#include <bit>
#include <cstring>

namespace tc {

namespace {

static_assert(std::endian::native == std::endian::little,
              "hash64 reads words little-endian, as artifacts store them");

constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full,
                   P3 = 0x165667B19E3779F9ull, P4 = 0x85EBCA77C2B2AE63ull,
                   P5 = 0x27D4EB2F165667C5ull;

uint64_t read64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t read32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t round(uint64_t acc, uint64_t input) { return std::rotl(acc + input * P2, 31) * P1; }
uint64_t merge(uint64_t h, uint64_t v) { return (h ^ round(0, v)) * P1 + P4; }

} // namespace

uint64_t hash64(std::string_view bytes, uint64_t seed) {
  const char *p = bytes.data(), *end = p + bytes.size();
  uint64_t h;
  if (bytes.size() >= 32) {
    // Four independent lanes over 32-byte stripes: what makes it fast.
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    for (; end - p >= 32; p += 32) {
      v1 = round(v1, read64(p));
      v2 = round(v2, read64(p + 8));
      v3 = round(v3, read64(p + 16));
      v4 = round(v4, read64(p + 24));
    }
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = seed + P5;
  }
  h += bytes.size();
  for (; end - p >= 8; p += 8)
    h = std::rotl(h ^ round(0, read64(p)), 27) * P1 + P4;
  if (end - p >= 4) {
    h = std::rotl(h ^ (uint64_t(read32(p)) * P1), 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; ++p)
    h = std::rotl(h ^ (uint64_t(uint8_t(*p)) * P5), 11) * P1;
  h = (h ^ (h >> 33)) * P2;
  h = (h ^ (h >> 29)) * P3;
  return h ^ (h >> 32);
}

} // namespace tc
