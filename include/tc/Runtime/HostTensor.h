// A dense tensor in host memory with concrete dims: what executors consume
// and produce, and what test-data files hold.
#pragma once
#include "tc/IR/Types.h"
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tc {

class HostTensor {
public:
  HostTensor() = default;
  // Zero-filled storage for `shape`. Throws tc::Error on a negative dim or a
  // size that cannot be a real tensor (see byteSize(TensorType)).
  HostTensor(DType dtype, std::vector<int64_t> shape);
  // A tensor holding a copy of `n` raw little-endian bytes; throws tc::Error
  // unless n is exactly the byte size of dtype[shape]. Bool bytes other than
  // 0/1 are normalized to 1. For str, the bytes are the packed form
  // (packStrings) of exactly numElements strings.
  static HostTensor fromBytes(DType dtype, std::vector<int64_t> shape, const void *data, size_t n);
  // A str tensor; throws unless `elems` has one string per element.
  static HostTensor fromStrings(std::vector<int64_t> shape, std::vector<std::string> elems);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numElements() const;
  // The flat byte buffer of numeric dtypes; empty for str (see strings()).
  size_t byteSize() const { return bytes_.size(); }
  uint8_t *bytes() { return bytes_.data(); }
  const uint8_t *bytes() const { return bytes_.data(); }
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes_.data()); }
  template <typename T> const T *data() const { return reinterpret_cast<const T *>(bytes_.data()); }

  // The elements of a str tensor (empty for other dtypes).
  std::vector<std::string> &strings() { return strs_; }
  const std::vector<std::string> &strings() const { return strs_; }
  // The data as constant bytes: bytes() for numbers, packStrings for str.
  std::vector<uint8_t> packedData() const;

  TensorType type() const { return TensorType{dtype_, makeShape(shape_)}; }
  std::string typeStr() const { return type().str(); }
  bool sameType(const HostTensor &o) const { return dtype_ == o.dtype_ && shape_ == o.shape_; }

  // Element i converted to double / int64 (any dtype but str, which throws;
  // f16/bf16 decoded).
  // For u64, getInt returns the two's-complement bit pattern. Float to int
  // truncates toward zero, clamped to the int64 range (NaN gives 0).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  // Stores v into element i, converting to the tensor's dtype (round to
  // nearest for floats, C++ truncation for ints, v != 0 for bool).
  // Doubles are rounded to f16/bf16 once (no double rounding through f32);
  // out-of-range and NaN doubles stored to an integer dtype clamp to its
  // range (NaN gives 0). setInt wraps modulo 2^bits for integer dtypes.
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<uint8_t> bytes_;
  std::vector<std::string> strs_; // str elements; bytes_ stays empty then
};

// `x` with its axes permuted: result axis i is x's axis perm[i] (Transpose's
// convention). Any fixed-size dtype; throws unless perm has x's rank.
HostTensor permuteAxes(const HostTensor &x, const std::vector<int64_t> &perm);

// Copies `src` into columns [col, col + N) of `dst`: both [R, N'] / [R, N]
// matrices (1-D: one row) of one fixed-size dtype, rows alike (a GEMM's B
// padded or placed beside another: align-gemms, merge-gemms). Throws on
// anything else.
void placeColumns(HostTensor &dst, const HostTensor &src, int64_t col);

// `x` with each element converted to numeric dtype `to` as getDouble /
// setDouble do (float to float rounds to nearest once; what a Cast computes
// from a float tensor).
HostTensor convertTo(const HostTensor &x, DType to);

// `v` rounded to the nearest value representable in float dtype `t`
// (identity for f64); for non-float dtypes, returns v unchanged.
double roundToFloatDType(double v, DType t);

} // namespace tc
