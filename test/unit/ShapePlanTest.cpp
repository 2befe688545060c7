#include "tc/Runtime/ShapePlan.h"
#include "ErrorOf.h"
#include "tc/CodeGen/ShapePlanCompile.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/Runtime/ShapePlanner.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace tc;

namespace {

// An artifact holding just a module: what the shared planner reads (the
// run-time planner's, as in the tools).
Artifact artifactOf(const char *text) {
  enableRunTimePlanning();
  Artifact a;
  a.file = "x.tcx";
  a.target = "cpu";
  a.setSection(kSectionModule, writeBytecode(*parseModule(text, "x.tcir")));
  return a;
}

constexpr const char *kCosIdentitySin = R"(module @m {
  func @main(%x: f32[N,4]) -> (f32[N,4]) {
    %a = Cos(%x) : f32[N,4]
    %v = Identity(%a) : f32[N,4]
    %b = Sin(%v) : f32[N,4]
    return %b
  }
})";

} // namespace

TEST(ShapePlan, KeyIsTheInputDimsAndBindsTheSymbols) {
  auto m = parseModule(kCosIdentitySin, "x.tcir");
  auto k = shapeKeyOf(m->main(), {HostTensor(DType::F32, {3, 4})});
  ASSERT_TRUE(k);
  EXPECT_EQ(k->dims, (std::vector<int64_t>{3, 4, -1}));
  EXPECT_EQ(k->sizes.at("N"), 3);
  // Not the signature: no key (the reference executor says why).
  EXPECT_FALSE(shapeKeyOf(m->main(), {HostTensor(DType::F32, {3, 5})}));
  EXPECT_FALSE(shapeKeyOf(m->main(), {HostTensor(DType::F64, {3, 4})}));
  EXPECT_FALSE(shapeKeyOf(m->main(), {}));
}

TEST(ShapePlan, SpecializesPlansAndAliasesViews) {
  Artifact a = artifactOf(kCosIdentitySin);
  auto p = planShape(a, {{"N", 3}});
  ASSERT_TRUE(p);
  const Function &f = p->main();
  EXPECT_EQ(f.results[0]->type.str(), "f32[3,4]");
  EXPECT_GE(p->memory.arenaBytes, 48u);
  EXPECT_EQ(p->placeOf(f.args[0]).kind, ValuePlace::Kind::Argument);
  const Op &cos = *f.ops[0], &identity = *f.ops[1];
  EXPECT_FALSE(p->aliases(cos));
  EXPECT_TRUE(p->aliases(identity));
  ValuePlace at = p->placeOf(identity.result());
  EXPECT_EQ(at.kind, ValuePlace::Kind::Arena);
  EXPECT_EQ(at.offset, p->placeOf(cos.result()).offset);
}

TEST(ShapePlan, OneOpRunsOnTheReferenceKernels) {
  Artifact a = artifactOf(kCosIdentitySin);
  auto p = planShape(a, {{"N", 1}});
  ASSERT_TRUE(p);
  HostTensor x(DType::F32, {1, 4});
  x.data<float>()[2] = 1.0f;
  auto outs = runOpOnReference(*p->module, *p->main().ops[0], [&](const Value *) { return x; });
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_FLOAT_EQ(outs[0].data<float>()[2], std::cos(1.0f));
  EXPECT_FLOAT_EQ(outs[0].data<float>()[0], 1.0f);
}

TEST(ShapePlan, CacheKeepsTheMostRecentlyUsedAndCachesNoFailedMake) {
  ShapePlanCache<int> cache;
  int made = 0;
  auto make = [&] { return std::make_unique<int>(++made); };
  for (int64_t n = 0; n < 9; ++n)
    cache.get({n}, make);
  EXPECT_EQ(made, 9);
  EXPECT_EQ(*cache.get({8}, make), 9);  // cached
  EXPECT_EQ(*cache.get({0}, make), 10); // evicted (least recently used), made again
  EXPECT_EQ(cache.get({20}, [] { return std::unique_ptr<int>(); }), nullptr);
  EXPECT_EQ(cache.get({20}, make), nullptr); // "cannot plan" is cached
  EXPECT_THROW(cache.get({21}, []() -> std::unique_ptr<int> { throw Error("no memory"); }), Error);
  EXPECT_EQ(*cache.get({21}, make), 11); // a failure is not
}

namespace {

// Views, an in-place write, two sizes of block and a result: what a stored
// plan must keep shared and pack as the planner does.
constexpr const char *kSharing = R"(module @m {
  func @main(%x: f32[N,8]) -> (f32[N,8], f32[N,8]) {
    %a = Cos(%x) : f32[N,8]
    %b = Sin(%a) : f32[N,8]
    %c = Identity(%b) : f32[N,8]
    %d = ReduceSum(%a) {axes = [1]} : f32[N,1]
    %e = Add(%b, %d) : f32[N,8]
    %f = Exp(%e) : f32[N,8]
    return %f, %c
  }
})";

Artifact withStoredPlan(const char *text, StoredShapePlan *tamper = nullptr) {
  Artifact a = artifactOf(text);
  auto m = parseModule(text, "x.tcir");
  std::string why;
  std::optional<StoredShapePlan> p = compileShapePlan(*m, why);
  EXPECT_TRUE(p) << why;
  if (p && tamper)
    *tamper = *p;
  if (p)
    a.setSection(kSectionShapePlan, writeShapePlan(*p));
  return a;
}

std::unique_ptr<PlannedModule> fallbackPlan(const char *text,
                                            const std::map<std::string, int64_t> &sizes) {
  return planShape(artifactOf(text), sizes); // no stored plan: the planner's
}

} // namespace

TEST(ShapePlan, StoredPlanIsThePlannersAtEverySize) {
  Artifact a = withStoredPlan(kSharing);
  for (int64_t n : {1, 3, 64, 1000}) {
    auto stored = planShape(a, {{"N", n}});
    auto runTime = fallbackPlan(kSharing, {{"N", n}});
    ASSERT_TRUE(stored && runTime);
    EXPECT_NO_THROW(checkStoredPlan(*stored, *runTime));
    EXPECT_EQ(stored->memory.arenaBytes, runTime->memory.arenaBytes);
    EXPECT_EQ(stored->main().results[0]->type.str(), "f32[" + std::to_string(n) + ",8]");
    const Function &f = stored->main();
    EXPECT_TRUE(stored->aliases(*f.ops[2])); // the Identity
    EXPECT_EQ(stored->placeOf(f.ops[2]->result()).offset,
              stored->placeOf(f.ops[1]->result()).offset);
  }
}

TEST(ShapePlan, CheckFindsAStoredPlanThatDiffers) {
  StoredShapePlan p;
  Artifact a = withStoredPlan(kSharing, &p);
  ASSERT_GE(p.blocks.size(), 2u);
  // The first block lives all the time: packed elsewhere than the planner does.
  p.blocks[0].end = SIZE_MAX;
  a.setSection(kSectionShapePlan, writeShapePlan(p));
  auto stored = planShape(a, {{"N", 5}});
  auto runTime = fallbackPlan(kSharing, {{"N", 5}});
  ASSERT_TRUE(stored && runTime);
  EXPECT_THROW(checkStoredPlan(*stored, *runTime), Error);
}

// Reshape's -1, Concat along the symbolic axis and a shape computed from
// Shape(x): expressions of N, the computation stored as folds.
constexpr const char *kExpressions = R"(module @m {
  func @main(%x: f32[N,8]) -> (f32[N,4,2], f32[(* 2 N),4], f32[(* 2 N),8]) {
    %a = Cos(%x) : f32[N,8]
    %s = Shape(%a) {start = 0, end = 1} : i64[1]
    %k = const i64[2] [4, 2]
    %t = Concat(%s, %k) {axis = 0} : i64[3]
    %r = Reshape(%a, %t) : f32[N,4,2]
    %q = const i64[2] [-1, 4]
    %u = Reshape(%a, %q) : f32[(* 2 N),4]
    %c = Concat(%a, %x) {axis = 0} : f32[(* 2 N),8]
    %e = Exp(%c) : f32[(* 2 N),8]
    return %r, %u, %e
  }
})";

TEST(ShapePlan, ExpressionsAndShapeComputationsAreStored) {
  StoredShapePlan p;
  Artifact a = withStoredPlan(kExpressions, &p);
  ASSERT_EQ(p.folds.size(), 2u);
  EXPECT_EQ(p.folds[1].value, "t");
  EXPECT_EQ(p.folds[1].elements[0].str(), "N");
  for (int64_t n : {1, 3, 64}) {
    auto stored = planShape(a, {{"N", n}});
    auto runTime = fallbackPlan(kExpressions, {{"N", n}});
    ASSERT_TRUE(stored && runTime);
    EXPECT_NO_THROW(checkStoredPlan(*stored, *runTime));
    const Function &f = stored->main();
    EXPECT_EQ(f.results[1]->type.str(), "f32[" + std::to_string(2 * n) + ",4]");
    EXPECT_EQ(f.results[2]->type.str(), "f32[" + std::to_string(2 * n) + ",8]");
    // The shape reads a constant: Shape and Concat ran at planning.
    const Value *shape = f.results[0]->def->operand(1);
    ASSERT_TRUE(shape->isConstant());
    EXPECT_EQ(shape->data->as<int64_t>()[0], n);
  }
  // A fold that does not fit the module is an error, not a wrong plan.
  p.folds[1].elements.pop_back();
  a.setSection(kSectionShapePlan, writeShapePlan(p));
  EXPECT_THROW(planShape(a, {{"N", 2}}), Error);
}

// A Range of symbolic length (a batch's indices) times 3 and a view of it: stored
// as ranges, made constants at each size. (The run-time planner also folds
// the small Cast of it, which the stored plan runs: the check allows that.)
TEST(ShapePlan, RangesOfSymbolicLengthAreStored) {
  constexpr const char *text = R"(module @m {
  func @main(%x: f32[N,8]) -> (f32[N,8]) {
    %s = Shape(%x) {start = 0, end = 1} : i64[1]
    %n = Squeeze(%s) : i64[]
    %zero = const i64[] [0]
    %one = const i64[] [1]
    %i = Range(%zero, %n, %one) : i64[N]
    %three = const i64[] [3]
    %m = Mul(%i, %three) : i64[N]
    %u = Unsqueeze(%m) {axes = [1]} : i64[N,1]
    %f = Cast(%u) {to = f32} : f32[N,1]
    %y = Add(%x, %f) : f32[N,8]
    return %y
  }
})";
  StoredShapePlan p;
  Artifact a = withStoredPlan(text, &p);
  ASSERT_EQ(p.folds.size(), 5u);
  EXPECT_TRUE(p.folds[4].range);
  EXPECT_EQ(p.folds[4].value, "u");
  for (int64_t n : {1, 5}) {
    auto stored = planShape(a, {{"N", n}});
    auto runTime = fallbackPlan(text, {{"N", n}});
    ASSERT_TRUE(stored && runTime);
    EXPECT_NO_THROW(checkStoredPlan(*stored, *runTime));
    const Value *u = stored->main().results[0]->def->operand(1)->def->operand(0);
    ASSERT_TRUE(u->isConstant());
    EXPECT_EQ(u->type.str(), "i64[" + std::to_string(n) + ",1]");
    EXPECT_EQ(u->data->as<int64_t>()[n - 1], 3 * (n - 1));
  }
}

TEST(ShapePlan, NoStoredPlanWhereOnlyTheSizesDecide) {
  auto m = parseModule(R"(module @m {
  func @main(%x: f32[N,8]) -> (f32[?,?]) {
    %a = Cos(%x) : f32[N,8]
    %s = Shape(%a) : i64[2]
    %r = Reshape(%a, %s) : f32[?,?]
    return %r
  }
})",
                       "x.tcir");
  std::string why;
  EXPECT_FALSE(compileShapePlan(*m, why));
  EXPECT_EQ(why, "dim 0 of %r (f32[?,?]) is known only at run time");
}

TEST(ShapePlan, CorruptStoredPlanIsAnError) {
  StoredShapePlan p;
  Artifact a = withStoredPlan(kSharing, &p);
  p.buffers[0].value = "nope";
  a.setSection(kSectionShapePlan, writeShapePlan(p));
  EXPECT_THROW(planShape(a, {{"N", 2}}), Error);
}

TEST(ShapePlan, WithoutStoredPlanNorPlannerTheArtifactIsRefused) {
  Artifact a = artifactOf(kCosIdentitySin);
  StoredShapePlan none;
  none.unplanned = "dim 0 of %r (f32[?]) is known only at run time";
  a.setSection(kSectionShapePlan, writeShapePlan(none));
  RunTimePlanner planner = runTimePlanner;
  runTimePlanner = nullptr; // as in libtcrt: refused, never run op by op
  std::string load = errorOf([&] { unplannedShapes(a); });
  EXPECT_NE(load.find("x.tcx: the artifact stores no shape plan (dim 0 of %r"), std::string::npos)
      << load;
  EXPECT_EQ(errorOf([&] { planShape(a, {{"N", 3}}); }), load);
  runTimePlanner = planner; // the tools: planned at run time, said
  EXPECT_EQ(unplannedShapes(a), none.unplanned);
  EXPECT_TRUE(planShape(a, {{"N", 3}}));
  // An older artifact without the section: the same.
  Artifact old = artifactOf(kCosIdentitySin);
  EXPECT_NE(unplannedShapes(old).find("no section shape-plan"), std::string::npos);
  runTimePlanner = nullptr;
  EXPECT_THROW(unplannedShapes(old), Error);
  runTimePlanner = planner;
}

TEST(ShapePlan, UnplannedRecordIsTheSectionsOnly) {
  StoredShapePlan none;
  none.unplanned = "value name 'a\tb' is not one field";
  std::string text = writeShapePlan(none);
  EXPECT_EQ(text, "tc-shape-plan 1\nunplanned\tvalue name 'a b' is not one field\n");
  EXPECT_EQ(readShapePlan(text, "x.tcx").unplanned, "value name 'a b' is not one field");
  EXPECT_NE(errorOf([&] {
              readShapePlan(text + "block\t256\t0\t1\n", "x.tcx");
            }).find("line 2: an unplanned record is the section's only one"),
            std::string::npos);
  EXPECT_THROW(readShapePlan("tc-shape-plan 1\nunplanned\t\n", "x.tcx"), Error);
}
