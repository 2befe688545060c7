#include "tc/Runtime/DimExpr.h"
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(DimExpr, ConstantsFoldAndUnitsVanish) {
  DimExpr n = DimExpr::symbol("N");
  EXPECT_TRUE((DimExpr::constant(4) * DimExpr::constant(8)).isConstant());
  EXPECT_EQ((DimExpr::constant(4) * DimExpr::constant(8)).constantValue(), 32);
  EXPECT_EQ((DimExpr::constant(1) * n).str(), "N");
  EXPECT_EQ((n + DimExpr()).str(), "N");
  EXPECT_EQ((DimExpr::constant(4) * n * DimExpr::constant(16)).str(), "(* 4 N 16)");
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
  for (const char *text : {"0", "N", "(+ 1 N)", "(* 4 batch 32 32)", "(max S T (+ N 2))",
                           "(align 256 (* 2 seq 768))"}) {
    DimExpr e = DimExpr::parse(text);
    EXPECT_EQ(e.str(), text);
    EXPECT_EQ(DimExpr::parse(e.str()), e);
  }
  EXPECT_EQ(DimExpr::parse(" ( *  2   N ) ").eval({{"N", 7}}), 14);
  for (const char *bad :
       {"", "(", "(* 2)", "(- 1 2)", "(align 0 N)", "N M", "(+ 1 2", "-3", "(max)", "@x"})
    EXPECT_THROW(DimExpr::parse(bad), Error) << bad;
}

TEST(ShapePlanSection, RoundTrips) {
  StoredShapePlan p;
  DimExpr n = DimExpr::symbol("N");
  p.blocks = {{DimExpr::alignUp(DimExpr::constant(4) * n, 256), 0, 1},
              {DimExpr::alignUp(DimExpr::constant(8) * n, 256), 1, SIZE_MAX}};
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
}

TEST(ShapePlanSection, CorruptTextNamesTheLine) {
  try {
    readShapePlan("tc-shape-plan 1\nblock\t256\t0\t1\nbuffer\ta\t(* 4\t0\t-\t0\t-\n", "m.tcx");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("m.tcx: section shape-plan line 3"), std::string::npos)
        << e.what();
  }
  for (const char *bad : {"", "tc-shape-plan 2\n", "tc-shape-plan 1\nblock\t256\t2\t1\n",
                          "tc-shape-plan 1\nbuffer\ta\t4\t0\t-\t0\t-\n", // no block 0
                          "tc-shape-plan 1\nblock\t256\t0\t99999999999999999999999\n",
                          "tc-shape-plan 1\nblock\t256\t0\t1\nbuffer\ta\t1\n"})
    EXPECT_THROW(readShapePlan(bad, "m.tcx"), Error) << bad;
}
