// Guards of a stored shape plan: DimGuard's text and checks, the section's
// guard records, and codegen's assumed Slice bounds checked per shape.
#include "tc/CodeGen/ShapeGuards.h"
#include "ErrorOf.h"
#include "tc/CodeGen/ShapePlanCompile.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/DimGuard.h"
#include "tc/IR/Parser.h"
#include "tc/Runtime/ShapePlan.h"
#include "tc/Runtime/ShapePlanner.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(DimGuard, ParsesPrintsAndNamesTheViolation) {
  DimGuard g = DimGuard::parse("seq <= 512");
  EXPECT_EQ(g.str(), "seq <= 512");
  EXPECT_EQ(g, (DimGuard{DimExpr::symbol("seq"), DimExpr::constant(512)}));
  EXPECT_EQ(g.violation({{"seq", 512}}), "");
  EXPECT_EQ(g.violation({{"seq", 600}}), "seq = 600 exceeds 512, the largest this model supports");
  EXPECT_EQ(DimGuard::parse("1 <= seq").violation({{"seq", 0}}),
            "seq = 0 is below 1, the smallest this model supports");
  EXPECT_EQ(DimGuard::parse("(+ seq 1) <= n").violation({{"seq", 4}, {"n", 3}}),
            "(+ seq 1) = 5 exceeds n = 3, which this model requires");
  EXPECT_THROW(g.violation({}), Error); // no size for seq
  for (const char *bad : {"seq", "seq < 512", "seq <= ", "a <= b <= c", "(+ seq <= 1", "seq<=512"})
    EXPECT_THROW(DimGuard::parse(bad), Error) << bad;
}

TEST(DimGuard, ConstantsGoToOneSide) {
  DimExpr seq = DimExpr::symbol("seq");
  EXPECT_EQ(DimGuard::of(DimExpr(), seq - DimExpr::constant(1)).str(), "1 <= seq");
  EXPECT_EQ(DimGuard::of(seq + DimExpr::constant(3), DimExpr::constant(515)).str(), "seq <= 512");
  EXPECT_EQ(DimGuard::of(DimExpr::constant(2) * seq, DimExpr::constant(8)).str(), "(* 2 seq) <= 8");
  // Sizes on both sides stay as they are.
  DimExpr n = DimExpr::symbol("n");
  EXPECT_EQ(DimGuard::of(seq + DimExpr::constant(1), n).str(), "(+ seq 1) <= n");
}

TEST(DimGuard, AlwaysWhereNoSizeViolatesIt) {
  EXPECT_TRUE((DimGuard{DimExpr(), DimExpr::symbol("s")}.always()));
  EXPECT_TRUE(DimGuard::parse("seq <= (+ seq 1)").always());
  EXPECT_TRUE(DimGuard::parse("s <= (* 2 s)").always());
  EXPECT_TRUE(DimGuard::parse("a <= (+ (max a b) a)").always());
  EXPECT_FALSE(DimGuard::parse("seq <= 512").always());
  EXPECT_FALSE(DimGuard::parse("1 <= seq").always());
  EXPECT_FALSE(DimGuard::parse("(+ seq 1) <= seq").always());
  EXPECT_FALSE(DimGuard::parse("(* 2 s) <= s").always());
}

TEST(ShapePlanSection, GuardsRoundTripInVersion2) {
  StoredShapePlan p;
  p.guards = {{DimGuard::parse("seq <= 512"), "Slice %p reads\t[0, seq)"},
              {DimGuard::parse("1 <= seq"), "Slice %q"}};
  p.blocks = {{DimExpr::alignUp(DimExpr::constant(4) * DimExpr::symbol("seq"), 256), 0, 1}};
  std::string text = writeShapePlan(p);
  EXPECT_EQ(text.substr(0, text.find('\n')), "tc-shape-plan 2");
  StoredShapePlan q = readShapePlan(text, "x.tcx");
  EXPECT_EQ(writeShapePlan(q), text);
  ASSERT_EQ(q.guards.size(), 2u);
  EXPECT_EQ(q.guards[1].bound, DimGuard::parse("1 <= seq"));
  EXPECT_EQ(q.guards[0].origin, "Slice %p reads [0, seq)"); // one field
  EXPECT_EQ(errorOf([&] { checkGuards(q.guards, {{"seq", 512}}, "x.tcx"); }), "");
  EXPECT_EQ(errorOf([&] { checkGuards(q.guards, {{"seq", 513}}, "x.tcx"); }),
            "x.tcx: seq = 513 exceeds 512, the largest this model supports (Slice %p reads [0, "
            "seq))");
  EXPECT_EQ(errorOf([&] { checkGuards(q.guards, {{"seq", 0}}, "x.tcx"); }),
            "x.tcx: seq = 0 is below 1, the smallest this model supports (Slice %q)");
  // Without guards: version 1, as older runtimes read it.
  p.guards.clear();
  EXPECT_EQ(writeShapePlan(p).substr(0, 16), "tc-shape-plan 1\n");
  // A guard in a version-1 section, or one that does not read, names its line.
  for (const char *bad :
       {"tc-shape-plan 1\nguard\tseq <= 512\tx\n", "tc-shape-plan 2\nguard\tseq < 512\tx\n",
        "tc-shape-plan 2\nguard\tseq <= 512\n"})
    EXPECT_NE(
        errorOf([&] { readShapePlan(bad, "m.tcx"); }).find("m.tcx: section shape-plan line 2"),
        std::string::npos)
        << bad;
}

namespace {

// A position buffer of 8 sliced to the sequence length (Shape -> Gather ->
// Slice): `min(S, 8)` long.
constexpr const char *kPositionSlice = R"(module @m {
  func @main(%x: f32[B,S]) -> (f32[B,?]) {
    %pos = const i64[1,8] [0, 1, 2, 3, 4, 5, 6, 7]
    %zero = const i64[1] [0]
    %one = const i64[1] [1]
    %shape = Shape(%x) : i64[2]
    %len = Gather(%shape, %one) {axis = 0} : i64[1]
    %p = Slice(%pos, %zero, %len, %one, %one) : i64[1,?]
    %f = Cast(%p) {to = f32} : f32[1,?]
    %y = Add(%x, %f) : f32[B,?]
    return %y
  }
})";

// gpt2's mask: the first column (`min(1, S)`), concatenated before the
// input, and the last S columns of that, whose bounds always hold once the
// concat's size (+ S 1) is known: a second round.
constexpr const char *kFirstColumn = R"(module @m {
  func @main(%x: f32[B,S]) -> (f32[B,?]) {
    %zero = const i64[1] [0]
    %one = const i64[1] [1]
    %first = Slice(%x, %zero, %one, %one, %one) : f32[B,?]
    %cat = Concat(%first, %x) {axis = 1} : f32[B,?]
    %shape = Shape(%x) : i64[2]
    %len = Gather(%shape, %one) {axis = 0} : i64[1]
    %end = Add(%len, %one) : i64[1]
    %tail = Slice(%cat, %one, %end, %one, %one) : f32[B,?]
    %y = Add(%tail, %x) : f32[B,?]
    return %y
  }
})";

// The artifact of `m` as codegen writes it: its module and, with `plan`,
// the stored plan (without one, the run-time planner plans it).
Artifact artifactOf(const Module &m, const StoredShapePlan *plan) {
  enableRunTimePlanning();
  Artifact a;
  a.file = "x.tcx";
  a.target = "cpu";
  a.setSection(kSectionModule, writeBytecode(m));
  if (plan)
    a.setSection(kSectionShapePlan, writeShapePlan(*plan));
  return a;
}

} // namespace

TEST(ShapeGuards, SliceToTheSequenceLengthIsPlannedUnderItsGuard) {
  auto m = parseModule(kPositionSlice, "x.tcir");
  std::string why;
  EXPECT_FALSE(compileShapePlan(*m, why)); // `?`: min(S, 8)
  std::vector<StoredGuard> guards = assumeSliceBounds(*m);
  ASSERT_EQ(guards.size(), 1u);
  EXPECT_EQ(guards[0].bound.str(), "S <= 8");
  EXPECT_EQ(guards[0].origin, "Slice %p reads [0, S) of axis 1 of %pos (i64[1,8])");
  EXPECT_EQ(m->main().results[0]->type.str(), "f32[B,S]");
  std::optional<StoredShapePlan> p = compileShapePlan(*m, why, guards);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->guards.size(), 1u);
  Artifact stored = artifactOf(*m, &*p), runTime = artifactOf(*m, nullptr);
  for (int64_t s : {1, 5, 8}) {
    auto a = planShape(stored, {{"B", 2}, {"S", s}}), b = planShape(runTime, {{"B", 2}, {"S", s}});
    ASSERT_TRUE(a && b);
    EXPECT_NO_THROW(checkStoredPlan(*a, *b));
    EXPECT_EQ(a->main().results[0]->type.str(), "f32[2," + std::to_string(s) + "]");
  }
  EXPECT_EQ(errorOf([&] { planShape(stored, {{"B", 2}, {"S", 9}}); }),
            "x.tcx: S = 9 exceeds 8, the largest this model supports (Slice %p reads [0, S) of "
            "axis 1 of %pos (i64[1,8]))");
}

TEST(ShapeGuards, BoundsThatAlwaysHoldNeedNoGuard) {
  auto m = parseModule(kFirstColumn, "x.tcir");
  std::vector<StoredGuard> guards = assumeSliceBounds(*m);
  ASSERT_EQ(guards.size(), 1u); // the first column's; the tail's bounds hold at every S
  EXPECT_EQ(guards[0].bound.str(), "1 <= S");
  const Function &f = m->main();
  EXPECT_EQ(f.results[0]->type.str(), "f32[B,S]");
  std::string why;
  std::optional<StoredShapePlan> p = compileShapePlan(*m, why, guards);
  ASSERT_TRUE(p) << why;
  Artifact stored = artifactOf(*m, &*p), runTime = artifactOf(*m, nullptr);
  // (At S = 1 the run-time planner makes the column a view of the input,
  // contiguous then; the stored plan copies it at every size: both right.)
  for (int64_t s : {2, 7}) {
    auto a = planShape(stored, {{"B", 3}, {"S", s}}), b = planShape(runTime, {{"B", 3}, {"S", s}});
    ASSERT_TRUE(a && b);
    EXPECT_NO_THROW(checkStoredPlan(*a, *b));
  }
  EXPECT_NE(errorOf([&] {
              planShape(stored, {{"B", 3}, {"S", 0}});
            }).find("x.tcx: S = 0 is below 1, the smallest this model supports (Slice %first"),
            std::string::npos);
}

TEST(ShapeGuards, ANegativeStartCountsFromTheEnd) {
  // The last S positions of 8: [8 - S, 8), S of them, for 1 <= S <= 8.
  auto m = parseModule(R"(module @m {
  func @main(%x: f32[S]) -> (f32[?]) {
    %pos = const f32[8] [0, 1, 2, 3, 4, 5, 6, 7]
    %zero = const i64[1] [0]
    %end = const i64[1] [9223372036854775807]
    %len = Shape(%x) : i64[1]
    %start = Sub(%zero, %len) : i64[1]
    %p = Slice(%pos, %start, %end) : f32[?]
    %y = Add(%x, %p) : f32[?]
    return %y
  }
})",
                       "x.tcir");
  std::vector<StoredGuard> guards = assumeSliceBounds(*m);
  ASSERT_EQ(guards.size(), 2u);
  EXPECT_EQ(guards[0].bound.str(), "1 <= S");
  EXPECT_EQ(guards[1].bound.str(), "S <= 8");
  EXPECT_EQ(m->main().results[0]->type.str(), "f32[S]");
  std::string why;
  std::optional<StoredShapePlan> p = compileShapePlan(*m, why, guards);
  ASSERT_TRUE(p) << why;
  Artifact stored = artifactOf(*m, &*p), runTime = artifactOf(*m, nullptr);
  for (int64_t n : {1, 3, 8}) {
    auto a = planShape(stored, {{"S", n}}), b = planShape(runTime, {{"S", n}});
    ASSERT_TRUE(a && b);
    EXPECT_NO_THROW(checkStoredPlan(*a, *b));
  }
  EXPECT_NE(errorOf([&] { planShape(stored, {{"S", 9}}); }).find("S = 9 exceeds 8"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { planShape(stored, {{"S", 0}}); }).find("S = 0 is below 1"),
            std::string::npos);
}

TEST(ShapeGuards, BoundsOutOfOrderAreNotAssumed) {
  // [5, 3) of a symbolic axis holds at no size: left `?` (no plan), no guard.
  auto m = parseModule(R"(module @m {
  func @main(%x: f32[S]) -> (f32[?]) {
    %five = const i64[1] [5]
    %three = const i64[1] [3]
    %y = Slice(%x, %five, %three) : f32[?]
    return %y
  }
})",
                       "x.tcir");
  EXPECT_TRUE(assumeSliceBounds(*m).empty());
  EXPECT_EQ(m->main().results[0]->type.str(), "f32[?]");
}
