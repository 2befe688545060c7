#include "KernelLibrary.h"
#include "tc/Support/Error.h"
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace tc {

KernelLibrary::KernelLibrary(std::string_view bytes, const std::string &what) : what_(what) {
  auto failLoad = [&](const std::string &why) {
    fail(what, ": cannot load the kernels' shared object: ", why);
  };
  int fd = fd_ = memfd_create("tc-kernels", MFD_CLOEXEC);
  if (fd < 0)
    failLoad(std::string("memfd_create: ") + std::strerror(errno));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = std::string("write: ") + std::strerror(errno);
      ::close(fd);
      fd_ = -1;
      failLoad(why);
    }
    done += size_t(n);
  }
  // RTLD_LOCAL: two models' kernels may share symbol names.
  handle_ = dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    ::close(fd);
    fd_ = -1;
    failLoad(why ? why : "dlopen failed");
  }
}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
}

void *KernelLibrary::find(const std::string &symbol) const {
  dlerror();
  return dlsym(handle_, symbol.c_str());
}

void *KernelLibrary::symbol(const std::string &symbol) const {
  void *p = find(symbol);
  if (!p)
    fail(what_, ": kernel ", symbol, " is not in the kernels' shared object");
  return p;
}

} // namespace tc
