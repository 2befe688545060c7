#include "tc/CodeGen/CpuCodegen.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include "tc/Transforms/ShapeInference.h"
#include <iostream>
#include <unistd.h>

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
    std::string target = "cpu", cpu = "native", emit = "artifact", cpuLibrary = "onednn";
    bool list = false, stats = false;
    std::vector<std::string> dimFlags;
    po::options_description opts("tc-codegen options");
    opts.add_options()("target", po::value(&target)->value_name("cpu|cuda"),
                       "code generation target")(
        "list-targets", po::bool_switch(&list),
        "list targets with their arches / CPU levels and exit")(
        "cpu", po::value(&cpu)->value_name("native|x86-64-v3|..."),
        "CPU the kernels are compiled for (native: this machine's CPU and features)")(
        "cpu-library", po::value(&cpuLibrary)->value_name("onednn|none"),
        "what Conv/MatMul/Gemm groups call on CPU: oneDNN (epilogues as post-ops where it "
        "has them) or only generated kernels")(
        "emit", po::value(&emit)->value_name("artifact|source|asm"),
        "what to write: the .tcx artifact, the generated kernel source, or its assembly")(
        "dim", po::value(&dimFlags)->composing()->value_name("NAME=N"),
        "specialize symbolic dim NAME to N in the compiled model (default: one artifact for "
        "every size)")(
        "stats", po::bool_switch(&stats),
        "print to stderr which groups got a kernel and which run on the reference kernels");
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
    if (emit != "artifact" && emit != "source" && emit != "asm")
      fail("unknown --emit '", emit, "' (artifact, source or asm)");
    if (cpuLibrary != "onednn" && cpuLibrary != "none")
      fail("unknown --cpu-library '", cpuLibrary, "' (onednn or none)");
    if (target == "cuda")
      fail(
          "code generation for target 'cuda' is not built yet (tracked by the CUDA backend issue)");
    auto m = loadModule(common.input);
    specializeDims(*m, parseDimFlags(dimFlags));
    CpuTarget t = resolveCpuTarget(cpu);
    CpuCodegenResult r =
        compileForCpu(*m, t, /*withObject=*/emit == "artifact",
                      cpuLibrary == "onednn" ? CpuLibrary::OneDnn : CpuLibrary::None);
    if (stats) {
      std::cerr << "kernels: " << r.kernels.size() << " generated, " << r.fallback.size()
                << " groups on the reference kernels, " << r.library.size()
                << " groups call oneDNN\n";
      for (const std::string &why : r.fallback)
        std::cerr << "  fallback " << why << "\n";
      std::cerr << "compile timeline:\n";
      for (const TimelineEntry &e : readTimeline(*m))
        std::cerr << "  " << e.tool << ": " << e.stage << ": " << e.seconds << " s\n";
      for (const CompileStage &s : r.timeline)
        std::cerr << "  tc-codegen: " << s.name << ": " << s.seconds << " s\n";
    }
    dumpFile(dumpDirFor("tc-codegen", common), "kernels.cpp", r.source);
    if (emit == "source")
      writeOutput(common.output, r.source);
    else if (emit == "asm")
      writeOutput(common.output, compileCpp(r.source, t, CompileOutput::Assembly));
    else {
      if (common.output == "-" && ::isatty(1))
        fail("refusing to write a binary artifact to a terminal (use -o FILE)");
      writeOutput(common.output, writeArtifact(r.artifact));
    }
    return 0;
  });
}

} // namespace tc::tools
