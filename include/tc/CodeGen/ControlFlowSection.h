// The artifact's control-flow section: the If, Loop and Scan ops codegen
// compiled to run on the device (their callees' groups all have kernels:
// Codegen.h's driver decides), one line each:
//   @<function> %<the op's first result> <description>
// where the description is what the step does ("Loop on the device: trip
// count and each iteration's cond read back ..."), as tc-codegen --stats
// prints it. A control-flow op without a line runs on the host's reference
// executor (a host step, listed in the host-steps section with why).
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/IR.h"
#include <map>
#include <string>

namespace tc {

inline constexpr const char *kSectionControlFlow = "control-flow";

// The section's line for `op` of `f`.
std::string controlFlowLine(const Function &f, const Op &op, const std::string &description);

// The ops of `m` the section lists, with their descriptions (none when the
// artifact has no such section: an older one). Throws tc::Error naming the
// file for a line that names no control-flow op of `m`.
std::map<const Op *, std::string> deviceControlFlow(const Artifact &a, const Module &m);

} // namespace tc
