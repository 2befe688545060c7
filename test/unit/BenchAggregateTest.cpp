// The dashboard's numbers from known rows: geomean, pass rate, mean compile
// time, compression ratio, regression flagging.
#include "BenchRows.h"
#include "tc/Bench/Aggregate.h"
#include "tc/Bench/Progress.h"
#include "tc/Bench/ResultStore.h"
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace tc::bench;
using namespace tc::bench::testing;

TEST(BenchAggregate, Geomean) {
  EXPECT_DOUBLE_EQ(*geomean({2, 8}), 4);
  EXPECT_NEAR(*geomean({1, 10, 100}), 10, 1e-12);
  // Only positive finite ratios count; none at all is no value, not 0 or 1.
  EXPECT_DOUBLE_EQ(*geomean({4, 0, -1, NAN, INFINITY}), 4);
  EXPECT_FALSE(geomean({}));
  EXPECT_FALSE(geomean({0, NAN}));
  EXPECT_DOUBLE_EQ(*mean({1, 2, 6}), 3);
  EXPECT_FALSE(mean({}));
}

TEST(BenchAggregate, GroupSummariesPerRun) {
  std::vector<StoredResult> rows = history();
  std::vector<GroupHistory> hs = groupHistories(rows);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].key.str(), "ci/cpu/default/fp32");
  ASSERT_EQ(hs[0].runs.size(), 2u);
  const GroupSummary &first = hs[0].runs[0], &last = hs[0].latest();
  EXPECT_EQ(first.passed, 3);
  EXPECT_EQ(first.total, 3);
  EXPECT_DOUBLE_EQ(first.passRate(), 1.0);
  EXPECT_NEAR(*first.geomeanSpeedup, std::cbrt(16.0), 1e-12); // (2*8*1)^(1/3)
  EXPECT_DOUBLE_EQ(*first.meanCompileS, 2.0);
  EXPECT_NEAR(*first.geomeanCompression, 1.0, 1e-12); // (2*0.5*1)^(1/3)
  // Failed rows count in the pass rate only.
  EXPECT_EQ(last.passed, 2);
  EXPECT_EQ(last.total, 4);
  EXPECT_DOUBLE_EQ(last.passRate(), 0.5);
  EXPECT_NEAR(*last.geomeanSpeedup, std::sqrt(8.0), 1e-12);
  EXPECT_DOUBLE_EQ(*last.meanCompileS, 1.5);
  EXPECT_EQ(last.run.commit, "c2");
}

// The suite's numbers on a hand-made database: PyTorch's dashboard's four
// (pass rate, geomean speedup, mean compile time, memory ratio) vs PyTorch
// eager and reduce-overhead, over a run stored in two parts.
TEST(BenchAggregate, VersusPyTorchFromADatabase) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tc-bench-aggregate-" + std::to_string(getpid()) + ".db"))
                         .string();
  std::filesystem::remove(path);
  auto store = ResultStore::open(path);
  for (const StoredResult &r : visionOnCuda())
    store->add(r.run, r.result);
  std::vector<GroupHistory> hs = groupHistories(store->all());
  std::filesystem::remove(path);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].key.str(), "vision/cuda/cudagraphs/fp32");
  ASSERT_EQ(hs[0].runs.size(), 1u); // two parts, one run
  const GroupSummary &s = hs[0].latest();
  EXPECT_EQ(s.passed, 2);
  EXPECT_EQ(s.total, 3);
  EXPECT_DOUBLE_EQ(*s.geomeanVsTorchEager, 4.0);
  EXPECT_DOUBLE_EQ(*s.geomeanVsTorchReduceOverhead, 0.5); // sqrt(0.25 * 1)
  EXPECT_DOUBLE_EQ(*s.geomeanMemoryVsTorch, 4.0);         // sqrt(8 * 2)
  EXPECT_DOUBLE_EQ(*s.meanCompileS, 15.0);
  EXPECT_EQ(s.slowVsReduceOverhead, 1); // r50 at 0.25x
  EXPECT_EQ(s.withHostSteps, 2);        // r50, and bert though it failed
  EXPECT_FALSE(s.geomeanSpeedup);       // no tc eager row to compare with
}

TEST(BenchAggregate, SlowerThanHalfReduceOverhead) {
  BenchResult r = row("m", "cudagraphs", true, 1.0);
  EXPECT_FALSE(slowerThanReduceOverhead(r)); // not measured
  r.vsTorchReduceOverhead = 0.49;
  EXPECT_TRUE(slowerThanReduceOverhead(r));
  r.vsTorchReduceOverhead = 0.5;
  EXPECT_FALSE(slowerThanReduceOverhead(r));
  r.vsTorchReduceOverhead = 0.1;
  r.passed = false;
  EXPECT_FALSE(slowerThanReduceOverhead(r)); // a failure is flagged as a failure
}

TEST(BenchAggregate, RegressionsAreBeyondNoise) {
  BenchResult before = row("m", "default", true, 10.0);
  before.p10Ms = 9.5;
  before.p90Ms = 10.5;
  BenchResult slower = before, slightly = before, noisy = before;
  slower.latencyMs = 12.0; // +20%, p10 11.5 above the old p90 10.5
  slower.p10Ms = 11.5;
  slower.p90Ms = 12.5;
  EXPECT_TRUE(latencyRegressed(before, slower));
  slightly.latencyMs = 10.8; // +8%: under the 10% threshold
  slightly.p10Ms = 10.6;
  slightly.p90Ms = 11.0;
  EXPECT_FALSE(latencyRegressed(before, slightly));
  noisy.latencyMs = 12.0; // +20%, but its spread reaches below the old p90
  noisy.p10Ms = 9.0;
  noisy.p90Ms = 15.0;
  EXPECT_FALSE(latencyRegressed(before, noisy));
  EXPECT_FALSE(latencyRegressed(slower, before)); // faster is never a regression
  BenchResult noSpread = before;
  noSpread.p10Ms.reset();
  noSpread.latencyMs = 11.5;
  EXPECT_TRUE(latencyRegressed(before, noSpread)); // threshold alone
  BenchResult failed = row("m", "default", false);
  EXPECT_TRUE(statusRegressed(before, failed));
  EXPECT_FALSE(statusRegressed(failed, before));
  EXPECT_FALSE(latencyRegressed(before, failed));
}

TEST(BenchAggregate, GroupRegressions) {
  std::vector<StoredResult> rows = history();
  GroupHistory h = groupHistories(rows)[0];
  EXPECT_TRUE(groupRegressed(h.runs[0], h.runs[1])); // 3 -> 2 passing
  GroupSummary same = h.runs[0], bitSlower = h.runs[0], muchSlower = h.runs[0];
  EXPECT_FALSE(groupRegressed(h.runs[0], same));
  *bitSlower.geomeanSpeedup /= 1.05;
  EXPECT_FALSE(groupRegressed(h.runs[0], bitSlower));
  *muchSlower.geomeanSpeedup /= 1.2;
  EXPECT_TRUE(groupRegressed(h.runs[0], muchSlower));
}

// Training groups are their own (kind), and their headline is the speedup
// vs PyTorch eager: tc has no eager train step to compare with.
TEST(BenchAggregate, TrainingGroupsAndTheirRegressions) {
  std::vector<StoredResult> rows = history();
  for (const StoredResult &r : trainingHistory())
    rows.push_back(r);
  std::vector<GroupHistory> hs = groupHistories(rows);
  ASSERT_EQ(hs.size(), 2u);
  const GroupHistory &t = hs[0].key.train() ? hs[0] : hs[1];
  EXPECT_EQ(t.key.str(), "train-ci/cuda/default/fp32/train");
  EXPECT_TRUE(displayLess(hs[0].key.train() ? hs[1].key : hs[0].key, t.key)); // inference first
  const GroupSummary &first = t.runs[0], &last = t.latest();
  EXPECT_EQ(first.passed, 2);
  EXPECT_NEAR(*first.geomeanVsTorchEager, 4.0, 1e-12);
  EXPECT_NEAR(*first.geomeanVsTorchCompile, 2.0, 1e-12);
  EXPECT_NEAR(*headlineSpeedup(first), 4.0, 1e-12);
  EXPECT_FALSE(first.geomeanSpeedup);
  EXPECT_EQ(last.passed, 1);
  EXPECT_TRUE(groupRegressed(t));
  // The speedup alone: 4x -> 2x vs PyTorch eager, same pass count.
  GroupSummary slower = first;
  *slower.geomeanVsTorchEager = 2.0;
  EXPECT_TRUE(groupRegressed(first, slower));
  *slower.geomeanVsTorchEager = 3.9;
  EXPECT_FALSE(groupRegressed(first, slower));
  // m's step doubled beyond its spread; n now fails its losses.
  std::vector<ModelChange> changes = modelChanges(rows, t);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_TRUE(changes[0].regressed);
  EXPECT_TRUE(changes[1].regressed);
}

// A suite swept a few models a run (the training zoo: a run id per sweep):
// its standing summary is every model's newest row, from whichever run.
TEST(BenchAggregate, StandingIsEachModelsNewestRow) {
  RunInfo r1 = run("1", "2026-11-22T10:00:00Z"), r2 = run("2", "2026-11-23T10:00:00Z"),
          r3 = run("3", "2026-11-24T10:00:00Z");
  std::vector<StoredResult> rows{{r1, row("a", "default", true, 1.0, 2.0)},
                                 {r1, row("b", "default", true, 1.0, 8.0)},
                                 {r2, row("c", "default", false, 1.0)},
                                 {r3, row("a", "default", true, 1.0, 4.0)}};
  std::vector<GroupHistory> hs = groupHistories(rows);
  ASSERT_EQ(hs.size(), 1u);
  const GroupHistory &h = hs[0];
  EXPECT_EQ(h.latest().total, 1); // run 3 alone: model a
  EXPECT_EQ(h.standing.total, 3); // a (run 3), b (run 1), c (run 2)
  EXPECT_EQ(h.standing.passed, 2);
  EXPECT_NEAR(*h.standing.geomeanSpeedup, std::sqrt(4.0 * 8.0), 1e-12); // a's newest, not 2
  EXPECT_EQ(h.standing.run.runId, "3");
  EXPECT_EQ(h.standingRuns, 3);
  // Each model once, its newest row against its row of an earlier commit.
  std::vector<ModelChange> changes = standingChanges(rows, h);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].now.model, "a");
  EXPECT_EQ(*changes[0].now.speedup, 4.0);
  ASSERT_TRUE(changes[0].before);
  EXPECT_EQ(*changes[0].before->speedup, 2.0);
  EXPECT_FALSE(changes[0].regressed); // the same 1.0 ms
  EXPECT_FALSE(changes[1].before);    // b: one row
  EXPECT_EQ(changes[2].now.model, "c");
}

TEST(BenchAggregate, RepeatsOfACommitAreNoise) {
  // Commit x run twice: the second run 50% slower, beyond the first's spread.
  RunInfo x1 = run("1", "2026-11-22T10:00:00Z"), x2 = run("2", "2026-11-22T11:00:00Z");
  x2.commit = x1.commit;
  std::vector<StoredResult> rows{{x1, row("m", "default", true, 1.0, 2.0)},
                                 {x2, row("m", "default", true, 1.5, 1.0)}};
  GroupHistory same = groupHistories(rows)[0];
  EXPECT_EQ(same.previous(), nullptr); // nothing to compare with: no regression
  EXPECT_FALSE(groupRegressed(same));
  EXPECT_FALSE(modelChanges(rows, same)[0].regressed);
  // Commit y at 1.6 ms: 60% above x's first run, but its p10 (1.52) is inside
  // x's band joined over both runs (0.95..1.575): noise.
  RunInfo y = run("3", "2026-11-23T10:00:00Z");
  rows.push_back({y, row("m", "default", true, 1.6, 1.25)});
  GroupHistory h = groupHistories(rows)[0];
  ASSERT_NE(h.previous(), nullptr);
  EXPECT_EQ(h.previous()->run.runId, "2"); // the previous commit's latest run
  std::vector<ModelChange> c = modelChanges(rows, h);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_DOUBLE_EQ(*c[0].before->latencyMs, 1.5);
  EXPECT_FALSE(c[0].regressed);
  BenchResult merged = mergeRepeats({rows[0].result, rows[1].result});
  EXPECT_DOUBLE_EQ(*merged.latencyMs, 1.5);
  EXPECT_DOUBLE_EQ(*merged.p10Ms, 0.95);
  EXPECT_DOUBLE_EQ(*merged.p90Ms, 1.575);
  // The group: y's geomean 1.25 vs the worst of x's runs (1.0): no regression;
  // vs the better one alone (2.0) it would be.
  EXPECT_FALSE(groupRegressed(h));
  EXPECT_TRUE(groupRegressed(h.runs[0], h.runs[2]));
  // At 2 ms (p10 1.9 > 1.575) y is a regression.
  rows.back().result = row("m", "default", true, 2.0, 0.5);
  h = groupHistories(rows)[0];
  EXPECT_TRUE(modelChanges(rows, h)[0].regressed);
  EXPECT_TRUE(groupRegressed(h));
}

TEST(BenchProgress, Durations) {
  EXPECT_EQ(Progress::formatDuration(0), "0m00s");
  EXPECT_EQ(Progress::formatDuration(65), "1m05s");
  EXPECT_EQ(Progress::formatDuration(3725), "1h02m");
}
