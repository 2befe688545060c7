#include "tc/IR/Types.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(Types, DTypeNamesRoundTrip) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32,
                  DType::I8, DType::U8, DType::Bool}) {
    auto parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
    EXPECT_EQ(dtypeFromOnnx(dtypeToOnnx(t)), t);
  }
  EXPECT_FALSE(parseDType("f31").has_value());
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
}

TEST(Types, ShapeSpelling) {
  TensorType t{DType::F32, {Dim::sym("N"), Dim::fixed(3), Dim::unknown()}};
  EXPECT_EQ(t.str(), "f32[N,3,?]");
  EXPECT_FALSE(staticNumElements(t.shape).has_value());
  EXPECT_EQ(staticNumElements(makeShape({2, 3, 4})), 24);
  EXPECT_EQ(TensorType({DType::I64, {}}).str(), "i64[]");
}

TEST(Types, ByteSizeRejectsOverflow) {
  TensorType huge{DType::F64, makeShape({int64_t(1) << 40, int64_t(1) << 40})};
  EXPECT_FALSE(byteSize(huge).has_value());
  EXPECT_EQ(byteSize(TensorType{DType::F16, makeShape({3, 5})}), 30u);
}

TEST(Types, Compatibility) {
  TensorType declared{DType::F32, {Dim::sym("N"), Dim::fixed(4)}};
  EXPECT_TRUE(typeCompatible(declared, {DType::F32, {Dim::unknown(), Dim::fixed(4)}}));
  EXPECT_TRUE(typeCompatible(declared, declared));
  EXPECT_FALSE(typeCompatible(declared, {DType::F32, {Dim::sym("M"), Dim::fixed(4)}}));
  EXPECT_FALSE(typeCompatible(declared, {DType::F16, {Dim::sym("N"), Dim::fixed(4)}}));
}
