#include "tc/Support/Hash64.h"
#include <gtest/gtest.h>
#include <string>

using namespace tc;

namespace {

std::string iota(size_t n) { // bytes 0, 1, 2, ... (mod 256)
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = char(i & 0xff);
  return s;
}

} // namespace

// The vectors: "", "a" and "abc" are XXH64's published ones; the rest were
// computed with test/CodeGen/Inputs/artifact_info.py's independent Python
// hash64, and cover each tail (32-byte stripes, 8, 4 and 1 bytes).
TEST(Hash64, KnownVectors) {
  EXPECT_EQ(hash64(""), 0xef46db3751d8e999ull);
  EXPECT_EQ(hash64("a"), 0xd24ec4f1a98c6e5bull);
  EXPECT_EQ(hash64("abc"), 0x44bc2cf5ad770999ull);
  EXPECT_EQ(hash64("", 2654435761u), 0xac75fda2929b17efull);
  EXPECT_EQ(hash64("tc artifact"), 0x6f1d4209cd53ad3full);
  EXPECT_EQ(hash64(iota(13)), 0x13d17c4c779723a8ull);
  EXPECT_EQ(hash64(iota(45)), 0x10fdd84d6409abdfull);
  EXPECT_EQ(hash64(iota(45), 2654435761u), 0x24d78f5c6ac00307ull);
  EXPECT_EQ(hash64(iota(1024) + "xyz"), 0xe146cb31b65bc21aull);
}

TEST(Hash64, EveryBitFlipChangesTheHash) {
  std::string s = iota(77);
  uint64_t h = hash64(s);
  for (size_t i = 0; i < s.size() * 8; ++i) {
    std::string t = s;
    t[i / 8] = char(t[i / 8] ^ (1 << (i % 8)));
    EXPECT_NE(hash64(t), h) << "bit " << i;
  }
  EXPECT_NE(hash64(s.substr(0, 76)), h);
}
