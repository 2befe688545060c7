// Codegen's decision for each If, Loop and Scan (ControlFlow.h): a step on
// the device when every function it calls (and their control flow, nested)
// runs as device work alone, generated kernels, views and shape
// computations; else a host step (the reference executor runs the op
// whole, as before control flow had kernels), saying which callee's step
// keeps it there.
#pragma once
#include "tc/CodeGen/Codegen.h"
#include <functional>
#include <string>
#include <vector>

namespace tc {

struct ControlFlowSteps {
  std::vector<HostStep> host;      // the entry's host steps, control flow among them
  std::vector<std::string> device; // the control-flow section's lines (ControlFlowSection.h)
};

// `hostStepsIn(f, body)`: the host steps of f's ops other than its control
// flow (`body`: f is a callee, run step by step).
ControlFlowSteps decideControlFlow(
    const Module &m,
    const std::function<std::vector<HostStep>(const Function &, bool body)> &hostStepsIn);

// What a device step of `op` does, for the section and --stats: "Loop on
// the device: trip count and each iteration's cond read back ...".
std::string controlFlowDescription(const Op &op);

} // namespace tc
