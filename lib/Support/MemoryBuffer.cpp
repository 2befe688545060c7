#include "tc/Support/MemoryBuffer.h"
#include "tc/Support/Error.h"
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tc {

namespace {

class HeapBuffer : public MemoryBuffer {
public:
  // 64-byte alignment so constants of a .tcbc read from a pipe are as
  // aligned as those of an mmapped file. A large buffer (a train step's
  // weights) is mapped on its own and asks for huge pages: filled once,
  // its 4 KB page faults were most of tc-codegen's time writing an artifact.
  HeapBuffer(size_t size, std::string name) {
    mapped_ = size + 1 >= kHugeFrom;
    if (mapped_) {
      void *p =
          ::mmap(nullptr, size + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        throw std::bad_alloc();
      (void)::madvise(p, size + 1, MADV_HUGEPAGE); // a hint: without it, plain pages
      storage_ = static_cast<char *>(p);
    } else {
      storage_ = static_cast<char *>(::operator new(size + 1, std::align_val_t(64)));
    }
    storage_[size] = 0;
    data_ = storage_;
    size_ = size;
    name_ = std::move(name);
  }
  ~HeapBuffer() override {
    if (mapped_)
      ::munmap(storage_, size_ + 1);
    else
      ::operator delete(storage_, std::align_val_t(64));
  }
  char *storage() { return storage_; }

private:
  static constexpr size_t kHugeFrom = size_t(32) << 20;
  char *storage_;
  bool mapped_ = false;
};

class SliceBuffer : public MemoryBuffer {
public:
  SliceBuffer(std::shared_ptr<const MemoryBuffer> parent, size_t offset, size_t size,
              std::string name)
      : parent_(std::move(parent)) {
    data_ = parent_->data() + offset;
    size_ = size;
    name_ = std::move(name);
  }

private:
  std::shared_ptr<const MemoryBuffer> parent_;
};

class MappedBuffer : public MemoryBuffer {
public:
  MappedBuffer(void *addr, size_t len, std::string name) : addr_(addr) {
    data_ = static_cast<const char *>(addr);
    size_ = len;
    name_ = std::move(name);
  }
  ~MappedBuffer() override { ::munmap(addr_, size_); }

private:
  void *addr_;
};

std::string readAll(int fd, const std::string &name) {
  std::string s;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0)
      return s;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      fail(name, ": read failed: ", std::strerror(errno));
    }
    s.append(buf, size_t(n));
  }
}

} // namespace

std::shared_ptr<const MemoryBuffer> MemoryBuffer::copy(std::string_view bytes, std::string name) {
  return build(bytes.size(), std::move(name), [&](char *out) {
    if (!bytes.empty())
      std::memcpy(out, bytes.data(), bytes.size());
  });
}

std::shared_ptr<const MemoryBuffer> MemoryBuffer::build(size_t size, std::string name,
                                                        const std::function<void(char *)> &fill) {
  auto b = std::make_shared<HeapBuffer>(size, std::move(name));
  fill(b->storage());
  return b;
}

std::shared_ptr<const MemoryBuffer> MemoryBuffer::open(const std::string &path) {
  if (path == "-")
    return copy(readAll(0, "<stdin>"), "<stdin>");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, ": cannot open: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(path, ": cannot stat: ", std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    fail(path, ": is a directory");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED)
      fail(path, ": cannot map: ", std::strerror(errno));
    return std::make_shared<MappedBuffer>(p, size_t(st.st_size), path);
  }
  std::string s = readAll(fd, path);
  ::close(fd);
  return copy(s, path);
}

std::shared_ptr<const MemoryBuffer> MemoryBuffer::slice(std::shared_ptr<const MemoryBuffer> parent,
                                                        size_t offset, size_t size,
                                                        std::string name) {
  if (offset > parent->size() || size > parent->size() - offset)
    fail(parent->name(), ": range [", offset, ", +", size, ") is outside the ", parent->size(),
         " bytes of the file");
  return std::make_shared<SliceBuffer>(std::move(parent), offset, size, std::move(name));
}

} // namespace tc
