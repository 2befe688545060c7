#include "tc/CodeGen/CpuCodegen.h"
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
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
    {"cuda", "arch", "sm_80 sm_86 sm_89 sm_90 (any NVRTC knows; several: sm_80,sm_90)",
     "CUDA C++ kernels compiled ahead of time to cubin with NVRTC"},
};

// --stats: which groups got a kernel, the rest, and the compile stages.
void printStats(size_t kernels, const std::vector<std::string> &fallback,
                const std::vector<CompileStage> &timeline, const char *without) {
  std::cerr << "kernels: " << kernels << " generated, " << fallback.size() << " groups " << without
            << "\n";
  for (const std::string &why : fallback)
    std::cerr << "  fallback " << why << "\n";
  for (const CompileStage &s : timeline)
    std::cerr << "  " << s.name << ": " << s.seconds << " s\n";
}

} // namespace

int tcCodegenMain(int argc, char **argv) {
  return runTool("tc-codegen", [&] {
    CommonOptions common;
    std::string target = "cpu", cpu = "native", arch = "sm_90", emit = "artifact";
    bool list = false, stats = false;
    std::vector<std::string> dimFlags;
    po::options_description opts("tc-codegen options");
    opts.add_options()("target", po::value(&target)->value_name("cpu|cuda"),
                       "code generation target")(
        "list-targets", po::bool_switch(&list),
        "list targets with their arches / CPU levels and exit")(
        "cpu", po::value(&cpu)->value_name("native|x86-64-v3|..."),
        "CPU the kernels are compiled for (native: this machine's CPU and features)")(
        "arch", po::value(&arch)->value_name("sm_90|sm_80,sm_90"),
        "CUDA arches to compile cubin for (default sm_90); several make one fat artifact")(
        "emit", po::value(&emit)->value_name("artifact|source|asm|ptx"),
        "what to write: the .tcx artifact, the generated kernel source, or its assembly (CPU: "
        "asm, CUDA: ptx)")(
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
    // A flag of the other target is a mistake worth saying, not ignoring.
    if (vm.count("arch") && target != "cuda")
      fail("--arch is for --target=cuda (the CPU target takes --cpu)");
    if (vm.count("cpu") && target != "cpu")
      fail("--cpu is for --target=cpu (the CUDA target takes --arch)");
    const char *assembly = target == "cuda" ? "ptx" : "asm";
    if (emit != "artifact" && emit != "source" && emit != assembly)
      fail("unknown --emit '", emit, "' (artifact, source or ", assembly, ")");
    std::vector<std::string> arches;
    if (target == "cuda") {
      arches = parseCudaArchs(arch);
      if (emit == "ptx" && arches.size() != 1)
        fail("--emit=ptx writes the PTX of one arch; --arch names ", arches.size());
    }
    auto m = loadModule(common.input);
    specializeDims(*m, parseDimFlags(dimFlags));
    if (target == "cuda") {
      CudaCodegenResult r = compileForCuda(*m, arches, /*withCubin=*/emit == "artifact");
      if (stats) {
        printStats(r.kernels.size(), r.fallback, r.timeline, "without a generated kernel");
        for (const std::string &a : r.artifact.arches)
          std::cerr << "  cubin " << a << ": " << r.artifact.require(cubinSection(a)).size()
                    << " bytes\n";
      }
      dumpFile(dumpDirFor("tc-codegen", common), "kernels.cu", r.source);
      if (emit == "source")
        writeOutput(common.output, r.source);
      else if (emit == "ptx")
        writeOutput(common.output, compileCuda(r.source, arches[0], CudaOutput::Ptx));
      else {
        if (common.output == "-" && ::isatty(1))
          fail("refusing to write a binary artifact to a terminal (use -o FILE)");
        writeOutput(common.output, writeArtifact(r.artifact));
      }
      return 0;
    }
    CpuTarget t = resolveCpuTarget(cpu);
    CpuCodegenResult r = compileForCpu(*m, t, /*withObject=*/emit == "artifact");
    if (stats)
      printStats(r.kernels.size(), r.fallback, r.timeline, "on the reference kernels");
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
