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
  // Zero-filled storage for `shape`.
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numElements() const;
  size_t byteSize() const { return bytes_.size(); }
  uint8_t *bytes() { return bytes_.data(); }
  const uint8_t *bytes() const { return bytes_.data(); }
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes_.data()); }
  template <typename T> const T *data() const { return reinterpret_cast<const T *>(bytes_.data()); }

  TensorType type() const { return TensorType{dtype_, makeShape(shape_)}; }
  std::string typeStr() const { return type().str(); }

  // Element i converted to double / int64 (any dtype; f16/bf16 decoded).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  // Stores v into element i, converting to the tensor's dtype (round to
  // nearest for floats, C++ truncation for ints, v != 0 for bool).
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<uint8_t> bytes_;
};

} // namespace tc
