// The amp (fp16) pass rule of the bench, issue 16's: an output passes when
// its relative error max|out - ref| / max|ref| (the worst output of the
// model) is at most max(floor, 1.5 x PyTorch AMP's own error on the same
// inputs), floor 2e-2 unless the manifest says otherwise ("amp_err").
// Elementwise rtol/atol is far stricter where outputs sit near 0 (logits):
// fp16 rounding there is noise, not a bug. Without PyTorch (CPU-only
// runs, CI, models without a recipe) the floor alone is the bound.
// utils/bench-gpu.py applies the same rule (TOLERANCE, rel_err).
#pragma once
#include "tc/Runtime/HostTensor.h"
#include <optional>
#include <string>

namespace tc::bench {

inline constexpr double kAmpErrFloor = 2e-2;   // manifest default
inline constexpr double kTorchAmpFactor = 1.5; // of PyTorch AMP's own error

// max(floor, kTorchAmpFactor * torchAmpErr); the floor without PyTorch's.
double ampBound(double floor, std::optional<double> torchAmpErr);

// max|got - want| / max|want| over all elements (max|want| at least 1e-30);
// +inf when shapes or types differ or `got` holds NaN or inf where `want`
// does not.
double relativeMaxError(const HostTensor &got, const HostTensor &want);

// The worst relativeMaxError over the outputs `dir`/output_N.pb that
// `refDir` also has (N = 0, 1, ...). Throws tc::Error when a file is
// unreadable or `dir` lacks one of `refDir`'s outputs.
double worstRelativeError(const std::string &dir, const std::string &refDir);

// "err 2.4e-02 <= 4.5e-02 (1.5x torch amp 3.0e-02)", "err 7.2e-02 > 2.0e-02"
// (no PyTorch error: the floor), for tc-bench's lines and failure reasons;
// its parts: "2.4e-02 <= 4.5e-02" and "1.5x torch amp 3.0e-02".
std::string describeAmpCheck(double err, double bound, std::optional<double> torchAmpErr);
std::string ampComparison(double err, double bound);
std::string torchAmpNote(double torchAmpErr);

} // namespace tc::bench
