// Files that are whole or absent: written under a temporary name beside the
// destination and renamed over it, so a failed or killed write never leaves a
// half-written file where a good one was (checkpoints, exported models).
#pragma once
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
};

// `bytes` as the whole of `path`, atomically.
void writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace tc
