// Private to lib/Import: the per-op import table (OnnxOps.cpp) and the node
// context through which a converter builds IR (implemented by the graph
// builder in OnnxImporter.cpp). Adding an op is one Ops.def line; a converter
// entry here is needed only where ONNX and the IR differ (legacy opsets,
// inputs that become attributes, ops that lower to something else).
#pragma once
#include "onnx/onnx_pb.h"
#include "tc/IR/IR.h"
#include "tc/Support/Error.h"
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc::onnximport {

using AttrList = std::vector<std::pair<std::string, Attribute>>;

// The highest default-domain opset the converters know the semantics of.
// Newer opsets are accepted; this only documents what was checked.
constexpr int kNewestKnownOpset = 21;

// The importer's side of one ONNX node.
class NodeContext {
public:
  virtual ~NodeContext() = default;

  virtual const onnx::NodeProto &node() const = 0;
  // The node's name, or "<op_type>_<index>" when it has none.
  virtual const std::string &nodeName() const = 0;
  // Version of the default ONNX domain the model imports.
  virtual int opset() const = 0;

  // "file:node (OpType)", the prefix of every diagnostic about the node.
  virtual std::string where() const = 0;
  [[noreturn]] void error(const std::string &msg) const { throw Error(where() + ": " + msg); }
  template <typename... Args> [[noreturn]] void fail(const Args &...args) const {
    std::ostringstream os;
    (os << ... << args);
    error(os.str());
  }

  size_t numInputs() const { return size_t(node().input_size()); }
  // Input i, or nullptr when absent ("" or past the end). Throws if the name
  // is not defined by an input, initializer or earlier node.
  virtual Value *input(size_t i) const = 0;
  // True when output i has a name that some node or the graph outputs read.
  virtual bool outputUsed(size_t i) const = 0;

  // Appends one IR op at this node's location: checks arity, sets `attrs`,
  // infers and assigns result types, verifies, and binds result i to the
  // ONNX name outputs[i] ("" gets a fresh name and is not bound).
  virtual Op *emit(OpKind kind, std::vector<Value *> operands, const AttrList &attrs,
                   const std::vector<std::string> &outputs) = 0;
  // Defines ONNX value `onnxName` as a constant located at this node.
  virtual Value *defineConstant(const std::string &onnxName, TensorType type, TensorData data) = 0;
  // A constant the importer synthesizes for this node (e.g. an attribute that
  // is an operand in the IR); its name is made unique from `base`.
  virtual Value *helperConstant(const std::string &base, TensorType type, TensorData data) = 0;
  // Imports subgraph `g` (attribute `attr` of the node) as a new module
  // function named "<node>_<suffix>" whose arguments are g's formal inputs,
  // of `types`, followed by the outer values g reads, which are appended to
  // `captures` (the op passes them as trailing operands).
  virtual Function &importSubgraph(const onnx::GraphProto &g, const std::string &suffix,
                                   const std::vector<TensorType> &types,
                                   std::vector<Value *> &captures) = 0;
  // Removes a function importSubgraph made (to import it again).
  virtual void discardSubgraph(Function &f) = 0;
  // emit() with the result types given instead of inferred (ops whose result
  // types come from their callees).
  virtual Op *emitTyped(OpKind kind, std::vector<Value *> operands, const AttrList &attrs,
                        const std::vector<std::string> &outputs, std::vector<TensorType> types) = 0;
  // Decodes a TensorProto (inline or external data); errors name `what`.
  virtual TensorData loadTensor(const onnx::TensorProto &t, TensorType &type,
                                const std::string &what) = 0;
};

// Converts one node. Called only for nodes findConverter accepted.
using ConvertFn = void (*)(NodeContext &);

// True for the default ONNX domain ("" or "ai.onnx").
bool isDefaultDomain(std::string_view domain);

// The converter for a node, or nullptr when tc cannot import that op type.
ConvertFn findConverter(std::string_view domain, std::string_view opType);

// Converters of the elementwise and shape/data-movement ops whose ONNX form
// changed across opsets (OnnxTensorOps.cpp); nullptr for other op types.
ConvertFn findTensorOpConverter(std::string_view opType);
// Converters of the normalization, pooling, reduction and resampling ops
// (OnnxNNOps.cpp); nullptr for other op types.
ConvertFn findNNOpConverter(std::string_view opType);
// Converters of the loss ops (default domain) and of the optimizers of the
// ai.onnx.preview.training domain (OnnxTrainingOps.cpp); nullptr otherwise.
ConvertFn findTrainingOpConverter(std::string_view domain, std::string_view opType);
// Converters of the signal-processing ops (DFT, STFT, windows,
// MelWeightMatrix) and the recurrent ops (OnnxSignalOps.cpp); nullptr otherwise.
ConvertFn findSignalOpConverter(std::string_view opType);
// Converters of If, Loop and Scan, whose subgraphs become module functions
// (OnnxControlFlowOps.cpp); nullptr for other op types.
ConvertFn findControlFlowOpConverter(std::string_view opType);
// True for IR ops that are no op of the default ONNX domain (the optimizers,
// BatchNormalizationTraining): a default-domain node of that type is unknown.
bool isNonOnnxIROp(std::string_view opType);

// For converters outside OnnxOps.cpp: the node's attributes converted to the
// kinds `info` declares (unknown ones are an error unless legacy-harmless or
// in `skip`), one attribute by name, and the node's inputs and output names.
AttrList collectNodeAttrs(const NodeContext &ctx, const OpInfo &info,
                          std::initializer_list<std::string_view> skip = {});
const onnx::AttributeProto *findNodeAttr(const NodeContext &ctx, std::string_view name);
std::vector<Value *> nodeInputs(const NodeContext &ctx);
// The op table entry named like the node's op type (converters are only
// handed nodes that have one).
const OpInfo &infoOf(const NodeContext &ctx);
// Input i when it is computed at run time (the IR op then takes it as a
// run-time attribute operand, see Ops.def); nullptr when absent or constant
// (a constant becomes the attribute: the common, fast form).
Value *runtimeInput(const NodeContext &ctx, size_t i);
// Fails unless the node has lo..hi inputs ("expects 2 to 3 inputs at opset N").
void expectInputs(const NodeContext &ctx, size_t lo, size_t hi);
// ONNX stores float attributes as f32; widened through the shortest decimal
// spelling so 0.01f becomes 0.01, which prints cleanly and equals the op
// table's default, and still rounds back to the same f32.
double widenFloat(float f);
// An i64 constant operand the IR has where ONNX had an attribute (or none):
// `<node>_<what>`.
Value *intsConstant(NodeContext &ctx, const std::string &what, const std::vector<int64_t> &v);
std::vector<std::string> nodeOutputs(const NodeContext &ctx);

// Import-time folding (ImportFolding.cpp), run on each op a node emitted:
// Shape/Size of static dims, and any op whose operands are all constants and
// whose results are small, become constants (the op's result values, located
// at the op; the op is erased, the values appended to `folded`). Returns
// true when `op` was folded.
bool foldAtImport(Function &f, Op *op, std::vector<Value *> &folded);
// Drops the constants of `folded` that nothing reads once the graph is
// built (the intermediate values of a folded chain).
void dropUnusedFolded(Function &f, const std::vector<Value *> &folded);

// `s` with control characters as \xHH escapes: names from a model go into
// diagnostics, which must stay one line.
std::string printable(std::string_view s);
// 'name', printable.
std::string quoteName(std::string_view s);

// "float", "int64", ... for a TensorProto::DataType number; "type N" if unknown.
std::string onnxTypeName(int64_t t);

// Converts an ONNX attribute to the kind the op table declares (with the
// widenings ONNX text syntax needs, e.g. an INT literal for a float).
Attribute convertAttribute(const NodeContext &ctx, const onnx::AttributeProto &a, AttrKind kind);

} // namespace tc::onnximport
