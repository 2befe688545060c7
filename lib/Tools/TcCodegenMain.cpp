#include "tc/IR/CompileTimeline.h"
#include "tc/Support/Error.h"
#include "tc/Target/Target.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include "tc/Transforms/ShapeInference.h"
#include <algorithm>
#include <iostream>
#include <unistd.h>

namespace tc::tools {

namespace {

// --stats: kernels, library groups, host steps, and the compile stages.
// `input`'s timeline holds the tools before tc-codegen; r's its own.
void printStats(const CompileTarget &t, const CodegenResult &r, const Module &input) {
  std::cerr << "kernels: " << r.kernels.size() << " generated, " << r.library.size()
            << " groups call " << t.libraries() << ", " << r.host.size() << " host steps\n";
  for (const std::string &call : r.library)
    std::cerr << "  library " << call << "\n";
  for (const std::string &line : r.controlFlow) // ControlFlowSection.h
    std::cerr << "  control flow " << line << "\n";
  // The convs a generated kernel runs (the others are library lines).
  for (size_t i = 0; i < r.kernels.size(); ++i)
    if (r.kinds[i] == KernelKind::DepthwiseConv)
      std::cerr << "  kernel @" << r.kernels[i] << ": " << kernelKindName(r.kinds[i]) << "\n";
  // Multi-tensor runs (MultiTensor.h): their steps and launches.
  size_t joined = 0;
  for (const MultiTensorSummary &run : r.multiTensor)
    joined += run.groups.size();
  if (!r.multiTensor.empty())
    std::cerr << "multi-tensor: " << joined << " steps in " << r.multiTensor.size() << " launch"
              << (r.multiTensor.size() == 1 ? "" : "es") << "\n";
  for (const MultiTensorSummary &run : r.multiTensor)
    std::cerr << "  multi-tensor " << run.symbol << ": " << run.groups.size()
              << " tensors in 1 launch (@" << run.groups.front() << " ... @" << run.groups.back()
              << ")\n";
  if (r.shapePlan) {
    std::cerr << "shape plan: stored (" << r.shapePlan->buffers.size() << " buffers in "
              << r.shapePlan->blocks.size() << " blocks)";
    const std::vector<StoredGuard> &g = r.shapePlan->guards;
    std::string bounds;
    for (const StoredGuard &s : g)
      bounds += (bounds.empty() ? "" : ", ") + s.bound.str();
    if (!g.empty())
      std::cerr << ", " << g.size() << " guard" << (g.size() == 1 ? "" : "s") << " (" << bounds
                << ")";
    std::cerr << "\n";
    for (const StoredGuard &s : g)
      std::cerr << "  guard " << s.bound.str() << ": " << s.origin << "\n";
  } else
    std::cerr << "shape plan: none, 1 unplanned (" << r.noShapePlan << ")\n";
  std::cerr << "compile timeline:\n";
  for (const TimelineEntry &e : readTimeline(input))
    std::cerr << "  " << e.tool << ": " << e.stage << ": " << e.seconds << " s\n";
  for (const CompileStage &s : r.timeline)
    std::cerr << "  tc-codegen: " << s.name << ": " << s.seconds << " s\n";
  t.printStats(r, std::cerr);
}

// The flags of `options` given on the command line: "--arch", "--arch and
// --tune", "--arch, --tune and --allow-tf32" ("": none).
std::string givenFlags(const po::variables_map &vm, const std::vector<TargetOption> &options,
                       size_t &count) {
  std::vector<std::string> given;
  for (const TargetOption &o : options)
    if (vm.count(o.flag))
      given.push_back("--" + o.flag);
  std::string s;
  for (size_t i = 0; i < given.size(); ++i)
    s += (i == 0 ? "" : i + 1 == given.size() ? " and " : ", ") + given[i];
  count = given.size();
  return s;
}

} // namespace

int tcCodegenMain(int argc, char **argv) {
  return runTool("tc-codegen", [&] {
    CommonOptions common;
    std::string target = "cpu", emit = "artifact";
    bool list = false, stats = false, noHostFallback = false;
    std::string multiTensor = "on";
    std::vector<std::string> dimFlags;
    po::options_description opts("tc-codegen options");
    opts.add_options()("target", po::value(&target)->value_name(targetNames("|").c_str()),
                       "code generation target")(
        "list-targets", po::bool_switch(&list),
        "list targets with their arches / CPU levels and exit");
    // Every target's own flags; a flag of another target than the one
    // chosen is a mistake worth saying, not ignoring.
    std::vector<std::unique_ptr<CompileTarget>> compilers;
    for (const Target &t : targets()) {
      compilers.push_back(t.makeCompiler());
      addTargetOptions(opts, compilers.back()->options());
    }
    opts.add_options()("emit", po::value(&emit)->value_name("artifact|source|asm|ptx"),
                       "what to write: the .tcx artifact, the generated kernel source, or its "
                       "assembly (CPU: asm, CUDA: ptx)")(
        "dim", po::value(&dimFlags)->composing()->value_name("NAME=N"),
        "specialize symbolic dim NAME to N in the compiled model (default: one artifact for "
        "every size)")("stats", po::bool_switch(&stats),
                       "print to stderr how many kernels, library calls and host steps the "
                       "groups became, and the compile timeline")(
        "multi-tensor", po::value(&multiTensor)->value_name("on|off"),
        "run equal pointwise steps that are independent (a train step's optimizer updates) as "
        "one launch over all of their tensors (default on)")(
        "no-host-fallback", po::bool_switch(&noHostFallback),
        "a group that no kernel and no library covers, or a model whose shape plan cannot be "
        "stored, is an error, not a host step (exit 1, no output)");
    po::variables_map vm;
    if (!parseCommandLine("tc-codegen", "[options] <input.tcbc | input.tcir | -> -o model.tcx",
                          argc, argv, opts, common, vm))
      return 0;
    if (list) {
      std::cout << "Targets:\n";
      for (const Target &t : targets())
        std::cout << "  " << t.name << "  - " << t.summary << "\n      --" << t.levelFlag << ": "
                  << t.levels << "\n";
      return 0;
    }
    const Target *found = findTarget(target);
    if (!found)
      fail("unknown target '", target, "' (see --list-targets)");
    const Target &chosen = *found;
    const std::vector<Target> &all = targets();
    size_t self = size_t(&chosen - all.data());
    for (size_t i = 0; i < all.size(); ++i) {
      size_t count = 0;
      std::string given = givenFlags(vm, compilers[i]->options(), count);
      if (i != self && count)
        fail(given, count > 1 ? " are" : " is", " for --target=", all[i].name, " (the ",
             chosen.title, " target takes --", chosen.levelFlag, ")");
    }
    CompileTarget &compiler = *compilers[self];
    if (multiTensor != "on" && multiTensor != "off")
      fail("unknown --multi-tensor '", multiTensor, "' (on or off)");
    compiler.driverOptions.multiTensor = multiTensor == "on";
    TargetOptionValues values = targetOptionValues(vm, compiler.options());
    std::vector<std::string> kinds = compiler.emitKinds();
    kinds.insert(kinds.begin(), "artifact");
    if (std::find(kinds.begin(), kinds.end(), emit) == kinds.end())
      fail("unknown --emit '", emit, "' (", alternatives(kinds), ")");
    compiler.configure(values, emit);
    auto m = loadModule(common.input);
    specializeDims(*m, parseDimFlags(dimFlags));
    CodegenResult r = compiler.compile(*m, /*withBinary=*/emit == "artifact");
    // Host steps are a compile-time decision the user sees: one line each.
    for (const HostStep &h : r.host) {
      std::cerr << "tc-codegen: " << (noHostFallback ? "error" : "warning") << ": " << h.group
                << " runs on the host (" << h.why << "): nodes ";
      for (size_t i = 0; i < h.nodes.size(); ++i)
        std::cerr << (i ? ", " : "") << h.nodes[i];
      std::cerr << "\n";
    }
    // No stored shape plan is a host fallback too: the tools plan each new
    // input shape on the host at run time, libtcrt refuses the artifact.
    if (!r.shapePlan)
      std::cerr << "tc-codegen: " << (noHostFallback ? "error" : "warning")
                << ": no shape plan stored (" << r.noShapePlan
                << "): the tools plan each input shape at run time, libtcrt refuses the "
                   "artifact\n";
    for (const std::string &note : r.notes)
      std::cerr << "tc-codegen: note: " << note << "\n";
    if (noHostFallback && (!r.host.empty() || !r.shapePlan))
      return 1;
    if (stats)
      printStats(compiler, r, *m);
    dumpFile(dumpDirFor("tc-codegen", common), compiler.sourceFile(), r.source);
    if (emit == "source")
      writeOutput(common.output, r.source);
    else if (emit != "artifact")
      writeOutput(common.output, compiler.emitText(r, emit));
    else {
      if (common.output == "-" && ::isatty(1))
        fail("refusing to write a binary artifact to a terminal (use -o FILE)");
      writeOutput(common.output, [&](const ByteSink &sink) { writeArtifact(r.artifact, sink); });
    }
    return 0;
  });
}

} // namespace tc::tools
