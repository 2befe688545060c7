// What every code generation target shares: the module prepared for the
// emitter, every group's kernel (or why it has none), the compile timeline.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/IR/IR.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc {

struct CompileStage {
  std::string name;
  double seconds;
};

// A copy of `input` where every kernel is a Fused op (lone ops outlined as
// groups of one; with `outlineMoves`, data movement too, which CUDA
// generates and the CPU copies at run time) and non-scalar constants of a
// group are its arguments (but those that only fix positions: Slice's starts).
// Its types assume the Slice bounds `guards` says (ShapeGuards.h) first.
std::unique_ptr<Module> prepareForCodegen(const Module &input, bool outlineMoves = false,
                                          std::vector<StoredGuard> *guards = nullptr);
// prepareForCodegen's stage in the compile timeline, naming the fuse run it
// makes: "outline lone ops (fuse{singles=1})".
std::string prepareStageName(bool outlineMoves = false);

struct EmittedKernels {
  std::vector<EmittedKernel> kernels; // one per distinct group, in plan order
  std::vector<std::string> fallback;  // "@group: why" for groups without one
  // Seconds each group's emitter took (kernel or not), in plan order, as
  // child stages "emit kernels/@group" of the timeline (tc-prof compile).
  std::vector<CompileStage> perGroup;
};
// `variants`: each kernel's family's geometry variants too (EmittedKernel::variants).
EmittedKernels emitKernels(const Module &m, KernelDialect dialect, bool variants = false);

// The artifact's "timeline" section (a stage named "parent/child" is a
// part of the stage "parent" listed after it: not summed into totals): the whole compile, the tools
// before tc-codegen (the input's timeline metadata) and then `stages`.
std::string artifactTimeline(const Module &input, const std::vector<CompileStage> &stages);

// What one distinct group of the prepared module became: its whole kernel,
// a library call (and the epilogue's kernel), or a step on the host.
struct GroupCode {
  const Function *group = nullptr;
  const Op *call = nullptr;            // its first call (static operand types)
  std::optional<EmittedKernel> kernel; // the whole group's
  std::string kernelWhy;               // why it has none
  std::string library;                 // what the backend calls ("": nothing)
  std::optional<EmittedKernel> epilogue;
  std::string epilogueWhy; // why an epilogue has no kernel ("": none needed or it has one)
  std::string fuses;       // what the library is asked to fuse ("bias,relu"), LibraryVerdict's
  bool host = false;       // runs on the host's reference kernels
  std::string hostWhy;     // why, for the warning
};

// A multi-tensor run (tc/CodeGen/MultiTensor.h): its kernel's symbol and
// its members' groups, in order.
struct MultiTensorSummary {
  std::string symbol;
  std::vector<std::string> groups;
};
// Decides the multi-tensor runs among `groups` (the driver's, decided:
// kernels, libraries, host steps): reorders m's main to put each run's steps
// together, marks them (the Fused op's `multi_tensor`), and gives each
// member the run's kernel (MultiTensorRuns.cpp).
std::vector<MultiTensorSummary> formMultiTensorRuns(Module &m, std::vector<GroupCode> &groups,
                                                    KernelDialect dialect);

// The artifact section listing the groups compiled to run on the host:
// "@group: why" lines (tc-codegen's warnings; empty: none).
inline constexpr const char *kSectionHostSteps = "host-steps";

// A group ("@fused_3") or an op left outside every group ("%y") that runs
// on the host, as tc-codegen's warning names it.
struct HostStep {
  std::string group, why;
  std::vector<std::string> nodes; // "/model/Gather_3 (Gather)": ONNX node and its op types
};

// The ONNX nodes of `ops` with their op types, in order: "/m/Add_4 (Add)"
// (a node without a name: its first result, "%y").
std::vector<std::string> onnxNodesOf(const std::vector<const Op *> &ops);

// A backend's differences from the shared driver (generateCode).
class CodegenBackend {
public:
  virtual ~CodegenBackend() = default;
  virtual KernelDialect dialect() const = 0;
  virtual const char *name() const = 0; // "cuda": "no cuda kernel"
  virtual bool outlineMoves() const { return false; }
  // Whether the runtime runs collectives (Ops.def "Distributed") as steps of
  // its own (CUDA: NCCL), so a multi-rank program compiles.
  virtual bool collectives() const { return false; }
  // The library `group` calls ("": none); `hasKernel`: it has a whole kernel.
  virtual std::string libraryFor(const Function &group, bool hasKernel) const = 0;
  // Rewrites a group the backend calls `library` for before its epilogue is
  // split off (the artifact's module keeps the rewritten group).
  virtual void prepareLibraryGroup(Function &, const std::string &library) const { (void)library; }
  // Whether a library group keeps its whole kernel, for what the library
  // turns down at run time (CPU: oneDNN); else only the library runs.
  virtual bool kernelBacksLibrary() const { return false; }
  // What the library makes of `g` at g.call's static types, each symbolic
  // dim at 2 (where broadcasts show): why it turns g down ("" when it takes
  // it; a refusal is a host step known at compile time, not one the run
  // finds), and whether it takes the whole epilogue itself, so an epilogue
  // without a kernel leaves it off the host (false when the types do not tell);
  // `fuses`: what the call is asked to fuse ("bias,add,relu"; the run may
  // still turn a fusion down and run the epilogue kernel), for --stats.
  struct LibraryVerdict {
    std::string refusal;
    bool takesEpilogue = false;
    std::string fuses;
  };
  virtual LibraryVerdict libraryVerdict(const GroupCode &) const { return {}; }
  // The kernel source and the "kernels" section of the decided groups;
  // `variants`: the "kernel-variants" section (CUDA, tc/Runtime/CudaLaunch.h)
  // when a kernel carries geometry variants (DriverOptions::variants).
  virtual void assemble(const std::vector<GroupCode> &groups, std::string &source,
                        std::string &table, std::string &variants) const = 0;
  // Compiles `source` into `a`'s header fields and code sections, adding
  // its stages to `timeline`.
  virtual void compile(const std::string &source, Artifact &a,
                       std::vector<CompileStage> &timeline) const = 0;
};

struct CodegenResult {
  Artifact artifact;                // empty unless compiled with the binary
  std::string source;               // all kernels, as compiled
  std::vector<std::string> kernels; // kernels generated (epilogues: <group>__epilogue)
  std::vector<KernelKind> kinds;    // each one's kind
  std::vector<std::string> library; // "@group: cublaslt, epilogue kernel tc_..."
  std::vector<HostStep> host;       // groups on the host, in plan order
  // The control-flow ops on the device, as the artifact's control-flow
  // section lists them (ControlFlowSection.h).
  std::vector<std::string> controlFlow;
  std::vector<CompileStage> timeline;
  std::vector<std::string> notes; // tc-codegen prints each as "tc-codegen: note: ..."
  // The memory plan stored for the runtime (ShapePlanCompile.h); nullopt:
  // the runtime plans each input shape, for `noShapePlan`'s reason.
  std::optional<StoredShapePlan> shapePlan;
  std::string noShapePlan;
  std::vector<MultiTensorSummary> multiTensor; // the runs, in main's order
};

// The driver's switches, the same for every backend (tc-codegen's flags).
struct DriverOptions {
  bool multiTensor = true; // --multi-tensor: form multi-tensor runs
  // Every kernel's geometry variants compiled too, for the GPU to choose
  // among (tc-codegen --target=cuda --tune); else the defaults only.
  bool variants = false;
};

// THE code generation driver: prepare, emit every group's kernel, decide
// each group (kernel / library call + epilogue / host), assemble the source
// and kernel table, and (withBinary) compile and fill the artifact.
CodegenResult generateCode(const Module &input, const CodegenBackend &backend, bool withBinary,
                           const DriverOptions &options = {});

} // namespace tc
