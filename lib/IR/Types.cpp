#include "tc/IR/Types.h"

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
bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool; }
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
  if (!n || uint64_t(*n) > (uint64_t(1) << 48) / dtypeSize(t.dtype))
    return std::nullopt; // more than 256 TiB: not a real tensor
  return size_t(*n) * dtypeSize(t.dtype);
}

bool typeCompatible(const TensorType &declared, const TensorType &inferred) {
  if (declared.dtype != inferred.dtype || declared.rank() != inferred.rank())
    return false;
  for (size_t i = 0; i < declared.rank(); ++i) {
    const Dim &a = declared.shape[i], &b = inferred.shape[i];
    if (!(a == b) && !b.isUnknown())
      return false;
  }
  return true;
}

} // namespace tc
