#include "LibraryLoader.h"
#include "tc/Support/Error.h"
#include <string>

namespace tc::cuda {

void *openLibrary(const char *what, std::initializer_list<const char *> names) {
  std::string first;
  for (const char *name : names) {
    if (void *lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return lib;
    if (first.empty()) // "libx.so.13: cannot open shared object file: ..."
      first = ::dlerror();
  }
  fail(what, " not found (", first, ")");
}

void failMissingSymbol(const char *what, const char *name) {
  fail(what, " lacks ", name, ": too old");
}

} // namespace tc::cuda
