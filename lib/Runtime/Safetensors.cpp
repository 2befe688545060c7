#include "tc/Runtime/Safetensors.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include "tc/Support/Json.h"
#include "tc/Support/MemoryBuffer.h"
#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <set>

namespace tc {

static_assert(std::endian::native == std::endian::little,
              "safetensors data and its header length are little-endian");

namespace {

// Python's safetensors refuses larger headers; so do we, before reading one.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

constexpr std::pair<DType, std::string_view> kDTypes[] = {
    {DType::F64, "F64"},  {DType::F32, "F32"}, {DType::F16, "F16"}, {DType::BF16, "BF16"},
    {DType::I64, "I64"},  {DType::I32, "I32"}, {DType::I16, "I16"}, {DType::I8, "I8"},
    {DType::U64, "U64"},  {DType::U32, "U32"}, {DType::U16, "U16"}, {DType::U8, "U8"},
    {DType::Bool, "BOOL"}};

std::optional<std::string_view> safetensorsName(DType t) {
  for (auto &[d, name] : kDTypes)
    if (d == t)
      return name;
  return std::nullopt;
}

std::optional<DType> safetensorsDType(std::string_view name) {
  for (auto &[d, n] : kDTypes)
    if (n == name)
      return d;
  return std::nullopt;
}

std::string dimsStr(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// ---- Writing -----------------------------------------------------------------

struct Layout {
  std::string header;                   // the length, the JSON, its padding
  std::vector<const HostTensor *> data; // in data order
};

Layout layoutOf(const std::vector<NamedTensor> &tensors,
                const std::map<std::string, std::string> &metadata) {
  std::set<std::string_view> names;
  for (const NamedTensor &t : tensors) {
    std::string q = quoteJson(t.name);
    if (t.name == "__metadata__")
      fail("tensor name \"__metadata__\" is reserved for the metadata");
    if (!names.insert(t.name).second)
      fail("duplicate tensor name ", q);
    if (!isValidUtf8(t.name))
      fail("tensor name ", q, " is not valid UTF-8");
    if (!safetensorsName(t.tensor.dtype()))
      fail("tensor ", q, ": ", t.tensor.typeStr(), " has no safetensors dtype");
  }
  for (const auto &[k, v] : metadata)
    if (!isValidUtf8(k) || !isValidUtf8(v))
      fail("metadata ", quoteJson(k), " is not valid UTF-8");

  // Larger elements first: every tensor's data starts at a multiple of its
  // element size (sizes are powers of two).
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return dtypeSize(tensors[a].tensor.dtype()) > dtypeSize(tensors[b].tensor.dtype());
  });
  std::vector<size_t> begin(tensors.size());
  Layout l;
  size_t offset = 0;
  for (size_t i : order) {
    begin[i] = offset;
    offset += tensors[i].tensor.byteSize();
    l.data.push_back(&tensors[i].tensor);
  }

  // Compact JSON, as Python's safetensors writes it.
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[k, v] : metadata) {
      json += (first ? "" : ",") + quoteJson(k) + ":" + quoteJson(v);
      first = false;
    }
    json += "}";
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor &t = tensors[i].tensor;
    if (json.size() > 1)
      json += ",";
    json += quoteJson(tensors[i].name) + ":{\"dtype\":\"" +
            std::string(*safetensorsName(t.dtype())) + "\",\"shape\":[";
    for (size_t d = 0; d < t.rank(); ++d)
      json += (d ? "," : "") + std::to_string(t.shape()[d]);
    json += "],\"data_offsets\":[" + std::to_string(begin[i]) + "," +
            std::to_string(begin[i] + t.byteSize()) + "]}";
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' '); // the data starts 8-byte aligned
  uint64_t n = json.size();
  for (int b = 0; b < 8; ++b)
    l.header += char(n >> (8 * b) & 0xff);
  l.header += json;
  return l;
}

// ---- Reading -----------------------------------------------------------------

template <typename... Args> [[noreturn]] void bad(const std::string &file, const Args &...args) {
  fail(file, ": ", args...);
}

// A shape dim or data offset: a non-negative integer in int64's range.
int64_t count(const JsonValue &v, const std::string &file, const std::string &where,
              const char *field) {
  if (!v.isNumber())
    bad(file, where, ": ", field, " holds a non-number");
  std::optional<int64_t> n = jsonInt64(v);
  if (!n && v.text.find_first_of(".eE") == std::string::npos)
    bad(file, where, ": ", field, " value ", v.text, " is too large");
  if (!n)
    bad(file, where, ": ", field, " value ", v.text, " is not an integer");
  if (*n < 0)
    bad(file, where, ": ", field, " value ", *n, " is negative");
  return *n;
}

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
  uint64_t begin, end;
};

} // namespace

std::string serializeSafetensors(const std::vector<NamedTensor> &tensors,
                                 const std::map<std::string, std::string> &metadata) {
  Layout l = layoutOf(tensors, metadata);
  std::string out = std::move(l.header);
  for (const HostTensor *t : l.data)
    out.append(reinterpret_cast<const char *>(t->bytes()), t->byteSize());
  return out;
}

void writeSafetensors(const std::string &path, const std::vector<NamedTensor> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  Layout l;
  try {
    l = layoutOf(tensors, metadata);
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  // Straight from the tensors: a checkpoint is never held twice in memory.
  AtomicFile f(path);
  f.write(l.header.data(), l.header.size());
  for (const HostTensor *t : l.data)
    f.write(t->bytes(), t->byteSize());
  f.commit();
}

SafetensorsFile parseSafetensors(std::string_view bytes, const std::string &file) {
  if (bytes.size() < 8)
    bad(file, "truncated safetensors file (", bytes.size(), " bytes, no header length)");
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b)
    n = n << 8 | uint8_t(bytes[size_t(b)]);
  if (n > kMaxHeaderBytes)
    bad(file, "safetensors header length ", n, " is over the 100 MB limit (corrupt file?)");
  if (n > bytes.size() - 8)
    bad(file, "safetensors header length ", n, " runs past the end of the file (", bytes.size(),
        " bytes; truncated?)");
  std::string_view header = bytes.substr(8, size_t(n));
  std::string_view data = bytes.substr(8 + size_t(n));
  if (header.empty() || header[0] != '{')
    bad(file, "safetensors header does not start with '{'");
  JsonValue root;
  try {
    root = parseJson(header);
  } catch (const Error &e) {
    bad(file, "safetensors header is not valid JSON: ", e.what());
  }

  // Every claim checked before any data is copied.
  SafetensorsFile out;
  std::vector<Entry> entries;
  std::set<std::string_view> names;
  bool haveMetadata = false;
  for (const auto &[name, v] : root.members) {
    if (name == "__metadata__") {
      if (haveMetadata)
        bad(file, "duplicate __metadata__");
      haveMetadata = true;
      if (!v.isObject())
        bad(file, "__metadata__ is not an object");
      for (const auto &[k, s] : v.members) {
        if (!s.isString())
          bad(file, "__metadata__ ", quoteJson(k), " is not a string");
        if (!out.metadata.emplace(k, s.text).second)
          bad(file, "duplicate __metadata__ key ", quoteJson(k));
      }
      continue;
    }
    std::string where = "tensor " + quoteJson(name);
    if (!names.insert(name).second)
      bad(file, "duplicate ", where);
    if (!v.isObject())
      bad(file, where, ": not an object");
    const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto &[k, f] : v.members) {
      const JsonValue **slot = k == "dtype"          ? &dtype
                               : k == "shape"        ? &shape
                               : k == "data_offsets" ? &offsets
                                                     : nullptr;
      if (!slot)
        bad(file, where, ": unexpected key ", quoteJson(k));
      if (*slot)
        bad(file, where, ": duplicate ", k);
      *slot = &f;
    }
    if (!dtype || !shape || !offsets)
      bad(file, where, ": missing ", !dtype ? "dtype" : !shape ? "shape" : "data_offsets");

    Entry e{name, DType::F32, {}, 0, 0};
    if (!dtype->isString())
      bad(file, where, ": dtype is not a string");
    std::optional<DType> dt = safetensorsDType(dtype->text);
    if (!dt)
      bad(file, where, ": unsupported dtype ", quoteJson(dtype->text));
    e.dtype = *dt;
    if (!shape->isArray())
      bad(file, where, ": shape is not an array");
    for (const JsonValue &d : shape->items)
      e.dims.push_back(count(d, file, where, "shape"));
    std::optional<size_t> nbytes = byteSize(TensorType{e.dtype, makeShape(e.dims)});
    if (!nbytes)
      bad(file, where, ": shape ", dimsStr(e.dims), " is too large");
    if (!offsets->isArray() || offsets->items.size() != 2)
      bad(file, where, ": data_offsets is not [BEGIN, END]");
    e.begin = uint64_t(count(offsets->items[0], file, where, "data_offsets"));
    e.end = uint64_t(count(offsets->items[1], file, where, "data_offsets"));
    std::string span =
        "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.begin > e.end)
      bad(file, where, ": ", span, " are reversed");
    if (e.end > data.size())
      bad(file, where, ": ", span, " run past the end of the data (", data.size(), " bytes)");
    if (e.end - e.begin != *nbytes)
      bad(file, where, ": ", span, " hold ", e.end - e.begin, " bytes, but ", dtypeName(e.dtype),
          dimsStr(e.dims), " needs ", *nbytes);
    entries.push_back(std::move(e));
  }

  // As in Python's safetensors, the tensors tile the data: no overlap, no
  // byte that belongs to no tensor.
  std::vector<const Entry *> byOffset;
  for (const Entry &e : entries)
    byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(), [](const Entry *a, const Entry *b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  uint64_t covered = 0;
  const Entry *prev = nullptr;
  for (const Entry *e : byOffset) {
    if (e->begin < covered)
      bad(file, "tensors ", quoteJson(prev->name), " and ", quoteJson(e->name),
          " overlap in the data");
    if (e->begin > covered)
      bad(file, "data bytes [", covered, ", ", e->begin, ") belong to no tensor");
    covered = e->end;
    prev = e;
  }
  if (covered != data.size())
    bad(file, "data bytes [", covered, ", ", data.size(), ") belong to no tensor");

  for (Entry &e : entries) {
    size_t len = size_t(e.end - e.begin);
    out.tensors.push_back(
        {std::move(e.name), HostTensor::fromBytes(e.dtype, e.dims, data.data() + e.begin, len)});
  }
  return out;
}

SafetensorsFile readSafetensors(const std::string &path) {
  auto buf = MemoryBuffer::open(path);
  return parseSafetensors(buf->str(), path);
}

} // namespace tc
