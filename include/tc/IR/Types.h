// Element types, dimensions (static or symbolic) and tensor types.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

// The element types of the IR. X-macro: enum, text spelling, byte size,
// ONNX TensorProto::DataType number. `str` (byte strings of any length) has no
// fixed size: its dtypeSize is 0 and byteSize() gives nullopt; constants hold
// it in the packed form below, HostTensor as std::string elements.
#define TC_DTYPES(X)                                                                               \
  X(F32, "f32", 4, 1)                                                                              \
  X(F16, "f16", 2, 10)                                                                             \
  X(BF16, "bf16", 2, 16)                                                                           \
  X(F64, "f64", 8, 11)                                                                             \
  X(I64, "i64", 8, 7)                                                                              \
  X(I32, "i32", 4, 6)                                                                              \
  X(I16, "i16", 2, 5)                                                                              \
  X(I8, "i8", 1, 3)                                                                                \
  X(U64, "u64", 8, 13)                                                                             \
  X(U32, "u32", 4, 12)                                                                             \
  X(U16, "u16", 2, 4)                                                                              \
  X(U8, "u8", 1, 2)                                                                                \
  X(Bool, "bool", 1, 9)                                                                            \
  X(Str, "str", 0, 8)

enum class DType : uint8_t {
#define TC_X(E, S, B, O) E,
  TC_DTYPES(TC_X)
#undef TC_X
};

std::string_view dtypeName(DType t);
size_t dtypeSize(DType t);
std::optional<DType> parseDType(std::string_view s);
std::optional<DType> dtypeFromOnnx(int onnxType);
int dtypeToOnnx(DType t);
bool isFloat(DType t);   // f32, f16, bf16, f64
bool isInteger(DType t); // signed or unsigned integers (not bool, not str)
bool isSigned(DType t);

// One dimension: a static size, a named symbol (N, seq) or unknown (`?`).
struct Dim {
  int64_t size = -1;  // >= 0 when static
  std::string symbol; // non-empty when symbolic

  static Dim fixed(int64_t n) { return Dim{n, {}}; }
  static Dim sym(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool isStatic() const { return size >= 0; }
  bool isSymbolic() const { return !symbol.empty(); }
  bool isUnknown() const { return !isStatic() && !isSymbolic(); }
  bool operator==(const Dim &o) const = default;
  std::string str() const;
};

using Shape = std::vector<Dim>;

// Number of elements when every dim is static.
std::optional<int64_t> staticNumElements(const Shape &s);
bool isStaticShape(const Shape &s);
Shape makeShape(const std::vector<int64_t> &dims);
std::vector<int64_t> staticDims(const Shape &s); // requires isStaticShape

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType &o) const = default;
  size_t rank() const { return shape.size(); }
  std::string str() const; // f32[N,3,224,224]
};

// Bytes of a static-shaped tensor; nullopt when not static, overflowing or str.
std::optional<size_t> byteSize(const TensorType &t);

// The packed form of str elements (constant data, .tcbc, text blobs): each
// element as its byte length (u64 little-endian) followed by its bytes.
std::vector<uint8_t> packStrings(const std::vector<std::string> &s);
// Exactly `count` elements of packed data, which must end with the last one;
// throws tc::Error saying what is malformed.
std::vector<std::string> unpackStrings(std::span<const uint8_t> packed, size_t count);
// True when `data` is exactly the data of static-shaped `t` (byteSize bytes,
// or for str `numElements` well-formed packed strings).
bool dataFitsType(const TensorType &t, std::span<const uint8_t> data);

// True when `declared` can describe a value whose inferred type is `inferred`:
// same dtype and rank, and each declared dim equals the inferred one or the
// inferred one is unknown.
bool typeCompatible(const TensorType &declared, const TensorType &inferred);

} // namespace tc
