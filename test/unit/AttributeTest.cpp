#include "tc/IR/Attribute.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace tc;

TEST(Attribute, TextRoundTripIsExact) {
  std::vector<Attribute> attrs = {
      Attribute(int64_t(-7)),
      Attribute(0.1),
      Attribute(1e-5),
      Attribute(double(0.2f)), // an ONNX float attribute widened to double
      Attribute(std::string("SAME \"UPPER\"\n")),
      Attribute(std::vector<int64_t>{1, -2, 3}),
      Attribute(std::vector<double>{0.5, -0.0, 1e300}),
      Attribute(std::vector<std::string>{"a", ""}),
      Attribute(DType::BF16),
      Attribute(std::vector<int64_t>{}),
  };
  for (const Attribute &a : attrs) {
    Attribute b = parseAttribute(a.str(), a.kind());
    EXPECT_EQ(a, b) << a.str();
    EXPECT_EQ(a.str(), b.str());
  }
}

TEST(Attribute, FloatsAlwaysLookLikeFloats) {
  EXPECT_EQ(formatDouble(1.0), "1.0");
  EXPECT_EQ(formatDouble(-3.0), "-3.0");
  EXPECT_EQ(formatDouble(INFINITY), "inf");
  EXPECT_TRUE(std::isnan(parseAttribute("nan", AttrKind::Float).f()));
}

TEST(Attribute, BadTextIsAnError) {
  EXPECT_THROW(parseAttribute("[1, 2", AttrKind::Ints), Error);
  EXPECT_THROW(parseAttribute("1.5", AttrKind::Int), Error);
  EXPECT_THROW(parseAttribute("q32", AttrKind::Type), Error);
  EXPECT_THROW(parseAttribute("99999999999999999999", AttrKind::Int), Error);
  EXPECT_THROW(parseAttribute("\"abc", AttrKind::String), Error);
}
