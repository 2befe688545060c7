// What every code generation target shares: the module prepared for the
// emitter, every group's kernel (or why it has none), the compile timeline.
#pragma once
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/IR/IR.h"
#include <memory>
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
std::unique_ptr<Module> prepareForCodegen(const Module &input, bool outlineMoves = false);
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
EmittedKernels emitKernels(const Module &m, KernelDialect dialect);

// The artifact's "timeline" section (a stage named "parent/child" is a
// part of the stage "parent" listed after it: not summed into totals): the whole compile, the tools
// before tc-codegen (the input's timeline metadata) and then `stages`.
std::string artifactTimeline(const Module &input, const std::vector<CompileStage> &stages);

} // namespace tc
