#include "tc/IR/DimExpr.h"
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(DimExpr, ConstantsFoldAndUnitsVanish) {
  DimExpr n = DimExpr::symbol("N");
  EXPECT_TRUE((DimExpr::constant(4) * DimExpr::constant(8)).isConstant());
  EXPECT_EQ((DimExpr::constant(4) * DimExpr::constant(8)).constantValue(), 32);
  EXPECT_EQ((DimExpr::constant(1) * n).str(), "N");
  EXPECT_EQ((n + DimExpr()).str(), "N");
  EXPECT_EQ((DimExpr::constant(4) * n * DimExpr::constant(16)).str(), "(* 64 N)");
  EXPECT_EQ(DimExpr::alignUp(DimExpr::constant(300), 256).constantValue(), 512);
  EXPECT_EQ(DimExpr::max(n, n).str(), "N");
}

TEST(DimExpr, EvaluatesAtSizes) {
  DimExpr e =
      DimExpr::alignUp(DimExpr::constant(4) * DimExpr::symbol("N") * DimExpr::symbol("S"), 256) +
      DimExpr::max(DimExpr::symbol("N"), DimExpr::constant(3));
  EXPECT_EQ(e.eval({{"N", 2}, {"S", 5}}), 256 + 3);
  EXPECT_EQ(e.eval({{"N", 100}, {"S", 1}}), 512 + 100);
  EXPECT_THROW(e.eval({{"N", 2}}), Error); // S has no size
  EXPECT_THROW((DimExpr::symbol("N") * DimExpr::symbol("N")).eval({{"N", int64_t(1) << 40}}),
               Error); // overflow
}

TEST(DimExpr, TextRoundTripsAndBadTextIsAnError) {
  for (const char *text :
       {"0", "N", "(+ N 1)", "(* 4096 batch)", "(max (+ N 2) S T)", "(align 256 (* 1536 seq))",
        "(+ S -1)", "(/ (* 3 N) 2)", "(+ (* 2 N S) (* -1 T) 7)"}) {
    DimExpr e = DimExpr::parse(text);
    EXPECT_EQ(e.str(), text);
    EXPECT_EQ(DimExpr::parse(e.str()), e);
  }
  EXPECT_EQ(DimExpr::parse(" ( *  2   N ) ").eval({{"N", 7}}), 14);
  for (const char *bad :
       {"", "(", "(* 2)", "(- 1 2)", "(align 0 N)", "N M", "(+ 1 2", "(/ N 0)", "(max)", "@x"})
    EXPECT_THROW(DimExpr::parse(bad), Error) << bad;
}

// Equal expressions print equal, whatever order they were built in: what
// code comparing Dim::symbol strings relies on.
TEST(DimExpr, CanonicalFormIsOneText) {
  DimExpr n = DimExpr::symbol("N"), s = DimExpr::symbol("S"), one = DimExpr::constant(1);
  EXPECT_EQ((n * s).str(), (s * n).str());
  EXPECT_EQ((n + one + s).str(), (s + (one + n)).str());
  EXPECT_EQ((n + one + s).str(), "(+ N S 1)");
  EXPECT_EQ(((n + one) * DimExpr::constant(2)).str(), "(+ (* 2 N) 2)");
  EXPECT_EQ((n + s - s).str(), "N");
  EXPECT_EQ(DimExpr::parse("(* S 2 N)").str(), "(* 2 N S)");
  EXPECT_EQ(DimExpr::parse("(+ 1 (* N 3) (* 2 N))").str(), "(+ (* 5 N) 1)");
  EXPECT_EQ(DimExpr::max(s, DimExpr::max(n, s)).str(), "(max N S)");
}

// Reshape's -1: the input's elements over the other dims.
TEST(DimExpr, ExactQuotients) {
  DimExpr n = DimExpr::symbol("N"), s = DimExpr::symbol("S");
  DimExpr total = DimExpr::constant(768) * n * s;
  EXPECT_EQ(DimExpr::exactDiv(total, DimExpr::constant(768)).str(), "(* N S)");
  EXPECT_EQ(DimExpr::exactDiv(total, DimExpr::constant(12) * s).str(), "(* 64 N)");
  EXPECT_EQ(DimExpr::exactDiv(total, total).str(), "1");
  EXPECT_EQ(DimExpr::exactDiv((n + DimExpr::constant(1)) * s, s).str(), "(+ N 1)");
  DimExpr q = DimExpr::exactDiv(DimExpr::constant(4) * n, DimExpr::constant(6));
  EXPECT_EQ(q.str(), "(/ (* 2 N) 3)");
  EXPECT_TRUE(q.hasQuotient());
  EXPECT_EQ(q.eval({{"N", 9}}), 6);
  EXPECT_THROW(q.eval({{"N", 4}}), Error); // 8 / 3 is not whole
  EXPECT_EQ(q.substitute({{"N", 3}}).str(), "2");
  EXPECT_THROW(DimExpr::exactDiv(n, DimExpr()), Error);
}

TEST(DimExpr, DimsCarryExpressions) {
  DimExpr e = DimExpr::symbol("past") + DimExpr::constant(1);
  Dim d = dimOf(e);
  EXPECT_TRUE(d.isSymbolic());
  EXPECT_EQ(d.symbol, "(+ past 1)");
  EXPECT_EQ(exprOf(d), e);
  EXPECT_EQ(dimValue(d, {{"past", 7}}), 8);
  EXPECT_EQ(dimValue(d, {}), std::nullopt);
  EXPECT_EQ(substituteDim(d, {{"past", 7}}), Dim::fixed(8));
  EXPECT_EQ(substituteDim(dimOf(e * DimExpr::symbol("N")), {{"past", 1}}).symbol, "(* 2 N)");
  EXPECT_EQ(dimOf(DimExpr::constant(3)), Dim::fixed(3));
  EXPECT_EQ(dimOf(DimExpr::symbol("N")), Dim::sym("N"));
  EXPECT_THROW(dimOf(DimExpr() - DimExpr::constant(1)), Error);
  EXPECT_THROW(exprOf(Dim::unknown()), Error);
}

// IR types carry expression dims through the text and bytecode forms, in
// their one canonical text whatever order the text wrote them in.
TEST(DimExpr, IRRoundTrips) {
  auto m = parseModule(R"(module @m {
  func @main(%x: f32[N,8], %p: f32[P,8]) -> (f32[(+ P N),8]) {
    %c = Concat(%x, %p) {axis = 0} : f32[(+ P N),8]
    %r = Relu(%c) : f32[( +  N   P ),8]
    return %r
  }
})",
                       "x.tcir");
  std::string text = printModuleToString(*m);
  EXPECT_NE(text.find("%r = Relu(%c) : f32[(+ N P),8]"), std::string::npos) << text;
  EXPECT_EQ(printModuleToString(*parseModule(text, "y.tcir")), text);
  std::string bc = writeBytecode(*m);
  EXPECT_EQ(printModuleToString(*readBytecode(MemoryBuffer::copy(bc, "x.tcbc"))), text);
  for (const char *bad : {"f32[(+ N]", "f32[(- N 1)]", "f32[(+ N P]"}) {
    std::string t = std::string("module @m {\n  func @main(%x: ") + bad +
                    ") -> (f32[1]) {\n    return %x\n  }\n}";
    EXPECT_THROW(parseModule(t, "bad.tcir"), Error) << bad;
  }
}

TEST(ShapePlanSection, RoundTrips) {
  StoredShapePlan p;
  DimExpr n = DimExpr::symbol("N");
  p.blocks = {{DimExpr::alignUp(DimExpr::constant(4) * n, 256), 0, 1},
              {DimExpr::alignUp(DimExpr::constant(8) * n, 256), 1, SIZE_MAX}};
  p.folds = {{"s", {n, DimExpr() - DimExpr::constant(1), DimExpr::constant(16) * n}}, {"t", {}}};
  p.buffers = {{"a", DimExpr::constant(4) * n, 0, "", DimExpr(), ""},
               {"v", DimExpr(), 0, "a", DimExpr::constant(16), ""},
               {"w", DimExpr(), StoredBuffer::kNoBlock, "x", DimExpr(), ""},
               {"b", DimExpr::constant(8) * n, 1, "", DimExpr(), "a"}};
  std::string text = writeShapePlan(p);
  StoredShapePlan q = readShapePlan(text, "x.tcx");
  EXPECT_EQ(writeShapePlan(q), text);
  ASSERT_EQ(q.buffers.size(), 4u);
  EXPECT_EQ(q.buffers[1].base, "a");
  EXPECT_EQ(q.buffers[2].block, StoredBuffer::kNoBlock);
  EXPECT_EQ(q.buffers[3].inPlaceOf, "a");
  EXPECT_EQ(q.blocks[1].end, SIZE_MAX);
  EXPECT_EQ(q.blocks[1].bytes.eval({{"N", 100}}), 1024);
  ASSERT_EQ(q.folds.size(), 2u);
  EXPECT_EQ(q.folds[0].elements[1].eval({}), -1);
  EXPECT_EQ(q.folds[0].elements[2].str(), "(* 16 N)");
}

TEST(ShapePlanSection, CorruptTextNamesTheLine) {
  try {
    readShapePlan("tc-shape-plan 1\nblock\t256\t0\t1\nbuffer\ta\t(* 4\t0\t-\t0\t-\n", "m.tcx");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("m.tcx: section shape-plan line 3"), std::string::npos)
        << e.what();
  }
  for (const char *bad : {"", "tc-shape-plan 3\n", "tc-shape-plan 1\nblock\t256\t2\t1\n",
                          "tc-shape-plan 1\nbuffer\ta\t4\t0\t-\t0\t-\n", // no block 0
                          "tc-shape-plan 1\nblock\t256\t0\t99999999999999999999999\n",
                          "tc-shape-plan 1\nblock\t256\t0\t1\nbuffer\ta\t1\n"})
    EXPECT_THROW(readShapePlan(bad, "m.tcx"), Error) << bad;
}
