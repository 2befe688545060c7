// Read-only file contents: mmapped for regular files, an aligned heap copy
// for stdin and pipes. Data is at least 64-byte aligned either way.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tc {

class MemoryBuffer {
public:
  virtual ~MemoryBuffer() = default;
  const char *data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view str() const { return {data_, size_}; }
  const std::string &name() const { return name_; } // file name, "<stdin>" for -

  // Reads a file, or stdin for "-". Throws tc::Error naming the file.
  static std::shared_ptr<const MemoryBuffer> open(const std::string &path);
  static std::shared_ptr<const MemoryBuffer> copy(std::string_view bytes, std::string name);
  // `size` bytes that `fill` writes once (aligned like copy's), then read-only.
  static std::shared_ptr<const MemoryBuffer> build(size_t size, std::string name,
                                                   const std::function<void(char *)> &fill);
  // Bytes [offset, offset + size) of `parent`, sharing its storage (and
  // keeping it alive); throws tc::Error when the range is outside it.
  static std::shared_ptr<const MemoryBuffer> slice(std::shared_ptr<const MemoryBuffer> parent,
                                                   size_t offset, size_t size, std::string name);

protected:
  const char *data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
};

} // namespace tc
