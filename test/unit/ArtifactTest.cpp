#include "tc/CodeGen/Artifact.h"
#include "tc/Support/Error.h"
#include <gtest/gtest.h>

using namespace tc;

namespace {

Artifact sample() {
  Artifact a;
  a.file = "x.tcx";
  a.built.tc = "0.1.0";
  a.built.llvm = "19.1.7";
  a.target = "cpu";
  a.cpu = "x86-64-v3";
  a.cpuFeatures = {"+avx2", "+fma"};
  a.setSection(kSectionModule, std::string(100, 'm'));
  a.setSection(kSectionObject, std::string(3, '\0'));
  return a;
}

std::string readError(const std::string &bytes, ArtifactCheck check = ArtifactCheck::All) {
  try {
    readArtifact(MemoryBuffer::copy(bytes, "x.tcx"), check);
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
  EXPECT_EQ(b.built.tc, "0.1.0");
  EXPECT_EQ(b.built.llvm, "19.1.7");
  EXPECT_TRUE(b.built.nvrtc.empty());
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

// The streamed writer hands over the table and each section (plus padding)
// as pieces; a section set from a buffer is stored without a copy.
TEST(Artifact, StreamedWriteMatchesTheStringAndSharesBuffers) {
  Artifact a = sample();
  auto shared = MemoryBuffer::copy(std::string(70, 'w'), "w");
  a.setSection("weights", shared);
  EXPECT_EQ(&a.require("weights"), shared.get());
  std::string streamed;
  size_t pieces = 0;
  size_t n = writeArtifact(a, [&](std::string_view b) {
    streamed += b;
    ++pieces;
  });
  EXPECT_EQ(streamed, writeArtifact(a));
  EXPECT_EQ(n, streamed.size());
  EXPECT_GT(pieces, 4u);
  Artifact b = readArtifact(MemoryBuffer::copy(streamed, "x.tcx"));
  EXPECT_EQ(b.require("weights").str(), std::string(70, 'w'));
  EXPECT_EQ(b.require(kSectionModule).str(), std::string(100, 'm'));
}

TEST(Artifact, EveryTruncationIsAnErrorNotACrash) {
  std::string bytes = writeArtifact(sample());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(readError(bytes.substr(0, n)).empty()) << "prefix of " << n << " bytes";
}

// Without checksums (--no-verify), a corrupt table is still caught by its
// bounds and names; with them, by the table's checksum first.
TEST(Artifact, CorruptTablesAreRejected) {
  constexpr size_t kEntry = 48;
  std::string bytes = writeArtifact(sample());
  std::string twice = bytes;
  twice.replace(16 + kEntry, 24, std::string("header") + std::string(18, '\0'));
  EXPECT_NE(readError(twice, ArtifactCheck::None).find("appears twice"), std::string::npos);
  EXPECT_NE(readError(twice).find("the section table is damaged (checksum "), std::string::npos);
  std::string huge = bytes;
  huge.replace(16 + 24, 8, std::string(8, '\xff')); // offset of section 0
  EXPECT_NE(readError(huge, ArtifactCheck::None).find("truncated artifact"), std::string::npos);
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

// A CNN's train step splits into 60-130 programs per arch (session 47: a 64-section
// bound refused resnet50's and efficientnet_b0's steps at load after writing them).
TEST(Artifact, FatArtifactsOfManyProgramsRoundTrip) {
  Artifact a = sample();
  a.target = "cuda";
  a.arches = {"sm_80", "sm_90"};
  for (const std::string &arch : a.arches)
    for (size_t k = 0; k < 300; ++k)
      a.setSection(cubinSection(arch, k), arch + " program " + std::to_string(k));
  Artifact b = readArtifact(MemoryBuffer::copy(writeArtifact(a), "x.tcx"));
  EXPECT_EQ(b.cubins("sm_90").size(), 300u);
  EXPECT_EQ(b.require(cubinSection("sm_80", 299)).str(), "sm_80 program 299");
  // Past the reader's bound the writer refuses, rather than write what no tool loads.
  for (size_t k = 300; k < 17000; ++k)
    a.setSection(cubinSection("sm_90", k), "p");
  try {
    writeArtifact(a);
    ADD_FAILURE() << "an artifact of 17300 sections was written";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("sections; at most"), std::string::npos) << e.what();
  }
}

// Every single-byte change of a section's bytes is caught by its checksum
// (ArtifactCheck::All) before anything reads it; None verifies nothing.
TEST(Artifact, ChecksumsCatchEveryByteOfEverySection) {
  std::string bytes = writeArtifact(sample());
  auto file = MemoryBuffer::copy(bytes, "x.tcx");
  Artifact a = readArtifact(file);
  for (const char *name : {kSectionHeader, kSectionModule, kSectionObject}) {
    size_t off = size_t(a.require(name).data() - file->data());
    for (size_t i = 0; i < a.require(name).size(); ++i) {
      std::string d = bytes;
      d[off + i] = char(d[off + i] ^ 0x20);
      EXPECT_NE(readError(d).find("section '" + std::string(name) + "' is damaged (checksum "),
                std::string::npos)
          << name << " byte " << i;
    }
  }
  std::string d = bytes;
  d[d.find(std::string(100, 'm'))] = 'M';
  EXPECT_TRUE(readError(d, ArtifactCheck::None).empty());
}

// Every byte of the prologue and the table (checksum included) is covered.
TEST(Artifact, ChecksumCoversTheSectionTable) {
  std::string bytes = writeArtifact(sample());
  size_t tableEnd = 16 + 3 * 48 + 8;      // header, module, object
  for (size_t i = 8; i < tableEnd; ++i) { // past magic and version
    std::string d = bytes;
    d[i] = char(d[i] ^ 0x01);
    EXPECT_FALSE(readError(d).empty()) << "byte " << i;
  }
  EXPECT_NE(readError(bytes.substr(0, 16) + bytes.substr(16 + 48, 48) + bytes.substr(16, 48) +
                      bytes.substr(16 + 96))
                .find("the section table is damaged"),
            std::string::npos); // two entries swapped
}

TEST(Artifact, InfoListsBuildAndSections) {
  Artifact a = readArtifact(MemoryBuffer::copy(writeArtifact(sample()), "x.tcx"));
  std::string info = artifactInfo(a);
  EXPECT_NE(info.find("format version 3"), std::string::npos) << info;
  EXPECT_NE(info.find("built with llvm: 19.1.7"), std::string::npos) << info;
  EXPECT_NE(info.find("section module: 100 bytes, checksum "), std::string::npos) << info;
}

// Bytes no checksum covers are zero, and nothing follows the last section:
// damage there is caught too (ArtifactCheck::All only).
TEST(Artifact, PaddingAndTrailingBytesAreChecked) {
  std::string bytes = writeArtifact(sample());
  size_t pad = 16 + 3 * 48 + 8; // the first byte after the table: padding
  ASSERT_EQ(bytes[pad], '\0');
  std::string d = bytes;
  d[pad] = 'x';
  EXPECT_NE(readError(d).find("byte " + std::to_string(pad) + " outside every section is not 0"),
            std::string::npos);
  EXPECT_TRUE(readError(d, ArtifactCheck::None).empty());
  EXPECT_NE(readError(bytes + std::string(3, '\0')).find("3 bytes past its last section"),
            std::string::npos);
}
