#include "tc/Runtime/Ranks.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

namespace {

HostTensor scalar(double v) {
  HostTensor t(DType::F32, {});
  t.setDouble(0, v);
  return t;
}

std::string errorOf(int n, const std::function<void(int)> &fn) {
  try {
    runRanks(n, fn);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Ranks, EveryRankSeesEveryContributionInRankOrder) {
  std::vector<double> seen(4 * 4, -1);
  EXPECT_EQ(errorOf(4,
                    [&](int r) {
                      EXPECT_EQ(currentRank().rank, r);
                      for (int round = 0; round < 3; ++round) { // the group is reused
                        auto all = currentRank().group->exchange(r, scalar(10 * round + r), "x");
                        for (int k = 0; k < 4; ++k)
                          seen[size_t(4 * r + k)] = (*all)[size_t(k)].getDouble(0) - 10 * round;
                      }
                    }),
            "");
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(seen[size_t(4 * r + k)], k);
  EXPECT_EQ(currentRank().group, nullptr); // no group outside runRanks
}

// A rank that fails, or ends, while the others wait at a collective stops
// them with an error: never a hang. The cause is what runRanks reports.
TEST(Ranks, AFailedOrFinishedRankStopsTheWaitingOnes) {
  std::string e = errorOf(3, [](int r) {
    if (r == 2)
      fail("rank two broke");
    currentRank().group->exchange(r, scalar(r), "AllReduce of %y");
  });
  EXPECT_EQ(e, "rank two broke");
  e = errorOf(2, [](int r) {
    if (r == 0)
      currentRank().group->exchange(r, scalar(r), "AllReduce of %y");
  });
  EXPECT_NE(e.find("a rank finished without reaching it"), std::string::npos) << e;
}

TEST(Ranks, RanksAtDifferentCollectivesAreAnError) {
  std::string e = errorOf(2, [](int r) {
    currentRank().group->exchange(r, scalar(r), r ? "AllGather of %b" : "AllReduce of %a");
  });
  EXPECT_NE(e.find("the ranks reached different collectives"), std::string::npos) << e;
}
