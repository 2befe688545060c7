#include "tc/Runtime/CudaLibraryPlan.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Verifier.h"
#include <gtest/gtest.h>
#include <sstream>

using namespace tc;

namespace {

// `body` as the group (a function over static types, as a Fused op's callee
// is at a planned shape); its argument types are the Fused op's operands'.
struct Group {
  std::unique_ptr<Module> m;
  std::vector<TensorType> args;
  const Function &f() const { return m->main(); }
};
Group group(const std::string &sig, const std::string &body) {
  Group g;
  g.m = parseModule("module @m {\n  func @main" + sig + " {\n" + body + "\n  }\n}", "g.tcir");
  for (const Value *a : g.m->main().args)
    g.args.push_back(a->type);
  return g;
}

std::optional<GemmDesc> gemm(const Group &g, std::string &why) {
  return describeGemm(g.f(), g.args, g.f().results[0]->type, why);
}

// The GEMM of a group given as its signature and body.
std::optional<GemmDesc> gemmOf(const std::string &sig, const std::string &body, std::string &why) {
  return gemm(group(sig, body), why);
}

} // namespace

TEST(CudaLibraryPlan, WeightsTimesActivationsIsOneGemmOverAllRows) {
  Group g = group("(%a: f32[2,3,4,8], %w: f32[8,16], %b: f32[16]) -> (f32[2,3,4,16])",
                  "    %m = MatMul(%a, %w) : f32[2,3,4,16]\n"
                  "    %s = Add(%m, %b) : f32[2,3,4,16]\n"
                  "    %r = Relu(%s) : f32[2,3,4,16]\n    return %r");
  std::string why;
  auto d = gemm(g, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->m, 24);
  EXPECT_EQ(d->n, 16);
  EXPECT_EQ(d->k, 8);
  EXPECT_EQ(d->batch, 1);
  EXPECT_EQ(d->a, 0);
  EXPECT_EQ(d->b, 1);
  EXPECT_EQ(d->bias, 2);
  EXPECT_TRUE(d->relu);
  EXPECT_TRUE(d->epilogueFolded);
  EXPECT_EQ(d->describe(), "gemm f32 m=24 n=16 k=8 batch=1 epilogue=bias,relu");
}

TEST(CudaLibraryPlan, BatchDimsEqualOrSharedAreStridedBatches) {
  // MatMul(a, b) -> its GEMM as "batch m strideA strideB strideD".
  auto plan = [](const char *a, const char *b, const char *r) {
    std::string sig = std::string("(%a: f32") + a + ", %b: f32" + b + ") -> (f32" + r + ")";
    std::string why;
    auto d =
        gemm(group(sig, std::string("    %m = MatMul(%a, %b) : f32") + r + "\n    return %m"), why);
    if (!d)
      return why;
    std::ostringstream s;
    s << d->batch << " " << d->m << " " << d->strideA << " " << d->strideB << " " << d->strideD;
    return s.str();
  };
  EXPECT_EQ(plan("[2,3,4,8]", "[2,3,8,5]", "[2,3,4,5]"), "6 4 32 40 20");
  // A shared by every batch of B: stride 0.
  EXPECT_EQ(plan("[1,4,8]", "[6,8,5]", "[6,4,5]"), "6 4 0 40 20");
  // B shared over A's heads (multi-query attention): the heads are rows.
  EXPECT_EQ(plan("[2,3,4,8]", "[2,1,8,5]", "[2,3,4,5]"), "2 12 96 40 60");
  // [2,1] x [1,3]: neither; the host takes it, saying why.
  EXPECT_NE(plan("[2,1,4,8]", "[1,3,8,5]", "[2,3,4,5]").find("broadcast partly"),
            std::string::npos);
}

TEST(CudaLibraryPlan, MatMulViewsKeepTheStoredOperandsBatches) {
  // MatMul(a, b){attrs} -> "m n k batch strideA strideB strideD", the op flags and alpha.
  auto plan = [](const char *a, const char *b, const char *r, const char *attrs) {
    std::string sig = std::string("(%a: f32") + a + ", %b: f32" + b + ") -> (f32" + r + ")";
    std::string why;
    auto d = gemm(group(sig, std::string("    %m = MatMul(%a, %b) {") + attrs + "} : f32" + r +
                                 "\n    return %m"),
                  why);
    if (!d)
      return why;
    std::ostringstream s;
    s << d->m << " " << d->n << " " << d->k << " " << d->batch << " " << d->strideA << " "
      << d->strideB << " " << d->strideD << (d->transA ? " A" : "") << (d->transB ? " B" : "")
      << " " << d->alpha;
    return s.str();
  };
  // q k^T / 8: B stored [N, K], the batch strides those of the stored k.
  EXPECT_EQ(plan("[6,4,8]", "[6,5,8]", "[6,4,5]", "transB = 1, alpha = 0.125"),
            "4 5 8 6 32 40 20 B 0.125");
  // A stored [K, M]; a 2-D B shared: no rows to fold, a batch stride of 0.
  EXPECT_EQ(plan("[6,8,4]", "[8,5]", "[6,4,5]", "transA = 1"), "4 5 8 6 32 0 20 A 1");
  // Without transA the same shared B folds A's batches into rows.
  EXPECT_EQ(plan("[6,4,8]", "[5,8]", "[6,4,5]", "transB = 1"), "24 5 8 1 0 0 0 B 1");
  // Grouped keys read transposed: the heads are rows of each batch's GEMM.
  EXPECT_EQ(plan("[2,3,4,8]", "[2,1,5,8]", "[2,3,4,5]", "transB = 1"), "12 5 8 2 96 40 60 B 1");
  // A transposed has no such rows: the host takes it, saying why.
  EXPECT_NE(plan("[2,3,8,4]", "[2,1,8,5]", "[2,3,4,5]", "transA = 1").find("broadcast partly"),
            std::string::npos);
}

TEST(CudaLibraryPlan, VectorOperandsAreOneRowOrColumn) {
  std::string why;
  Group v = group("(%a: f32[8], %b: f32[3,8,5]) -> (f32[3,5])",
                  "    %m = MatMul(%a, %b) : f32[3,5]\n    return %m");
  auto d = gemm(v, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->m, 1);
  EXPECT_EQ(d->batch, 3);
  EXPECT_EQ(d->strideA, 0);
  Group col = group("(%a: f32[4,8], %b: f32[8]) -> (f32[4])",
                    "    %m = MatMul(%a, %b) : f32[4]\n    return %m");
  d = gemm(col, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->n, 1);
  EXPECT_EQ(d->m, 4);
}

TEST(CudaLibraryPlan, GemmTransposesScalesAndTakesCAsMatrixOrBias) {
  std::string why;
  Group full = group("(%a: f32[8,4], %b: f32[16,8], %c: f32[4,16]) -> (f32[4,16])",
                     "    %m = Gemm(%a, %b, %c) {transA = 1, transB = 1, alpha = 0.5, beta = 2.0} "
                     ": f32[4,16]\n    return %m");
  auto d = gemm(full, why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->transA && d->transB);
  EXPECT_EQ(d->m, 4);
  EXPECT_EQ(d->k, 8);
  EXPECT_EQ(d->n, 16);
  EXPECT_EQ(d->c, 2);
  EXPECT_EQ(d->alpha, 0.5f);
  EXPECT_EQ(d->beta, 2.0f);
  Group bias = group("(%a: f32[4,8], %b: f32[8,16], %c: f32[16]) -> (f32[4,16])",
                     "    %m = Gemm(%a, %b, %c) : f32[4,16]\n    return %m");
  d = gemm(bias, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->bias, 2);
  EXPECT_EQ(d->c, -1);
  Group rows = group("(%a: f32[4,8], %b: f32[8,16], %c: f32[4,1]) -> (f32[4,16])",
                     "    %m = Gemm(%a, %b, %c) : f32[4,16]\n    return %m");
  EXPECT_FALSE(gemm(rows, why));
  EXPECT_NE(why.find("Gemm C [4,1]"), std::string::npos) << why;
}

TEST(CudaLibraryPlan, OnlyExactEpiloguesFold) {
  std::string why;
  // ONNX Gelu is erf: not cuBLASLt's tanh GELU; the kernel runs all of it.
  Group erf = group("(%a: f32[4,8], %w: f32[8,16], %b: f32[16]) -> (f32[4,16])",
                    "    %m = MatMul(%a, %w) : f32[4,16]\n    %s = Add(%m, %b) : f32[4,16]\n"
                    "    %g = Gelu(%s) : f32[4,16]\n    return %g");
  auto d = gemm(erf, why);
  ASSERT_TRUE(d) << why;
  EXPECT_FALSE(d->epilogueFolded);
  EXPECT_EQ(d->bias, -1);
  Group tanh = group("(%a: f32[4,8], %w: f32[8,16]) -> (f32[4,16])",
                     "    %m = MatMul(%a, %w) : f32[4,16]\n"
                     "    %g = Gelu(%m) {approximate = \"tanh\"} : f32[4,16]\n    return %g");
  d = gemm(tanh, why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->geluTanh && d->epilogueFolded);
  // A residual add (a full matrix) is not a bias: it is C, with beta 1.
  Group res = group("(%a: f32[4,8], %w: f32[8,16], %r: f32[4,16]) -> (f32[4,16])",
                    "    %m = MatMul(%a, %w) : f32[4,16]\n    %s = Add(%m, %r) : f32[4,16]\n"
                    "    return %s");
  d = gemm(res, why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->epilogueFolded);
  EXPECT_EQ(d->c, 2);
  EXPECT_EQ(d->bias, -1);
  EXPECT_EQ(d->beta, 1.0f);
}

TEST(CudaLibraryPlan, ResidualAddsAreCBesideTheBias) {
  std::string why;
  const char *batched = "(%a: f16[2,4,8], %w: f16[8,16], %b: f16[16], %r: f16[2,4,16]) -> "
                        "(f16[2,4,16])",
             *rows = "(%a: f16[4,8], %w: f16[8,16], %b: f16[16], %r: f16[4,16], %f: f16[4,1]) -> "
                     "(f16[4,16])";
  const char *gemm = "(%a: f32[4,8], %w: f32[8,16], %b: f32[16], %r: f32[4,16]) -> (f32[4,16])",
             *gemmC = "(%a: f32[4,8], %w: f32[8,16], %c: f32[4,16], %r: f32[4,16]) -> (f32[4,16])";
  // A folded residual: bias 2, C 3 (beta 1); else C is `c`.
  struct Case {
    const char *sig, *body;
    bool folds;
    int c = -1;
  };
  for (
      const Case &k : std::vector<Case>{
          // ViT's MLP out: (x W + b) + residual, batched rows; either order of the Adds.
          {batched,
           "    %m = MatMul(%a, %w) : f16[2,4,16]\n    %s = Add(%m, %b) : f16[2,4,16]\n"
           "    %t = Add(%r, %s) : f16[2,4,16]\n    return %t",
           true},
          {batched,
           "    %m = MatMul(%a, %w) : f16[2,4,16]\n    %s = Add(%m, %r) : f16[2,4,16]\n"
           "    %t = Add(%s, %b) : f16[2,4,16]\n    return %t",
           true},
          // A per-row operand (neither a bias nor a residual), two residuals, or an
          // activation between the Adds: the epilogue kernel runs it all.
          {rows,
           "    %m = MatMul(%a, %w) : f16[4,16]\n    %s = Add(%m, %f) : f16[4,16]\n    return %s",
           false},
          {rows,
           "    %m = MatMul(%a, %w) : f16[4,16]\n    %s = Add(%m, %r) : f16[4,16]\n"
           "    %t = Add(%s, %r) : f16[4,16]\n    return %t",
           false},
          {rows,
           "    %m = MatMul(%a, %w) : f16[4,16]\n    %s = Add(%m, %b) : f16[4,16]\n"
           "    %g = Relu(%s) : f16[4,16]\n    %t = Add(%g, %r) : f16[4,16]\n    return %t",
           false},
          // Gemm: its own C as the bias leaves C for the residual; a full C does not.
          {gemm,
           "    %m = Gemm(%a, %w, %b) : f32[4,16]\n    %s = Add(%m, %r) : f32[4,16]\n    return %s",
           true},
          {gemmC,
           "    %m = Gemm(%a, %w, %c) : f32[4,16]\n    %s = Add(%m, %r) : f32[4,16]\n    return %s",
           false, 2}}) {
    auto d = gemmOf(k.sig, k.body, why);
    ASSERT_TRUE(d) << why;
    EXPECT_EQ(d->epilogueFolded, k.folds) << k.body;
    if (!k.folds) {
      EXPECT_EQ(d->c, k.c) << k.body;
      continue;
    }
    EXPECT_EQ(d->bias, 2);
    EXPECT_EQ(d->c, 3);
    EXPECT_EQ(d->beta, 1.0f);
    EXPECT_NE(d->describe().find("beta=1 epilogue=bias,residual"), std::string::npos)
        << d->describe();
  }
}

TEST(CudaLibraryPlan, ConvDescriptorsAndTheirLimits) {
  std::string why;
  Group c = group("(%x: f32[1,16,8,8], %w: f32[8,4,3,3], %b: f32[1,8,1,1]) -> (f32[1,8,4,4])",
                  "    %y = Conv(%x, %w) {group = 4, pads = [1, 1, 1, 1], strides = [2, 2]} "
                  ": f32[1,8,4,4]\n    %s = Add(%y, %b) : f32[1,8,4,4]\n    return %s");
  auto d = describeConv(c.f(), c.args, c.f().results[0]->type, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->groups, 4);
  EXPECT_EQ(d->pads, (std::vector<int>{1, 1}));
  EXPECT_EQ(d->strides, (std::vector<int>{2, 2}));
  EXPECT_EQ(d->bias, 2);
  EXPECT_TRUE(d->epilogueFolded);
  // 1-D: 2-D with H = 1.
  Group c1 = group("(%x: f32[2,3,10], %w: f32[5,3,3]) -> (f32[2,5,8])",
                   "    %y = Conv(%x, %w) : f32[2,5,8]\n    %r = Relu(%y) : f32[2,5,8]\n"
                   "    return %r");
  d = describeConv(c1.f(), c1.args, c1.f().results[0]->type, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->x, (std::vector<int>{2, 3, 1, 10}));
  EXPECT_EQ(d->w, (std::vector<int>{5, 3, 1, 3}));
  EXPECT_EQ(d->pads, (std::vector<int>{0, 0}));
  EXPECT_FALSE(d->epilogueFolded); // Relu: the epilogue kernel
  Group asym = group("(%x: f32[1,3,8,8], %w: f32[4,3,3,3]) -> (f32[1,4,7,7])",
                     "    %y = Conv(%x, %w) {pads = [1, 1, 0, 0]} : f32[1,4,7,7]\n    return %y");
  EXPECT_FALSE(describeConv(asym.f(), asym.args, asym.f().results[0]->type, why));
  EXPECT_NE(why.find("asymmetric"), std::string::npos) << why;
}

// What the graph API is asked to fuse after a conv: a chain of pointwise
// ops over per-channel or full-shape arguments, all of the epilogue or
// nothing; half types only (f32 stays on the legacy API).
TEST(CudaLibraryPlan, ConvEpilogueChainsForTheGraphApi) {
  using Mode = ConvPointwise::Mode;
  const std::string sig = "(%x: f16[2,6,6,4], %w: f16[8,1,1,4], %b: f16[8], %r: f16[2,6,6,8], "
                          "%s: f16[1,1,1,8]) -> (f16[2,6,6,8])";
  const std::string conv = "    %y = Conv(%x, %w, %b) {channels_last = 1} : f16[2,6,6,8]\n";
  auto fused = [&](const std::string &epilogue, const std::string &types = "") {
    std::string s = sig;
    if (!types.empty())
      s.replace(s.find("f16[2,6,6,4]"), 12, types);
    Group g = group(s, conv + epilogue);
    std::string why;
    std::optional<ConvDesc> d = describeConv(g.f(), g.args, g.f().results[0]->type, why);
    EXPECT_TRUE(d) << why;
    return d ? *d : ConvDesc{};
  };
  ConvDesc d = fused("    %a = Add(%r, %y) : f16[2,6,6,8]\n    %z = Relu(%a) : f16[2,6,6,8]\n"
                     "    return %z");
  EXPECT_EQ(d.bias, 2); // Conv's own B
  ASSERT_EQ(d.fused.size(), 2u);
  EXPECT_EQ(d.fused[0].mode, Mode::Add);
  EXPECT_EQ(d.fused[0].operand, 3);
  EXPECT_FALSE(d.fused[0].perChannel);
  EXPECT_EQ(d.fused[1].mode, Mode::Relu);
  EXPECT_TRUE(d.graphTakesEpilogue());
  EXPECT_FALSE(d.epilogueFolded); // the legacy API takes only the bias
  EXPECT_EQ(d.fusedText(), "bias,add,relu");
  d = fused("    %m = Mul(%y, %s) : f16[2,6,6,8]\n    %t = Tanh(%m) : f16[2,6,6,8]\n"
            "    %g = Gelu(%t) {approximate = \"tanh\"} : f16[2,6,6,8]\n    return %g");
  EXPECT_EQ(d.fusedText(), "bias,scale,tanh,gelu_tanh");
  EXPECT_TRUE(d.fused[0].perChannel);
  // Not a chain: the sigmoid's result and the anchor's both feed the Mul.
  d = fused("    %g = Sigmoid(%y) : f16[2,6,6,8]\n    %m = Mul(%y, %g) : f16[2,6,6,8]\n"
            "    return %m");
  EXPECT_TRUE(d.fused.empty());
  EXPECT_FALSE(d.graphTakesEpilogue());
  EXPECT_EQ(d.fusedText(), "bias");
  // An op the graph is not given (Exp): nothing of the epilogue.
  d = fused("    %a = Add(%r, %y) : f16[2,6,6,8]\n    %e = Exp(%a) : f16[2,6,6,8]\n    return %e");
  EXPECT_TRUE(d.fused.empty());
  // f32: the legacy API only.
  Group f = group("(%x: f32[2,6,6,4], %w: f32[8,1,1,4], %b: f32[8]) -> (f32[2,6,6,8])",
                  "    %y = Conv(%x, %w, %b) {channels_last = 1} : f32[2,6,6,8]\n"
                  "    %z = Relu(%y) : f32[2,6,6,8]\n    return %z");
  std::string why;
  std::optional<ConvDesc> d32 = describeConv(f.f(), f.args, f.f().results[0]->type, why);
  ASSERT_TRUE(d32) << why;
  EXPECT_TRUE(d32->fused.empty());
  EXPECT_EQ(d32->describe(false).find(" bias"), std::string::npos);
  EXPECT_NE(d32->describe().find(" bias"), std::string::npos);
}

// Codegen moves a channels-last conv's own bias into its epilogue (the
// kernel adds it in its pass); the graph API is still asked for all of it.
TEST(CudaLibraryPlan, ConvBiasMovesIntoTheEpilogue) {
  Group g = group("(%x: f16[2,6,6,4], %w: f16[8,1,1,4], %b: f16[8]) -> (f16[2,6,6,8])",
                  "    %y = Conv(%x, %w, %b) {channels_last = 1} : f16[2,6,6,8]\n"
                  "    %z = Relu(%y) : f16[2,6,6,8]\n    return %z");
  Function &f = *g.m->functions.front();
  ASSERT_TRUE(moveConvBiasToEpilogue(f));
  verifyFunction(f);
  ASSERT_EQ(f.ops.size(), 3u);
  EXPECT_EQ(f.ops[0]->operand(2), nullptr);
  EXPECT_TRUE(f.ops[1]->is(OpKind::Add));
  EXPECT_EQ(f.ops[1]->operand(1), f.args[2]);
  EXPECT_EQ(f.ops[2]->operand(0), f.ops[1]->result()); // the Relu reads the biased value
  std::unique_ptr<Function> e = epilogueGroup(f);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->ops.size(), 2u); // the bias and the Relu
  std::string why;
  std::optional<ConvDesc> d = describeConv(f, g.args, f.results[0]->type, why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->bias, -1);
  EXPECT_EQ(d->fusedText(), "bias,relu");
  EXPECT_FALSE(moveConvBiasToEpilogue(f)); // no bias left
  // NCHW: B [K] does not broadcast over [N,K,H,W]'s last axis.
  Group n = group("(%x: f16[2,4,6,6], %w: f16[8,4,1,1], %b: f16[8]) -> (f16[2,8,6,6])",
                  "    %y = Conv(%x, %w, %b) : f16[2,8,6,6]\n    return %y");
  EXPECT_FALSE(moveConvBiasToEpilogue(*n.m->functions.front()));
}

TEST(CudaLibraryPlan, AttentionViewsAndWhatCudnnIsOffered) {
  auto attention = [](const std::string &sig, const std::string &op, std::string &why) {
    Group g = group(sig, "    %o = " + op + "\n    return %o");
    return describeAttention(g.f(), g.args, g.f().results[0]->type, why);
  };
  std::string why;
  // [B, S, H, D] tensors with grouped-query heads and a mask: strided views.
  auto a = attention("(%q: f16[2,5,4,16], %k: f16[2,6,2,16], %v: f16[2,6,2,16], "
                     "%m: f16[1,5,6]) -> (f16[2,5,4,16])",
                     "Attention(%q, %k, %v, %m) {kv_heads = 2, layout = [1, 1, 1, 1]} : "
                     "f16[2,5,4,16]",
                     why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->q.dims, (std::vector<int64_t>{2, 4, 5, 16}));
  EXPECT_EQ(a->q.strides, (std::vector<int64_t>{320, 16, 64, 1}));
  EXPECT_EQ(a->k.strides, (std::vector<int64_t>{192, 16, 32, 1}));
  EXPECT_EQ(a->o.arg, -1);
  EXPECT_EQ(a->kvHeads, 2);
  ASSERT_TRUE(a->mask);
  EXPECT_EQ(a->mask->arg, 3);
  EXPECT_EQ(a->mask->dims, (std::vector<int64_t>{1, 1, 5, 6})); // rank 3: a leading 1
  EXPECT_EQ(a->describe(false), "attention f16 b=2 h=4/2 sq=5 skv=6 d=16 scale=0.25 "
                                "mask=f16[1,1,5,6]");
  // Parts of a packed qkv projection: one argument, offsets by part.
  a = attention("(%x: bf16[2,6,3,2,8]) -> (bf16[2,2,6,8])",
                "Attention(%x, %x, %x) {layout = [2, 3, 4, 0], scale = 0.5} : bf16[2,2,6,8]", why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->v.arg, 0);
  EXPECT_EQ(a->q.offset, 0);
  EXPECT_EQ(a->k.offset, 16);
  EXPECT_EQ(a->v.offset, 32);
  EXPECT_EQ(a->k.strides, (std::vector<int64_t>{288, 8, 48, 1}));
  EXPECT_EQ(a->scale, 0.5f);
  // Not offered: f32, head dims cuDNN lacks, causal off the square, a mask
  // whose batch only divides B, a fused epilogue.
  EXPECT_FALSE(attention("(%q: f32[1,2,4,16], %k: f32[1,2,4,16], %v: f32[1,2,4,16]) -> "
                         "(f32[1,2,4,16])",
                         "Attention(%q, %k, %v) : f32[1,2,4,16]", why));
  EXPECT_NE(why.find("f16 and bf16"), std::string::npos) << why;
  EXPECT_FALSE(attention("(%q: f16[1,2,4,12], %k: f16[1,2,4,12], %v: f16[1,2,4,12]) -> "
                         "(f16[1,2,4,12])",
                         "Attention(%q, %k, %v) : f16[1,2,4,12]", why));
  EXPECT_NE(why.find("multiple of 8"), std::string::npos) << why;
  EXPECT_FALSE(attention("(%q: f16[1,2,3,16], %k: f16[1,2,4,16], %v: f16[1,2,4,16]) -> "
                         "(f16[1,2,3,16])",
                         "Attention(%q, %k, %v) {causal = 1} : f16[1,2,3,16]", why));
  EXPECT_EQ(why, "causal with Sq != Skv");
  EXPECT_FALSE(attention("(%q: f16[4,2,3,16], %k: f16[4,2,3,16], %v: f16[4,2,3,16], "
                         "%m: f16[2,2,3,3]) -> (f16[4,2,3,16])",
                         "Attention(%q, %k, %v, %m) : f16[4,2,3,16]", why));
  EXPECT_NE(why.find("broadcasts dims of 1 only"), std::string::npos) << why;
  Group g = group("(%q: f16[1,2,4,16], %k: f16[1,2,4,16], %v: f16[1,2,4,16]) -> (f16[1,2,4,16])",
                  "    %a = Attention(%q, %k, %v) : f16[1,2,4,16]\n"
                  "    %o = Relu(%a) : f16[1,2,4,16]\n    return %o");
  EXPECT_FALSE(describeAttention(g.f(), g.args, g.f().results[0]->type, why));
  EXPECT_EQ(why, "a fused prologue or epilogue");
}
