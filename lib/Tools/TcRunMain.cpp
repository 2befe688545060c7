#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <dlfcn.h>
#include <iostream>

namespace tc::tools {

namespace {

// The CUDA driver is opened at run time so that every tool starts on a
// machine without one; this is the only place that decides "no GPU".
void requireCudaDevice() {
  void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    fail("no CUDA device (the CUDA driver libcuda.so.1 is not installed: ", ::dlerror(), ")");
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(::dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0 || n == 0)
    fail("no CUDA device (the driver is installed but reports no usable GPU)");
}

} // namespace

int tcRunMain(int argc, char **argv) {
  return runTool("tc-run", [&] {
    CommonOptions common;
    std::string target = "ref";
    po::options_description opts("tc-run options");
    opts.add_options()("target", po::value(&target)->value_name("ref|cpu|cuda"),
                       "ref: the reference executor over IR; cpu/cuda: a compiled artifact");
    po::variables_map vm;
    if (!parseCommandLine("tc-run", "[options] <model.tcx | model.tcbc | model.tcir>", argc, argv,
                          opts, common, vm, /*withOutput=*/false))
      return 0;
    if (target == "cuda")
      requireCudaDevice();
    if (target != "ref" && target != "cpu" && target != "cuda")
      fail("unknown target '", target, "' (ref, cpu or cuda)");
    auto m = loadModule(common.input);
    fail("execution on target '", target,
         "' is not built yet (tracked by the import/reference-executor issue)");
  });
}

} // namespace tc::tools
