#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/Parser.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

namespace tc {
namespace {

const char *kModule = R"(module @m {
  func @main(%c: bool[], %x: f32[2]) -> (f32[2]) {
    %y = If(%c, %x) {then_branch = "t", else_branch = "e"} : f32[2]
    return %y
  }
  func @t(%a: f32[2]) -> (f32[2]) {
    %n = const i64[] [2]
    %go = const bool[] [true]
    %r = Loop(%n, %go, %a) {body = "b", num_captures = 0} : f32[2]
    return %r
  }
  func @e(%a: f32[2]) -> (f32[2]) {
    %r = Neg(%a) : f32[2]
    return %r
  }
  func @b(%i: i64[], %c: bool[], %v: f32[2]) -> (bool[], f32[2]) {
    %t = Tanh(%v) : f32[2]
    return %c, %t
  }
  func @unused(%a: f32[2]) -> (f32[2]) {
    return %a
  }
}
)";

TEST(ControlFlowSection, WalkedFunctionsAreMainAndItsCalleesNested) {
  auto m = parseModule(kModule, "m.tcir");
  std::vector<std::string> names;
  for (const Function *f : walkedFunctions(*m))
    names.push_back(f->name);
  EXPECT_EQ(names, (std::vector<std::string>{"main", "t", "e", "b"}));
}

TEST(ControlFlowSection, LinesNameTheirOpsAndBadOnesAreOneError) {
  auto m = parseModule(kModule, "m.tcir");
  const Op &loop = *m->lookup("t")->ops.back();
  Artifact a;
  a.file = "m.tcx";
  EXPECT_TRUE(deviceControlFlow(a, *m).empty()); // no section: an older artifact
  a.setSection(kSectionControlFlow,
               controlFlowLine(*m->lookup("t"), loop, "Loop on the device: x") + "\n");
  auto ops = deviceControlFlow(a, *m);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops.begin()->first, &loop);
  EXPECT_EQ(ops.begin()->second, "Loop on the device: x");
  for (const char *bad : {"@main %r Loop", "@t %n x", "@nope %r x", "garbage", "@t"}) {
    a.setSection(kSectionControlFlow, bad);
    try {
      deviceControlFlow(a, *m);
      ADD_FAILURE() << bad;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("m.tcx: malformed control-flow line"), std::string::npos)
          << e.what();
    }
  }
}

} // namespace
} // namespace tc
