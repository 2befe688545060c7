// The op table: the single source of truth for every op of the IR. The
// entries live in Ops.def; printer, parser, verifier, shape inference,
// `tc-opt --list-ops` and docs/IR-reference.md all read them from here.
#pragma once
#include "tc/IR/Attribute.h"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class Op;

enum class OpKind : uint16_t {
#define TC_OP(ENUM, ...) ENUM,
#include "tc/IR/Ops.def"
#undef TC_OP
  NumOps
};

// How fusion treats an op.
enum class FusionCategory : uint8_t {
  Pointwise, // elementwise, fusable into any group
  Reduction, // reduces along axes; fusable with pointwise prologue/epilogue
  Library,   // matmul/conv: a library call that takes pointwise epilogues
  Shape,     // data movement/reshaping; views or copies
  Opaque     // anything else: a group of its own
};
std::string_view fusionCategoryName(FusionCategory c);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<Attribute> defaultValue; // nullopt: required
  std::string doc;
};

struct OperandSpec {
  std::string name;
  bool optional = false; // may be absent (`none`)
  bool variadic = false; // last operand only: zero or more further operands
};

// Infers result types from operand types (and constant operand data where
// the op needs it, e.g. Reshape's shape). Throws tc::Error on invalid input.
using InferFn = std::vector<struct TensorType> (*)(const Op &);

struct OpInfo {
  OpKind kind;
  std::string name; // as spelled in the IR (the ONNX op type where there is one)
  FusionCategory category;
  std::vector<OperandSpec> operands;
  int numResults; // -1: one or more
  std::vector<AttrSpec> attrs;
  InferFn infer;
  std::string summary;

  size_t minOperands() const;
  size_t maxOperands() const; // SIZE_MAX when variadic
  const AttrSpec *findAttr(std::string_view attr) const;
};

const OpInfo &opInfo(OpKind k);
const OpInfo *lookupOp(std::string_view name);
const std::vector<OpInfo> &allOps();

} // namespace tc
