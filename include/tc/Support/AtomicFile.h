// Files that are whole or absent: written under a temporary name beside the
// destination and renamed over it, so a failed or killed write never leaves a
// half-written file where a good one was (checkpoints, exported models, every
// tool's -o). A symlink's target is replaced, the link kept; a destination
// that is not a regular file (/dev/null, a FIFO) is written in place.
#pragma once
#include "tc/Support/ByteSink.h"
#include <functional>
#include <string>
#include <string_view>

namespace tc {

// Created by the constructor (a new temporary file beside `path`), filled by
// write(), put in place by commit() (fsync'd unless `sync` is false, as for
// a cache entry that may be lost, then renamed over `path`).
// Destroyed uncommitted, it removes the temporary file. Every failure is a
// tc::Error naming `path`.
class AtomicFile {
public:
  explicit AtomicFile(const std::string &path, bool sync = true);
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();

  void write(const void *data, size_t n);
  void commit();

private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  bool sync_ = true;
  bool inPlace_ = false; // a device or FIFO: written directly, nothing renamed
  int mode_ = -1;        // the replaced file's permission bits, if it existed
};

// `bytes` as the whole of `path`, atomically (fsync'd when `sync`).
void writeFileAtomically(const std::string &path, std::string_view bytes, bool sync = true);
// The same, the bytes handed over piece by piece by `produce` (a large
// output is not assembled in memory first); if it throws, `path` is left
// as it was.
void writeFileAtomically(const std::string &path,
                         const std::function<void(const ByteSink &)> &produce, bool sync = true);

} // namespace tc
