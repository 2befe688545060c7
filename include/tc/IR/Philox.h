// The counter-based RNG of training-mode dropout (PhiloxDropout): element
// `index` of a dropout's tensor is kept or dropped by the first word of
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011) at
//   counter = (index low, index high, offset low, offset high),
//   key     = (seed low, seed high ^ stream * 0x9E3779B9),
// kept when that word is >= threshold(ratio) (an integer compare: the
// reference executor and both backends agree bit for bit). `seed` is the
// state rng.seed plus the op's seed attribute, `offset` the state
// rng.offset (advanced once per train step), `stream` the op's (one per
// Dropout node). The kernels' copy of philox() is in
// lib/CodeGen/Kernels/Prelude.cpp (tc_philox); test/Training/dropout.test
// checks the two agree.
#pragma once
#include <cmath>
#include <cstdint>

namespace tc::philox {

constexpr uint32_t word(uint64_t seed, uint64_t offset, uint32_t stream, uint64_t index) {
  uint32_t c0 = uint32_t(index), c1 = uint32_t(index >> 32), c2 = uint32_t(offset),
           c3 = uint32_t(offset >> 32);
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32) ^ (stream * 0x9E3779B9u);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}

// Random123's known-answer vectors (kat_vectors, philox4x32 10 rounds),
// first word, with stream 0.
static_assert(word(0, 0, 0, 0) == 0x6627e8d5u);
static_assert(word(~0ull, ~0ull, 0, ~0ull) == 0x408f276du);
static_assert(word(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0, 0x85a308d3243f6a88ull) ==
              0xd16cfe09u);

// Words below this are dropped: ratio * 2^32 (ratio in [0, 1)).
inline uint32_t threshold(double ratio) { return uint32_t(std::ldexp(ratio, 32)); }

// What a kept element is multiplied by: 1 / (1 - ratio), rounded to the
// compute type (float for f32 and the half types, double for f64).
inline double keptScale(double ratio) { return 1.0 / (1.0 - ratio); }

} // namespace tc::philox
