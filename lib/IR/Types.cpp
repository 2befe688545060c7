#include "tc/IR/Types.h"
#include "tc/Support/Error.h"
#include <cstring>

namespace tc {

namespace {
struct DTypeRow {
  DType t;
  std::string_view name;
  size_t size;
  int onnx;
};
constexpr DTypeRow kDTypes[] = {
#define TC_X(E, S, B, O) {DType::E, S, B, O},
    TC_DTYPES(TC_X)
#undef TC_X
};
} // namespace

std::string_view dtypeName(DType t) { return kDTypes[size_t(t)].name; }
size_t dtypeSize(DType t) { return kDTypes[size_t(t)].size; }
int dtypeToOnnx(DType t) { return kDTypes[size_t(t)].onnx; }

std::optional<DType> parseDType(std::string_view s) {
  for (const auto &r : kDTypes)
    if (r.name == s)
      return r.t;
  return std::nullopt;
}

std::optional<DType> dtypeFromOnnx(int onnxType) {
  for (const auto &r : kDTypes)
    if (r.onnx == onnxType)
      return r.t;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool && t != DType::Str; }
bool isSigned(DType t) {
  return isFloat(t) || t == DType::I64 || t == DType::I32 || t == DType::I16 || t == DType::I8;
}

std::string Dim::str() const {
  if (isStatic())
    return std::to_string(size);
  if (isSymbolic())
    return symbol;
  return "?";
}

std::optional<int64_t> staticNumElements(const Shape &s) {
  int64_t n = 1;
  for (const Dim &d : s) {
    if (!d.isStatic())
      return std::nullopt;
    if (d.size != 0 && n > INT64_MAX / d.size)
      return std::nullopt; // overflow: treat as not representable
    n *= d.size;
  }
  return n;
}

bool isStaticShape(const Shape &s) {
  for (const Dim &d : s)
    if (!d.isStatic())
      return false;
  return true;
}

Shape makeShape(const std::vector<int64_t> &dims) {
  Shape s;
  for (int64_t d : dims)
    s.push_back(d >= 0 ? Dim::fixed(d) : Dim::unknown());
  return s;
}

std::vector<int64_t> staticDims(const Shape &s) {
  std::vector<int64_t> r;
  for (const Dim &d : s)
    r.push_back(d.size);
  return r;
}

std::string TensorType::str() const {
  std::string r(dtypeName(dtype));
  r += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      r += ',';
    r += shape[i].str();
  }
  r += ']';
  return r;
}

std::optional<size_t> byteSize(const TensorType &t) {
  auto n = staticNumElements(t.shape);
  if (!n || t.dtype == DType::Str || uint64_t(*n) > (uint64_t(1) << 48) / dtypeSize(t.dtype))
    return std::nullopt; // more than 256 TiB: not a real tensor
  return size_t(*n) * dtypeSize(t.dtype);
}

std::vector<uint8_t> packStrings(const std::vector<std::string> &s) {
  std::vector<uint8_t> out;
  for (const std::string &e : s) {
    uint64_t n = e.size();
    for (int b = 0; b < 8; ++b)
      out.push_back(uint8_t(n >> (8 * b)));
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

std::vector<std::string> unpackStrings(std::span<const uint8_t> packed, size_t count) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    if (packed.size() - pos < 8)
      fail("malformed string data: element ", i, " of ", count, " is missing");
    uint64_t n = 0;
    for (int b = 0; b < 8; ++b)
      n |= uint64_t(packed[pos + size_t(b)]) << (8 * b);
    pos += 8;
    if (n > packed.size() - pos)
      fail("malformed string data: element ", i, " claims ", n, " bytes, ", packed.size() - pos,
           " remain");
    out.emplace_back(reinterpret_cast<const char *>(packed.data() + pos), size_t(n));
    pos += size_t(n);
  }
  if (pos != packed.size())
    fail("malformed string data: ", packed.size() - pos, " bytes after the last of ", count,
         " elements");
  return out;
}

bool dataFitsType(const TensorType &t, std::span<const uint8_t> data) {
  if (t.dtype != DType::Str) {
    std::optional<size_t> want = byteSize(t);
    return want && *want == data.size();
  }
  std::optional<int64_t> n = staticNumElements(t.shape);
  if (!n || uint64_t(*n) > data.size() / 8)
    return false; // every element needs at least its 8-byte length
  try {
    unpackStrings(data, size_t(*n));
  } catch (const Error &) {
    return false;
  }
  return true;
}

bool typeCompatible(const TensorType &declared, const TensorType &inferred) {
  if (declared.dtype != inferred.dtype || declared.rank() != inferred.rank())
    return false;
  for (size_t i = 0; i < declared.rank(); ++i) {
    const Dim &a = declared.shape[i], &b = inferred.shape[i];
    // `?` on either side says nothing: a declared `?` is merely less precise
    // than the rule (passes that learn sizes refine it: infer-shapes).
    if (!(a == b) && !a.isUnknown() && !b.isUnknown())
      return false;
  }
  return true;
}

} // namespace tc
