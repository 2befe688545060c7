#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

namespace {

struct TargetInfo {
  const char *name;
  const char *levelsLabel;
  const char *levels;
  const char *summary;
};

// The code generation targets and the arch/CPU levels each accepts.
const TargetInfo kTargets[] = {
    {"cpu", "cpu", "native x86-64 x86-64-v2 x86-64-v3 x86-64-v4",
     "vectorized C++ kernels compiled in-process with clang (LLVM 19)"},
    {"cuda", "arch", "sm_80 sm_86 sm_89 sm_90", "CUDA C++ kernels compiled ahead of time to cubin"},
};

} // namespace

int tcCodegenMain(int argc, char **argv) {
  return runTool("tc-codegen", [&] {
    CommonOptions common;
    std::string target = "cpu";
    bool list = false;
    po::options_description opts("tc-codegen options");
    opts.add_options()("target", po::value(&target)->value_name("cpu|cuda"),
                       "code generation target")(
        "list-targets", po::bool_switch(&list),
        "list targets with their arches / CPU levels and exit");
    po::variables_map vm;
    if (!parseCommandLine("tc-codegen", "[options] <input.tcbc | input.tcir | -> -o model.tcx",
                          argc, argv, opts, common, vm))
      return 0;
    if (list) {
      std::cout << "Targets:\n";
      for (const TargetInfo &t : kTargets)
        std::cout << "  " << t.name << "  - " << t.summary << "\n      --" << t.levelsLabel << ": "
                  << t.levels << "\n";
      return 0;
    }
    bool known = false;
    for (const TargetInfo &t : kTargets)
      known |= target == t.name;
    if (!known)
      fail("unknown target '", target, "' (see --list-targets)");
    auto m = loadModule(common.input);
    fail("code generation for target '", target,
         "' is not built yet (tracked by the CPU and CUDA backend issues)");
  });
}

} // namespace tc::tools
