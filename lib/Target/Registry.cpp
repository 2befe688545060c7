#include "tc/Support/Error.h"
#include "tc/Target/Target.h"

namespace tc {

// The runtime half's entries (Executable.cpp, the same Targets.def lines in
// the same order) extended by the compile half's columns.
const std::vector<Target> &targets() {
  static const std::vector<Target> all = [] {
    std::vector<Target> v;
    const std::vector<RuntimeTarget> &runtime = runtimeTargets();
#define TC_TARGET(Id, name, title, summary, levelFlag, levels, optPipeline, graphsFlag, gpu)       \
  v.push_back({runtime.at(v.size()), summary, levelFlag, levels, optPipeline, graphsFlag,          \
               make##Id##CompileTarget});
#include "tc/Target/Targets.def"
    return v;
  }();
  return all;
}

const Target *findTarget(std::string_view name) {
  for (const Target &t : targets())
    if (name == t.name)
      return &t;
  return nullptr;
}

std::string targetNames(const char *lastSeparator) {
  std::string s;
  const std::vector<Target> &all = targets();
  for (size_t i = 0; i < all.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == all.size() ? lastSeparator : ", ") + all[i].name;
  return s;
}

const Target &requireTarget(std::string_view name, const std::string &what) {
  if (const Target *t = findTarget(name))
    return *t;
  fail("unknown ", what, " '", name, "' (", targetNames(), ")");
}

} // namespace tc
