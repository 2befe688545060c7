#include "tc/CodeGen/Artifact.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

namespace {

Artifact sample() {
  Artifact a;
  a.file = "x.tcx";
  a.toolchain = "tc test";
  a.target = "cpu";
  a.cpu = "x86-64-v3";
  a.cpuFeatures = {"+avx2", "+fma"};
  a.setSection(kSectionModule, std::string(100, 'm'));
  a.setSection(kSectionObject, std::string(3, '\0'));
  return a;
}

std::string readError(const std::string &bytes) {
  try {
    readArtifact(MemoryBuffer::copy(bytes, "x.tcx"));
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Artifact, RoundTripKeepsHeaderAndSectionsAligned) {
  std::string bytes = writeArtifact(sample());
  ASSERT_TRUE(isArtifact(bytes));
  Artifact b = readArtifact(MemoryBuffer::copy(bytes, "x.tcx"));
  EXPECT_EQ(b.toolchain, "tc test");
  EXPECT_EQ(b.target, "cpu");
  EXPECT_EQ(b.cpu, "x86-64-v3");
  EXPECT_EQ(b.cpuFeatures, (std::vector<std::string>{"+avx2", "+fma"}));
  EXPECT_EQ(b.require(kSectionModule).str(), std::string(100, 'm'));
  EXPECT_EQ(b.require(kSectionObject).size(), 3u);
  // Weights in the module section stay 64-byte aligned when the file is mmapped.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.require(kSectionModule).data()) % 64, 0u);
  EXPECT_EQ(b.section("nope"), nullptr);
  EXPECT_NE(readError(bytes.substr(0, bytes.size() - 1)).find("truncated artifact"),
            std::string::npos);
}

TEST(Artifact, EveryTruncationIsAnErrorNotACrash) {
  std::string bytes = writeArtifact(sample());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(readError(bytes.substr(0, n)).empty()) << "prefix of " << n << " bytes";
}

TEST(Artifact, CorruptTablesAreRejected) {
  std::string bytes = writeArtifact(sample());
  std::string twice = bytes;
  twice.replace(16 + 40, 24, std::string("header") + std::string(18, '\0'));
  EXPECT_NE(readError(twice).find("appears twice"), std::string::npos);
  std::string huge = bytes;
  huge.replace(16 + 24, 8, std::string(8, '\xff')); // offset of section 0
  EXPECT_NE(readError(huge).find("truncated artifact"), std::string::npos);
  EXPECT_NE(readError("TCXB").find("not a tc artifact"), std::string::npos);
}

TEST(Artifact, CudaArchesRoundTripWithACubinEach) {
  Artifact a = sample();
  a.target = "cuda";
  a.cpu.clear();
  a.cpuFeatures.clear();
  a.arches = {"sm_80", "sm_90"};
  for (const std::string &arch : a.arches)
    a.setSection(cubinSection(arch), "cubin for " + arch);
  Artifact b = readArtifact(MemoryBuffer::copy(writeArtifact(a), "x.tcx"));
  EXPECT_EQ(b.target, "cuda");
  EXPECT_EQ(b.arches, (std::vector<std::string>{"sm_80", "sm_90"}));
  EXPECT_EQ(b.require("cubin.sm_90").str(), "cubin for sm_90");
  // A CPU artifact's header has no arch line.
  EXPECT_TRUE(readArtifact(MemoryBuffer::copy(writeArtifact(sample()), "x.tcx")).arches.empty());
}
