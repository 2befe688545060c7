// The amp pass rule (AmpRule.h): the relative max error, the bound with and
// without PyTorch's AMP error, the line that names both, and the worst of a
// model's outputs read back from test_data_set folders.
#include "tc/Bench/AmpRule.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace tc;
using namespace tc::bench;
namespace fs = std::filesystem;

namespace {
HostTensor f32(std::vector<double> values) {
  HostTensor t(DType::F32, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t.setDouble(int64_t(i), values[i]);
  return t;
}
} // namespace

TEST(BenchAmpRule, RelativeToTheLargestReference) {
  // Elementwise the 0.01 -> 0.03 element is 200% off; relative to max|ref|
  // (2) it is 1%: logits near 0 do not decide.
  EXPECT_NEAR(relativeMaxError(f32({0.03, -2.0, 1.0}), f32({0.01, -2.0, 1.0})), 0.01, 1e-7);
  EXPECT_EQ(relativeMaxError(f32({1, 2}), f32({1, 2})), 0.0);
  EXPECT_TRUE(std::isinf(relativeMaxError(f32({NAN, 2}), f32({1, 2}))));
  EXPECT_TRUE(std::isinf(relativeMaxError(f32({1, 2, 3}), f32({1, 2}))));
  EXPECT_TRUE(std::isfinite(relativeMaxError(f32({1e-3}), f32({0}))));
}

TEST(BenchAmpRule, BoundIsTheFloorOrOneAndAHalfTorch) {
  EXPECT_DOUBLE_EQ(ampBound(2e-2, std::nullopt), 2e-2);
  EXPECT_DOUBLE_EQ(ampBound(2e-2, 1e-3), 2e-2);
  EXPECT_DOUBLE_EQ(ampBound(2e-2, 3e-2), 4.5e-2);
  EXPECT_EQ(describeAmpCheck(2.4e-2, 4.5e-2, 3e-2),
            "err 2.4e-02 <= 4.5e-02 (1.5x torch amp 3.0e-02)");
  EXPECT_EQ(describeAmpCheck(7.2e-2, 2e-2, std::nullopt), "err 7.2e-02 > 2.0e-02");
}

TEST(BenchAmpRule, WorstOutputOfAFolder) {
  fs::path d = fs::temp_directory_path() / ("tc-amp-rule-" + std::to_string(getpid()));
  fs::create_directories(d / "ref");
  fs::create_directories(d / "got");
  writeTensorProto((d / "ref" / "output_0.pb").string(), f32({1, 2}), "a");
  writeTensorProto((d / "ref" / "output_1.pb").string(), f32({10, 0}), "b");
  writeTensorProto((d / "got" / "output_0.pb").string(), f32({1, 2.02}), "a");
  EXPECT_THROW(worstRelativeError((d / "got").string(), (d / "ref").string()), Error);
  writeTensorProto((d / "got" / "output_1.pb").string(), f32({10, 0.5}), "b");
  EXPECT_NEAR(worstRelativeError((d / "got").string(), (d / "ref").string()), 0.05, 1e-7);
  fs::remove_all(d);
}
