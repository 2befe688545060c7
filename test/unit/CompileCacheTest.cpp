#include "tc/Support/CompileCache.h"
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

using namespace tc;
namespace fs = std::filesystem;

namespace {

// A cache folder of its own, with TC_CACHE_DIR / TC_CACHE_MAX_MB set for
// the test and put back after it.
class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tc-cache-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    setenv("TC_CACHE_DIR", dir_.c_str(), 1);
    unsetenv("TC_CACHE_MAX_MB");
  }
  void TearDown() override {
    fs::remove_all(dir_);
    unsetenv("TC_CACHE_DIR");
    unsetenv("TC_CACHE_MAX_MB");
  }
  // The bytes for `source` and whether they came from the cache; a miss
  // "compiles" them as 600 KB of the source's first letter.
  std::pair<std::string, CacheUse> get(const std::string &source) {
    CacheUse use;
    std::string bytes = cachedCompile(
        "test-compiler 1", source, [&] { return std::string(600 << 10, source[0]); }, &use);
    return {bytes, use};
  }
  fs::path dir_;
};

} // namespace

TEST_F(CompileCacheTest, MissThenHitSameBytes) {
  auto [first, use1] = get("a kernel");
  EXPECT_EQ(use1, CacheUse::Stored);
  auto [second, use2] = get("a kernel");
  EXPECT_EQ(use2, CacheUse::Hit);
  EXPECT_EQ(first, second);
  // Another compiler (version, options) with the same source is another entry.
  CacheUse use;
  cachedCompile("test-compiler 2", "a kernel", [] { return std::string("x"); }, &use);
  EXPECT_EQ(use, CacheUse::Stored);
}

TEST_F(CompileCacheTest, CompileFailureStoresNothing) {
  EXPECT_THROW(cachedCompile("c", "bad", []() -> std::string { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(get("bad").second, CacheUse::Stored);
}

TEST_F(CompileCacheTest, OffCompilesEveryTime) {
  setenv("TC_CACHE_DIR", "off", 1);
  EXPECT_EQ(compileCacheDir(), "");
  EXPECT_EQ(get("k").second, CacheUse::Off);
  EXPECT_EQ(get("k").second, CacheUse::Off);
  EXPECT_FALSE(fs::exists(dir_));
}

// Past the limit the least recently used entries go: a hit keeps an old
// entry (a), the ones not read since (b, c) go first.
TEST_F(CompileCacheTest, LeastRecentlyUsedGoFirst) {
  setenv("TC_CACHE_MAX_MB", "2", 1);
  get("a"), get("b"), get("c"); // 1.8 MB
  EXPECT_EQ(get("a").second, CacheUse::Hit);
  get("d"); // 2.4 MB: trimmed to 1.5 MB
  EXPECT_EQ(get("a").second, CacheUse::Hit);
  EXPECT_EQ(get("d").second, CacheUse::Hit);
  EXPECT_EQ(get("b").second, CacheUse::Stored);
}
