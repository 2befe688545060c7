// The op table's facts (precision class, library class, FLOP rule) and its
// typed attribute accessors (and the Attention layout codes they decode).
#include "tc/CodeGen/LibraryCall.h"
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/OpAttrs.h"
#include "tc/IR/OpTable.h"
#include "tc/IR/Parser.h"
#include <gtest/gtest.h>
#include <set>
#include <type_traits>

using namespace tc;

// Every op states each fact: a value outside its enum (a cast, a column
// shifted by a bad Ops.def edit) names no class.
TEST(OpFacts, EveryOpHasAPrecisionClassALibraryClassAndAFlopRule) {
  ASSERT_EQ(allOps().size(), size_t(OpKind::NumOps));
  for (size_t i = 0; i < allOps().size(); ++i) {
    const OpInfo &op = allOps()[i];
    SCOPED_TRACE(op.name);
    EXPECT_EQ(op.kind, OpKind(i));
    EXPECT_NE(precisionClassName(op.precision), "?");
    EXPECT_NE(libraryClassName(op.library), "?");
    EXPECT_NE(flopRuleName(op.flops), "?");
  }
}

// The facts agree with the fusion categories where they must.
TEST(OpFacts, FactsAgreeWithFusionCategories) {
  for (const OpInfo &op : allOps()) {
    SCOPED_TRACE(op.name);
    switch (op.category) {
    case FusionCategory::Shape: // data movement: no arithmetic, no precision of its own
      EXPECT_TRUE(op.precision == PrecisionClass::Follow || op.precision == PrecisionClass::Keep);
      EXPECT_EQ(op.flops, FlopRule::None);
      EXPECT_EQ(op.library, LibraryClass::None);
      break;
    case FusionCategory::Reduction: // statistics lose accuracy in a short mantissa
      EXPECT_EQ(op.precision, PrecisionClass::F32);
      EXPECT_NE(op.library, LibraryClass::Contraction);
      break;
    case FusionCategory::Pointwise:
      EXPECT_EQ(op.library, LibraryClass::None);
      EXPECT_NE(op.precision, PrecisionClass::Follow);
      break;
    case FusionCategory::Library:
    case FusionCategory::Opaque: break;
    }
    if (op.library == LibraryClass::Contraction) {
      EXPECT_EQ(op.category, FusionCategory::Library);
    }
  }
}

TEST(OpFacts, KnownEntries) {
  struct Want {
    OpKind op;
    PrecisionClass precision;
    LibraryClass library;
    FlopRule flops;
  };
  using P = PrecisionClass;
  using L = LibraryClass;
  using F = FlopRule;
  for (const Want &w : std::vector<Want>{
           {OpKind::Add, P::Low, L::None, F::PerOutput},
           {OpKind::Exp, P::F32, L::None, F::PerOutput},
           {OpKind::Equal, P::F32, L::None, F::PerOutput},
           {OpKind::BatchNormalization, P::F32, L::None, F::PerOutput},
           {OpKind::Cast, P::Keep, L::None, F::PerOutput},
           {OpKind::BitwiseAnd, P::Keep, L::None, F::PerOutput},
           {OpKind::Shape, P::Keep, L::None, F::None},
           {OpKind::Reshape, P::Follow, L::None, F::None},
           {OpKind::Softmax, P::F32, L::None, F::PerInput},
           {OpKind::ReduceSum, P::F32, L::Reduce, F::PerInput},
           {OpKind::GlobalAveragePool, P::F32, L::Reduce, F::PerInput},
           {OpKind::MaxPool, P::Low, L::Pool, F::Window},
           {OpKind::LpPool, P::F32, L::None, F::Window},
           {OpKind::MatMul, P::Low, L::Contraction, F::MatMul},
           {OpKind::Gemm, P::Low, L::Contraction, F::Gemm},
           {OpKind::Conv, P::Low, L::Contraction, F::Conv},
           {OpKind::ConvTranspose, P::Low, L::Contraction, F::ConvTranspose},
           {OpKind::ConvWeightGrad, P::Low, L::Contraction, F::ConvWeightGrad},
           {OpKind::Einsum, P::F32, L::None, F::None},
           {OpKind::TopK, P::F32, L::None, F::PerOutput},
       }) {
    const OpInfo &i = opInfo(w.op);
    SCOPED_TRACE(i.name);
    EXPECT_EQ(i.precision, w.precision);
    EXPECT_EQ(i.library, w.library);
    EXPECT_EQ(i.flops, w.flops);
  }
}

// isLibraryOp reads the table; these are the ops oneDNN / cuBLASLt / cuDNN
// take (docs/cpu-backend.md, docs/cuda-backend.md).
TEST(OpFacts, LibraryOpsAreTheTablesLibraryClasses) {
  std::set<std::string> got;
  for (const OpInfo &i : allOps())
    if (isLibraryOp(Op(i.kind)))
      got.insert(i.name);
  EXPECT_EQ(got, (std::set<std::string>{"AveragePool", "Conv", "ConvTranspose", "ConvWeightGrad",
                                        "Gemm", "GlobalAveragePool", "GlobalMaxPool", "MatMul",
                                        "MaxPool", "ReduceMax", "ReduceMean", "ReduceMin",
                                        "ReduceProd", "ReduceSum"}));
}

TEST(OpAttrs, TypedAccessorsReadValuesAndDefaults) {
  auto m = parseModule(R"(module @m {
  func @main(%a: f32[3,2], %b: f32[3,4]) -> (f32[2,4]) {
    %y = Gemm(%a, %b) {alpha = 2.0, transA = 1} : f32[2,4]
    return %y
  }
})",
                       "t.tcir");
  const Op &gemm = *m->main().ops[0];
  static_assert(std::is_same_v<decltype(attr<OpKind::Gemm, "transA">(gemm)), int64_t>);
  static_assert(std::is_same_v<decltype(attr<OpKind::Gemm, "alpha">(gemm)), double>);
  static_assert(
      std::is_same_v<decltype(attr<OpKind::Conv, "pads">(gemm)), const std::vector<int64_t> &>);
  static_assert(std::is_same_v<decltype(attr<OpKind::Cast, "to">(gemm)), DType>);
  // A name the op does not declare does not compile; seen through the
  // lookup the accessor asserts on.
  static_assert(!attrs_detail::declaredKind(OpKind::Gemm, "transa"));
  static_assert(!attrs_detail::declaredKind(OpKind::Relu, "alpha"));
  static_assert(*attrs_detail::declaredKind(OpKind::LeakyRelu, "alpha") == AttrKind::Float);
  EXPECT_EQ((attr<OpKind::Gemm, "transA">(gemm)), 1);
  EXPECT_EQ((attr<OpKind::Gemm, "alpha">(gemm)), 2.0);
  EXPECT_EQ((attr<OpKind::Gemm, "transB">(gemm)), 0); // the table's default
  EXPECT_EQ((attr<OpKind::Gemm, "beta">(gemm)), 1.0);
}

// Attention's layout codes (tc/IR/AttentionLayout.h): the axes each code
// names and the strides and part offset the kernels index with.
TEST(AttentionLayout, CodesNameAxesStridesAndParts) {
  auto m = parseModule(R"(module @m {
  func @main(%q: f32[2,5,4,8], %p: f32[2,7,3,2,8]) -> (f32[2,5,4,8], f32[2,5,4,8]) {
    %a = Attention(%q, %p, %p) {layout = [1, 3, 4, 1], kv_heads = 2} : f32[2,5,4,8]
    %b = Attention(%q, %q, %q) : f32[2,5,4,8]
    return %a, %b
  }
})",
                       "t.tcir");
  const Op &a = *m->main().ops[0], &b = *m->main().ops[1];
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(attentionLayoutCode(b, i), 0); // [] reads as every code 0
  AttentionAxes q = attentionAxes(a, 0), k = attentionAxes(a, 1), v = attentionAxes(a, 2);
  EXPECT_EQ(q.heads, 2u);
  EXPECT_EQ(q.tokens, 1u);
  EXPECT_EQ(q.rank(), 4u);
  EXPECT_EQ(k.part, 1);
  EXPECT_EQ(v.part, 2);
  EXPECT_EQ(k.rank(), 5u);
  AttentionStrides qs = attentionStrides(q, {2, 5, 4, 8});
  EXPECT_EQ(qs.batch, 160);
  EXPECT_EQ(qs.heads, 8);
  EXPECT_EQ(qs.tokens, 32);
  EXPECT_EQ(qs.offset, 0);
  AttentionStrides vs = attentionStrides(v, {2, 7, 3, 2, 8});
  EXPECT_EQ(vs.batch, 336);
  EXPECT_EQ(vs.heads, 8);
  EXPECT_EQ(vs.tokens, 48); // the packed row: N * H * D
  EXPECT_EQ(vs.offset, 32); // part 2 of 16-element parts
  AttentionStrides bhsd = attentionStrides(attentionAxes(b, 3), {2, 5, 4, 8});
  EXPECT_EQ(bhsd.heads, 32);
  EXPECT_EQ(bhsd.tokens, 8);
}
