// IEEE half and bfloat16 conversions (round to nearest even).
#pragma once
#include <cstdint>
#include <cstring>

namespace tc {

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13); // inf / nan (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else { // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400));
    bits = sign | uint32_t(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000) // nan: keep top payload bits, force quiet
    return sign | 0x7e00 | uint16_t((absx >> 13) & 0x3ff);
  if (absx >= 0x477ff000) // rounds to >= 65520: inf
    return sign | 0x7c00;
  if (absx < 0x38800000) { // subnormal half or zero
    if (absx < 0x33000000)
      return sign;
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    int shift = 126 - int(absx >> 23); // value / 2^-24 = mant >> shift
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | uint16_t(half);
  }
  uint32_t r = absx + 0xfff + ((absx >> 13) & 1); // round to nearest even
  return sign | uint16_t((r - 0x38000000) >> 13);
}

inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40); // quiet nan
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

} // namespace tc
