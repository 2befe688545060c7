// Pointwise kernels: unary math, casts, numpy-broadcast binary/ternary ops.
// Floats compute in double and round once to the result dtype; integers
// compute exactly in 64 bits (wrapping, like C on unsigned) and truncate to
// the result width.
#include "Kernels.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

constexpr size_t K(OpKind k) { return size_t(k); }

// Clamps to [0, 1], keeping NaN.
double clamp01(double v) { return std::isnan(v) ? v : v < 0 ? 0.0 : v > 1 ? 1.0 : v; }

template <typename F> void mapFloat(const Ins &ins, Outs &outs, F f) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  if (!isFloat(x.dtype()))
    fail("expects a float input, got ", dtypeName(x.dtype()));
  for (int64_t i = 0, n = y.numElements(); i < n; ++i)
    y.setDouble(i, f(x.getDouble(i)));
}

// Signed-numeric unary ops: a double function for floats, an int64 one for
// integers.
template <typename FF, typename FI> void mapNumeric(const Ins &ins, Outs &outs, FF ff, FI fi) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  if (x.dtype() == DType::Bool)
    fail("expects a numeric input, got bool");
  int64_t n = y.numElements();
  if (isFloat(x.dtype())) {
    for (int64_t i = 0; i < n; ++i)
      y.setDouble(i, ff(x.getDouble(i)));
  } else {
    for (int64_t i = 0; i < n; ++i)
      y.setInt(i, fi(x.getInt(i)));
  }
}

#define FLOAT_KERNEL(EXPR)                                                                         \
  [](const Op &, const Ins &ins, Outs &outs) { mapFloat(ins, outs, [](double x) { return EXPR; }); }

// ---- Casts -----------------------------------------------------------------

void castKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  DType from = x.dtype(), to = y.dtype();
  int64_t n = y.numElements();
  if (from == DType::Str || to == DType::Str) {
    castStrings(x, y);
  } else if (from == to) {
    if (x.byteSize())
      std::memcpy(y.bytes(), x.bytes(), x.byteSize());
  } else if (isFloat(from)) {
    // float -> float rounds to nearest once; float -> int truncates toward
    // zero (out of range: clamped, NaN: 0); float -> bool is x != 0.
    for (int64_t i = 0; i < n; ++i)
      y.setDouble(i, x.getDouble(i));
  } else if (from == DType::U64 && isFloat(to)) {
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = uint64_t(x.getInt(i));
      if (to == DType::F32) {
        float f = float(v); // one rounding
        std::memcpy(y.bytes() + size_t(i) * 4, &f, 4);
      } else {
        y.setDouble(i, double(v));
      }
    }
  } else {
    // int/bool -> anything: int -> int wraps modulo 2^bits, -> bool is != 0,
    // -> float rounds to nearest.
    for (int64_t i = 0; i < n; ++i)
      y.setInt(i, x.getInt(i));
  }
}

// ---- Binary arithmetic -----------------------------------------------------

enum class Arith { Add, Sub, Mul, Div };

template <Arith A> void arithKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  if (a.dtype() != b.dtype() || a.dtype() != y.dtype() || y.dtype() == DType::Bool)
    fail("internal: unexpected operand types ", a.typeStr(), ", ", b.typeStr());
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  if (isFloat(y.dtype())) {
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b);
    walk.run([&](int64_t o, const int64_t *i) {
      double p = av[size_t(i[0])], q = bv[size_t(i[1])];
      double r = A == Arith::Add   ? p + q
                 : A == Arith::Sub ? p - q
                 : A == Arith::Mul ? p * q
                                   : p / q;
      y.setDouble(o, r);
    });
    return;
  }
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  bool u64 = y.dtype() == DType::U64;
  walk.run([&](int64_t o, const int64_t *i) {
    int64_t p = av[size_t(i[0])], q = bv[size_t(i[1])], r;
    if constexpr (A == Arith::Add) {
      r = wrapAdd(p, q);
    } else if constexpr (A == Arith::Sub) {
      r = wrapSub(p, q);
    } else if constexpr (A == Arith::Mul) {
      r = wrapMul(p, q);
    } else {
      if (q == 0)
        fail("integer division by zero");
      if (u64)
        r = int64_t(uint64_t(p) / uint64_t(q));
      else if (q == -1)
        r = wrapNeg(p); // INT64_MIN / -1 wraps instead of trapping
      else
        r = p / q; // C++ truncates toward zero
    }
    y.setInt(o, r);
  });
}

// Integer power by squaring, wrapping; exponent e as given by its dtype.
int64_t intPow(int64_t base, int64_t e, bool baseUnsigned, bool expUnsigned) {
  if (!expUnsigned && e < 0) {
    // The true result 1/base^|e| truncated toward zero.
    if (base == 1)
      return 1;
    if (!baseUnsigned && base == -1)
      return (e & 1) ? -1 : 1;
    if (base == 0)
      fail("0 raised to a negative integer power");
    return 0;
  }
  uint64_t r = 1, b = uint64_t(base), x = uint64_t(e);
  while (x) {
    if (x & 1)
      r *= b;
    b *= b;
    x >>= 1;
  }
  return int64_t(r);
}

void powKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  if (isFloat(a.dtype()) || isFloat(b.dtype())) {
    // Float base or float exponent: pow in double, then to X's type
    // (truncating toward zero when X is an integer type).
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b);
    walk.run([&](int64_t o, const int64_t *i) {
      y.setDouble(o, std::pow(av[size_t(i[0])], bv[size_t(i[1])]));
    });
    return;
  }
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  bool au = !isSigned(a.dtype()), bu = !isSigned(b.dtype());
  walk.run([&](int64_t o, const int64_t *i) {
    y.setInt(o, intPow(av[size_t(i[0])], bv[size_t(i[1])], au, bu));
  });
}

// ---- Comparisons and logic -------------------------------------------------

enum class Cmp { Eq, Lt, Gt, Ge, Le };

template <Cmp C> void compareKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  auto cmp = [](auto p, auto q) {
    switch (C) {
    case Cmp::Eq: return p == q;
    case Cmp::Lt: return p < q;
    case Cmp::Gt: return p > q;
    case Cmp::Ge: return p >= q;
    case Cmp::Le: return p <= q;
    }
    return false;
  };
  if (isFloat(a.dtype()) || isFloat(b.dtype())) {
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b); // exact; NaN compares false
    walk.run(
        [&](int64_t o, const int64_t *i) { y.setInt(o, cmp(av[size_t(i[0])], bv[size_t(i[1])])); });
  } else if (a.dtype() == DType::U64) {
    std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
    walk.run([&](int64_t o, const int64_t *i) {
      y.setInt(o, cmp(uint64_t(av[size_t(i[0])]), uint64_t(bv[size_t(i[1])])));
    });
  } else {
    std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
    walk.run(
        [&](int64_t o, const int64_t *i) { y.setInt(o, cmp(av[size_t(i[0])], bv[size_t(i[1])])); });
  }
}

enum class Logic { And, Or, Xor };

template <Logic L> void logicKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  walk.run([&](int64_t o, const int64_t *i) {
    bool p = a.getInt(i[0]) != 0, q = b.getInt(i[1]) != 0;
    y.setInt(o, L == Logic::And ? (p && q) : L == Logic::Or ? (p || q) : (p != q));
  });
}

void notKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i)
    outs[0].setInt(i, ins[0]->getInt(i) == 0);
}

void whereKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &c = *ins[0], &x = *ins[1], &z = *ins[2];
  HostTensor &y = outs[0];
  if (x.dtype() != y.dtype() || z.dtype() != y.dtype())
    fail("internal: X and Y types differ from the result");
  size_t es = dtypeSize(y.dtype());
  BroadcastWalk walk(y.shape(), {c.shape(), x.shape(), z.shape()});
  walk.run([&](int64_t o, const int64_t *i) {
    const HostTensor &src = c.getInt(i[0]) != 0 ? x : z;
    int64_t si = c.getInt(i[0]) != 0 ? i[1] : i[2];
    std::memcpy(y.bytes() + size_t(o) * es, src.bytes() + size_t(si) * es, es);
  });
}

// ---- Activations with attributes --------------------------------------------

void leakyReluKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha");
  mapFloat(ins, outs, [alpha](double x) { return x >= 0 ? x : alpha * x; });
}

void hardSigmoidKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha"), beta = op.getFloat("beta");
  mapFloat(ins, outs, [=](double x) { return clamp01(alpha * x + beta); });
}

void geluKernel(const Op &op, const Ins &ins, Outs &outs) {
  const std::string &approx = op.getString("approximate");
  if (approx == "none") {
    mapFloat(ins, outs,
             [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
  } else if (approx == "tanh") {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    mapFloat(ins, outs,
             [c](double x) { return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))); });
  } else {
    fail("unknown approximate '", approx, "' (none or tanh)");
  }
}

// ---- More elementwise ------------------------------------------------------

void signKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  for (int64_t i = 0, n = y.numElements(); i < n; ++i) {
    if (isFloat(x.dtype())) {
      double v = x.getDouble(i);
      y.setDouble(i, std::isnan(v) ? v : v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0);
    } else {
      int64_t v = x.getInt(i); // u64: the bit pattern, so compare with 0 only
      y.setInt(i, isSigned(x.dtype()) ? (v > 0) - (v < 0) : v != 0);
    }
  }
}

void isInfKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  bool neg = op.getInt("detect_negative"), pos = op.getInt("detect_positive");
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i) {
    double v = ins[0]->getDouble(i);
    outs[0].setInt(i, std::isinf(v) && (v < 0 ? neg : pos));
  }
}

void isNaNKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i)
    outs[0].setInt(i, std::isnan(ins[0]->getDouble(i)));
}

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

void eluKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha");
  mapFloat(ins, outs, [alpha](double x) { return x >= 0 ? x : alpha * std::expm1(x); });
}

void seluKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha"), gamma = op.getFloat("gamma");
  mapFloat(ins, outs, [=](double x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
}

void celuKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha");
  if (alpha == 0)
    fail("alpha must not be 0");
  mapFloat(ins, outs, [alpha](double x) {
    return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
  });
}

void thresholdedReluKernel(const Op &op, const Ins &ins, Outs &outs) {
  double alpha = op.getFloat("alpha");
  mapFloat(ins, outs, [alpha](double x) { return x > alpha ? x : 0.0; });
}

void shrinkKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  double bias = op.getFloat("bias"), lambd = op.getFloat("lambd");
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i) {
    double x = ins[0]->getDouble(i);
    outs[0].setDouble(i, x < -lambd ? x + bias : x > lambd ? x - bias : 0.0);
  }
}

void bitwiseNotKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i)
    outs[0].setInt(i, ~ins[0]->getInt(i));
}

void preluKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &s = *ins[1];
  HostTensor &y = outs[0];
  BroadcastWalk walk(y.shape(), {x.shape(), s.shape()});
  if (isFloat(y.dtype())) {
    std::vector<double> xv = loadDoubles(x), sv = loadDoubles(s);
    walk.run([&](int64_t o, const int64_t *i) {
      double v = xv[size_t(i[0])];
      y.setDouble(o, v < 0 ? sv[size_t(i[1])] * v : v);
    });
    return;
  }
  bool sgn = isSigned(y.dtype());
  std::vector<int64_t> xv = loadInts(x), sv = loadInts(s);
  walk.run([&](int64_t o, const int64_t *i) {
    int64_t v = xv[size_t(i[0])];
    y.setInt(o, sgn && v < 0 ? wrapMul(sv[size_t(i[1])], v) : v);
  });
}

// Orders int64 values as the dtype does (u64 values are bit patterns).
bool intLess(int64_t a, int64_t b, bool u64) { return u64 ? uint64_t(a) < uint64_t(b) : a < b; }

void clipKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  const HostTensor *lo = ins.size() > 1 ? ins[1] : nullptr, *hi = ins.size() > 2 ? ins[2] : nullptr;
  for (const HostTensor *b : {lo, hi})
    if (b && b->numElements() != 1)
      fail("min and max must have one element, got ", b->typeStr());
  HostTensor &y = outs[0];
  int64_t n = y.numElements();
  if (isFloat(x.dtype())) {
    // NaN compares false and stays; min > max gives max (as numpy's clip).
    for (int64_t i = 0; i < n; ++i) {
      double v = x.getDouble(i);
      if (lo && v < lo->getDouble(0))
        v = lo->getDouble(0);
      if (hi && v > hi->getDouble(0))
        v = hi->getDouble(0);
      y.setDouble(i, v);
    }
    return;
  }
  bool u64 = x.dtype() == DType::U64;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = x.getInt(i);
    if (lo && intLess(v, lo->getInt(0), u64))
      v = lo->getInt(0);
    if (hi && intLess(hi->getInt(0), v, u64))
      v = hi->getInt(0);
    y.setInt(i, v);
  }
}

enum class Fold { Min, Max, Sum, Mean };

template <Fold F> void variadicKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  HostTensor &y = outs[0];
  std::vector<Dims> shapes;
  for (const HostTensor *t : ins) {
    if (!t || t->dtype() != y.dtype())
      fail("internal: operand does not match the result type ", y.typeStr());
    shapes.push_back(t->shape());
  }
  BroadcastWalk walk(y.shape(), shapes);
  size_t k = ins.size();
  if (isFloat(y.dtype())) {
    std::vector<std::vector<double>> v;
    for (const HostTensor *t : ins)
      v.push_back(loadDoubles(*t));
    walk.run([&](int64_t o, const int64_t *i) {
      double acc = v[0][size_t(i[0])];
      for (size_t j = 1; j < k; ++j) {
        double b = v[j][size_t(i[j])];
        if (F == Fold::Sum || F == Fold::Mean)
          acc += b;
        else if (std::isnan(acc) || std::isnan(b))
          acc = std::numeric_limits<double>::quiet_NaN();
        else
          acc = F == Fold::Min ? std::min(acc, b) : std::max(acc, b);
      }
      y.setDouble(o, F == Fold::Mean ? acc / double(k) : acc);
    });
    return;
  }
  if (F == Fold::Mean)
    fail("expects float operands");
  bool u64 = y.dtype() == DType::U64;
  std::vector<std::vector<int64_t>> v;
  for (const HostTensor *t : ins)
    v.push_back(loadInts(*t));
  walk.run([&](int64_t o, const int64_t *i) {
    int64_t acc = v[0][size_t(i[0])];
    for (size_t j = 1; j < k; ++j) {
      int64_t b = v[j][size_t(i[j])];
      if (F == Fold::Sum)
        acc = wrapAdd(acc, b);
      else if (F == Fold::Min ? intLess(b, acc, u64) : intLess(acc, b, u64))
        acc = b;
    }
    y.setInt(o, acc);
  });
}

void modKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  bool cFmod = op.getInt("fmod") != 0;
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  if (isFloat(y.dtype())) {
    if (!cFmod)
      fail("fmod must be 1 for float operands");
    std::vector<double> av = loadDoubles(a), bv = loadDoubles(b);
    walk.run([&](int64_t o, const int64_t *i) {
      y.setDouble(o, std::fmod(av[size_t(i[0])], bv[size_t(i[1])]));
    });
    return;
  }
  bool u64 = y.dtype() == DType::U64;
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  walk.run([&](int64_t o, const int64_t *i) {
    int64_t p = av[size_t(i[0])], q = bv[size_t(i[1])], r;
    if (q == 0)
      fail("integer modulo by zero");
    if (u64) {
      r = int64_t(uint64_t(p) % uint64_t(q));
    } else if (q == -1) {
      r = 0; // INT64_MIN % -1 would trap
    } else {
      r = p % q; // sign of the dividend (C fmod)
      if (!cFmod && r != 0 && (r < 0) != (q < 0))
        r += q; // sign of the divisor (Python %)
    }
    y.setInt(o, r);
  });
}

void bitShiftKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  const std::string &dir = op.getString("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    fail("direction must be LEFT or RIGHT, got '", dir, "'");
  bool left = dir == "LEFT";
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  // Unsigned operands: values are zero-extended (u64: the bit pattern).
  // Shifting by the width or more gives 0.
  walk.run([&](int64_t o, const int64_t *i) {
    uint64_t x = uint64_t(av[size_t(i[0])]), s = uint64_t(bv[size_t(i[1])]);
    y.setInt(o, int64_t(s >= 64 ? 0 : left ? x << s : x >> s));
  });
}

enum class Bitwise { And, Or, Xor };

template <Bitwise B> void bitwiseKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &a = *ins[0], &b = *ins[1];
  HostTensor &y = outs[0];
  BroadcastWalk walk(y.shape(), {a.shape(), b.shape()});
  std::vector<int64_t> av = loadInts(a), bv = loadInts(b);
  walk.run([&](int64_t o, const int64_t *i) {
    int64_t p = av[size_t(i[0])], q = bv[size_t(i[1])];
    y.setInt(o, B == Bitwise::And ? (p & q) : B == Bitwise::Or ? (p | q) : (p ^ q));
  });
}

} // namespace

void registerElementwiseKernels(KernelTable &t) {
  t[K(OpKind::Neg)] = [](const Op &, const Ins &ins, Outs &outs) {
    mapNumeric(ins, outs, [](double x) { return -x; }, wrapNeg);
  };
  t[K(OpKind::Abs)] = [](const Op &, const Ins &ins, Outs &outs) {
    bool isUnsigned = ins.size() == 1 && ins[0] && !isSigned(ins[0]->dtype());
    if (isUnsigned) {
      mapNumeric(ins, outs, [](double x) { return x; }, [](int64_t x) { return x; });
      return;
    }
    mapNumeric(
        ins, outs, [](double x) { return std::fabs(x); },
        [](int64_t x) { return x < 0 ? wrapNeg(x) : x; });
  };
  t[K(OpKind::Relu)] = [](const Op &, const Ins &ins, Outs &outs) {
    mapNumeric(
        ins, outs, [](double x) { return x < 0 ? 0.0 : x; }, // NaN stays NaN
        [](int64_t x) { return x < 0 ? int64_t(0) : x; });
  };
#define TC_UNARY(Name, Precision, Operand, Summary, Reference, Kernel)                             \
  t[K(OpKind::Name)] = FLOAT_KERNEL(Reference);
#include "tc/IR/UnaryMath.def"
#undef TC_UNARY
  t[K(OpKind::Not)] = notKernel;
  t[K(OpKind::LeakyRelu)] = leakyReluKernel;
  t[K(OpKind::HardSigmoid)] = hardSigmoidKernel;
  t[K(OpKind::Gelu)] = geluKernel;
  t[K(OpKind::Cast)] = castKernel;

  t[K(OpKind::Add)] = arithKernel<Arith::Add>;
  t[K(OpKind::Sub)] = arithKernel<Arith::Sub>;
  t[K(OpKind::Mul)] = arithKernel<Arith::Mul>;
  t[K(OpKind::Div)] = arithKernel<Arith::Div>;
  t[K(OpKind::Pow)] = powKernel;
  t[K(OpKind::Equal)] = compareKernel<Cmp::Eq>;
  t[K(OpKind::Less)] = compareKernel<Cmp::Lt>;
  t[K(OpKind::Greater)] = compareKernel<Cmp::Gt>;
  t[K(OpKind::And)] = logicKernel<Logic::And>;
  t[K(OpKind::Or)] = logicKernel<Logic::Or>;
  t[K(OpKind::Where)] = whereKernel;

  t[K(OpKind::Sign)] = signKernel;
  t[K(OpKind::IsNaN)] = isNaNKernel;
  t[K(OpKind::IsInf)] = isInfKernel;
  t[K(OpKind::Elu)] = eluKernel;
  t[K(OpKind::Selu)] = seluKernel;
  t[K(OpKind::Celu)] = celuKernel;
  t[K(OpKind::ThresholdedRelu)] = thresholdedReluKernel;
  t[K(OpKind::Shrink)] = shrinkKernel;
  t[K(OpKind::BitwiseNot)] = bitwiseNotKernel;
  t[K(OpKind::CastLike)] = castKernel;
  t[K(OpKind::PRelu)] = preluKernel;
  t[K(OpKind::Clip)] = clipKernel;
  t[K(OpKind::Min)] = variadicKernel<Fold::Min>;
  t[K(OpKind::Max)] = variadicKernel<Fold::Max>;
  t[K(OpKind::Sum)] = variadicKernel<Fold::Sum>;
  t[K(OpKind::Mean)] = variadicKernel<Fold::Mean>;
  t[K(OpKind::GreaterOrEqual)] = compareKernel<Cmp::Ge>;
  t[K(OpKind::LessOrEqual)] = compareKernel<Cmp::Le>;
  t[K(OpKind::Xor)] = logicKernel<Logic::Xor>;
  t[K(OpKind::Mod)] = modKernel;
  t[K(OpKind::BitShift)] = bitShiftKernel;
  t[K(OpKind::BitwiseAnd)] = bitwiseKernel<Bitwise::And>;
  t[K(OpKind::BitwiseOr)] = bitwiseKernel<Bitwise::Or>;
  t[K(OpKind::BitwiseXor)] = bitwiseKernel<Bitwise::Xor>;
}

} // namespace tc::ref
