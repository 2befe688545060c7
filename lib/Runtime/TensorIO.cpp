#include "tc/Runtime/TensorIO.h"
#include "onnx/onnx_pb.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include "tc/Support/MemoryBuffer.h"
#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

namespace tc {

static_assert(std::endian::native == std::endian::little,
              "TensorProto raw_data and .npy '<' data are little-endian");

namespace {

// Whole or absent (AtomicFile.h): an output a run writes over a previous one.
void writeFile(const std::string &path, std::string_view bytes) {
  writeFileAtomically(path, bytes, /*sync=*/false);
}

std::string onnxTypeName(int t) {
  switch (t) {
  case 0: return "UNDEFINED";
  case 8: return "STRING";
  case 14: return "COMPLEX64";
  case 15: return "COMPLEX128";
  case 17: return "FLOAT8E4M3FN";
  case 18: return "FLOAT8E4M3FNUZ";
  case 19: return "FLOAT8E5M2";
  case 20: return "FLOAT8E5M2FNUZ";
  default: return "type " + std::to_string(t);
  }
}

// Packs a repeated proto field into little-endian elements of type T, after
// checking that it holds exactly `count` values.
template <typename T, typename Field>
std::vector<uint8_t> pack(const Field &f, const char *field, size_t count, const TensorType &t) {
  if (size_t(f.size()) != count)
    fail(t.str(), " needs ", count, " values, but ", field, " has ", f.size());
  std::vector<uint8_t> v(count * sizeof(T));
  for (size_t i = 0; i < count; ++i) {
    T x = T(f.Get(int(i))); // 16-bit floats: the bit pattern in the low bits
    std::memcpy(v.data() + i * sizeof(T), &x, sizeof(T));
  }
  return v;
}

} // namespace

// ---- TensorProto -------------------------------------------------------------

NamedTensor parseTensorProto(std::string_view bytes, const std::string &file) {
  if (bytes.empty())
    fail(file, ": empty file (expected an ONNX TensorProto)");
  onnx::TensorProto p;
  if (bytes.size() > size_t(INT_MAX) || !p.ParseFromArray(bytes.data(), int(bytes.size())))
    fail(file, ": not a valid ONNX TensorProto (truncated or corrupt)");
  std::optional<DType> dt = dtypeFromOnnx(p.data_type());
  if (!dt)
    fail(file, ": unsupported TensorProto element type ", onnxTypeName(p.data_type()));
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    fail(file, ": tensors with external data are not supported");
  if (p.has_segment())
    fail(file, ": segmented tensors are not supported");
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  TensorType type{*dt, makeShape(dims)};
  for (int64_t d : dims)
    if (d < 0)
      fail(file, ": invalid dimension ", d);
  NamedTensor r;
  r.name = p.name();
  if (*dt == DType::Str) { // string_data only: ONNX defines no raw form for strings
    std::optional<int64_t> n = staticNumElements(type.shape);
    if (p.has_raw_data())
      fail(file, ": a STRING tensor must hold its elements in string_data, not raw_data");
    if (!n || *n != p.string_data_size())
      fail(file, ": ", type.str(), " needs ", n ? std::to_string(*n) : "too many",
           " values, but string_data has ", p.string_data_size());
    r.tensor = HostTensor::fromStrings(
        dims, std::vector<std::string>(p.string_data().begin(), p.string_data().end()));
    return r;
  }
  std::optional<size_t> nbytes = byteSize(type);
  if (!nbytes)
    fail(file, ": ", type.str(), " is too large");
  size_t count = *nbytes / dtypeSize(*dt);
  try {
    if (p.has_raw_data()) {
      const std::string &raw = p.raw_data();
      r.tensor = HostTensor::fromBytes(*dt, dims, raw.data(), raw.size());
      return r;
    }
    // Typed fields: which one holds the values depends on the element type.
    std::vector<uint8_t> v;
    switch (*dt) {
    case DType::F32: v = pack<float>(p.float_data(), "float_data", count, type); break;
    case DType::F64: v = pack<double>(p.double_data(), "double_data", count, type); break;
    case DType::I64: v = pack<int64_t>(p.int64_data(), "int64_data", count, type); break;
    case DType::U64: v = pack<uint64_t>(p.uint64_data(), "uint64_data", count, type); break;
    case DType::U32: v = pack<uint32_t>(p.uint64_data(), "uint64_data", count, type); break;
    case DType::I32: v = pack<int32_t>(p.int32_data(), "int32_data", count, type); break;
    case DType::I16: v = pack<int16_t>(p.int32_data(), "int32_data", count, type); break;
    case DType::I8: v = pack<int8_t>(p.int32_data(), "int32_data", count, type); break;
    case DType::U8: v = pack<uint8_t>(p.int32_data(), "int32_data", count, type); break;
    case DType::F16:
    case DType::BF16:
    case DType::U16: v = pack<uint16_t>(p.int32_data(), "int32_data", count, type); break;
    case DType::Bool: // test each int32, not its low byte (256 is true)
      v = pack<uint8_t>(p.int32_data(), "int32_data", count, type);
      for (size_t i = 0; i < count; ++i)
        v[i] = p.int32_data(int(i)) != 0;
      break;
    case DType::Str: break; // handled above
    }
    r.tensor = HostTensor::fromBytes(*dt, dims, v.data(), v.size());
  } catch (const Error &e) {
    fail(file, ": ", e.what());
  }
  return r;
}

std::string serializeTensorProto(const HostTensor &t, const std::string &name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(dtypeToOnnx(t.dtype()));
  for (int64_t d : t.shape())
    p.add_dims(d);
  if (t.dtype() == DType::Str)
    for (const std::string &s : t.strings())
      p.add_string_data(s);
  else
    p.set_raw_data(t.byteSize()
                       ? std::string(reinterpret_cast<const char *>(t.bytes()), t.byteSize())
                       : std::string());
  std::string out;
  if (!p.SerializeToString(&out))
    fail("cannot serialize tensor '", name, "' (", t.typeStr(), ")");
  return out;
}

NamedTensor readTensorProto(const std::string &path) {
  auto buf = MemoryBuffer::open(path);
  return parseTensorProto(buf->str(), path);
}

void writeTensorProto(const std::string &path, const HostTensor &t, const std::string &name) {
  writeFile(path, serializeTensorProto(t, name));
}

// ---- NumPy .npy --------------------------------------------------------------

namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";

std::string npyDescr(DType t) {
  switch (t) {
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::F64: return "<f8";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I16: return "<i2";
  case DType::I8: return "|i1";
  case DType::U64: return "<u8";
  case DType::U32: return "<u4";
  case DType::U16: return "<u2";
  case DType::U8: return "|u1";
  case DType::Bool: return "|b1";
  case DType::Str: fail("str tensors have no .npy form here (write a .pb file instead)");
  case DType::BF16: break;
  }
  fail("bf16 has no NumPy dtype (write a .pb file instead)");
}

// A just-big-enough reader of the header's Python dict literal:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeader {
public:
  NpyHeader(std::string_view s, const std::string &file) : s_(s), file_(file) {}

  void parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = string();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          bad("structured dtypes are not supported");
        descr = string(), haveDescr = true;
      } else if (key == "fortran_order") {
        fortran = boolean(), haveFortran = true;
      } else if (key == "shape") {
        shape = tuple(), haveShape = true;
      } else {
        bad("unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        bad("expected ',' or '}'");
    }
    if (!haveDescr || !haveFortran || !haveShape)
      bad("missing descr, fortran_order or shape");
  }

private:
  [[noreturn]] void bad(const std::string &what) const { fail(file_, ": bad .npy header: ", what); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n'))
      ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c)
      bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string() {
    skipSpace();
    char q = peek();
    if (q != '\'' && q != '"')
      bad("expected a string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos)
      bad("unterminated string");
    std::string r(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    if (s_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> r;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos_;
        return r;
      }
      if (peek() < '0' || peek() > '9')
        bad("expected a dimension");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (INT64_MAX - 9) / 10)
          bad("dimension too large");
        v = v * 10 + (peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') // Python 2 longs
        ++pos_;
      r.push_back(v);
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        bad("expected ',' or ')'");
    }
  }

  std::string_view s_;
  const std::string &file_;
  size_t pos_ = 0;
};

} // namespace

HostTensor parseNpy(std::string_view bytes, const std::string &file) {
  if (!bytes.starts_with(kNpyMagic) || bytes.size() < 10)
    fail(file, ": not a NumPy .npy file (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      fail(file, ": truncated .npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | uint8_t(bytes[8 + size_t(i)]);
    headerStart = 12;
  } else {
    fail(file, ": unsupported .npy format version ", major);
  }
  if (headerLen > bytes.size() - headerStart)
    fail(file, ": truncated .npy header");
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  NpyHeader(bytes.substr(headerStart, headerLen), file).parse(descr, fortran, shape);

  static const std::pair<std::string_view, DType> kinds[] = {
      {"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64}, {"i1", DType::I8},
      {"i2", DType::I16}, {"i4", DType::I32}, {"i8", DType::I64}, {"u1", DType::U8},
      {"u2", DType::U16}, {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  std::optional<DType> dt;
  bool swap = false;
  if (descr.size() == 3 && std::string_view("<>|=").find(descr[0]) != std::string_view::npos)
    for (auto &[k, t] : kinds)
      if (descr.substr(1) == k)
        dt = t, swap = descr[0] == '>' && dtypeSize(t) > 1;
  if (!dt)
    fail(file, ": unsupported .npy dtype '", descr, "'");
  if (fortran)
    fail(file, ": Fortran-order arrays are not supported (save a C-order array)");
  std::string_view data = bytes.substr(headerStart + headerLen);
  HostTensor t;
  try {
    t = HostTensor::fromBytes(*dt, shape, data.data(), data.size());
  } catch (const Error &e) {
    fail(file, ": ", e.what());
  }
  if (swap) {
    size_t es = dtypeSize(*dt);
    for (size_t i = 0; i < t.byteSize(); i += es)
      std::reverse(t.bytes() + i, t.bytes() + i + es);
  }
  return t;
}

std::string serializeNpy(const HostTensor &t) {
  std::string dict = "{'descr': '" + npyDescr(t.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.rank(); ++i)
    dict += (i ? ", " : "") + std::to_string(t.shape()[i]);
  dict += t.rank() == 1 ? ",), }" : "), }";
  // Pad with spaces and end with '\n' so the data starts 64-byte aligned.
  size_t total = 10 + dict.size() + 1;
  bool v2 = false;
  if ((total + 63) / 64 * 64 - 10 > 65535)
    v2 = true, total += 2;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kNpyMagic);
  out += char(v2 ? 2 : 1);
  out += char(0);
  size_t len = dict.size();
  for (int i = 0; i < (v2 ? 4 : 2); ++i)
    out += char((len >> (8 * i)) & 0xff);
  out += dict;
  if (t.byteSize())
    out.append(reinterpret_cast<const char *>(t.bytes()), t.byteSize());
  return out;
}

HostTensor readNpy(const std::string &path) {
  auto buf = MemoryBuffer::open(path);
  return parseNpy(buf->str(), path);
}

void writeNpy(const std::string &path, const HostTensor &t) {
  std::string bytes;
  try {
    bytes = serializeNpy(t);
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  writeFile(path, bytes);
}

// ---- By extension ------------------------------------------------------------

static bool isNpyPath(const std::string &path) {
  return std::filesystem::path(path).extension() == ".npy";
}

NamedTensor readTensorFile(const std::string &path) {
  if (isNpyPath(path))
    return {std::filesystem::path(path).stem().string(), readNpy(path)};
  return readTensorProto(path);
}

void writeTensorFile(const std::string &path, const HostTensor &t, const std::string &name) {
  if (isNpyPath(path))
    writeNpy(path, t);
  else
    writeTensorProto(path, t, name);
}

} // namespace tc
