// The fp32 pass rule where TF32 may round (issue 18 item 3; AmpRule.h is
// fp16's): an fp32 artifact whose library calls may use TF32 tensor cores
// (tc-codegen --allow-tf32: convs by default, as PyTorch's cuDNN) multiplies
// with 10-bit mantissas, like fp16, so elementwise rtol 1e-4 would fail it
// on every conv net. Such an artifact's outputs are held to the relative
// max error (AmpRule.h's relativeMaxError) at most the manifest's
// "tf32_err", by default 5e-3: PyTorch's own tolerance for its TF32 paths
// (torch.testing's tf32_on_and_off(0.005), the precision its conv and
// matmul tests switch to under TF32). Other fp32 artifacts (no TF32 call,
// --allow-tf32=none, the CPU) keep the elementwise check.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include <string>

namespace tc::bench {

inline constexpr double kTf32ErrFloor = 5e-3; // manifest default ("tf32_err")

// Whether an fp32 run of `a` is held to the TF32 rule: its "tuning" section
// allows TF32 for a library one of its groups calls (mayRoundThroughTf32).
bool heldToTf32Rule(const Artifact &a);

// "err 1.2e-03 <= 5.0e-03 (tf32)", "err 7.0e-03 > 5.0e-03 (tf32)".
std::string describeTf32Check(double err, double bound);

} // namespace tc::bench
