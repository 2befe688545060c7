// The kernel classifier: the one place that decides which family emits a
// group (tc/CodeGen/KernelEmitter.h), on groups written as .tcir text.
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/IR/Parser.h"
#include <gtest/gtest.h>
#include <set>
#include <tuple>

using namespace tc;

namespace {

// Each function is a fusion group as the fuse pass outlines it.
const char *kGroups = R"(module @m {
  func @pointwise(%x: f32[N,4], %b: f32[4]) -> (f32[N,4]) {
    %a = Add(%x, %b) : f32[N,4]
    %r = Relu(%a) : f32[N,4]
    return %r
  }
  func @softmax(%x: f32[N,9], %m: f32[N,9]) -> (f32[N,9]) {
    %a = Add(%x, %m) : f32[N,9]
    %p = Softmax(%a) {axis = -1} : f32[N,9]
    return %p
  }
  func @reduce(%x: f32[N,8]) -> (f32[N,1]) {
    %s = ReduceSum(%x) {axes = [1]} : f32[N,1]
    return %s
  }
  func @columns(%x: f32[N,7,40]) -> (f32[N,1,40]) {
    %y = ReduceMean(%x) {axes = [1]} : f32[N,1,40]
    return %y
  }
  func @matmul(%x: f32[N,5], %w: f32[5,6], %b: f32[6]) -> (f32[N,6]) {
    %y = MatMul(%x, %w) : f32[N,6]
    %z = Add(%y, %b) : f32[N,6]
    return %z
  }
  func @pool(%x: f32[N,3,8,8]) -> (f32[N,3,4,4]) {
    %y = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : f32[N,3,4,4]
    return %y
  }
  func @transpose(%x: f32[N,3,5]) -> (f32[N,5,3]) {
    %y = Transpose(%x) {perm = [0, 2, 1]} : f32[N,5,3]
    return %y
  }
  func @concat(%x: f32[N,3], %y: f32[N,2]) -> (f32[N,5]) {
    %z = Concat(%x, %y) {axis = 1} : f32[N,5]
    return %z
  }
  func @nonzero(%x: f32[N,3]) -> (i64[2,?]) {
    %y = NonZero(%x) : i64[2,?]
    return %y
  }
  func @unique(%x: i64[N]) -> (i64[?], i64[?], i64[N], i64[?]) {
    %y, %i, %v, %c = Unique(%x) {sorted = 0} : i64[?], i64[?], i64[N], i64[?]
    return %y, %i, %v, %c
  }
  func @two(%x: f32[N,9]) -> (f32[N,9]) {
    %p = Softmax(%x) {axis = -1} : f32[N,9]
    %q = LogSoftmax(%p) {axis = -1} : f32[N,9]
    return %q
  }
  func @depthwise(%x: f32[N,4,9,9], %w: f32[8,1,3,3], %b: f32[8]) -> (f32[N,8,9,9]) {
    %y = Conv(%x, %w, %b) {group = 4, pads = [1, 1, 1, 1]} : f32[N,8,9,9]
    %z = Relu(%y) : f32[N,8,9,9]
    return %z
  }
  func @grouped(%x: f32[N,9,9,4], %w: f32[4,3,3,2]) -> (f32[N,9,9,4]) {
    %y = Conv(%x, %w) {channels_last = 1, group = 2, pads = [1, 1, 1, 1]} : f32[N,9,9,4]
    return %y
  }
  func @conv(%x: f32[N,4,9,9], %w: f32[8,4,3,3]) -> (f32[N,8,7,7]) {
    %y = Conv(%x, %w) : f32[N,8,7,7]
    return %y
  }
  func @main(%x: f32[N,4]) -> (f32[N,4]) {
    return %x
  }
}
)";

class KernelClassify : public ::testing::Test {
protected:
  void SetUp() override { m_ = parseModule(kGroups, "groups.tcir"); }
  const Function &group(const char *name) { return *m_->lookup(name); }
  // The kind on `d`, or "none: <why>".
  std::string kindOf(const char *name, KernelDialect d) {
    std::string why;
    auto cls = classifyKernel(group(name), d, why);
    return cls ? kernelKindName(cls->kind) : "none: " + why;
  }
  std::unique_ptr<Module> m_;
};

constexpr KernelDialect kCpu = KernelDialect::Cpu, kCuda = KernelDialect::Cuda;

TEST_F(KernelClassify, EachFamilyHasItsGroup) {
  EXPECT_EQ(kindOf("pointwise", kCpu), "pointwise");
  EXPECT_EQ(kindOf("pointwise", kCuda), "pointwise");
  EXPECT_EQ(kindOf("softmax", kCpu), "row-reduction");
  EXPECT_EQ(kindOf("softmax", kCuda), "row-reduction");
  EXPECT_EQ(kindOf("reduce", kCuda), "reduction");
  EXPECT_EQ(kindOf("reduce", kCpu), "reduction"); // both dialects have the family
  EXPECT_EQ(kindOf("matmul", kCpu), "contraction");
  EXPECT_EQ(kindOf("pool", kCuda), "pool");
  EXPECT_EQ(kindOf("transpose", kCpu), "transpose");
  EXPECT_EQ(kindOf("concat", kCuda), "data-movement");
  EXPECT_EQ(kindOf("depthwise", kCuda), "depthwise-conv");
  EXPECT_EQ(kindOf("grouped", kCuda), "depthwise-conv");
  EXPECT_EQ(kindOf("depthwise", kCpu), "contraction"); // CPU: the loop nest or oneDNN
}

// The backend's one rule (CudaCodegen.h) over the grouped convs the family
// covers: depthwise ones by default, all grouped ones, or none.
TEST_F(KernelClassify, WhichConvsTakeTheKernelIsOneRule) {
  const Op &dw = *group("depthwise").ops.front(), &gr = *group("grouped").ops.front();
  const Op &plain = *group("conv").ops.front();
  EXPECT_TRUE(convTakesKernel(dw, ConvKernels::Depthwise));
  EXPECT_FALSE(convTakesKernel(gr, ConvKernels::Depthwise)); // 2 channels per group
  EXPECT_TRUE(convTakesKernel(gr, ConvKernels::Grouped));
  EXPECT_FALSE(convTakesKernel(dw, ConvKernels::Cudnn));
  EXPECT_FALSE(convTakesKernel(plain, ConvKernels::Grouped));
}

TEST_F(KernelClassify, TheAnchorIsTheOpThatDecides) {
  std::string why;
  auto pw = classifyKernel(group("pointwise"), kCpu, why);
  ASSERT_TRUE(pw);
  EXPECT_EQ(pw->anchor, nullptr);
  auto sm = classifyKernel(group("softmax"), kCuda, why);
  ASSERT_TRUE(sm && sm->anchor);
  EXPECT_TRUE(sm->anchor->is(OpKind::Softmax));
  auto mm = classifyKernel(group("matmul"), kCpu, why);
  ASSERT_TRUE(mm && mm->anchor);
  EXPECT_TRUE(mm->anchor->is(OpKind::MatMul));
}

TEST_F(KernelClassify, AGroupNoFamilyCoversGetsAReason) {
  EXPECT_EQ(kindOf("matmul", kCuda), "none: @matmul: MatMul is a library call on CUDA "
                                     "(cuBLASLt/cuDNN), not a generated kernel");
  EXPECT_EQ(kindOf("concat", kCpu), "none: @concat: Concat is a run-time copy on CPU");
  EXPECT_EQ(kindOf("two", kCpu), "none: @two: two anchors");
  EXPECT_EQ(kindOf("conv", kCuda), "none: @conv: Conv is a library call on CUDA "
                                   "(cuBLASLt/cuDNN), not a generated kernel");
}

TEST_F(KernelClassify, TheKindTravelsWithTheKernel) {
  std::string why;
  for (auto [name, kind] : {std::pair{"pointwise", KernelKind::Pointwise},
                            std::pair{"softmax", KernelKind::RowReduction},
                            std::pair{"transpose", KernelKind::Transpose}}) {
    auto k = emitKernel(group(name), kCuda, why);
    ASSERT_TRUE(k) << name << ": " << why;
    EXPECT_EQ(k->kind, kind) << name;
  }
  auto dw = emitKernel(group("depthwise"), kCuda, why);
  ASSERT_TRUE(dw) << why;
  EXPECT_EQ(dw->kind, KernelKind::DepthwiseConv);
  auto r = emitKernel(group("reduce"), kCuda, why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->kind, KernelKind::Reduction);
  EXPECT_EQ(r->launch, LaunchKind::Reduce); // the kind and the launch rule are both carried
}

// Results sized by the data: the compaction family on both targets, two
// passes of one block (a scan: NonZero) or of one thread (Unique's loop).
TEST_F(KernelClassify, DataSizedResultsAreCompactionKernelsOnBothTargets) {
  std::string why;
  for (KernelDialect d : {KernelDialect::Cpu, kCuda})
    for (const char *name : {"nonzero", "unique"}) {
      auto k = emitKernel(group(name), d, why);
      ASSERT_TRUE(k) << name << ": " << why;
      EXPECT_EQ(k->kind, KernelKind::Compaction) << name;
      EXPECT_EQ(k->launch, LaunchKind::Compact) << name;
    }
  EXPECT_EQ(emitKernel(group("nonzero"), kCuda, why)->block, 256u);
  EXPECT_EQ(emitKernel(group("unique"), kCuda, why)->block, 32u);
}

TEST_F(KernelClassify, AFamilyTurnsDownAGroupOfAnotherKind) {
  std::string why;
  auto k = emitKernelOfKind(group("pointwise"), kCuda, {KernelKind::Attention, nullptr}, why);
  EXPECT_FALSE(k);
  EXPECT_EQ(why, "@pointwise: no Attention op in the group");
}

TEST(KernelKindNames, RoundTrip) {
  for (size_t i = 0; i < std::size(kKernelKindNames); ++i)
    EXPECT_EQ(parseKernelKind(kernelKindName(KernelKind(i))), KernelKind(i));
  EXPECT_FALSE(parseKernelKind("tiles"));
}

// Geometry variants (tc-codegen --tune): the row-reduction and `columns`
// families offer several, each its own symbol and name, variant 0 the
// default kernel itself; other families and the CPU offer none.
TEST_F(KernelClassify, RowAndColumnReductionsOfferNamedVariants) {
  std::string why;
  for (auto [name, count, first] :
       {std::tuple{"softmax", 5u, "lanes=4,width=1,block=128"},
        std::tuple{"columns", 4u, "grid=264,rows=16,unroll=8,blocks=2,block=256"}}) {
    auto k = emitKernel(group(name), kCuda, why);
    ASSERT_TRUE(k) << name << ": " << why;
    EXPECT_EQ(k->variantCount, count) << name;
    EXPECT_EQ(k->variant, first) << name;
    std::set<std::string> names{k->variant};
    for (unsigned i = 1; i < k->variantCount; ++i) {
      auto v = emitKernelVariant(group(name), kCuda, i, why);
      ASSERT_TRUE(v) << name << " variant " << i << ": " << why;
      EXPECT_EQ(v->symbol, std::string("tc_") + name + "__v" + std::to_string(i));
      EXPECT_NE(v->source, k->source);
      names.insert(v->variant);
    }
    EXPECT_EQ(names.size(), count) << name; // distinct names: the record's choice
    EXPECT_EQ(emitKernelVariant(group(name), kCuda, 0, why)->source, k->source) << name;
  }
  for (const char *name : {"pointwise", "reduce", "transpose"}) {
    auto k = emitKernel(group(name), kCuda, why);
    ASSERT_TRUE(k) << name;
    EXPECT_EQ(k->variantCount, 1u) << name;
    EXPECT_EQ(k->variant, "") << name;
  }
  EXPECT_EQ(emitKernel(group("softmax"), KernelDialect::Cpu, why)->variantCount, 1u);
}

} // namespace
