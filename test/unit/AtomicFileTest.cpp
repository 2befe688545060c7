// AtomicFile's destinations that are not plain regular files: a symlink (its
// target is replaced, the link kept), a FIFO or device (written in place:
// renaming over /dev/null as root would replace the system's), a directory
// (an error), and an existing file's permissions (kept).
#include "tc/Support/AtomicFile.h"
#include "ErrorOf.h"
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tc;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class AtomicFileDest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("tc-atomicfile-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // Every name in the directory: no temporary file may be left behind.
  size_t entries() const { return size_t(std::distance(fs::directory_iterator(dir), {})); }
  fs::path dir;
};

TEST_F(AtomicFileDest, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  writeFileAtomically((dir / "target.bin").string(), "old");
  fs::create_symlink("target.bin", dir / "link.bin");
  writeFileAtomically((dir / "link.bin").string(), "new contents", /*sync=*/false);
  EXPECT_TRUE(fs::is_symlink(dir / "link.bin"));
  EXPECT_EQ(readAll(dir / "target.bin"), "new contents");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(AtomicFileDest, FifoIsWrittenInPlace) {
  fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader first (non-blocking: the open returns at once), so the writer's
  // open does not wait; the bytes sit in the pipe until read below.
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  writeFileAtomically(fifo.string(), "through the pipe");
  char buf[64] = {};
  ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  EXPECT_EQ(std::string(buf, size_t(n > 0 ? n : 0)), "through the pipe");
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileDest, LinkToDevNullLeavesBothAlone) {
  fs::create_symlink("/dev/null", dir / "sink");
  writeFileAtomically((dir / "sink").string(), "discarded");
  EXPECT_TRUE(fs::is_symlink(dir / "sink"));
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileDest, DirectoryIsAnError) {
  fs::create_directory(dir / "out");
  EXPECT_EQ(errorOf([&] { writeFileAtomically((dir / "out").string(), "x"); }),
            (dir / "out").string() + ": is a directory");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileDest, ReplacementKeepsPermissions) {
  fs::path p = dir / "model.tcx";
  writeFileAtomically(p.string(), "v1");
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  writeFileAtomically(p.string(), "v2");
  EXPECT_EQ(readAll(p), "v2");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

} // namespace

// Written piece by piece: the pieces in order; a producer that throws
// midway leaves the old file whole and no temporary file behind.
TEST_F(AtomicFileDest, ProducedPiecesOrNothing) {
  std::string p = (dir / "out.bin").string();
  writeFileAtomically(p, "old");
  writeFileAtomically(
      p,
      [](const ByteSink &sink) {
        sink("ab");
        sink("");
        sink("cd");
      },
      /*sync=*/false);
  EXPECT_EQ(readAll(p), "abcd");
  EXPECT_THROW(writeFileAtomically(p,
                                   [](const ByteSink &sink) {
                                     sink("partial");
                                     throw std::runtime_error("stop");
                                   }),
               std::runtime_error);
  EXPECT_EQ(readAll(p), "abcd");
  EXPECT_EQ(entries(), 1u);
}
