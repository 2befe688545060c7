#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Support/Float16.h"
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace tc {

namespace {

// double -> float rounding to odd: the truncated value with its last bit set
// when inexact. Rounding that result to nearest-even at 16 bits gives the
// correctly rounded 16-bit value of the original double (f32 keeps enough
// extra bits), so f16/bf16 results are rounded once, not twice.
float toFloatRoundToOdd(double d) {
  if (std::isnan(d) || std::isinf(d))
    return float(d);
  if (std::fabs(d) > double(FLT_MAX))
    return d > 0 ? FLT_MAX : -FLT_MAX; // inexact: FLT_MAX's last bit is already 1
  float f = float(d);
  if (double(f) == d)
    return f;
  if (std::fabs(double(f)) > std::fabs(d))
    f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1;
  std::memcpy(&f, &bits, 4);
  return f;
}

float toFloat(double d) {
  // IEEE conversion; written out so that no out-of-range conversion occurs.
  if (std::isfinite(d) && std::fabs(d) > double(FLT_MAX)) {
    // FLT_MAX + half an ulp rounds to infinity (ties go to the even inf).
    const double limit = double(FLT_MAX) + std::ldexp(1.0, 103);
    if (std::fabs(d) >= limit)
      return d > 0 ? std::numeric_limits<float>::infinity()
                   : -std::numeric_limits<float>::infinity();
    return d > 0 ? FLT_MAX : -FLT_MAX;
  }
  return float(d);
}

// Truncation toward zero, clamped to [lo, hi]; NaN gives 0.
template <typename T> T clampToInt(double v) {
  if (std::isnan(v))
    return T(0);
  double t = std::trunc(v);
  // The limits as doubles: min is exact (a power of two or 0); max + 1 is
  // exact, and every double below it converts without overflow.
  double lo = double(std::numeric_limits<T>::min());
  double hiPlus1 = double(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (t < lo)
    return std::numeric_limits<T>::min();
  if (t >= hiPlus1)
    return std::numeric_limits<T>::max();
  return T(t);
}

template <typename T> T load(const uint8_t *p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}
template <typename T> void store(uint8_t *p, T x) { std::memcpy(p, &x, sizeof(T)); }

[[noreturn]] void notANumber() { fail("a string element cannot be read or written as a number"); }

} // namespace

double roundToFloatDType(double v, DType t) {
  switch (t) {
  case DType::F32: return double(toFloat(v));
  case DType::F16: return double(halfToFloat(floatToHalf(toFloatRoundToOdd(v))));
  case DType::BF16: return double(bf16ToFloat(floatToBf16(toFloatRoundToOdd(v))));
  default: return v;
  }
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_)
    if (d < 0)
      fail("invalid tensor dimension ", d);
  if (dtype_ == DType::Str) {
    std::optional<int64_t> n = staticNumElements(makeShape(shape_));
    if (!n || *n > (int64_t(1) << 40))
      fail("tensor ", typeStr(), " is too large");
    strs_.resize(size_t(*n));
    return;
  }
  std::optional<size_t> n = tc::byteSize(type());
  if (!n)
    fail("tensor ", typeStr(), " is too large");
  bytes_.assign(*n, 0);
}

HostTensor HostTensor::fromStrings(std::vector<int64_t> shape, std::vector<std::string> elems) {
  HostTensor r(DType::Str, std::move(shape));
  if (r.strs_.size() != elems.size())
    fail(r.typeStr(), " needs ", r.strs_.size(), " strings, got ", elems.size());
  r.strs_ = std::move(elems);
  return r;
}

std::vector<uint8_t> HostTensor::packedData() const {
  return dtype_ == DType::Str ? packStrings(strs_) : bytes_;
}

HostTensor HostTensor::fromBytes(DType dtype, std::vector<int64_t> shape, const void *data,
                                 size_t n) {
  // Check the claim before allocating anything.
  for (int64_t d : shape)
    if (d < 0)
      fail("invalid tensor dimension ", d);
  TensorType t{dtype, makeShape(shape)};
  if (dtype == DType::Str) {
    std::optional<int64_t> count = staticNumElements(t.shape);
    if (!count || uint64_t(*count) > n / 8)
      fail(t.str(), " cannot be held in ", n, " bytes of string data");
    return fromStrings(std::move(shape),
                       unpackStrings({static_cast<const uint8_t *>(data), n}, size_t(*count)));
  }
  std::optional<size_t> want = tc::byteSize(t);
  if (!want)
    fail("tensor ", t.str(), " is too large");
  if (*want != n)
    fail(t.str(), " needs ", *want, " bytes of data, got ", n);
  HostTensor r(dtype, std::move(shape));
  if (n)
    std::memcpy(r.bytes_.data(), data, n);
  if (dtype == DType::Bool)
    for (uint8_t &b : r.bytes_)
      b = b != 0;
  return r;
}

int64_t HostTensor::numElements() const {
  if (dtype_ == DType::Str)
    return int64_t(strs_.size());
  return int64_t(bytes_.size() / dtypeSize(dtype_));
}

double HostTensor::getDouble(int64_t i) const {
  const uint8_t *p = bytes_.data() + size_t(i) * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::F32: return double(load<float>(p));
  case DType::F16: return double(halfToFloat(load<uint16_t>(p)));
  case DType::BF16: return double(bf16ToFloat(load<uint16_t>(p)));
  case DType::F64: return load<double>(p);
  case DType::I64: return double(load<int64_t>(p));
  case DType::I32: return double(load<int32_t>(p));
  case DType::I16: return double(load<int16_t>(p));
  case DType::I8: return double(load<int8_t>(p));
  case DType::U64: return double(load<uint64_t>(p));
  case DType::U32: return double(load<uint32_t>(p));
  case DType::U16: return double(load<uint16_t>(p));
  case DType::U8: return double(load<uint8_t>(p));
  case DType::Bool: return *p != 0 ? 1.0 : 0.0;
  case DType::Str: notANumber();
  }
  return 0;
}

int64_t HostTensor::getInt(int64_t i) const {
  const uint8_t *p = bytes_.data() + size_t(i) * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64: return clampToInt<int64_t>(getDouble(i));
  case DType::I64: return load<int64_t>(p);
  case DType::I32: return load<int32_t>(p);
  case DType::I16: return load<int16_t>(p);
  case DType::I8: return load<int8_t>(p);
  case DType::U64: return int64_t(load<uint64_t>(p));
  case DType::U32: return load<uint32_t>(p);
  case DType::U16: return load<uint16_t>(p);
  case DType::U8: return load<uint8_t>(p);
  case DType::Bool: return *p != 0;
  case DType::Str: notANumber();
  }
  return 0;
}

void HostTensor::setDouble(int64_t i, double v) {
  uint8_t *p = bytes_.data() + size_t(i) * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::F32: store(p, toFloat(v)); return;
  case DType::F16: store(p, floatToHalf(toFloatRoundToOdd(v))); return;
  case DType::BF16: store(p, floatToBf16(toFloatRoundToOdd(v))); return;
  case DType::F64: store(p, v); return;
  case DType::I64: store(p, clampToInt<int64_t>(v)); return;
  case DType::I32: store(p, clampToInt<int32_t>(v)); return;
  case DType::I16: store(p, clampToInt<int16_t>(v)); return;
  case DType::I8: store(p, clampToInt<int8_t>(v)); return;
  case DType::U64: store(p, clampToInt<uint64_t>(v)); return;
  case DType::U32: store(p, clampToInt<uint32_t>(v)); return;
  case DType::U16: store(p, clampToInt<uint16_t>(v)); return;
  case DType::U8: store(p, clampToInt<uint8_t>(v)); return;
  case DType::Bool: *p = v != 0; return;
  case DType::Str: notANumber();
  }
}

void HostTensor::setInt(int64_t i, int64_t v) {
  uint8_t *p = bytes_.data() + size_t(i) * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::F32: store(p, float(v)); return;
  case DType::F64: store(p, double(v)); return;
  case DType::F16:
  case DType::BF16: setDouble(i, double(v)); return;
  case DType::I64: store(p, v); return;
  case DType::I32: store(p, int32_t(v)); return;
  case DType::I16: store(p, int16_t(v)); return;
  case DType::I8: store(p, int8_t(v)); return;
  case DType::U64: store(p, uint64_t(v)); return;
  case DType::U32: store(p, uint32_t(v)); return;
  case DType::U16: store(p, uint16_t(v)); return;
  case DType::U8: store(p, uint8_t(v)); return;
  case DType::Bool: *p = v != 0; return;
  case DType::Str: notANumber();
  }
}

HostTensor convertTo(const HostTensor &x, DType to) {
  HostTensor y(to, x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i)
    y.setDouble(i, x.getDouble(i));
  return y;
}

HostTensor permuteAxes(const HostTensor &x, const std::vector<int64_t> &perm) {
  const std::vector<int64_t> &xs = x.shape();
  if (perm.size() != xs.size())
    fail("permutation of ", perm.size(), " axes for ", x.typeStr());
  std::vector<int64_t> ys, step, xStrides(xs.size(), 1);
  for (size_t d = xs.size(); d-- > 1;)
    xStrides[d - 1] = xStrides[d] * xs[d];
  for (int64_t a : perm) {
    ys.push_back(xs[size_t(a)]);
    step.push_back(xStrides[size_t(a)]);
  }
  HostTensor y(x.dtype(), ys);
  size_t esz = dtypeSize(x.dtype());
  std::vector<int64_t> idx(ys.size(), 0);
  int64_t src = 0;
  for (int64_t o = 0, n = y.numElements(); o < n; ++o) {
    std::memcpy(y.bytes() + size_t(o) * esz, x.bytes() + size_t(src) * esz, esz);
    for (size_t d = ys.size(); d-- > 0;) {
      if (++idx[d] < ys[d]) {
        src += step[d];
        break;
      }
      src -= step[d] * (ys[d] - 1);
      idx[d] = 0;
    }
  }
  return y;
}

void placeColumns(HostTensor &dst, const HostTensor &src, int64_t col) {
  auto rowsCols = [](const HostTensor &t) -> std::pair<int64_t, int64_t> {
    const std::vector<int64_t> &s = t.shape();
    if (s.size() == 1)
      return {1, s[0]};
    if (s.size() != 2)
      fail("placeColumns: ", t.typeStr(), " is not a matrix");
    return {s[0], s[1]};
  };
  auto [rows, n] = rowsCols(src);
  auto [dstRows, wide] = rowsCols(dst);
  if (dst.dtype() != src.dtype() || rows != dstRows || col < 0 || col + n > wide)
    fail("placeColumns: ", src.typeStr(), " at column ", col, " of ", dst.typeStr());
  size_t e = dtypeSize(src.dtype());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst.bytes() + size_t(r * wide + col) * e, src.bytes() + size_t(r * n) * e,
                size_t(n) * e);
}

} // namespace tc
