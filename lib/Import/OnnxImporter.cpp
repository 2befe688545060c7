// ONNX → tc IR: parsing (binary or text, sniffed), the unsupported-op scan,
// and the graph builder that turns inputs, initializers and nodes into one
// function "main". The per-op knowledge lives in OnnxOps.cpp.
//
// Everything here reads untrusted bytes: every size, index and name from the
// model is checked before use, and every failure is a one-line tc::Error.
#include "tc/Import/OnnxImporter.h"
#include "OnnxOps.h"
#include "OnnxWeights.h"
#include "onnx/defs/parser.h"
#include "tc/IR/RuntimeAttrs.h"
#include "tc/IR/TrainSignature.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <bit>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <google/protobuf/io/coded_stream.h>
#include <map>
#include <optional>
#include <queue>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace tc {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data and tc constants are little-endian");

namespace {

using namespace onnximport;
namespace fs = std::filesystem;

// ---- Parsing -------------------------------------------------------------------

// The text parser recurses on nested types and subgraph attributes; a
// hostile file could nest deep enough to overflow the stack.
constexpr int kMaxTextNesting = 64;

bool isTextSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int textNesting(std::string_view s) {
  int depth = 0, maxDepth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') { // string literal: brackets inside do not nest
      while (++i < s.size() && s[i] != '"')
        if (s[i] == '\\')
          ++i;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n')
        ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      maxDepth = std::max(maxDepth, ++depth);
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return maxDepth;
}

// libonnx's messages are "[ParseError at position (line: L column: C)]\n
// Error context: <line>\n<what>"; tc errors are one line.
std::string oneLineParseError(const std::string &msg) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= msg.size()) {
    size_t nl = msg.find('\n', start);
    if (nl == std::string::npos)
      nl = msg.size();
    if (nl > start)
      lines.push_back(msg.substr(start, nl - start));
    start = nl + 1;
  }
  std::string pos, context, what;
  for (const std::string &l : lines) {
    static constexpr std::string_view kPos = "[ParseError at position (", kCtx = "Error context: ";
    if (l.starts_with(kPos) && l.ends_with(")]")) {
      pos = l.substr(kPos.size(), l.size() - kPos.size() - 2); // "line: L column: C"
      std::erase(pos, ':');
    } else if (l.starts_with(kCtx)) {
      context = l.substr(kCtx.size());
    } else {
      what += (what.empty() ? "" : " ") + l;
    }
  }
  std::string r = pos.empty() ? what : pos + ": " + what;
  // Trim the context to keep the line readable.
  size_t b = context.find_first_not_of(" \t");
  context = b == std::string::npos ? "" : context.substr(b);
  if (context.size() > 60)
    context = context.substr(0, 57) + "...";
  if (!context.empty())
    r += " (near '" + context + "')";
  return r;
}

void parseText(std::string_view bytes, const std::string &file, onnx::ModelProto &model) {
  auto syntaxError = [&](const std::string &what) {
    fail(file, ": ONNX text syntax error: ", what);
  };
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos)
    syntaxError("NUL byte at offset " + std::to_string(nul));
  if (textNesting(bytes) > kMaxTextNesting)
    syntaxError("brackets nested deeper than " + std::to_string(kMaxTextNesting) + " levels");
  if (bytes.starts_with("\xEF\xBB\xBF")) // UTF-8 byte order mark: not syntax
    bytes.remove_prefix(3);
  // The parser reads a NUL-terminated string (it takes the length by strlen).
  std::string text(bytes);
  onnx::OnnxParser parser(text.c_str());
  onnx::Common::Status status;
  try {
    status = parser.Parse(model);
  } catch (const std::exception &e) {
    // std::stoll & co. on out-of-range literals.
    syntaxError("malformed or out-of-range number near " + parser.GetCurrentPos() + " (" +
                e.what() + ")");
  }
  if (!status.IsOK())
    syntaxError(printable(oneLineParseError(status.ErrorMessage())));
  if (!parser.EndOfInput())
    syntaxError("unexpected text after the model at " + parser.GetCurrentPos());
}

void parseBinary(std::string_view bytes, const std::string &file, onnx::ModelProto &model) {
  auto invalid = [&](const std::string &why) {
    fail(file, ": not a valid ONNX model (", why, ")");
  };
  if (bytes.empty())
    invalid("empty file");
  // Protobuf sizes are int; larger models must keep weights as external data.
  if (bytes.size() > size_t(INT_MAX))
    invalid("file is " + std::to_string(bytes.size()) +
            " bytes, over protobuf's 2 GiB limit; store the weights as external data");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX); // the default (64 MiB in old releases) is too small for weights
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    invalid("protobuf parse failed");
  if (!model.has_graph())
    invalid("no graph");
}

void parseModel(const MemoryBuffer &buf, const std::string &file, onnx::ModelProto &model) {
  if (looksLikeOnnxText(buf.str()))
    parseText(buf.str(), file, model);
  else
    parseBinary(buf.str(), file, model);
}

// ---- Unsupported-op scan -------------------------------------------------------

// Node names end up in every diagnostic and location: keep them printable.
std::string nodeName(const onnx::NodeProto &n, size_t index) {
  return n.name().empty() ? printable(n.op_type()) + "_" + std::to_string(index)
                          : printable(n.name());
}

// Subgraphs (If/Loop/Scan bodies) nest; the builder recurses once per
// level, so a hostile model must not nest them without bound.
constexpr int kMaxSubgraphDepth = 32;

void scanUnsupported(const onnx::GraphProto &g, int depth, std::vector<UnsupportedNode> &r) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    if (!findConverter(n.domain(), n.op_type()))
      r.push_back({n.op_type(), n.domain(), nodeName(n, size_t(i))});
    if (depth < kMaxSubgraphDepth) // deeper: the builder reports the depth
      for (const onnx::AttributeProto &a : n.attribute())
        if (a.has_g())
          scanUnsupported(a.g(), depth + 1, r);
  }
}

std::vector<UnsupportedNode> scanUnsupported(const onnx::GraphProto &g) {
  std::vector<UnsupportedNode> r;
  scanUnsupported(g, 0, r);
  return r;
}

// Names the subgraphs of `n` read (at any depth): outer values they capture,
// plus their own names (ONNX names are unique across scopes).
void subgraphReads(const onnx::NodeProto &n, int depth, std::unordered_set<std::string> &out) {
  for (const onnx::AttributeProto &a : n.attribute()) {
    if (!a.has_g() && a.graphs_size() == 0)
      continue;
    if (depth >= kMaxSubgraphDepth)
      return; // importing it reports the depth
    auto visit = [&](const onnx::GraphProto &g) {
      for (const onnx::NodeProto &inner : g.node()) {
        out.insert(inner.input().begin(), inner.input().end());
        subgraphReads(inner, depth + 1, out);
      }
      for (const onnx::ValueInfoProto &o : g.output())
        out.insert(o.name());
    };
    if (a.has_g())
      visit(a.g());
    for (const onnx::GraphProto &g : a.graphs())
      visit(g);
  }
}

// "Foo (node_3), Bar (node_7, node_9)": every op type once, in order of first
// appearance, with up to 3 node names.
std::string formatUnsupported(const std::vector<UnsupportedNode> &nodes) {
  constexpr size_t kMaxNames = 3;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const UnsupportedNode &u : nodes) {
    std::string type = printable(isDefaultDomain(u.domain) ? u.opType : u.domain + "." + u.opType);
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto &g) { return g.first == type; });
    if (it == groups.end())
      it = groups.insert(groups.end(), {type, {}});
    it->second.push_back(u.nodeName);
  }
  std::string r;
  for (const auto &[type, names] : groups) {
    r += (r.empty() ? "" : ", ") + type + " (";
    for (size_t i = 0; i < names.size() && i < kMaxNames; ++i)
      r += (i ? ", " : "") + names[i];
    r += names.size() > kMaxNames ? ", ...)" : ")";
  }
  return r;
}

// ---- Types -----------------------------------------------------------------------

// ONNX dim_params are free-form ("batch size", "2*seq"); IR symbols are
// identifiers.
std::string sanitizeSymbol(const std::string &s) {
  std::string r = s;
  for (char &c : r)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  if (!r.empty() && std::isdigit(static_cast<unsigned char>(r[0])))
    r.insert(r.begin(), '_');
  return r;
}

// Strict decimal for external-data offset/length.
std::optional<uint64_t> parseU64(const std::string &s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

// ---- Graph builder -----------------------------------------------------------------

class GraphBuilder {
public:
  GraphBuilder(onnx::ModelProto &model, Module &m, Function &f, std::string file,
               std::optional<fs::path> dataDir, std::string noDataDirReason, int opset)
      : graph_(model.graph()), mutableGraph_(model.mutable_graph()), m_(m), f_(f),
        file_(std::move(file)), dataDir_(std::move(dataDir)),
        noDataDirReason_(std::move(noDataDirReason)), opset_(opset) {}
  // A subgraph of `parent`'s graph, built into `f`.
  GraphBuilder(GraphBuilder &parent, const onnx::GraphProto &g, Function &f)
      : graph_(g), m_(parent.m_), f_(f), file_(parent.file_), dataDir_(parent.dataDir_),
        noDataDirReason_(parent.noDataDirReason_), opset_(parent.opset_), parent_(&parent),
        depth_(parent.depth_ + 1) {}

  void build();
  // Subgraph: formal inputs of `types`, then the nodes and outputs.
  void buildSubgraph(const std::vector<TensorType> &types, const std::string &where);
  // The value ONNX name `name` denotes here: local, or an outer value, which
  // becomes a new argument (a copy if it is a constant); nullptr if none.
  Value *resolve(const std::string &name);
  Module &module() { return m_; }
  int depth() const { return depth_; }
  std::vector<Value *> captures; // outer values behind the trailing arguments

  // Shared with NodeCtx.
  Function &f_func() { return f_; }
  const std::string &file() const { return file_; }
  int opset() const { return opset_; }
  std::unordered_map<std::string, Value *> values; // ONNX name → value
  std::unordered_set<std::string> used;            // names read by nodes or outputs
  // Float initializers of 2+ elements: the model's weights. Import folds no
  // op that reads one (tc-opt's fold-constants does, for inference), so a
  // train step (tc-opt --train) finds each weight as the model names it,
  // once: a Linear's weight behind its Transpose, an embedding tied to a
  // decoder.
  std::unordered_set<const Value *> weights;

  TensorData loadTensor(const onnx::TensorProto &t, TensorType &type, const std::string &where,
                        std::shared_ptr<std::string> raw = nullptr);

private:
  void importInputs();
  void importInitializers();
  void importNodes();
  std::vector<int> nodeOrder();
  void importOutputs();
  TensorData loadExternal(const onnx::TensorProto &t, const TensorType &type, size_t bytes,
                          const std::string &where);

  const onnx::GraphProto &graph_;
  onnx::GraphProto *mutableGraph_ = nullptr; // the top-level graph only
  Module &m_;
  Function &f_;
  std::string file_;
  std::optional<fs::path> dataDir_;
  std::string noDataDirReason_;
  int opset_;
  GraphBuilder *parent_ = nullptr;
  int depth_ = 0;
  std::unordered_set<std::string> initializerNames_;
  std::map<std::string, std::shared_ptr<const MemoryBuffer>> externalFiles_;
};

class NodeCtx final : public NodeContext {
public:
  NodeCtx(GraphBuilder &b, const onnx::NodeProto &n, std::string name)
      : b_(b), n_(n), name_(std::move(name)) {}

  const onnx::NodeProto &node() const override { return n_; }
  const std::string &nodeName() const override { return name_; }
  int opset() const override { return b_.opset(); }
  Location loc() const { return Location{b_.file(), name_}; }

  std::string where() const override {
    return b_.file() + ":" + name_ + " (" + printable(n_.op_type()) + ")";
  }

  Value *input(size_t i) const override {
    if (i >= numInputs() || n_.input(int(i)).empty())
      return nullptr;
    const std::string &name = n_.input(int(i));
    Value *v = b_.resolve(name);
    if (!v)
      fail("input ", quoteName(name), " is not defined");
    return v;
  }

  bool outputUsed(size_t i) const override {
    return i < size_t(n_.output_size()) && !n_.output(int(i)).empty() &&
           b_.used.count(n_.output(int(i)));
  }

  Op *emit(OpKind kind, std::vector<Value *> operands, const AttrList &attrs,
           const std::vector<std::string> &outputs) override {
    return emitImpl(kind, std::move(operands), attrs, outputs, nullptr);
  }

  Op *emitTyped(OpKind kind, std::vector<Value *> operands, const AttrList &attrs,
                const std::vector<std::string> &outputs, std::vector<TensorType> types) override {
    return emitImpl(kind, std::move(operands), attrs, outputs, &types);
  }

  Function &importSubgraph(const onnx::GraphProto &g, const std::string &suffix,
                           const std::vector<TensorType> &types,
                           std::vector<Value *> &captures) override {
    if (b_.depth() >= kMaxSubgraphDepth)
      fail("subgraphs are nested deeper than ", kMaxSubgraphDepth, " levels");
    std::string name = name_ + "_" + suffix;
    for (char &c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        c = '_';
    while (b_.module().lookup(name))
      name += "_";
    Function &f = *b_.module().addFunction(name);
    GraphBuilder sub(b_, g, f);
    sub.buildSubgraph(types, where() + ": " + suffix);
    captures.insert(captures.end(), sub.captures.begin(), sub.captures.end());
    return f;
  }

  void discardSubgraph(Function &f) override {
    auto &fs = b_.module().functions;
    fs.erase(std::remove_if(fs.begin(), fs.end(), [&](auto &p) { return p.get() == &f; }),
             fs.end());
  }

private:
  Op *emitImpl(OpKind kind, std::vector<Value *> operands, const AttrList &attrs,
               const std::vector<std::string> &outputs, std::vector<TensorType> *declared) {
    const OpInfo &info = opInfo(kind);
    // ONNX marks a skipped optional input with ""; trailing ones are just absent.
    while (!operands.empty() && !operands.back())
      operands.pop_back();
    size_t n = operands.size(), lo = info.minOperands(), hi = info.maxOperands();
    if (n < lo || n > hi)
      fail("expects ",
           hi == SIZE_MAX ? "at least " + std::to_string(lo)
           : lo == hi     ? std::to_string(lo)
                          : std::to_string(lo) + " to " + std::to_string(hi),
           lo == 1 && hi == 1 ? " input, got " : " inputs, got ", n);
    for (size_t i = 0; i < n; ++i) {
      const OperandSpec &spec = info.operands[std::min(i, info.operands.size() - 1)];
      if (!operands[i] && !spec.optional)
        fail("input ", i, " (", spec.name, ") is required");
    }
    // Checked here because the shape rule reads attributes before verifyOp
    // would report them.
    for (const AttrSpec &spec : info.attrs)
      if (!spec.defaultValue && !runtimeAttrOperand(info, operands, spec.name) &&
          std::none_of(attrs.begin(), attrs.end(), [&](auto &a) { return a.first == spec.name; }))
        fail("missing required attribute ", quoteName(spec.name));
    size_t numResults = declared               ? declared->size()
                        : info.numResults >= 0 ? size_t(info.numResults)
                                               : std::max<size_t>(1, outputs.size());
    for (size_t i = numResults; i < outputs.size(); ++i)
      if (!outputs[i].empty())
        fail("output ", i, " (", quoteName(outputs[i]), ") is not supported");
    Function &f = b_.f_func();
    std::vector<std::string> names;
    for (size_t i = 0; i < numResults; ++i) {
      const std::string onnxName = i < outputs.size() ? outputs[i] : std::string();
      std::string name =
          f.uniqueName(onnxName.empty() ? name_ + "_out" + std::to_string(i) : onnxName);
      // uniqueName reserves nothing until addOp; keep this op's names apart.
      while (std::find(names.begin(), names.end(), name) != names.end())
        name = f.uniqueName(name + "_" + std::to_string(i));
      names.push_back(std::move(name));
    }
    Op *op = f.addOp(kind, std::move(operands), std::move(names), {}, loc());
    for (const auto &[name, value] : attrs)
      op->setAttr(name, value);
    try {
      if (declared)
        for (size_t i = 0; i < numResults; ++i)
          op->results[i]->type = (*declared)[i];
      std::vector<TensorType> types = inferResultTypes(*op);
      if (types.size() != op->results.size())
        fail("shape rule gave ", types.size(), " results for ", op->results.size());
      for (size_t i = 0; i < types.size(); ++i)
        op->results[i]->type = std::move(types[i]);
      verifyOp(*op);
    } catch (const Error &) {
      throw;
    } catch (const std::exception &e) {
      // A shape rule must only throw tc::Error; keep one-line diagnostics
      // (and no crash) even if one does not.
      fail(e.what());
    }
    for (size_t i = 0; i < numResults && i < outputs.size(); ++i)
      if (!outputs[i].empty())
        b_.values[outputs[i]] = op->results[i];
    return op;
  }

  Value *defineConstant(const std::string &onnxName, TensorType type, TensorData data) override {
    Value *v = b_.f_func().addConstant(b_.f_func().uniqueName(onnxName), std::move(type),
                                       std::move(data), loc());
    b_.values[onnxName] = v;
    return v;
  }

  Value *helperConstant(const std::string &base, TensorType type, TensorData data) override {
    return b_.f_func().addConstant(b_.f_func().uniqueName(base), std::move(type), std::move(data),
                                   loc());
  }

  TensorData loadTensor(const onnx::TensorProto &t, TensorType &type,
                        const std::string &what) override {
    return b_.loadTensor(t, type, where() + ": " + what);
  }

private:
  GraphBuilder &b_;
  const onnx::NodeProto &n_;
  std::string name_;
};

Value *GraphBuilder::resolve(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  Value *outer = parent_ ? parent_->resolve(name) : nullptr;
  if (!outer)
    return nullptr;
  Value *local;
  if (outer->isConstant()) {
    local = f_.addConstant(f_.uniqueName(outer->name), outer->type, *outer->data, outer->loc);
  } else {
    local = f_.addArgument(f_.uniqueName(outer->name), outer->type);
    captures.push_back(outer);
  }
  values[name] = local;
  return local;
}

void GraphBuilder::buildSubgraph(const std::vector<TensorType> &types, const std::string &where) {
  const onnx::GraphProto &g = graph_;
  if (size_t(g.input_size()) != types.size())
    fail(where, " has ", g.input_size(), " inputs, expected ", types.size());
  if (g.sparse_initializer_size())
    fail(where, ": sparse initializers are not supported");
  for (int i = 0; i < g.input_size(); ++i) {
    const onnx::ValueInfoProto &vi = g.input(i);
    if (vi.name().empty() || values.count(vi.name()))
      fail(where, ": input ", i, " has no name or a repeated one");
    if (vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() &&
        dtypeFromOnnx(vi.type().tensor_type().elem_type()) != types[size_t(i)].dtype)
      fail(where, ": input ", quoteName(vi.name()), " is declared ",
           onnxTypeName(vi.type().tensor_type().elem_type()), " but receives ",
           types[size_t(i)].str());
    if (!vi.type().has_tensor_type() && vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
      fail(where, ": input ", quoteName(vi.name()),
           " is not a tensor (sequence, map and optional values are not supported)");
    values[vi.name()] = f_.addArgument(f_.uniqueName(vi.name()), types[size_t(i)]);
  }
  importInitializers();
  importNodes();
  for (const onnx::ValueInfoProto &o : g.output())
    if (!o.type().has_tensor_type() && o.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
      fail(where, ": output ", quoteName(o.name()),
           " is not a tensor (sequence, map and optional values are not supported)");
  importOutputs();
}

void GraphBuilder::build() {
  const onnx::GraphProto &g = graph_;
  if (g.sparse_initializer_size())
    fail(file_, ": sparse initializer ", quoteName(g.sparse_initializer(0).values().name()),
         " is not supported");
  for (const onnx::TensorProto &t : g.initializer()) {
    if (t.name().empty())
      fail(file_, ": an initializer has no name");
    if (!initializerNames_.insert(t.name()).second)
      fail(file_, ": initializer ", quoteName(t.name()), " is defined twice");
  }
  importInputs();
  importInitializers();
  importNodes();
  importOutputs();
  std::string names;
  for (const onnx::TensorProto &t : g.initializer())
    if (weights.count(values.at(t.name())))
      names += t.name() + "\n";
  if (!names.empty())
    m_.metadata[kWeightsMetadataKey] = names;
}

void GraphBuilder::importNodes() {
  const onnx::GraphProto &g = graph_;
  for (const onnx::NodeProto &n : g.node()) {
    used.insert(n.input().begin(), n.input().end());
    subgraphReads(n, depth_, used);
  }
  for (const onnx::ValueInfoProto &o : g.output())
    used.insert(o.name());
  std::vector<Value *> folded;
  for (int i : nodeOrder()) {
    const onnx::NodeProto &n = g.node(i);
    NodeCtx ctx(*this, n, nodeName(n, size_t(i)));
    ConvertFn convert = findConverter(n.domain(), n.op_type());
    if (!convert) // the caller scanned for these first
      ctx.fail("unsupported op");
    size_t firstNew = f_.ops.size();
    convert(ctx);
    // Shape computations over static dims and constants become constants.
    for (size_t k = firstNew; k < f_.ops.size();) {
      const std::vector<Value *> &ins = f_.ops[k]->operands;
      bool readsWeight =
          std::any_of(ins.begin(), ins.end(), [&](const Value *v) { return weights.count(v); });
      if (readsWeight || !foldAtImport(f_, f_.ops[k].get(), folded))
        ++k;
    }
  }
  for (const onnx::ValueInfoProto &o : g.output()) // keep returned values
    if (auto it = values.find(o.name()); it != values.end())
      folded.erase(std::remove(folded.begin(), folded.end(), it->second), folded.end());
  dropUnusedFolded(f_, folded);
}

void GraphBuilder::importInputs() {
  for (const onnx::ValueInfoProto &vi : graph_.input()) {
    const std::string &name = vi.name();
    if (name.empty())
      fail(file_, ": a graph input has no name");
    // Old IR versions list every initializer as an input too: a constant.
    if (initializerNames_.count(name))
      continue;
    if (values.count(name))
      fail(file_, ": graph input ", quoteName(name), " is listed twice");
    auto where = [&] { return file_ + ": input " + quoteName(name); };
    if (!vi.type().has_tensor_type())
      fail(where(), " is not a tensor (sequence, map and optional inputs are not supported)");
    const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
    std::optional<DType> dt = dtypeFromOnnx(tt.elem_type());
    if (!dt)
      fail(where(), " has unsupported element type ", onnxTypeName(tt.elem_type()));
    if (!tt.has_shape())
      fail(where(), " has no shape (unranked inputs are not supported)");
    Shape shape;
    for (const onnx::TensorShapeProto_Dimension &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          fail(where(), " has invalid dimension ", d.dim_value());
        shape.push_back(Dim::fixed(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        shape.push_back(Dim::sym(sanitizeSymbol(d.dim_param())));
      } else {
        shape.push_back(Dim::unknown());
      }
    }
    // Like constants, no real tensor exceeds byteSize's 256 TiB; rejecting
    // absurd static dims here keeps shape arithmetic far from overflow.
    Shape staticPart;
    for (const Dim &d : shape)
      if (d.isStatic())
        staticPart.push_back(d);
    TensorType type{*dt, std::move(shape)};
    // A str element takes at least its 8-byte length in packed form.
    if (!byteSize(TensorType{*dt == DType::Str ? DType::I64 : *dt, staticPart}))
      fail(where(), " is too large: ", type.str());
    values[name] = f_.addArgument(f_.uniqueName(name), std::move(type));
  }
}

void GraphBuilder::importInitializers() {
  for (int i = 0; i < graph_.initializer_size(); ++i) {
    const onnx::TensorProto &t = graph_.initializer(i);
    // Take raw_data out of the proto instead of copying it: weights are most
    // of a model's bytes.
    std::shared_ptr<std::string> raw;
    if (mutableGraph_ && t.has_raw_data() && t.data_location() != onnx::TensorProto::EXTERNAL) {
      raw = std::make_shared<std::string>();
      raw->swap(*mutableGraph_->mutable_initializer(i)->mutable_raw_data());
    }
    TensorType type;
    TensorData data = loadTensor(t, type, file_ + ": initializer " + quoteName(t.name()), raw);
    Value *c = f_.addConstant(f_.uniqueName(t.name()), std::move(type), std::move(data),
                              Location{file_, t.name()});
    values[t.name()] = c;
    if (isFloat(c->type.dtype) && staticNumElements(c->type.shape).value_or(0) >= 2)
      weights.insert(c);
  }
}

// Node indices in an order where every input is defined first: the file's
// order when it is already topological (the ONNX rule), else the stable
// topological order. Also rejects undefined inputs, redefined names, cycles.
std::vector<int> GraphBuilder::nodeOrder() {
  const onnx::GraphProto &g = graph_;
  int numNodes = g.node_size();
  auto where = [&](int i) {
    const onnx::NodeProto &n = g.node(i);
    return file_ + ":" + nodeName(n, size_t(i)) + " (" + printable(n.op_type()) + ")";
  };
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < numNodes; ++i)
    for (const std::string &o : g.node(i).output()) {
      if (o.empty())
        continue;
      if (values.count(o) || !producer.emplace(o, i).second)
        fail(where(i), ": output ", quoteName(o),
             " is already defined (ONNX values are assigned once)");
    }
  std::vector<int> pending(numNodes, 0);
  std::vector<std::vector<int>> consumers(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    for (const std::string &in : g.node(i).input()) {
      if (in.empty() || values.count(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end() && !resolve(in))
        fail(where(i), ": input ", quoteName(in), " is not defined");
      if (it == producer.end())
        continue;
      ++pending[i];
      consumers[it->second].push_back(i);
    }
    // Values the node's subgraphs read come first too.
    std::unordered_set<std::string> reads;
    subgraphReads(g.node(i), depth_, reads);
    for (const std::string &in : reads)
      if (auto it = producer.find(in); it != producer.end() && it->second != i) {
        ++pending[i];
        consumers[it->second].push_back(i);
      }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < numNodes; ++i)
    if (!pending[i])
      ready.push(i);
  std::vector<int> order;
  order.reserve(numNodes);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0)
        ready.push(c);
  }
  if (int(order.size()) != numNodes)
    for (int i = 0; i < numNodes; ++i)
      if (pending[i])
        fail(where(i), ": the graph has a cycle through this node");
  return order;
}

void GraphBuilder::importOutputs() {
  const onnx::GraphProto &g = graph_;
  if (g.output_size() == 0)
    fail(file_, ": the graph has no outputs");
  for (const onnx::ValueInfoProto &o : g.output()) {
    if (o.name().empty())
      fail(file_, ": a graph output has no name");
    Value *v = resolve(o.name());
    if (!v)
      fail(file_, ": graph output ", quoteName(o.name()), " is not defined");
    f_.results.push_back(v);
  }
}

// Converts typed repeated fields to packed little-endian bytes.
template <typename Dst, typename Field> std::vector<uint8_t> packField(const Field &src) {
  std::vector<uint8_t> out(size_t(src.size()) * sizeof(Dst));
  for (int i = 0; i < src.size(); ++i) {
    Dst x = static_cast<Dst>(src.Get(i));
    std::memcpy(out.data() + size_t(i) * sizeof(Dst), &x, sizeof(Dst));
  }
  return out;
}

TensorData GraphBuilder::loadTensor(const onnx::TensorProto &t, TensorType &type,
                                    const std::string &where, std::shared_ptr<std::string> raw) {
  std::optional<DType> dt = dtypeFromOnnx(t.data_type());
  if (!dt)
    fail(where, " has unsupported element type ", onnxTypeName(t.data_type()));
  Shape shape;
  for (int64_t d : t.dims()) {
    if (d < 0)
      fail(where, " has invalid dimension ", d);
    shape.push_back(Dim::fixed(d));
  }
  type = TensorType{*dt, std::move(shape)};
  if (t.has_segment())
    fail(where, " is segmented, which is not supported");
  if (*dt == DType::Str) { // string_data only: ONNX defines no raw or external form
    std::optional<int64_t> n = staticNumElements(type.shape);
    if (t.has_raw_data() || raw || t.data_location() == onnx::TensorProto::EXTERNAL)
      fail(where, ": a string tensor must hold its elements in string_data");
    if (!n || *n != t.string_data_size())
      fail(where, " has ", t.string_data_size(), " values in string_data, but ", type.str(),
           " needs ", n ? std::to_string(*n) : "too many");
    return TensorData::fromVector(
        packStrings(std::vector<std::string>(t.string_data().begin(), t.string_data().end())));
  }
  std::optional<size_t> bytes = byteSize(type);
  if (!bytes)
    fail(where, ": ", type.str(), " is too large");
  size_t count = *bytes / dtypeSize(*dt);

  TensorData data;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    data = loadExternal(t, type, *bytes, where);
  } else if (raw || t.has_raw_data()) {
    if (!raw)
      raw = std::make_shared<std::string>(t.raw_data());
    if (raw->size() != *bytes)
      fail(where, " has ", raw->size(), " bytes of data, but ", type.str(), " needs ", *bytes);
    data.ptr = reinterpret_cast<const uint8_t *>(raw->data());
    data.size = raw->size();
    data.owner = std::move(raw);
  } else {
    // Typed fields: which one holds the values depends on the element type.
    auto check = [&](int n, const char *field) {
      if (size_t(n) != count)
        fail(where, " has ", n, " values in ", field, ", but ", type.str(), " needs ", count);
    };
    std::vector<uint8_t> v;
    switch (*dt) {
    case DType::F32:
      check(t.float_data_size(), "float_data");
      v = packField<float>(t.float_data());
      break;
    case DType::F64:
      check(t.double_data_size(), "double_data");
      v = packField<double>(t.double_data());
      break;
    case DType::I64:
      check(t.int64_data_size(), "int64_data");
      v = packField<int64_t>(t.int64_data());
      break;
    case DType::U64:
      check(t.uint64_data_size(), "uint64_data");
      v = packField<uint64_t>(t.uint64_data());
      break;
    case DType::U32:
      check(t.uint64_data_size(), "uint64_data");
      v = packField<uint32_t>(t.uint64_data());
      break;
    case DType::I32:
      check(t.int32_data_size(), "int32_data");
      v = packField<int32_t>(t.int32_data());
      break;
    // 16-bit floats are stored as their bit patterns, one per int32.
    case DType::F16:
    case DType::BF16:
    case DType::U16:
      check(t.int32_data_size(), "int32_data");
      v = packField<uint16_t>(t.int32_data());
      break;
    case DType::I16:
      check(t.int32_data_size(), "int32_data");
      v = packField<int16_t>(t.int32_data());
      break;
    case DType::I8:
      check(t.int32_data_size(), "int32_data");
      v = packField<int8_t>(t.int32_data());
      break;
    case DType::U8:
      check(t.int32_data_size(), "int32_data");
      v = packField<uint8_t>(t.int32_data());
      break;
    case DType::Bool:
      check(t.int32_data_size(), "int32_data");
      for (int32_t x : t.int32_data())
        v.push_back(x != 0);
      break;
    case DType::Str: break; // handled above
    }
    data = TensorData::fromVector(std::move(v));
  }
  // The IR's bool is one byte 0 or 1; raw bytes could be anything.
  if (*dt == DType::Bool) {
    auto b = data.bytes();
    if (std::any_of(b.begin(), b.end(), [](uint8_t x) { return x > 1; })) {
      std::vector<uint8_t> v(b.begin(), b.end());
      for (uint8_t &x : v)
        x = x != 0;
      data = TensorData::fromVector(std::move(v));
    }
  }
  return data;
}

TensorData GraphBuilder::loadExternal(const onnx::TensorProto &t, const TensorType &type,
                                      size_t bytes, const std::string &where) {
  if (!dataDir_)
    fail(where, " has external data, which ", noDataDirReason_);
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      std::optional<uint64_t> v = parseU64(kv.value());
      if (!v)
        fail(where, ": external data ", kv.key(), " ", quoteName(kv.value()), " is not a number");
      (kv.key() == "offset" ? offset : length.emplace()) = *v;
    } // "checksum" and unknown keys: nothing to do
  }
  if (location.empty())
    fail(where, ": external data has no location");
  // Confine the path to the model's folder: a model must not make tc read
  // arbitrary files.
  fs::path rel(location);
  bool escapes = location.find('\0') != std::string::npos || rel.is_absolute() ||
                 rel.has_root_name() || rel.has_root_directory();
  for (const fs::path &part : rel)
    escapes |= part == "..";
  if (escapes)
    fail(where, ": external data location '", location,
         "' must be a relative path inside the model's folder");
  fs::path path = *dataDir_ / rel;
  // stat first: opening a FIFO or device could block or read forever.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(where, ": external data file '", path.string(),
         "' cannot be read: ", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    fail(where, ": external data file ", quoteName(path.string()), " is not a regular file");
  uint64_t fileSize = uint64_t(st.st_size);
  if (offset > fileSize || (length && *length > fileSize - offset))
    fail(where, ": external data range [", offset, ", +", length.value_or(0), ") lies outside '",
         path.string(), "' (", fileSize, " bytes)");
  uint64_t len = length.value_or(fileSize - offset);
  if (len != bytes)
    fail(where, " has ", len, " bytes of external data, but ", type.str(), " needs ", bytes);
  std::shared_ptr<const MemoryBuffer> &file = externalFiles_[path.string()];
  if (!file)
    file = MemoryBuffer::open(path.string());
  if (offset + len > file->size()) // changed since stat
    fail(where, ": external data file ", quoteName(path.string()), " is shorter than expected");
  const uint8_t *p = reinterpret_cast<const uint8_t *>(file->data()) + offset;
  // Share the mapping when the slice is aligned (exporters align to 4 KiB);
  // otherwise copy so typed access to the constant stays aligned.
  if (reinterpret_cast<uintptr_t>(p) % 64 != 0)
    return TensorData::copyOf(p, len);
  TensorData d;
  d.ptr = p;
  d.size = len;
  d.owner = file;
  return d;
}

// Default-domain opset: the version the ops' semantics follow.
int defaultOpset(const onnx::ModelProto &m, const std::string &file) {
  std::optional<int64_t> v;
  for (const onnx::OperatorSetIdProto &o : m.opset_import())
    if (isDefaultDomain(o.domain()))
      v = std::max(v.value_or(0), o.version());
  if (!v) {
    // IR versions 1 and 2 predate opset_import and mean opset 1.
    if (m.ir_version() == 1 || m.ir_version() == 2)
      return 1;
    for (const onnx::NodeProto &n : m.graph().node())
      if (isDefaultDomain(n.domain()))
        fail(file, ": the model imports no opset of the default ONNX domain "
                   "(add opset_import: [\"\" : 17])");
    return 0; // no default-domain nodes: the opset does not matter
  }
  if (*v < 1 || *v > 1000)
    fail(file, ": invalid default-domain opset version ", *v);
  return int(*v);
}

std::string fileName(const MemoryBuffer &buf, const ImportOptions &opts) {
  return opts.locationFile.empty() ? buf.name() : opts.locationFile;
}

} // namespace

bool looksLikeOnnxText(std::string_view bytes) {
  size_t i = 0;
  if (bytes.starts_with("\xEF\xBB\xBF")) // UTF-8 byte order mark
    i = 3;
  // Skip whitespace and # comments to the first token.
  while (i < bytes.size()) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (isTextSpace(c)) {
      ++i;
    } else if (c == '#') {
      while (i < bytes.size() && bytes[i] != '\n')
        ++i;
    } else {
      break;
    }
  }
  if (i >= bytes.size())
    return false;
  // Text syntax starts with the `<...>` model header or the graph name. A
  // binary ModelProto starts with a field tag: 0x08 (ir_version) normally.
  unsigned char first = static_cast<unsigned char>(bytes[i]);
  if (first != '<' && first != '_' && !std::isalpha(first))
    return false;
  // And text has no control bytes; binary protos almost always do early on.
  size_t n = std::min<size_t>(bytes.size(), 4096);
  for (size_t j = 0; j < n; ++j) {
    unsigned char c = static_cast<unsigned char>(bytes[j]);
    if ((c < 0x20 && !isTextSpace(c)) || c == 0x7f)
      return false;
  }
  return true;
}

std::vector<UnsupportedNode> listUnsupported(const MemoryBuffer &buf) {
  onnx::ModelProto model;
  parseModel(buf, buf.name(), model);
  return scanUnsupported(model.graph());
}

size_t exportOnnxWithWeights(const MemoryBuffer &buf, const std::string &weightsFile,
                             const std::string &outPath) {
  onnx::ModelProto model;
  parseModel(buf, buf.name(), model);
  size_t n = applyWeights(model, weightsFile, buf.name());
  // External data stays where it is: its locations are relative to the
  // model's folder.
  fs::path from = fs::absolute(fs::path(buf.name())).parent_path();
  bool sameFolder = fs::weakly_canonical(from) ==
                    fs::weakly_canonical(fs::absolute(fs::path(outPath)).parent_path());
  for (const onnx::TensorProto &t : model.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL && !sameFolder)
      fail(outPath, ": initializer '", printable(t.name()),
           "' stays in external data, which is found relative to the model: write the "
           "exported model into ",
           from.string());
  std::string bytes;
  if (model.ByteSizeLong() > size_t(INT_MAX) || !model.SerializeToString(&bytes))
    fail(outPath, ": the model is over protobuf's 2 GiB limit; keep its weights in external data");
  writeFileAtomically(outPath, bytes);
  return n;
}

std::unique_ptr<Module> importOnnx(const MemoryBuffer &buf, const ImportOptions &opts) {
  std::string file = fileName(buf, opts);
  onnx::ModelProto model;
  parseModel(buf, file, model);
  // Report every unsupported op at once, before anything else can fail.
  std::vector<UnsupportedNode> unsupported = scanUnsupported(model.graph());
  if (!unsupported.empty())
    fail(file, ": unsupported ops: ", formatUnsupported(unsupported));
  int opset = defaultOpset(model, file);
  if (!opts.weightsFile.empty())
    applyWeights(model, opts.weightsFile, file);

  auto m = std::make_unique<Module>();
  if (!model.graph().name().empty())
    m->name = model.graph().name();
  m->metadata["source"] = file;
  std::string producer = model.producer_name();
  if (!model.producer_version().empty())
    producer += (producer.empty() ? "" : " ") + model.producer_version();
  if (!producer.empty())
    m->metadata["producer"] = producer;
  m->metadata["ir_version"] = std::to_string(model.ir_version());
  for (const onnx::StringStringEntryProto &e : model.metadata_props())
    if (e.key() == kFrozenMetadataKey)
      m->metadata[kFrozenMetadataKey] = e.value();
  if (opset)
    m->metadata["opset"] = std::to_string(opset);

  std::optional<fs::path> dataDir;
  std::string noDataDir;
  if (!opts.allowExternalData) {
    noDataDir = "is disabled";
  } else if (!opts.externalDataDir.empty()) {
    dataDir = fs::path(opts.externalDataDir);
  } else if (buf.name() == "<stdin>" || buf.name().empty()) {
    noDataDir = "cannot be used when the model is read from stdin";
  } else {
    fs::path dir = fs::path(buf.name()).parent_path();
    dataDir = dir.empty() ? fs::path(".") : dir;
  }

  Function *f = m->addFunction("main");
  GraphBuilder(model, *m, *f, file, std::move(dataDir), std::move(noDataDir), opset).build();
  verifyModule(*m);
  return m;
}

} // namespace tc
