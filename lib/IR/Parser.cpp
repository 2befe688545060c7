#include "tc/IR/Parser.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/TextLexer.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Base64.h"
#include "tc/Support/Error.h"
#include "tc/Support/Float16.h"
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace tc {

namespace {

// A number-like token: [A-Za-z0-9+-.]+ (covers -nan, inf, 1e-5).
std::string_view scanToken(Lexer &lex) {
  lex.skipSpace();
  std::string_view r = lex.rest();
  size_t n = 0;
  while (n < r.size() && (std::isalnum(static_cast<unsigned char>(r[n])) || r[n] == '+' ||
                          r[n] == '-' || r[n] == '.'))
    ++n;
  if (n == 0)
    lex.error("expected a number");
  return r.substr(0, n);
}

template <typename F> F parseFloatToken(Lexer &lex, std::string_view tok) {
  bool neg = tok.starts_with('-');
  std::string_view body = neg ? tok.substr(1) : tok;
  F v;
  if (body == "nan") {
    v = std::numeric_limits<F>::quiet_NaN();
  } else if (body == "inf") {
    v = std::numeric_limits<F>::infinity();
  } else {
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ec != std::errc() || p != body.data() + body.size() || body.starts_with('-'))
      lex.error("invalid number '" + std::string(tok) + "'");
    return neg ? -v : v;
  }
  return neg ? -v : v;
}

template <typename T> void appendBytes(std::vector<uint8_t> &out, T x) {
  const auto *p = reinterpret_cast<const uint8_t *>(&x);
  out.insert(out.end(), p, p + sizeof x);
}

template <typename I> I parseIntToken(Lexer &lex, std::string_view tok, DType t) {
  I v;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec == std::errc::result_out_of_range)
    lex.error("value '" + std::string(tok) + "' out of range for " + std::string(dtypeName(t)));
  if (ec != std::errc() || p != tok.data() + tok.size())
    lex.error("invalid integer '" + std::string(tok) + "'");
  return v;
}

void parseElement(Lexer &lex, DType t, std::vector<uint8_t> &out) {
  if (t == DType::Bool) {
    if (lex.consumeIf("true"))
      out.push_back(1);
    else if (lex.consumeIf("false"))
      out.push_back(0);
    else
      lex.error("expected true or false");
    return;
  }
  std::string_view tok = scanToken(lex);
  switch (t) {
  case DType::F32: appendBytes(out, parseFloatToken<float>(lex, tok)); break;
  case DType::F64: appendBytes(out, parseFloatToken<double>(lex, tok)); break;
  case DType::F16: appendBytes(out, floatToHalf(parseFloatToken<float>(lex, tok))); break;
  case DType::BF16: appendBytes(out, floatToBf16(parseFloatToken<float>(lex, tok))); break;
  case DType::I64: appendBytes(out, parseIntToken<int64_t>(lex, tok, t)); break;
  case DType::I32: appendBytes(out, parseIntToken<int32_t>(lex, tok, t)); break;
  case DType::I16: appendBytes(out, parseIntToken<int16_t>(lex, tok, t)); break;
  case DType::I8: appendBytes(out, parseIntToken<int8_t>(lex, tok, t)); break;
  case DType::U64: appendBytes(out, parseIntToken<uint64_t>(lex, tok, t)); break;
  case DType::U32: appendBytes(out, parseIntToken<uint32_t>(lex, tok, t)); break;
  case DType::U16: appendBytes(out, parseIntToken<uint16_t>(lex, tok, t)); break;
  case DType::U8: appendBytes(out, parseIntToken<uint8_t>(lex, tok, t)); break;
  case DType::Bool:
  case DType::Str: break; // parsed by the caller
  }
  lex.advance(tok.size());
}

class ModuleParser {
public:
  ModuleParser(std::string_view text, const std::string &file) : lex_(text, file) {}

  std::unique_ptr<Module> parse() {
    auto m = std::make_unique<Module>();
    lex_.expectKeyword("module");
    lex_.expect('@', "before the module name");
    m->name = lex_.parseName();
    lex_.expect('{', "to open the module");
    while (lex_.consumeIf("meta")) {
      std::string k = lex_.parseString();
      lex_.expect('=');
      m->metadata[k] = lex_.parseString();
    }
    while (lex_.consumeIf("func"))
      parseFunction(*m);
    lex_.expect('}', "to close the module");
    parseBlobs();
    lex_.expectEnd();
    if (m->functions.empty())
      lex_.error("module has no functions");
    // Ops were checked as they were read; calls between functions (Fused,
    // If, Loop, Scan) can only be checked now, as the bytecode reader does.
    verifyModule(*m);
    return m;
  }

private:
  struct BlobRef {
    Value *value;
    size_t blob;
    size_t offset;
  };

  TensorType parseType() {
    size_t at = lex_.tokenStart();
    std::string id = lex_.parseIdent();
    auto dt = parseDType(id);
    if (!dt) {
      errorAt(at, "unknown element type '" + id + "'");
    }
    TensorType t{*dt, {}};
    lex_.expect('[', "to open the shape");
    if (!lex_.consumeIf(']')) {
      do {
        char c = lex_.peek();
        if (c == '?') {
          lex_.advance(1);
          t.shape.push_back(Dim::unknown());
        } else if (std::isdigit(static_cast<unsigned char>(c))) {
          int64_t n = lex_.parseInt();
          t.shape.push_back(Dim::fixed(n));
        } else if (c == '-') {
          lex_.error("dimension must be >= 0");
        } else if (c == '(') { // a size expression (DimExpr.h), to its closing ')'
          std::string_view rest = lex_.rest();
          size_t end = 0;
          for (int depth = 0; end < rest.size(); ++end)
            if ((depth += rest[end] == '(' ? 1 : rest[end] == ')' ? -1 : 0) == 0)
              break;
          if (end == rest.size())
            lex_.error("size expression without its closing ')'");
          try {
            t.shape.push_back(dimOf(DimExpr::parse(rest.substr(0, end + 1))));
          } catch (const Error &e) {
            lex_.error(e.what());
          }
          lex_.advance(end + 1);
        } else {
          t.shape.push_back(Dim::sym(lex_.parseIdent()));
        }
      } while (lex_.consumeIf(','));
      lex_.expect(']', "to close the shape");
    }
    return t;
  }

  [[noreturn]] void errorAt(size_t offset, const std::string &msg) {
    Lexer l = lex_;
    l.seek(offset);
    l.error(msg);
  }

  std::string parseValueDef() {
    lex_.expect('%', "before a value name");
    return lex_.parseName();
  }

  Value *parseValueUse() {
    if (lex_.consumeIf("none"))
      return nullptr;
    size_t at = lex_.tokenStart();
    lex_.expect('%', "before a value name");
    std::string n = lex_.parseName();
    auto it = values_.find(n);
    if (it == values_.end())
      errorAt(at, "use of undefined value %" + n);
    return it->second;
  }

  void define(const std::string &n, Value *v, size_t at) {
    if (!values_.emplace(n, v).second)
      errorAt(at, "redefinition of value %" + n);
  }

  Location parseOptionalLoc() {
    Location l;
    if (lex_.consumeIf("loc")) {
      lex_.expect('(');
      l.file = lex_.parseString();
      lex_.expect(':');
      l.node = lex_.parseString();
      // The phase of a train step's op: forward (the default) is not printed.
      for (Phase p : {Phase::Forward, Phase::Backward, Phase::Optimizer})
        if (lex_.consumeIf(phaseName(p))) {
          l.phase = p;
          break;
        }
      lex_.expect(')', "or a phase (forward, backward, optimizer) after the location");
    }
    return l;
  }

  void parseFunction(Module &m) {
    values_.clear();
    lex_.expect('@', "before the function name");
    Function *f = m.addFunction(lex_.parseName());
    lex_.expect('(');
    if (!lex_.consumeIf(')')) {
      do {
        size_t at = lex_.tokenStart();
        std::string n = parseValueDef();
        lex_.expect(':');
        define(n, f->addArgument(n, parseType()), at);
      } while (lex_.consumeIf(','));
      lex_.expect(')', "to close the argument list");
    }
    lex_.expect('-');
    lex_.expect('>');
    lex_.expect('(');
    std::vector<TensorType> resultTypes;
    if (!lex_.consumeIf(')')) {
      do
        resultTypes.push_back(parseType());
      while (lex_.consumeIf(','));
      lex_.expect(')', "to close the result types");
    }
    lex_.expect('{', "to open the function body");
    while (!lex_.consumeIf("return"))
      parseStatement(*f);
    size_t retAt = lex_.tokenStart();
    if (lex_.peek() == '%') {
      do {
        Value *v = parseValueUse();
        if (!v)
          errorAt(retAt, "cannot return none");
        f->results.push_back(v);
      } while (lex_.consumeIf(','));
    }
    if (f->results.size() != resultTypes.size())
      errorAt(retAt, "returns " + std::to_string(f->results.size()) +
                         " values but the signature has " + std::to_string(resultTypes.size()));
    for (size_t i = 0; i < resultTypes.size(); ++i)
      if (!(f->results[i]->type == resultTypes[i]))
        errorAt(retAt, "result " + std::to_string(i) + " has type " + f->results[i]->type.str() +
                           " but the signature says " + resultTypes[i].str());
    lex_.expect('}', "to close the function");
  }

  void parseStatement(Function &f) {
    size_t stmtAt = lex_.tokenStart();
    std::vector<std::string> names;
    do
      names.push_back(parseValueDef());
    while (lex_.consumeIf(','));
    lex_.expect('=');
    if (lex_.consumeIf("const")) {
      if (names.size() != 1)
        errorAt(stmtAt, "a constant defines exactly one value");
      parseConstant(f, names[0], stmtAt);
      return;
    }
    size_t opAt = lex_.tokenStart();
    std::string opName = lex_.parseIdent();
    const OpInfo *info = lookupOp(opName);
    if (!info)
      errorAt(opAt, "unknown op '" + opName + "'");
    std::vector<Value *> operands;
    lex_.expect('(', "to open the operand list");
    if (!lex_.consumeIf(')')) {
      do
        operands.push_back(parseValueUse());
      while (lex_.consumeIf(','));
      lex_.expect(')', "to close the operand list");
    }
    std::vector<std::pair<std::string, Attribute>> attrs;
    if (lex_.consumeIf('{')) {
      if (!lex_.consumeIf('}')) {
        do {
          size_t at = lex_.tokenStart();
          std::string an = lex_.parseIdent();
          const AttrSpec *spec = info->findAttr(an);
          if (!spec)
            errorAt(at, opName + " has no attribute '" + an + "'");
          for (auto &[k, v] : attrs)
            if (k == an)
              errorAt(at, "attribute '" + an + "' given twice");
          lex_.expect('=');
          attrs.emplace_back(an, lex_.parseAttributeValue(spec->kind));
        } while (lex_.consumeIf(','));
        lex_.expect('}', "to close the attributes");
      }
    }
    lex_.expect(':', "before the result types");
    std::vector<TensorType> types;
    do
      types.push_back(parseType());
    while (lex_.consumeIf(','));
    if (types.size() != names.size())
      errorAt(stmtAt, std::to_string(names.size()) + " results but " +
                          std::to_string(types.size()) + " types");
    Location loc = parseOptionalLoc();
    Op *op = f.addOp(info->kind, std::move(operands), names, types, std::move(loc));
    for (auto &[k, v] : attrs)
      op->setAttr(k, std::move(v));
    for (Value *r : op->results)
      define(r->name, r, stmtAt);
    try {
      verifyOp(*op);
    } catch (const Error &e) {
      errorAt(stmtAt, e.what());
    }
  }

  void parseConstant(Function &f, const std::string &name, size_t at) {
    TensorType t = parseType();
    auto n = staticNumElements(t.shape);
    if (!isStaticShape(t.shape))
      errorAt(at, "constant %" + name + " must have a static shape");
    if (!n || (t.dtype != DType::Str && !byteSize(t)))
      errorAt(at, "constant %" + name + " is too large");
    TensorData data;
    std::optional<size_t> blob;
    if (lex_.consumeIf("blob")) {
      int64_t b = lex_.parseInt();
      if (b < 0)
        errorAt(at, "bad blob index");
      blob = size_t(b);
    } else {
      data = TensorData::fromVector(parseElements(lex_, t.dtype, size_t(*n)));
    }
    Location loc = parseOptionalLoc();
    Value *v = f.addConstant(name, t, std::move(data), std::move(loc));
    define(name, v, at);
    if (blob)
      blobRefs_.push_back({v, *blob, at});
  }

  void parseBlobs() {
    std::unordered_map<size_t, TensorData> blobs;
    while (lex_.consumeIf("blob")) {
      size_t at = lex_.tokenStart();
      int64_t idx = lex_.parseInt();
      lex_.expect('=');
      std::string text = lex_.parseString();
      auto bytes = base64Decode(text);
      if (!bytes)
        errorAt(at, "blob " + std::to_string(idx) + " is not valid base64");
      if (!blobs.emplace(size_t(idx), TensorData::fromVector(std::move(*bytes))).second)
        errorAt(at, "blob " + std::to_string(idx) + " defined twice");
    }
    for (const BlobRef &r : blobRefs_) {
      auto it = blobs.find(r.blob);
      if (it == blobs.end())
        errorAt(r.offset, "blob " + std::to_string(r.blob) + " is not defined");
      auto want = byteSize(r.value->type);
      if (r.value->type.dtype == DType::Str && !dataFitsType(r.value->type, it->second.bytes()))
        errorAt(r.offset, "blob " + std::to_string(r.blob) + " is not valid string data for " +
                              r.value->type.str());
      if (r.value->type.dtype != DType::Str && (!want || it->second.size != *want))
        errorAt(r.offset, "blob " + std::to_string(r.blob) + " has " +
                              std::to_string(it->second.size) + " bytes, " + r.value->type.str() +
                              " needs " + (want ? std::to_string(*want) : std::string("too many")));
      r.value->data = it->second;
    }
  }

  Lexer lex_;
  std::unordered_map<std::string, Value *> values_;
  std::vector<BlobRef> blobRefs_;
};

} // namespace

std::vector<uint8_t> parseElements(Lexer &lex, DType t, size_t count) {
  std::vector<uint8_t> out;
  std::vector<std::string> strs;
  lex.expect('[', "to open the element list");
  size_t n = 0;
  if (!lex.consumeIf(']')) {
    do {
      if (n == count)
        lex.error("more than the " + std::to_string(count) + " elements the type holds");
      if (t == DType::Str) {
        lex.skipSpace();
        if (lex.peek() != '"')
          lex.error("expected a quoted string element");
        strs.push_back(lex.parseString());
      } else {
        parseElement(lex, t, out);
      }
      ++n;
    } while (lex.consumeIf(','));
    lex.expect(']', "to close the element list");
  }
  if (n != count)
    lex.error("expected " + std::to_string(count) + " elements, got " + std::to_string(n));
  return t == DType::Str ? packStrings(strs) : out;
}

std::unique_ptr<Module> parseModule(std::string_view text, const std::string &file) {
  return ModuleParser(text, file).parse();
}

} // namespace tc
