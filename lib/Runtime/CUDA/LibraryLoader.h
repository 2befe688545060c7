// The CUDA libraries the runtime calls (cuBLASLt, cuDNN) are opened at run
// time, the first time a plan needs one, as the driver is (CudaDriver.cpp):
// the tools start, and run everything else, on machines without them.
#pragma once
#include <dlfcn.h>
#include <initializer_list>

namespace tc::cuda {

// The first of `names` that dlopen loads; else tc::Error "<what> not found
// (<first name>: <dlerror>)".
void *openLibrary(const char *what, std::initializer_list<const char *> names);

[[noreturn]] void failMissingSymbol(const char *what, const char *name);

// `fn` = the library's `name`; else tc::Error "<what> lacks <name>: too old".
template <typename Fn> void bindSymbol(void *lib, Fn &fn, const char *name, const char *what) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn)
    failMissingSymbol(what, name);
}

} // namespace tc::cuda
