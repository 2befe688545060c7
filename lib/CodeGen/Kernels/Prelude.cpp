// What every kernel source starts with (kernelPrelude): the dialect's
// macros, NaN-aware min/max, the math functions the expressions call
// (tc_exp, ...), for the CPU the fault record (tc_raise) and integer Div,
// and for CUDA vector accesses and block reductions.
#include "Dialect.h"
#include "tc/CodeGen/KernelFault.h"

namespace tc {

namespace {

// f32 exp, tanh and erf without libm calls, so loops over them vectorize
// (libm's scalar expf/tanhf/erff were the hot spots of GELU and sigmoid
// kernels). Branch-free: every path is computed and selected. Accuracy:
// exp within 2 ulp, tanh 1e-6 relative, erf 1.5e-7 absolute; NaN and
// infinities as libm (test/CodeGen/cpu-math.test checks both).
constexpr const char *kCpuFloatMath = R"(
TC_INLINE float tc_exp(float x) {
  // e^x = 2^n e^r, n = rint(x / ln 2), |r| <= ln2 / 2 (ln 2 split in two
  // parts so r is exact), e^r by its Taylor series to r^7.
  const float xc = x > 88.7f ? 88.7f : x < -87.4f ? -87.4f : x;
  const float n = __builtin_rintf(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.f / 5040.f;
  p = p * r + 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  // 2^n as two factors: n reaches 128 just below overflow.
  const int half = int(n) > 0 ? int(n) - 1 : int(n);
  const float y = p * __builtin_bit_cast(float, (half + 127) << 23) * (int(n) > 0 ? 2.f : 1.f);
  return x != x ? x : x > 88.72283935546875f ? __builtin_inff() : x < -87.33654475f ? 0.f : y;
}
TC_INLINE float tc_tanh(float x) {
  const float a = __builtin_fabsf(x), z = x * x;
  // Near 0 the Taylor series (error below x^9 / 45), else 1 - 2 / (e^2a + 1).
  const float small = x + x * z * (-1.f / 3.f + z * (2.f / 15.f + z * (-17.f / 315.f)));
  const float big = 1.f - 2.f / (tc_exp(2.f * a) + 1.f);
  return a < 0.1f ? small : __builtin_copysignf(big, x);
}
TC_INLINE float tc_erf(float x) {
  const float a = __builtin_fabsf(x), z = x * x;
  // Near 0 the Taylor series, else Abramowitz and Stegun 7.1.26.
  const float small = 1.12837916709551257f * x *
      (1.f + z * (-1.f / 3.f + z * (1.f / 10.f + z * (-1.f / 42.f + z * (1.f / 216.f + z * (-1.f / 1320.f))))));
  const float t = 1.f / (1.f + 0.3275911f * a);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float big = 1.f - poly * tc_exp(-z);
  return a < 0.5f ? small : __builtin_copysignf(big, x);
}
)";

// f16 and bf16 on the CPU: stored as their bits, computed in float; the
// conversions round to nearest even (tc/Support/Float16.h's).
constexpr const char *kCpuHalf = R"(typedef unsigned short tc_f16;
typedef unsigned short tc_bf16;
static inline float tc_h2f(tc_f16 h) {
  unsigned sign = unsigned(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    int e = -1;
    do { ++e; mant <<= 1; } while (!(mant & 0x400));
    bits = sign | unsigned(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  return __builtin_bit_cast(float, bits);
}
static inline tc_f16 tc_f2h(float f) {
  unsigned x = __builtin_bit_cast(unsigned, f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
  unsigned absx = x & 0x7fffffff;
  if (absx > 0x7f800000) return sign | 0x7e00 | (unsigned short)((absx >> 13) & 0x3ff);
  if (absx >= 0x477ff000) return sign | 0x7c00;
  if (absx < 0x38800000) {
    if (absx < 0x33000000) return sign;
    unsigned mant = (absx & 0x7fffff) | 0x800000;
    int shift = 126 - int(absx >> 23);
    unsigned half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | (unsigned short)half;
  }
  unsigned r = absx + 0xfff + ((absx >> 13) & 1);
  return sign | (unsigned short)((r - 0x38000000) >> 13);
}
static inline float tc_b2f(tc_bf16 b) { return __builtin_bit_cast(float, unsigned(b) << 16); }
static inline tc_bf16 tc_f2b(float f) {
  unsigned x = __builtin_bit_cast(unsigned, f);
  if ((x & 0x7fffffff) > 0x7f800000) return (tc_bf16)((x >> 16) | 0x40);
  return (tc_bf16)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
)";

// A fault the CPU kernels record instead of trapping (tc/CodeGen/KernelFault.h):
// the first one of a step wins; the runtime reads it after the step.
constexpr const char *kCpuFault =
    R"(extern "C" __attribute__((visibility("default"))) int64_t tc_fault[4] = {0, 0, 0, 0};
TC_INLINE void tc_raise(int64_t what, int64_t op, int64_t a, int64_t b) {
  int64_t none = 0;
  if (__atomic_compare_exchange_n(&tc_fault[0], &none, what, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    tc_fault[1] = op; tc_fault[2] = a; tc_fault[3] = b;
  }
}
)";

// The same record in a CUDA program that has a kernel which may fault: a
// device global the runtime reads after a run (cuModuleGetGlobal); the first
// fault wins.
constexpr const char *kCudaFault = R"(__device__ long long tc_fault[4];
TC_INLINE void tc_raise(long long what, long long op, long long a, long long b) {
  if (atomicCAS((unsigned long long *)&tc_fault[0], 0ULL, (unsigned long long)what) == 0ULL) {
    tc_fault[1] = op; tc_fault[2] = a; tc_fault[3] = b;
  }
}
)";

// Integer Div as the reference, after either dialect's tc_raise: a zero
// divisor faults.
constexpr const char *kFaultingDiv =
    R"(template <class T> TC_INLINE T tc_idiv(T p, T q, int64_t op, int64_t group) {
  if (q == 0) { tc_raise(TC_FAULT_DIVISION_BY_ZERO, op, group, 0); return T(0); }
  return tc_idiv_nz(p, q);
}
template <class T> TC_INLINE T tc_imod(T p, T q, bool cfmod, int64_t op, int64_t group) {
  if (q == 0) { tc_raise(TC_FAULT_DIVISION_BY_ZERO, op, group, 0); return T(0); }
  return tc_imod_nz(p, q, cfmod);
}
template <class T, class E> TC_INLINE T tc_ipow(T b, E e, int64_t op, int64_t group) {
  if (b == T(0) && E(-1) < E(0) && e < E(0)) { tc_raise(TC_FAULT_DIVISION_BY_ZERO, op, group, 0); return T(0); }
  return tc_ipow_nz(b, e);
}
)";

} // namespace

std::string kernelPrelude(KernelDialect dialect, bool halfTypes, bool faults) {
  bool cuda = dialect == KernelDialect::Cuda;
  std::string p = "// Generated by tc-codegen. Kernel ABI: include/tc/CodeGen/KernelEmitter.h\n";
  if (cuda && halfTypes)
    p += "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  p +=
      cuda
          ? "#define TC_INLINE static __device__ __forceinline__\n#define TC_SIMD_LOOP\n"
            "#define TC_REDUCE_LOOP\n"
          : "#define TC_INLINE static inline\n"
            "#define TC_SIMD_LOOP _Pragma(\"clang loop vectorize(assume_safety)\")\n"
            "#define TC_REDUCE_LOOP _Pragma(\"clang loop vectorize(enable) interleave(enable)\")\n";
  p += "typedef long int64_t;\n";
  // The narrower and unsigned integer types (Dialect.cpp's storage types).
  p += "typedef signed char tc_i8;\ntypedef short tc_i16;\ntypedef unsigned char tc_u8;\n"
       "typedef unsigned short tc_u16;\ntypedef unsigned tc_u32;\n"
       "typedef unsigned long long tc_u64;\n";
  if (!cuda)
    p += kCpuHalf;
  if (!cuda)
    p += "extern \"C\" void *malloc(unsigned long);\nextern \"C\" void free(void *);\n";
  p += R"(// NaN-propagating min/max (ONNX Min/Max/Clip): a NaN operand wins.
template <class T> TC_INLINE T tc_min(T a, T b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
template <class T> TC_INLINE T tc_max(T a, T b) { return a != a ? a : b != b ? b : (b > a ? b : a); }
template <class T> TC_INLINE T tc_clamp01(T x) { return x < T(0) ? T(0) : x > T(1) ? T(1) : x; }
#define TC_MATH1(name, f32, f64) \
  TC_INLINE float name(float x) { return f32(x); } \
  TC_INLINE double name(double x) { return f64(x); }
)";
  std::string m = kernels::dialectInfo(dialect).mathPrefix;
  for (std::string f : {"abs",   "exp",   "log",   "sqrt", "tanh",  "cos",  "sin",  "erf",
                        "floor", "ceil",  "tan",   "acos", "asin",  "atan", "sinh", "cosh",
                        "acosh", "asinh", "atanh", "rint", "log1p", "log10"}) {
    std::string lib = m + (f == "abs" ? "fabs" : f);
    if (!cuda && (f == "exp" || f == "tanh" || f == "erf")) // f32 ones: kCpuFloatMath
      p += "TC_INLINE double tc_" + f + "(double x) { return " + lib + "(x); }\n";
    else
      p += "TC_MATH1(tc_" + f + ", " + lib + "f, " + lib + ")\n";
  }
  p += "TC_INLINE float tc_fmod(float a, float b) { return " + m + "fmodf(a, b); }\n";
  p += "TC_INLINE double tc_fmod(double a, double b) { return " + m + "fmod(a, b); }\n";
  p += "TC_INLINE float tc_pow(float a, float b) { return " + m + "powf(a, b); }\n";
  p += "TC_INLINE double tc_pow(double a, double b) { return " + m + "pow(a, b); }\n";
  // tc/IR/Philox.h's word(), the training dropout's mask (PhiloxDropout):
  // the same code in both dialects, 32-bit halves of 64-bit products.
  p += R"(TC_INLINE unsigned tc_philox(unsigned long long seed, unsigned long long offset,
                               unsigned stream, unsigned long long index) {
  unsigned c0 = (unsigned)index, c1 = (unsigned)(index >> 32), c2 = (unsigned)offset,
           c3 = (unsigned)(offset >> 32);
  unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32) ^ (stream * 0x9E3779B9u);
  for (int r = 0; r < 10; ++r) {
    const unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    const unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned)p1;
    c3 = (unsigned)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}
)";
  // Integer Div by a divisor known not to be zero: truncating, x / -1 wraps
  // (as the reference; C++ leaves INT_MIN / -1 undefined).
  p += R"(template <class T> TC_INLINE T tc_idiv_nz(T p, T q) {
  return T(-1) < T(0) && q == T(-1) ? T(0ULL - (unsigned long long)p) : p / q;
}
// Integer Mod by a divisor known not to be zero: the sign of the dividend
// (fmod = 1) or of the divisor (fmod = 0, Python's %); x % -1 is 0.
template <class T> TC_INLINE T tc_imod_nz(T p, T q, bool cfmod) {
  if (T(-1) < T(0) && q == T(-1)) return T(0);
  T r = p % q;
  return !cfmod && r != T(0) && ((r < T(0)) != (q < T(0))) ? T(r + q) : r;
}
// Integer power by squaring, wrapping (the reference's intPow); a negative
// exponent truncates 1 / base^|e| toward zero (0 ^ negative: tc_ipow's
// caller faults first).
template <class T, class E> TC_INLINE T tc_ipow_nz(T b, E e) {
  if (E(-1) < E(0) && e < E(0))
    return b == T(1) ? T(1) : (T(-1) < T(0) && b == T(-1)) ? ((e & E(1)) ? T(-1) : T(1)) : T(0);
  unsigned long long r = 1, x = (unsigned long long)b, k = (unsigned long long)e;
  while (k) { if (k & 1ULL) r *= x; x *= x; k >>= 1; }
  return T(r);
}
// X << Y or X >> Y on zero-extended 64-bit values; a shift of 64 or more is 0.
template <class T> TC_INLINE T tc_shift(T x, unsigned long long s, bool left) {
  unsigned long long v = (unsigned long long)x;
  return T(s >= 64ULL ? 0ULL : left ? v << s : v >> s);
}
)";
  std::string faultCodes =
      "#define TC_FAULT_DIVISION_BY_ZERO " + std::to_string(int64_t(KernelFault::DivisionByZero)) +
      "\n#define TC_FAULT_INDEX " + std::to_string(int64_t(KernelFault::IndexOutOfRange)) +
      "\n#define TC_FAULT_DROPOUT " + std::to_string(int64_t(KernelFault::RandomDropout)) + "\n";
  if (!cuda)
    p += kCpuFloatMath;
  if (!cuda || faults)
    p += faultCodes + (cuda ? kCudaFault : kCpuFault) + kFaultingDiv;
  // After every tc_exp: a template sees only the overloads declared before it.
  p += R"(// log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0. NaN stays NaN.
template <class T> TC_INLINE T tc_softplus(T x) {
  return x > T(0) ? x + tc_log1p(tc_exp(-x)) : tc_log1p(tc_exp(x));
}
)";
  // The reductions' combining functors (both dialects).
  p += std::string(cuda ? "#define TC_DEVICE __device__\n" : "#define TC_DEVICE\n") +
       R"(// Max that skips NaN, as the row kernels' `>` scan over a row.
template <class T> TC_INLINE T tc_fmax(T a, T b) { return a != a || b > a ? b : a; }
struct tc_add_op { template <class T> TC_DEVICE T operator()(T a, T b) const { return a + b; } };
struct tc_max_op { template <class T> TC_DEVICE T operator()(T a, T b) const { return tc_fmax(a, b); } };
// Reduce*'s: NaN-propagating max/min (as the reference), product.
struct tc_maxn_op { template <class T> TC_DEVICE T operator()(T a, T b) const { return tc_max(a, b); } };
struct tc_minn_op { template <class T> TC_DEVICE T operator()(T a, T b) const { return tc_min(a, b); } };
struct tc_mul_op { template <class T> TC_DEVICE T operator()(T a, T b) const { return a * b; } };
)";
  if (cuda)
    p += R"(// `V` elements moved as one access of sizeof(T) * V bytes (16: LDG.128).
template <class T, int V> struct alignas(sizeof(T) * V) tc_vec { T v[V]; };
TC_INLINE bool tc_aligned(const void *p, unsigned long long bytes) {
  return ((unsigned long long)p & (bytes - 1)) == 0;
}
// Block-wide reduction (blockDim.x a multiple of 32): warp shuffles, then one
// value per warp through `sh` (32 entries); every thread gets the result.
template <class T, class F> TC_INLINE T tc_block_reduce(T v, T *sh, F f) {
  for (int o = 16; o > 0; o >>= 1)
    v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads(); // the previous reduction may still read `sh`
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sh[0];
  for (unsigned w = 1; w < blockDim.x >> 5; ++w)
    v = f(v, sh[w]);
  return v;
}
// Reduction over aligned groups of L lanes (a power of two up to 32), every
// lane of the warp calling it: butterfly shuffles, so every lane of a group
// gets the same value (each step combines the same two values).
template <int L, class T, class F> TC_INLINE T tc_lanes_reduce(T v, F f) {
#pragma unroll
  for (int o = L / 2; o > 0; o >>= 1)
    v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Chan et al.'s merge of a (count, mean, M2) summary b into a: exact for
// any counts (a may be empty), no cancellation.
template <class T> TC_INLINE void tc_chan_merge(T &n, T &mean, T &m2, T nb, T meanb, T m2b) {
  if (nb <= (T)0)
    return;
  const T nn = n + nb, d = meanb - mean, f = nb / nn;
  mean += d * f;
  m2 += m2b + d * d * n * f;
  n = nn;
}
// The block's (count, mean, M2) merged in a fixed order (lanes by xor
// shuffles, then warps in order through `sh`: 96 entries); every thread
// gets the result.
template <class T> TC_INLINE void tc_block_chan(T &n, T &mean, T &m2, T *sh) {
  for (int o = 16; o > 0; o >>= 1) {
    const T on = __shfl_xor_sync(0xffffffffu, n, o), om = __shfl_xor_sync(0xffffffffu, mean, o),
            oq = __shfl_xor_sync(0xffffffffu, m2, o);
    tc_chan_merge(n, mean, m2, on, om, oq);
  }
  __syncthreads(); // the previous reduction may still read `sh`
  if ((threadIdx.x & 31) == 0) {
    sh[threadIdx.x >> 5] = n;
    sh[32 + (threadIdx.x >> 5)] = mean;
    sh[64 + (threadIdx.x >> 5)] = m2;
  }
  __syncthreads();
  n = sh[0], mean = sh[32], m2 = sh[64];
  for (unsigned w = 1; w < blockDim.x >> 5; ++w)
    tc_chan_merge(n, mean, m2, sh[w], sh[32 + w], sh[64 + w]);
}
// Online log-sum-exp summaries (m, s): m the max by `f`, s the sum of
// exp(x - m) over the summary's elements; b merged into a (either empty:
// m -inf, s 0). Where m is not finite s means nothing (the kernel's finish
// decides from m alone).
template <class T, class F> TC_INLINE void tc_online_merge(T &m, T &s, T mb, T sb, F f) {
  const T mm = f(m, mb);
  s = (m == mm ? s : s * tc_exp(m - mm)) + (mb == mm ? sb : sb * tc_exp(mb - mm));
  m = mm;
}
// The block's (m, s) merged in a fixed order (lanes by xor shuffles, then
// warps in order through `sh`: 64 entries); every thread gets the result.
template <class T, class F> TC_INLINE void tc_block_online(T &m, T &s, T *sh, F f) {
  for (int o = 16; o > 0; o >>= 1) {
    const T om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
    tc_online_merge(m, s, om, os, f);
  }
  __syncthreads(); // the previous reduction may still read `sh`
  if ((threadIdx.x & 31) == 0) {
    sh[threadIdx.x >> 5] = m;
    sh[32 + (threadIdx.x >> 5)] = s;
  }
  __syncthreads();
  m = sh[0], s = sh[32];
  for (unsigned w = 1; w < blockDim.x >> 5; ++w)
    tc_online_merge(m, s, sh[w], sh[32 + w], f);
}
template <class T> TC_INLINE T tc_block_sum(T v, T *sh) { return tc_block_reduce(v, sh, tc_add_op()); }
template <class T> TC_INLINE T tc_block_max(T v, T *sh) { return tc_block_reduce(v, sh, tc_max_op()); }
)";
  return p + "\n";
}

} // namespace tc
