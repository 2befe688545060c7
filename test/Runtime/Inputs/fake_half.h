// f32/f16/bf16 elements as float for the stand-in CUDA libraries
// (fake_cublaslt.c, fake_cudnn.c): conversions by hand, as clang 14 on
// x86 has no half arithmetic.
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>

static float fromHalf(uint16_t h) {
  int e = (h >> 10) & 31;
  float m = (float)(h & 1023), v;
  if (e == 0)
    v = ldexpf(m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexpf(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}
static uint16_t toHalf(float f) { // round to nearest even, via float arithmetic
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(a))
    return 0x7e00;
  if (a >= 65520.f)
    return sign | 0x7c00;
  if (a < 6.103515625e-05f) // subnormal: multiples of 2^-24
    return sign | (uint16_t)nearbyintf(a * 16777216.f);
  int e;
  float m = frexpf(a, &e); // a = m * 2^e, m in [0.5, 1)
  float q = nearbyintf(m * 2048.f); // 11 significant bits
  if (q == 2048.f)
    q = 1024.f, ++e;
  return sign | (uint16_t)((e + 14) << 10) | ((uint16_t)q & 1023);
}
// An element of type `t` as float: f32, half (`t` == `half`) or bf16 (`t` ==
// `bf16`): the libraries number the types differently.
static float getAs(const void *p, int t, int half, int bf16, int64_t i) {
  if (t == half)
    return fromHalf(((const uint16_t *)p)[i]);
  if (t == bf16) {
    uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  return ((const float *)p)[i];
}
static void putAs(void *p, int t, int half, int bf16, int64_t i, float v) {
  if (t == half) {
    ((uint16_t *)p)[i] = toHalf(v);
  } else if (t == bf16) { // round to nearest even
    uint32_t bits;
    memcpy(&bits, &v, 4);
    ((uint16_t *)p)[i] = (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  } else {
    ((float *)p)[i] = v;
  }
}
