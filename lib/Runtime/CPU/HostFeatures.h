// Which of the CPU features an artifact's kernels were compiled for this
// machine has, asked of the processor (cpuid) rather than of LLVM, so the
// runtime links no compiler library. Feature names are LLVM's ("+avx2").
#pragma once
#include <string>
#include <vector>

namespace tc {

// The features `required` lists ("+avx2", ...) that this machine lacks. A
// name this table does not know counts as lacking: running code that may
// use an instruction nobody checked for is worse than asking to recompile.
std::vector<std::string> missingHostFeatures(const std::vector<std::string> &required);

} // namespace tc
