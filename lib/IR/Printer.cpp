#include "tc/IR/Printer.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/IR/Parser.h"
#include "tc/IR/TextLexer.h"
#include "tc/Support/Base64.h"
#include "tc/Support/Error.h"
#include "tc/Support/Float16.h"
#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_map>

namespace tc {

namespace {

std::string valueRef(const Value *v) {
  if (!v)
    return "none";
  return "%" + (isBareName(v->name) ? v->name : quoteString(v->name));
}

std::string locSuffix(const Location &l) {
  if (l.empty())
    return "";
  std::string phase = l.phase == Phase::Forward ? "" : std::string(" ") + phaseName(l.phase);
  return " loc(" + quoteString(l.file) + ":" + quoteString(l.node) + phase + ")";
}

template <typename F> std::string floatText(F x) {
  if (std::isnan(x))
    return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x))
    return x < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, end);
}

template <typename T> T load(const uint8_t *p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

std::string elementText(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F32: return floatText(load<float>(p));
  case DType::F64: return floatText(load<double>(p));
  case DType::F16: return floatText(halfToFloat(load<uint16_t>(p)));
  case DType::BF16: return floatText(bf16ToFloat(load<uint16_t>(p)));
  case DType::I64: return std::to_string(load<int64_t>(p));
  case DType::I32: return std::to_string(load<int32_t>(p));
  case DType::I16: return std::to_string(load<int16_t>(p));
  case DType::I8: return std::to_string(load<int8_t>(p));
  case DType::U64: return std::to_string(load<uint64_t>(p));
  case DType::U32: return std::to_string(load<uint32_t>(p));
  case DType::U16: return std::to_string(load<uint16_t>(p));
  case DType::U8: return std::to_string(load<uint8_t>(p));
  case DType::Bool: return *p == 0 ? "false" : *p == 1 ? "true" : "?";
  case DType::Str: break; // see formatStrings
  }
  return "?";
}

// ["a", "b\n"]: each element quoted with escapes, which read back exactly.
std::optional<std::string> formatStrings(std::span<const uint8_t> packed, size_t n) {
  std::vector<std::string> elems;
  try {
    elems = unpackStrings(packed, n);
  } catch (const Error &) {
    return std::nullopt;
  }
  std::string s = "[";
  for (size_t i = 0; i < elems.size(); ++i)
    s += (i ? ", " : "") + quoteString(elems[i]);
  return s + "]";
}

class ModulePrinter {
public:
  explicit ModulePrinter(std::ostream &os) : os_(os) {}

  void print(const Module &m) {
    os_ << "module @" << (isBareName(m.name) ? m.name : quoteString(m.name)) << " {\n";
    for (const auto &[k, v] : m.metadata)
      if (k != kTimelineMetadata)
        os_ << "  meta " << quoteString(k) << " = " << quoteString(v) << "\n";
    for (const auto &f : m.functions)
      printFunction(*f);
    os_ << "}\n";
    for (size_t i = 0; i < blobs_.size(); ++i)
      os_ << "\nblob " << i << " = \"" << base64Encode(blobs_[i]->bytes()) << "\"\n";
  }

private:
  void printFunction(const Function &f) {
    os_ << "\n  func @" << (isBareName(f.name) ? f.name : quoteString(f.name)) << "(";
    for (size_t i = 0; i < f.args.size(); ++i)
      os_ << (i ? ", " : "") << valueRef(f.args[i]) << ": " << f.args[i]->type.str();
    os_ << ") -> (";
    for (size_t i = 0; i < f.results.size(); ++i)
      os_ << (i ? ", " : "") << f.results[i]->type.str();
    os_ << ") {\n";
    for (const Value *c : f.constants)
      printConstant(*c);
    for (const auto &op : f.ops)
      os_ << "    " << printOp(*op) << "\n";
    os_ << "    return";
    for (size_t i = 0; i < f.results.size(); ++i)
      os_ << (i ? ", " : " ") << valueRef(f.results[i]);
    os_ << "\n  }\n";
  }

  void printConstant(const Value &c) {
    os_ << "    " << valueRef(&c) << " = const " << c.type.str() << " ";
    auto n = staticNumElements(c.type.shape);
    std::optional<std::string> inl;
    if (n && size_t(*n) <= kInlineElementLimit)
      inl = c.type.dtype == DType::Str ? formatStrings(c.data->bytes(), size_t(*n))
                                       : formatElements(c.type.dtype, c.data->bytes());
    if (inl) {
      os_ << *inl;
    } else {
      os_ << "blob " << blobs_.size();
      blobs_.push_back(&*c.data);
    }
    os_ << locSuffix(c.loc) << "\n";
  }

  std::ostream &os_;
  std::vector<const TensorData *> blobs_;
};

} // namespace

std::optional<std::string> formatElements(DType t, std::span<const uint8_t> bytes) {
  if (t == DType::Str)
    return std::nullopt; // the count is not in the bytes: see formatStrings
  size_t es = dtypeSize(t);
  if (bytes.size() % es)
    return std::nullopt;
  std::string s = "[";
  for (size_t i = 0; i < bytes.size(); i += es) {
    if (i)
      s += ", ";
    s += elementText(t, bytes.data() + i);
  }
  s += "]";
  // Inline only what reads back to the very same bytes (nan payloads, bool
  // bytes other than 0/1 go to a blob instead).
  try {
    Lexer lex(s, "<inline>");
    if (parseElements(lex, t, bytes.size() / es) !=
        std::vector<uint8_t>(bytes.begin(), bytes.end()))
      return std::nullopt;
  } catch (const Error &) {
    return std::nullopt;
  }
  return s;
}

std::string printOp(const Op &op) {
  std::ostringstream os;
  for (size_t i = 0; i < op.results.size(); ++i)
    os << (i ? ", " : "") << valueRef(op.results[i]);
  if (!op.results.empty())
    os << " = ";
  os << op.name() << "(";
  for (size_t i = 0; i < op.operands.size(); ++i)
    os << (i ? ", " : "") << valueRef(op.operands[i]);
  os << ")";
  if (!op.attrs.empty()) {
    os << " {";
    for (size_t i = 0; i < op.attrs.size(); ++i)
      os << (i ? ", " : "") << op.attrs[i].first << " = " << op.attrs[i].second.str();
    os << "}";
  }
  os << " :";
  for (size_t i = 0; i < op.results.size(); ++i)
    os << (i ? ", " : " ") << op.results[i]->type.str();
  os << locSuffix(op.loc);
  return os.str();
}

void printModule(const Module &m, std::ostream &os) {
  os << "// tc IR\n";
  ModulePrinter(os).print(m);
}

std::string printModuleToString(const Module &m) {
  std::ostringstream os;
  printModule(m, os);
  return os.str();
}

} // namespace tc
