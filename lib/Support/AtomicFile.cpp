#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace tc {

AtomicFile::AtomicFile(const std::string &path, bool sync) : path_(path), sync_(sync) {
  // Renaming over `path` is right for a regular file only: a device, FIFO or
  // socket (`-o /dev/null`) would be replaced by a regular file (as root, the
  // system's /dev/null), so those are written in place -- a stream has no old
  // contents to keep. A symlink's target is what gets replaced, not the link.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      fail(path, ": is a directory");
    if (!S_ISREG(st.st_mode)) {
      inPlace_ = true;
      fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd_ < 0)
        fail(path, ": cannot open for writing: ", std::strerror(errno));
      return;
    }
    std::error_code ec;
    std::filesystem::path target = std::filesystem::canonical(path, ec);
    if (!ec)
      path_ = target.string();
    mode_ = st.st_mode & 07777; // the replacement keeps the file's permissions
  }
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt == 100))
      fail(path, ": cannot create a temporary file beside it: ", std::strerror(errno));
  }
  if (mode_ >= 0)
    (void)::fchmod(fd_, mode_t(mode_));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_ && !inPlace_)
    ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      fail(path_, ": write failed: ", std::strerror(w < 0 ? errno : EIO));
    p += w, n -= size_t(w);
  }
}

void AtomicFile::commit() {
  if (sync_ && !inPlace_ && ::fsync(fd_) != 0)
    fail(path_, ": fsync failed: ", std::strerror(errno));
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    fail(path_, ": write failed: ", std::strerror(errno));
  if (inPlace_) {
    committed_ = true;
    return;
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, ": cannot replace it: ", std::strerror(errno));
  committed_ = true;
  if (!sync_)
    return;
  // Make the rename itself durable (best effort: the file is in place).
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void writeFileAtomically(const std::string &path, std::string_view bytes, bool sync) {
  writeFileAtomically(path, [&](const ByteSink &sink) { sink(bytes); }, sync);
}

void writeFileAtomically(const std::string &path,
                         const std::function<void(const ByteSink &)> &produce, bool sync) {
  AtomicFile f(path, sync);
  produce([&](std::string_view b) { f.write(b.data(), b.size()); });
  f.commit();
}

} // namespace tc
