// A CPU artifact's kernels as the shared object tc-codegen linked them into,
// loaded straight from the artifact's bytes: copied into an anonymous
// in-memory file (memfd) and dlopen'ed through /proc/self/fd, so no
// temporary file is written and no compiler library (LLVM) is needed.
#pragma once
#include <string>
#include <string_view>

namespace tc {

class KernelLibrary {
public:
  // Throws tc::Error "<what>: cannot load the kernels' shared object: ..."
  KernelLibrary(std::string_view bytes, const std::string &what);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  // The address of `symbol`; throws tc::Error naming it when missing.
  void *symbol(const std::string &symbol) const;
  // The address of `symbol`, or null (an optional symbol).
  void *find(const std::string &symbol) const;

private:
  void *handle_ = nullptr;
  // The memfd stays open while the library is loaded: dlopen knows a
  // library by its path (/proc/self/fd/N), and a second model's memfd must
  // not get the same N (dlopen would hand back this one's kernels).
  int fd_ = -1;
  std::string what_;
};

} // namespace tc
