#include "tc/Support/Float16.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace tc;

// Every half value converts to float and back to the same bits (nan: stays nan).
TEST(Float16, AllHalfValuesRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "half bits " << h;
  }
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.0f / 4096)), 1.0f); // below half an ulp
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                      // overflows to inf
  EXPECT_EQ(floatToHalf(1e-8f), 0);                              // underflows to zero
  EXPECT_EQ(bf16ToFloat(floatToBf16(3.0f)), 3.0f);
  EXPECT_EQ(floatToBf16(1.0f + 1.0f / 256), floatToBf16(1.0f)); // tie to even
}
