// The target registry (include/tc/Target/Targets.def) agrees with the
// backends it lists.
#include "tc/Target/Target.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <gtest/gtest.h>

using namespace tc;

TEST(TargetRegistry, EveryTargetIsFoundByNameAndBuildsItsCompiler) {
  ASSERT_FALSE(targets().empty());
  for (const Target &t : targets()) {
    EXPECT_EQ(findTarget(t.name), &t);
    std::unique_ptr<CompileTarget> c = t.makeCompiler();
    ASSERT_TRUE(c);
    // tc-codegen names the level flag in its messages: the target takes it.
    std::vector<TargetOption> options = c->options();
    EXPECT_TRUE(std::any_of(options.begin(), options.end(),
                            [&](const TargetOption &o) { return o.flag == t.levelFlag; }))
        << t.name << " has no --" << t.levelFlag;
    std::vector<std::string> kinds = c->emitKinds();
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), "source"), kinds.end()) << t.name;
    EXPECT_EQ(std::find(kinds.begin(), kinds.end(), "artifact"), kinds.end()) << t.name;
  }
}

TEST(TargetRegistry, RunOptionsAreDistinctAcrossTargets) {
  // tc-run and tc-prof add every target's run flags to one parser.
  std::vector<std::string> flags;
  for (const Target &t : targets())
    for (const TargetOption &o : t.runOptions())
      flags.push_back(o.flag);
  std::sort(flags.begin(), flags.end());
  EXPECT_EQ(std::adjacent_find(flags.begin(), flags.end()), flags.end());
}

TEST(TargetRegistry, UnknownNameIsOneClearError) {
  EXPECT_EQ(findTarget("tpu"), nullptr);
  try {
    requireTarget("tpu");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "unknown target 'tpu' (" + targetNames() + ")");
  }
}

TEST(TargetRegistry, TheRuntimeHalfListsTheSameTargetsAndNamesAForeignOne) {
  const std::vector<RuntimeTarget> &runtime = runtimeTargets();
  ASSERT_EQ(runtime.size(), targets().size());
  for (size_t i = 0; i < runtime.size(); ++i) {
    EXPECT_STREQ(runtime[i].name, targets()[i].name);
    EXPECT_EQ(runtime[i].load, targets()[i].load); // the compile half extends the same entry
    EXPECT_EQ(&runtimeTargetOf(runtime[i].name, "m.tcx"), &runtime[i]);
  }
  try {
    runtimeTargetOf("tpu", "m.tcx");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "m.tcx: the artifact's target 'tpu' is none of this runtime's (" + targetNames(", ") +
                  ")");
  }
}
