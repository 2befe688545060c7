// The dashboard's numbers from known rows: geomean, pass rate, mean compile
// time, compression ratio, regression flagging.
#include "BenchRows.h"
#include "tc/Bench/Aggregate.h"
#include "tc/Bench/Progress.h"
#include <cmath>
#include <gtest/gtest.h>

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

TEST(BenchProgress, Durations) {
  EXPECT_EQ(Progress::formatDuration(0), "0m00s");
  EXPECT_EQ(Progress::formatDuration(65), "1m05s");
  EXPECT_EQ(Progress::formatDuration(3725), "1h02m");
}
