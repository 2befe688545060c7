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

void requireLibraryMajor(const char *what, size_t version, const std::string &built,
                         const std::string &file) {
  size_t major = version >= 10000 ? version / 10000 : version / 1000;
  if (built.empty() || built.substr(0, built.find('.')) == std::to_string(major))
    return;
  size_t rest = version >= 10000 ? version % 10000 : version % 1000;
  std::string have =
      std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
  fail(file, ": built against ", what, " ", built, " (its headers at codegen); this machine's ",
       what, " is ", have, ": another major version is refused (install ", what, " ",
       built.substr(0, built.find('.')), " or recompile with this machine's)");
}

void failMissingSymbol(const char *what, const char *name) {
  fail(what, " lacks ", name, ": too old");
}

} // namespace tc::cuda
