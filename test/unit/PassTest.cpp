#include "tc/Transforms/Pass.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>
#include <sstream>

using namespace tc;

namespace {

std::unique_ptr<Module> run(const char *text, const char *pipeline) {
  auto m = parseModule(text, "t.tcir");
  PassManagerOptions opts;
  opts.verifyEach = true;
  PassManager pm(opts);
  for (auto &inv : parsePipeline(pipeline))
    pm.add(inv);
  std::ostringstream ignored;
  pm.run(*m, ignored);
  verifyModule(*m);
  return m;
}

size_t countOps(const Module &m, OpKind k) {
  size_t n = 0;
  for (auto &op : m.main().ops)
    n += op->is(k);
  return n;
}

} // namespace

TEST(Passes, CseMergesDuplicatesAndKeepsOutputNames) {
  auto m = run(R"(module @m {
  func @main(%x: f32[4]) -> (f32[4], f32[4]) {
    %a = Relu(%x) : f32[4]
    %b = Relu(%x) : f32[4]
    %c = Add(%a, %b) : f32[4]
    %d = Sin(%x) : f32[4]
    return %c, %d
  }
})",
               "cse");
  EXPECT_EQ(countOps(*m, OpKind::Relu), 1u);
  EXPECT_EQ(m->main().results[0]->name, "c");
  EXPECT_EQ(m->main().ops.back()->operand(0), m->main().ops.back()->operand(0));
}

TEST(Passes, CseDoesNotMergeDifferentAttributes) {
  auto m = run(R"(module @m {
  func @main(%x: f32[2,3]) -> (f32[2,3], f32[2,3]) {
    %a = Softmax(%x) {axis = 0} : f32[2,3]
    %b = Softmax(%x) {axis = 1} : f32[2,3]
    return %a, %b
  }
})",
               "cse");
  EXPECT_EQ(countOps(*m, OpKind::Softmax), 2u);
}

TEST(Passes, DceRemovesUnusedOpsAndConstants) {
  auto m = run(R"(module @m {
  func @main(%x: f32[2]) -> (f32[2]) {
    %w = const f32[2] [1.0, 2.0]
    %dead = Mul(%x, %w) : f32[2]
    %y = Relu(%x) : f32[2]
    return %y
  }
})",
               "dce");
  EXPECT_EQ(m->main().ops.size(), 1u);
  EXPECT_TRUE(m->main().constants.empty());
}

TEST(Passes, CanonicalizeFoldsTransposePairsAndIdentities) {
  auto m = run(R"(module @m {
  func @main(%x: f32[2,3,4]) -> (f32[2,3,4]) {
    %t1 = Transpose(%x) {perm = [1, 2, 0]} : f32[3,4,2]
    %t2 = Transpose(%t1) {perm = [2, 0, 1]} : f32[2,3,4]
    %i = Identity(%t2) : f32[2,3,4]
    %y = Relu(%i) : f32[2,3,4]
    return %y
  }
})",
               "canonicalize");
  ASSERT_EQ(m->main().ops.size(), 1u);
  EXPECT_EQ(m->main().ops[0]->operand(0), m->main().args[0]);
}

TEST(Passes, CanonicalizeKeepsTheOutputNameWhenDroppingTheLastOp) {
  auto m = run(R"(module @m {
  func @main(%x: f32[2]) -> (f32[2]) {
    %r = Relu(%x) : f32[2]
    %out = Identity(%r) : f32[2]
    return %out
  }
})",
               "canonicalize");
  ASSERT_EQ(m->main().ops.size(), 1u);
  EXPECT_EQ(m->main().results[0]->name, "out");
}

TEST(Passes, PipelineParsingRejectsUnknownNamesAndOptions) {
  EXPECT_THROW(parsePipeline("cse,nope"), Error);
  EXPECT_THROW(parsePipeline("canonicalize{bogus=1}"), Error);
  auto p = parsePipeline("canonicalize{max-iterations=3},dce");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].spelling(), "canonicalize{max-iterations=3}");
  EXPECT_EQ(p[0].options.getInt("max-iterations"), 3);
}

TEST(Pipelines, NamedPipelinesAreBuiltInCode) {
  EXPECT_EQ(pipelineForLevel(0).spelling(), "verify");
  const std::string base = "infer-shapes,lower-einsum,lower-recurrent,fold-constants,canonicalize,"
                           "cse,lower-losses,lower-hardmax,lower-optimizers,dce";
  const std::string quant = ",lower-quantize,dce",
                    attend = ",attention-fusion,attention-projections,attention-layouts,dce";
  EXPECT_EQ(pipelineForLevel(1).spelling(), base + quant);
  EXPECT_EQ(pipelineForLevel(2).spelling(), base + quant + ",rematerialize,fuse");
  EXPECT_EQ(pipelineForLevel(3).spelling(), base + attend + quant + ",rematerialize,fuse");
  // The A/B of -O2's switch: either way at -O2 and -O3.
  EXPECT_EQ(pipelineForLevel(2, true).spelling(), base + attend + quant + ",rematerialize,fuse");
  EXPECT_EQ(pipelineForLevel(3, false).spelling(), base + quant + ",rematerialize,fuse");
  EXPECT_EQ(pipelineForLevel(1, true).spelling(), base + quant);
  // The target's and mixed-precision's passes go before lower-quantize
  // (its exact arithmetic stays f32 / f64), else before fuse.
  EXPECT_EQ(pipelineForLevel(2).preFusionAnchor(), PassId::LowerQuantize);
  EXPECT_EQ(parsePipeline("cse,fuse").preFusionAnchor(), PassId::Fuse);
  // -O2's rule: the tensor-core kernel (CUDA, fp16/bf16) only.
  EXPECT_TRUE(attentionFusionAtO2(/*gpuTarget=*/true, "fp16"));
  EXPECT_TRUE(attentionFusionAtO2(true, "bf16"));
  EXPECT_FALSE(attentionFusionAtO2(true, "fp32"));
  EXPECT_FALSE(attentionFusionAtO2(false, "fp16"));
  EXPECT_EQ(outlineLoneOpsPipeline(false).spelling(),
            "lower-losses,lower-hardmax,lower-optimizers,lower-collectives,lower-quantize,"
            "fuse{singles=1},"
            "expand-into-gathers");
  EXPECT_EQ(outlineLoneOpsPipeline(true).spelling(),
            "lower-losses,lower-hardmax,lower-optimizers,lower-collectives,lower-quantize,"
            "fuse{singles=1,moves=1},"
            "expand-into-gathers");
  EXPECT_EQ(mixedPrecisionPipeline("bf16").spelling(),
            "mixed-precision{type=bf16},canonicalize,dce");
  EXPECT_TRUE(outlineLoneOpsPipeline(true)[5].options.getBool("moves")); // fuse
}

TEST(Pipelines, InsertBeforeFindsThePassWhateverItsOptions) {
  Pipeline p = parsePipeline("cse,fuse{singles=1},dce");
  p.insertBefore(PassId::Fuse, channelsLastPipeline());
  EXPECT_EQ(p.spelling(),
            "cse,attention-grad-gemms,patch-convs,channels-last,conv-gemms,align-gemms,gemm-views,"
            "symmetric-conv-pads,canonicalize,attention-layouts,dce,fuse{singles=1},dce");
  Pipeline none = parsePipeline("cse");
  none.insertBefore(PassId::Fuse, Pipeline{PassId::DCE});
  EXPECT_EQ(none.spelling(), "cse,dce"); // no fuse: appended
}

TEST(Pipelines, SetOptionReachesEveryRunOfThePass) {
  // tc-opt --conv-gemm sets the mode of the conv-gemms inside --target=cuda's pipeline.
  Pipeline p = parsePipeline("cse,fuse");
  p.insertBefore(PassId::Fuse, channelsLastPipeline());
  EXPECT_EQ(p.setOption(PassId::ConvGemms, "mode", "never"), 1u);
  EXPECT_EQ(p.spelling(),
            "cse,attention-grad-gemms,patch-convs,channels-last,conv-gemms{mode=never},align-gemms,"
            "gemm-views,symmetric-conv-pads,canonicalize,attention-layouts,dce,fuse");
  EXPECT_EQ(p.setOption(PassId::Canonicalize, "max-iterations", "3"), 1u);
  EXPECT_EQ(parsePipeline("cse").setOption(PassId::ConvGemms, "mode", "never"), 0u);
  EXPECT_THROW(p.setOption(PassId::ConvGemms, "modes", "never"), Error);
}

TEST(Pipelines, OptionsAreTyped) {
  EXPECT_EQ(parsePipeline(pipelineForLevel(2).spelling()).spelling(),
            pipelineForLevel(2).spelling());
  EXPECT_TRUE(parsePipeline("fuse{singles=true}")[0].options.getBool("singles"));
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { parsePipeline("fuse{singles=2}"); }),
            "pass 'fuse': option 'singles' takes 0 or 1, not '2'");
  EXPECT_EQ(message([] { parsePipeline("canonicalize{max-iterations=x}"); }),
            "pass 'canonicalize': option 'max-iterations' takes an integer, not 'x'");
  EXPECT_EQ(message([] { PassInvocation(PassId::Fuse).set("singles", int64_t(1)); }),
            "pass 'fuse': option 'singles' takes 0 or 1");
  EXPECT_EQ(message([] { PassInvocation(PassId::CSE).set("max-bytes", int64_t(1)); }),
            "pass 'cse' has no option 'max-bytes'");
  EXPECT_EQ(&passInfo(PassId::FoldConstants), lookupPass("fold-constants"));
}
