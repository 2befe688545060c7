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

// What the mixed-precision pass does with an op (autocast's lists).
enum class PrecisionClass : uint8_t {
  Low,    // safe in f16/bf16: float operands are cast to the low type
  F32,    // loses accuracy in a 10- or 7-bit mantissa (reductions, norms,
          // exp/log/pow, comparisons, opaque ops): low operands go back to f32
  Follow, // data movement: runs in the type of its data operand
  Keep    // operands left as they are: conversions (Cast), shape queries
          // (Shape, Size), and ops over integer/bool/string data only
};
std::string_view precisionClassName(PrecisionClass c);

// Which tuned library call (oneDNN on CPU, cuBLASLt/cuDNN on CUDA) may take
// a group this op anchors (tc/CodeGen/LibraryCall.h).
enum class LibraryClass : uint8_t {
  None,        // generated kernels only
  Contraction, // MatMul, Gemm, Conv
  Reduce,      // Reduce* and global pooling
  Pool         // windowed pooling
};
std::string_view libraryClassName(LibraryClass c);

// How tc-prof counts an op's floating-point operations (lib/Analysis/StepCost.cpp).
enum class FlopRule : uint8_t {
  PerOutput,      // one per result element
  PerInput,       // one per element of operand 0 (reductions)
  None,           // data movement; Einsum (not modelled)
  MatMul,         // 2 * result elements * K
  Gemm,           // MatMul's, plus one per result element with C
  Conv,           // 2 * result elements * (W's elements / Cout)
  ConvTranspose,  // 2 * X's elements * (W's elements / Cin)
  ConvWeightGrad, // 2 * dY's elements * (result elements / Cout)
  Window,         // result elements * the kernel_shape window
  Attention,      // 2 * B * H * Sq * Skv * (D + Dv): q k^T and p v (softmax and mask not counted)
  AttentionGrad // 2 * B * H * Sq * Skv * (3 D + 2 Dv): q k^T, dout v^T, dv, dq, dk (recomputes not
                // counted)
};
std::string_view flopRuleName(FlopRule r);

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
  PrecisionClass precision;
  LibraryClass library;
  FlopRule flops;
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

// The ops of Ops.def's "Distributed" section, whose value depends on the
// running rank of a group of `ranks` (their common attribute).
inline bool isRankOp(OpKind k) {
  return k == OpKind::RankSlice || k == OpKind::AllReduce || k == OpKind::AllGather ||
         k == OpKind::ReduceScatter;
}

} // namespace tc
