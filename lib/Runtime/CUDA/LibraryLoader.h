// The CUDA libraries the runtime calls (cuBLASLt, cuDNN) are opened at run
// time, the first time a plan needs one, as the driver is (CudaDriver.cpp):
// the tools start, and run everything else, on machines without them.
#pragma once
#include <cstddef>
#include <dlfcn.h>
#include <initializer_list>
#include <string>

namespace tc::cuda {

// The first of `names` that dlopen loads; else tc::Error "<what> not found
// (<first name>: <dlerror>)".
void *openLibrary(const char *what, std::initializer_list<const char *> names);

[[noreturn]] void failMissingSymbol(const char *what, const char *name);

// A library's run-time `version` (major*10000 + minor*100 + patch; cuDNN 8:
// major*1000 + ...) against `built`, the "major.minor.patch" of the headers
// the artifact `file` was built with: another major is a tc::Error naming
// both (its API and ABI may differ); "" built: nothing recorded, no check.
void requireLibraryMajor(const char *what, size_t version, const std::string &built,
                         const std::string &file);

// `fn` = the library's `name`; else tc::Error "<what> lacks <name>: too old".
template <typename Fn> void bindSymbol(void *lib, Fn &fn, const char *name, const char *what) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn)
    failMissingSymbol(what, name);
}

} // namespace tc::cuda
