// The training pass rule (LossRule.h): the last step's relative distance,
// divergence (NaN, missing steps) never passes, amp's bound from PyTorch
// AMP's own distance, the line naming both, the stored losses.
#include "tc/Bench/LossRule.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace tc::bench;

TEST(BenchLossRule, LastStepDistance) {
  EXPECT_NEAR(lastLossDistance({2.0, 2.0, 1.001}, {2.0, 1.0, 1.0}), 1e-3, 1e-12); // last only
  EXPECT_EQ(lastLossDistance({1.0}, {1.0}), 0.0);
  EXPECT_TRUE(std::isinf(lastLossDistance({1.0}, {1.0, 1.0})));      // a step missing
  EXPECT_TRUE(std::isinf(lastLossDistance({}, {})));                 // nothing ran
  EXPECT_TRUE(std::isinf(lastLossDistance({NAN, 1.0}, {1.0, 1.0}))); // diverged, recovered
  EXPECT_TRUE(std::isinf(lastLossDistance({1.0, INFINITY}, {1.0, 1.0})));
}

TEST(BenchLossRule, Bounds) {
  EXPECT_EQ(lossBound(std::nullopt), kLossTolerance); // fp32
  EXPECT_EQ(lossBound(1e-5), kLossTolerance);         // amp: the floor
  EXPECT_NEAR(lossBound(1e-2), 4e-2, 1e-15);          // amp: 4x PyTorch AMP's own distance
  EXPECT_EQ(describeLossCheck(2e-6, 1e-3, std::nullopt, 20),
            "losses 2.0e-06 <= 1.0e-03 at step 20");
  EXPECT_EQ(describeLossCheck(5e-2, 4e-2, 1e-2, 6),
            "losses 5.0e-02 > 4.0e-02 at step 6 (4x torch amp 1.0e-02)");
  EXPECT_EQ(describeLossCheck(3e-3, 4e-2, 1e-2, 6, /*f64=*/true),
            "losses 3.0e-03 <= 4.0e-02 at step 6 (4x torch fp32 vs f64 1.0e-02)");
  EXPECT_EQ(describeLossCheck(NAN, 1e-3, std::nullopt, 3), "losses nan > 1.0e-03 at step 3");
  EXPECT_EQ(joinLosses({2.3223596, 2.5, 1e-8}), "2.32236,2.5,1e-08");
}

// PyTorch's own distance: its farthest finite row (eager 2e-4, torch.compile
// 7.5e-3 on resnet50 fp32: the bound follows torch.compile's).
TEST(BenchLossRule, TorchSpread) {
  std::vector<double> ref{2.0, 1.0}, eager{2.0, 1.0002}, compiled{2.0, 1.0075}, nan{NAN, 1.0};
  EXPECT_NEAR(*torchSpread({&eager, &compiled}, ref), 7.5e-3, 1e-12);
  EXPECT_NEAR(*torchSpread({&eager, &nan}, ref), 2e-4, 1e-12); // a diverged row is no spread
  EXPECT_FALSE(torchSpread({&nan}, ref).has_value());
  EXPECT_FALSE(torchSpread({}, ref).has_value());
}

// Where two AMP runs parted: the steps after which each one's loss scale
// fell (from 65536 before the first), as tc-run --train and GradScaler
// report the scale.
TEST(BenchLossRule, SkippedSteps) {
  EXPECT_EQ(skippedSteps({32768, 16384, 16384, 8192, 8192}), (std::vector<size_t>{1, 2, 4}));
  EXPECT_EQ(skippedSteps({65536, 65536, 131072, 65536}), (std::vector<size_t>{4}));
  EXPECT_TRUE(skippedSteps({}).empty());
  EXPECT_EQ(describeSkips({32768, 16384, 8192}, {32768, 32768, 32768}),
            "; steps skipped for overflow: tc 1,2,3, PyTorch 1");
  EXPECT_EQ(describeSkips({65536}, {65536}), "; steps skipped for overflow: tc none, PyTorch none");
  EXPECT_EQ(describeSkips({}, {32768}), "");
}
