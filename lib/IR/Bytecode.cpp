// .tcbc layout (little endian):
//   header: "TCBC", u32 version, u64 dataOffset, u64 dataSize, u64 reserved
//   body:   module name, metadata, functions (values by index: arguments,
//           then constants, then op results in order), varints and
//           length-prefixed strings
//   data:   constant bytes, each aligned to kBytecodeAlign, at dataOffset
#include "tc/IR/Bytecode.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace tc {

namespace {

constexpr size_t kHeaderSize = 32;

enum DimTag : uint8_t { kStatic = 0, kSymbol = 1, kUnknown = 2 };

class Writer {
public:
  void u8(uint8_t x) { out.push_back(char(x)); }
  void u64(uint64_t x) {
    for (int i = 0; i < 8; ++i)
      u8(uint8_t(x >> (8 * i)));
  }
  void varint(uint64_t x) {
    while (x >= 0x80) {
      u8(uint8_t(x | 0x80));
      x >>= 7;
    }
    u8(uint8_t(x));
  }
  void str(std::string_view s) {
    varint(s.size());
    out.append(s);
  }
  void type(const TensorType &t) {
    u8(uint8_t(t.dtype));
    varint(t.rank());
    for (const Dim &d : t.shape) {
      if (d.isStatic()) {
        u8(kStatic);
        varint(uint64_t(d.size));
      } else if (d.isSymbolic()) {
        u8(kSymbol);
        str(d.symbol);
      } else {
        u8(kUnknown);
      }
    }
  }
  void loc(const Location &l) {
    str(l.file);
    str(l.node);
    u8(uint8_t(l.phase));
  }
  void f64(double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    u64(b);
  }
  void attr(const Attribute &a) {
    u8(uint8_t(a.kind()));
    switch (a.kind()) {
    case AttrKind::Int: u64(uint64_t(a.i())); break;
    case AttrKind::Float: f64(a.f()); break;
    case AttrKind::String: str(a.s()); break;
    case AttrKind::Ints:
      varint(a.ints().size());
      for (int64_t x : a.ints())
        u64(uint64_t(x));
      break;
    case AttrKind::Floats:
      varint(a.floats().size());
      for (double x : a.floats())
        f64(x);
      break;
    case AttrKind::Strings:
      varint(a.strings().size());
      for (const auto &x : a.strings())
        str(x);
      break;
    case AttrKind::Type: u8(uint8_t(a.type())); break;
    }
  }
  std::string out;
};

class Reader {
public:
  Reader(const MemoryBuffer &buf, size_t begin, size_t end)
      : buf_(buf), p_(reinterpret_cast<const uint8_t *>(buf.data())), pos_(begin), end_(end) {}
  uint32_t version = kBytecodeVersion; // the file's: what its records hold

  [[noreturn]] void error(const std::string &what) const {
    fail(buf_.name(), ": ", what, " (at offset ", pos_, ")");
  }
  void need(size_t n) const {
    if (n > end_ - pos_)
      error("truncated bytecode");
  }
  uint8_t u8() {
    need(1);
    return p_[pos_++];
  }
  uint64_t u64() {
    need(8);
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i)
      x |= uint64_t(p_[pos_ + i]) << (8 * i);
    pos_ += 8;
    return x;
  }
  uint64_t varint() {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = u8();
      x |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return x;
    }
    error("malformed varint");
  }
  // A count of items that each take at least `minBytes`: bounded by what is
  // left, so a hostile count cannot make us allocate gigabytes.
  size_t count(size_t minBytes = 1) {
    uint64_t n = varint();
    if (n > (end_ - pos_) / minBytes)
      error("count " + std::to_string(n) + " exceeds the remaining bytes");
    return size_t(n);
  }
  std::string str() {
    size_t n = count();
    std::string s(reinterpret_cast<const char *>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  double f64() {
    uint64_t b = u64();
    double d;
    std::memcpy(&d, &b, 8);
    return d;
  }
  TensorType type() {
    TensorType t;
    uint8_t dt = u8();
    if (dt > uint8_t(DType::Str))
      error("unknown element type " + std::to_string(dt));
    t.dtype = DType(dt);
    size_t rank = count();
    for (size_t i = 0; i < rank; ++i) {
      uint8_t tag = u8();
      if (tag == kStatic) {
        uint64_t n = varint();
        if (n > uint64_t(INT64_MAX))
          error("dimension out of range");
        t.shape.push_back(Dim::fixed(int64_t(n)));
      } else if (tag == kSymbol) {
        std::string s = str();
        if (s.empty())
          error("empty dimension symbol");
        if (s[0] != '(') {
          t.shape.push_back(Dim::sym(std::move(s)));
          continue;
        }
        try { // a size expression: in its one canonical text
          t.shape.push_back(dimOf(DimExpr::parse(s)));
        } catch (const Error &e) {
          error(e.what());
        }
      } else if (tag == kUnknown) {
        t.shape.push_back(Dim::unknown());
      } else {
        error("bad dimension tag");
      }
    }
    return t;
  }
  Location loc() {
    Location l;
    l.file = str();
    l.node = str();
    if (version >= 2) {
      uint8_t p = u8();
      if (p > uint8_t(Phase::Optimizer))
        error("bad phase " + std::to_string(p));
      l.phase = Phase(p);
    }
    return l;
  }
  Attribute attr() {
    uint8_t k = u8();
    switch (AttrKind(k)) {
    case AttrKind::Int: return Attribute(int64_t(u64()));
    case AttrKind::Float: return Attribute(f64());
    case AttrKind::String: return Attribute(str());
    case AttrKind::Ints: {
      std::vector<int64_t> v(count(8));
      for (auto &x : v)
        x = int64_t(u64());
      return Attribute(std::move(v));
    }
    case AttrKind::Floats: {
      std::vector<double> v(count(8));
      for (auto &x : v)
        x = f64();
      return Attribute(std::move(v));
    }
    case AttrKind::Strings: {
      std::vector<std::string> v(count());
      for (auto &x : v)
        x = str();
      return Attribute(std::move(v));
    }
    case AttrKind::Type: {
      uint8_t dt = u8();
      if (dt > uint8_t(DType::Str))
        error("unknown element type in attribute");
      return Attribute(DType(dt));
    }
    }
    error("unknown attribute kind " + std::to_string(k));
  }
  size_t pos() const { return pos_; }

private:
  const MemoryBuffer &buf_;
  const uint8_t *p_;
  size_t pos_, end_;
};

size_t alignUp(size_t x) { return (x + kBytecodeAlign - 1) / kBytecodeAlign * kBytecodeAlign; }

} // namespace

bool isBytecode(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kBytecodeMagic, 4) == 0;
}

namespace {

// The file's bytes before the constants (header, body, padding to
// dataOffset) and where each constant's bytes go; the constants themselves
// are not copied here. With `shareData` (cloneModule) the body records no
// data: every constant at offset 0, its size kept, the data section empty.
struct Layout {
  std::string head;
  std::vector<const TensorData *> data; // in file order
  std::vector<uint64_t> offsets;        // from dataOffset
  uint64_t dataSize = 0;
};

Layout layOut(const Module &m, bool shareData) {
  Layout l;
  Writer w;
  w.str(m.name);
  w.varint(m.metadata.size());
  for (const auto &[k, v] : m.metadata) {
    w.str(k);
    w.str(v);
  }
  w.varint(m.functions.size());
  for (const auto &f : m.functions) {
    std::unordered_map<const Value *, uint64_t> ids;
    auto id = [&](const Value *v) { ids.emplace(v, ids.size()); };
    w.str(f->name);
    w.varint(f->args.size());
    for (const Value *a : f->args) {
      w.str(a->name);
      w.type(a->type);
      id(a);
    }
    w.varint(f->constants.size());
    for (const Value *c : f->constants) {
      w.str(c->name);
      w.type(c->type);
      w.loc(c->loc);
      uint64_t off = shareData ? 0 : alignUp(l.dataSize);
      w.u64(off);
      w.u64(c->data->size);
      if (!shareData) {
        l.data.push_back(&*c->data);
        l.offsets.push_back(off);
        l.dataSize = off + c->data->size;
      }
      id(c);
    }
    w.varint(f->ops.size());
    for (const auto &op : f->ops) {
      w.str(op->name());
      w.varint(op->operands.size());
      for (const Value *o : op->operands)
        w.varint(o ? ids.at(o) + 1 : 0);
      w.varint(op->results.size());
      for (const Value *r : op->results) {
        w.str(r->name);
        w.type(r->type);
        id(r);
      }
      w.varint(op->attrs.size());
      for (const auto &[k, v] : op->attrs) {
        w.str(k);
        w.attr(v);
      }
      w.loc(op->loc);
    }
    w.varint(f->results.size());
    for (const Value *r : f->results)
      w.varint(ids.at(r));
  }
  size_t dataOffset = alignUp(kHeaderSize + w.out.size());
  Writer h;
  h.out.append(kBytecodeMagic, 4);
  for (int i = 0; i < 4; ++i)
    h.u8(uint8_t(kBytecodeVersion >> (8 * i)));
  h.u64(dataOffset);
  h.u64(l.dataSize);
  h.u64(0);
  l.head = h.out + w.out;
  l.head.resize(dataOffset, '\0');
  return l;
}

// The constants after the head, each padded to its offset.
void emitData(const Layout &l, const ByteSink &sink) {
  static const char zeros[kBytecodeAlign] = {};
  uint64_t at = 0;
  for (size_t i = 0; i < l.data.size(); ++i) {
    if (l.offsets[i] > at)
      sink({zeros, size_t(l.offsets[i] - at)});
    sink({reinterpret_cast<const char *>(l.data[i]->ptr), l.data[i]->size});
    at = l.offsets[i] + l.data[i]->size;
  }
}

std::unique_ptr<Module> readModule(std::shared_ptr<const MemoryBuffer> buf,
                                   const Module *sharedFrom);

} // namespace

size_t writeBytecode(const Module &m, const ByteSink &sink) {
  Layout l = layOut(m, false);
  sink(l.head);
  emitData(l, sink);
  return l.head.size() + l.dataSize;
}

std::string writeBytecode(const Module &m) {
  Layout l = layOut(m, false);
  std::string out;
  out.reserve(l.head.size() + l.dataSize);
  out += l.head;
  emitData(l, [&](std::string_view b) { out += b; });
  return out;
}

std::shared_ptr<const MemoryBuffer> bytecodeBuffer(const Module &m, std::string name) {
  Layout l = layOut(m, false);
  return MemoryBuffer::build(l.head.size() + l.dataSize, std::move(name), [&](char *out) {
    std::memcpy(out, l.head.data(), l.head.size());
    out += l.head.size();
    emitData(l, [&](std::string_view b) {
      std::memcpy(out, b.data(), b.size());
      out += b.size();
    });
  });
}

std::unique_ptr<Module> cloneModule(const Module &m) {
  std::string head = layOut(m, true).head;
  return readModule(MemoryBuffer::copy(head, "<clone of " + m.name + ">"), &m);
}

std::unique_ptr<Module> readBytecode(std::shared_ptr<const MemoryBuffer> buf) {
  return readModule(std::move(buf), nullptr);
}

namespace {

std::unique_ptr<Module> readModule(std::shared_ptr<const MemoryBuffer> buf,
                                   const Module *sharedFrom) {
  Reader hdr(*buf, 0, buf->size());
  if (!isBytecode(buf->str()))
    hdr.error("not a tc bytecode file");
  if (buf->size() < kHeaderSize)
    fail(buf->name(), ": truncated bytecode: the header needs ", kHeaderSize,
         " bytes, the file has ", buf->size());
  for (int i = 0; i < 4; ++i)
    hdr.u8();
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i)
    version |= uint32_t(hdr.u8()) << (8 * i);
  if (version < kBytecodeOldestVersion || version > kBytecodeVersion)
    hdr.error("bytecode version " + std::to_string(version) + " is not supported (this tc reads " +
              std::to_string(kBytecodeOldestVersion) + " to " + std::to_string(kBytecodeVersion) +
              ")");
  uint64_t dataOffset = hdr.u64(), dataSize = hdr.u64();
  if (dataOffset < kHeaderSize || dataOffset > buf->size() || dataSize > buf->size() - dataOffset)
    hdr.error("truncated bytecode: data section out of bounds");
  const uint8_t *data = reinterpret_cast<const uint8_t *>(buf->data()) + dataOffset;

  Reader r(*buf, kHeaderSize, dataOffset);
  r.version = version;
  auto m = std::make_unique<Module>();
  m->name = r.str();
  size_t nMeta = r.count(2);
  for (size_t i = 0; i < nMeta; ++i) {
    std::string k = r.str();
    m->metadata[k] = r.str();
  }
  size_t nFuncs = r.count();
  for (size_t fi = 0; fi < nFuncs; ++fi) {
    Function *f = m->addFunction(r.str());
    std::vector<Value *> values;
    size_t nArgs = r.count(2);
    for (size_t i = 0; i < nArgs; ++i) {
      std::string n = r.str();
      values.push_back(f->addArgument(std::move(n), r.type()));
    }
    size_t nConsts = r.count(4);
    for (size_t i = 0; i < nConsts; ++i) {
      std::string n = r.str();
      TensorType t = r.type();
      Location loc = r.loc();
      uint64_t off = r.u64(), size = r.u64();
      if (sharedFrom) { // cloneModule: the source's bytes, shared
        values.push_back(f->addConstant(std::move(n), std::move(t),
                                        *sharedFrom->functions[fi]->constants[i]->data,
                                        std::move(loc)));
        continue;
      }
      if (off > dataSize || size > dataSize - off)
        r.error("constant %" + n + " data out of bounds");
      auto want = byteSize(t);
      if (t.dtype == DType::Str && !dataFitsType(t, {data + off, size_t(size)}))
        r.error("constant %" + n + " of type " + t.str() + " holds malformed string data");
      if (t.dtype != DType::Str && (!want || *want != size))
        r.error("constant %" + n + " of type " + t.str() + " has " + std::to_string(size) +
                " bytes");
      TensorData d;
      d.owner = buf; // keep the (mmapped) file alive; no copy
      d.ptr = data + off;
      d.size = size;
      values.push_back(f->addConstant(std::move(n), std::move(t), std::move(d), std::move(loc)));
    }
    size_t nOps = r.count(4);
    for (size_t i = 0; i < nOps; ++i) {
      std::string opName = r.str();
      const OpInfo *info = lookupOp(opName);
      if (!info)
        r.error("unknown op '" + opName + "'");
      std::vector<Value *> operands(r.count());
      for (Value *&o : operands) {
        uint64_t id = r.varint();
        if (id > values.size())
          r.error("operand refers to an undefined value");
        o = id ? values[id - 1] : nullptr;
      }
      size_t nRes = r.count(3);
      std::vector<std::string> names;
      std::vector<TensorType> types;
      for (size_t k = 0; k < nRes; ++k) {
        names.push_back(r.str());
        types.push_back(r.type());
      }
      Op *op = f->addOp(info->kind, std::move(operands), names, types);
      size_t nAttrs = r.count(3);
      for (size_t k = 0; k < nAttrs; ++k) {
        std::string an = r.str();
        op->attrs.emplace_back(std::move(an), r.attr());
      }
      op->loc = r.loc();
      values.insert(values.end(), op->results.begin(), op->results.end());
    }
    size_t nResults = r.count();
    for (size_t i = 0; i < nResults; ++i) {
      uint64_t id = r.varint();
      if (id >= values.size())
        r.error("function result refers to an undefined value");
      f->results.push_back(values[id]);
    }
  }
  if (r.pos() != dataOffset &&
      !std::all_of(buf->data() + r.pos(), buf->data() + dataOffset, [](char c) { return c == 0; }))
    r.error("unexpected bytes after the module");
  try {
    verifyModule(*m);
  } catch (const Error &e) {
    fail(buf->name(), ": ", e.what());
  }
  return m;
}

} // namespace

} // namespace tc
