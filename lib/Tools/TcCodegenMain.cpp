#include "tc/CodeGen/CpuCodegen.h"
#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
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
    {"cuda", "arch", "sm_80 sm_86 sm_89 sm_90 (any NVRTC knows; several: sm_80,sm_90)",
     "CUDA C++ kernels compiled ahead of time to cubin with NVRTC"},
};

// --stats: which groups got a kernel, the rest, and the compile stages.
// `input`'s timeline holds the tools before tc-codegen; `timeline` its own.
void printStats(size_t kernels, const std::vector<std::string> &fallback, const char *without,
                const std::string &more, const Module &input,
                const std::vector<CompileStage> &timeline,
                const std::vector<std::string> &library = {}) {
  std::cerr << "kernels: " << kernels << " generated, " << fallback.size() << " groups " << without
            << more << "\n";
  for (const std::string &call : library)
    std::cerr << "  library " << call << "\n";
  for (const std::string &why : fallback)
    std::cerr << "  fallback " << why << "\n";
  std::cerr << "compile timeline:\n";
  for (const TimelineEntry &e : readTimeline(input))
    std::cerr << "  " << e.tool << ": " << e.stage << ": " << e.seconds << " s\n";
  for (const CompileStage &s : timeline)
    std::cerr << "  tc-codegen: " << s.name << ": " << s.seconds << " s\n";
}

} // namespace

int tcCodegenMain(int argc, char **argv) {
  return runTool("tc-codegen", [&] {
    CommonOptions common;
    std::string target = "cpu", cpu = "native", arch = "sm_90", emit = "artifact",
                cpuLibrary = "onednn";
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
    if ((vm.count("cpu") || vm.count("cpu-library")) && target != "cpu")
      fail("--cpu and --cpu-library are for --target=cpu (the CUDA target takes --arch)");
    if (cpuLibrary != "onednn" && cpuLibrary != "none")
      fail("unknown --cpu-library '", cpuLibrary, "' (onednn or none)");
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
        printStats(r.kernels.size(), r.fallback, "without a generated kernel",
                   ", " + std::to_string(r.library.size()) + " groups call cuBLASLt/cuDNN", *m,
                   r.timeline, r.library);
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
    CpuCodegenResult r =
        compileForCpu(*m, t, /*withObject=*/emit == "artifact",
                      cpuLibrary == "onednn" ? CpuLibrary::OneDnn : CpuLibrary::None);
    if (stats)
      printStats(r.kernels.size(), r.fallback, "on the reference kernels",
                 ", " + std::to_string(r.library.size()) + " groups call oneDNN", *m, r.timeline);
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
