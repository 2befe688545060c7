// Measured algorithm choice without a GPU (LibraryTuning.h): the artifact
// section and the cache file round trip, the environment key, a mismatched
// environment's entries never used, malformed input rejected, and the
// winner picked by a stubbed timing function; the bench's TF32 rule.
#include "tc/CodeGen/LibraryTuning.h"
#include "tc/Bench/Tf32Rule.h"
#include "tc/Support/Error.h"
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace tc;

namespace {
std::string tempFile(const std::string &text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tc-tuning-" + std::to_string(::getpid()) + ".txt"))
                         .string();
  std::ofstream(path) << text;
  return path;
}
} // namespace

TEST(LibraryTuning, EnvironmentKeyNamesEverythingAChoiceDependsOn) {
  TuningEnv e{"NVIDIA H100 80GB HBM3", 90, 91900, 130100, 13000};
  EXPECT_EQ(e.key(), "NVIDIA H100 80GB HBM3|sm_90|cudnn 91900|cublaslt 130100|driver 13000");
  TuningEnv other = e;
  other.cublasLt = 130200;
  EXPECT_NE(e.key(), other.key());
}

TEST(LibraryTuning, SectionRoundTrip) {
  LibraryTuning t;
  t.tf32 = Tf32::All;
  t.env = "gpu|sm_90|cudnn 1|cublaslt 2|driver 3";
  t.calls["cublaslt gemm f16 m=8 n=8 k=8 batch=1"] = {"heuristic=3", 12.5};
  t.calls["cudnn conv f16 nhwc x=1x8x4x4 [bias,relu]"] = {"graph-fused cfg=A:1 engine=12", 40};
  LibraryTuning back = readTuningSection(writeTuningSection(t), "m.tcx");
  EXPECT_EQ(back.tf32, Tf32::All);
  EXPECT_EQ(back.env, t.env);
  ASSERT_EQ(back.calls.size(), 2u);
  EXPECT_EQ(back.calls["cublaslt gemm f16 m=8 n=8 k=8 batch=1"].choice, "heuristic=3");
  EXPECT_DOUBLE_EQ(back.calls["cudnn conv f16 nhwc x=1x8x4x4 [bias,relu]"].us, 40);
  // Untuned: the switch alone.
  EXPECT_EQ(writeTuningSection(LibraryTuning{}), "allow-tf32 none\n");
  EXPECT_THROW(readTuningSection("allow-tf32 maybe\n", "m.tcx"), Error);
  EXPECT_THROW(readTuningSection("call k\tc\n", "m.tcx"), Error);
}

TEST(LibraryTuning, Tf32Names) {
  EXPECT_EQ(parseTf32("conv"), Tf32::Conv);
  EXPECT_EQ(parseTf32("all"), Tf32::All);
  EXPECT_EQ(parseTf32("none"), Tf32::None);
  EXPECT_FALSE(parseTf32("on"));
  EXPECT_STREQ(tf32Name(Tf32::Conv), "conv");
}

TEST(LibraryTuning, CacheRoundTripKeepsOtherEnvironmentsButNeverUsesThem) {
  TuningCache c;
  c.put("here", "gemm A", {"heuristic=1", 3});
  c.put("there", "gemm A", {"heuristic=5", 1});
  c.put("here", "gemm A", {"heuristic=2", 2}); // replaces
  std::string path = tempFile(writeTuningCache(c));
  TuningCache back = readTuningCache(path);
  std::filesystem::remove(path);
  ASSERT_EQ(back.entries.size(), 2u);
  ASSERT_TRUE(back.find("here", "gemm A"));
  EXPECT_EQ(back.find("here", "gemm A")->choice, "heuristic=2");
  EXPECT_FALSE(back.find("elsewhere", "gemm A"));
  EXPECT_EQ(back.othersThan("here"), 1u);
  back.erase("here", "gemm A");
  EXPECT_FALSE(back.find("here", "gemm A"));
  // A missing file is an empty cache (written after tuning).
  EXPECT_TRUE(readTuningCache("/nonexistent/tc-cache.txt").entries.empty());
}

TEST(LibraryTuning, MalformedCacheIsOneError) {
  auto message = [](const std::string &text) {
    std::string path = tempFile(text);
    std::string what;
    try {
      readTuningCache(path);
    } catch (const Error &e) {
      what = e.what();
    }
    std::filesystem::remove(path);
    // "tuning cache PATH:LINE: what": the part after the line number.
    size_t at = what.find(": ");
    return at == std::string::npos ? what : what.substr(at + 2);
  };
  EXPECT_EQ(message("not a cache\n"), "expected 'tc-tuning-cache 1' (not a tc tuning cache)");
  EXPECT_EQ(message("tc-tuning-cache 1\nenv\tcall\tchoice\n"),
            "expected 4 tab-separated fields (env, call, choice, us), got 3");
  EXPECT_EQ(message("tc-tuning-cache 1\nenv\tcall\tchoice\tfast\n"),
            "an empty field or a time that is not a number >= 0");
  EXPECT_EQ(message("tc-tuning-cache 1\n# comment\n\nenv\tcall\tchoice\t1.5\n"), "");
}

TEST(LibraryTuning, PickFastestSkipsFailedCandidates) {
  std::vector<double> ms = {3.0, -1.0, 1.5, 1.5, 2.0};
  std::vector<double> seen;
  std::optional<size_t> best = pickFastest(ms.size(), [&](size_t i) { return ms[i]; }, &seen);
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, 2u); // the tie keeps the heuristic's earlier one
  EXPECT_EQ(seen, ms);
  EXPECT_FALSE(pickFastest(2, [](size_t) { return -1.0; }));
  EXPECT_FALSE(pickFastest(0, [](size_t) { return 1.0; }));
}

TEST(LibraryTuning, StatsLine) {
  TuningSummary s;
  s.requested = true;
  s.shapes = 3;
  s.hits = 1;
  s.timingMs = 12.5;
  EXPECT_EQ(s.statsLine(), "tuning: 3 shapes, 1 cache hits, 12.5 ms timing");
  s.kernels = 2;
  s.kernelHits = 1;
  EXPECT_EQ(s.statsLine(), "tuning: 3 shapes, 1 cache hits, 12.5 ms timing; 2 kernels with "
                           "variants, 1 cache hits");
  EXPECT_TRUE(isKernelTuningKey("kernel reduction:00ff [2,7]"));
  EXPECT_FALSE(isKernelTuningKey("cublaslt gemm f16 m=1"));
  s.kept = "no GPU";
  EXPECT_EQ(s.statsLine(), "tuning: no GPU; heuristic algorithm choice kept");
}

// The fp32 bench rule follows the artifact's TF32 switch and what its
// groups call (Tf32Rule.h): a cuDNN group under "conv", cuBLASLt only under
// "all", nothing without the section.
TEST(LibraryTuning, Tf32RuleFollowsTheSwitchAndTheLibraries) {
  auto artifact = [](const char *tf32, const char *table) {
    Artifact a;
    if (tf32)
      a.setSection(kSectionTuning, std::string("allow-tf32 ") + tf32 + "\n");
    a.setSection(kSectionKernels, table);
    return a;
  };
  const char *conv = "fused_conv_0 - - pointwise 0 1 cudnn\nfused_add_1 tc_fused_add_1 pointwise "
                     "pointwise 256 4\n";
  const char *gemm = "fused_matmul_0 - - pointwise 0 1 cublaslt\n";
  EXPECT_TRUE(bench::heldToTf32Rule(artifact("conv", conv)));
  EXPECT_TRUE(bench::heldToTf32Rule(artifact("all", conv)));
  EXPECT_FALSE(bench::heldToTf32Rule(artifact("none", conv)));
  EXPECT_FALSE(bench::heldToTf32Rule(artifact(nullptr, conv)));
  EXPECT_FALSE(bench::heldToTf32Rule(artifact("conv", gemm)));
  EXPECT_TRUE(bench::heldToTf32Rule(artifact("all", gemm)));
  EXPECT_EQ(bench::describeTf32Check(1.2e-3, bench::kTf32ErrFloor),
            "err 1.2e-03 <= 5.0e-03 (tf32)");
  EXPECT_EQ(bench::describeTf32Check(7e-3, bench::kTf32ErrFloor), "err 7.0e-03 > 5.0e-03 (tf32)");
}
