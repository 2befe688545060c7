// The pass rule of a training row (tc-bench --train): tc's per-step losses
// against PyTorch's on the same batches from the same initial weights, at
// the last step (earlier steps agree more closely; the last one has the
// drift of every step before it).
//   fp32: |tc - PyTorch eager fp32| / |PyTorch eager fp32| <= 1e-3.
//   amp:  AMP's losses cannot equal fp32's; both sides' are measured from
//         PyTorch fp32 eager's, and tc's distance must be at most
//         max(1e-3, 4 x PyTorch AMP's own distance): "within a few times
//         PyTorch AMP's own spread" (utils/bench-train.py reports both).
//   fp32 with --f64-reference: the same rule one precision up, from PyTorch
//         f64 eager's losses. Batch-norm nets at small batches make f32
//         gradients ill-conditioned: on resnet50 at batch 4 PyTorch's own f32
//         gradients are 20% from f64's and its losses 4% by step 5, tc's as
//         far (docs/training.md); two f32 runs cannot agree to 1e-3 there.
// PyTorch's own distance is the farthest of its rows run in that precision
// (eager, torch.compile) from the reference (torchSpread): at step 100 a
// distance is one sample of a chaotic quantity, and on resnet50 fp32
// (H200, session 38) eager's was 2.0e-4, torch.compile's 7.5e-3: eager's
// alone made a bound torch.compile failed.
// PyTorch's own rows (torch.compile's losses; PyTorch eager amp) are held
// to the same rule, against the same references.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

inline constexpr double kLossTolerance = 1e-3;   // fp32, and amp's floor
inline constexpr double kTorchAmpLossFactor = 4; // amp: times PyTorch AMP's own distance

// |got - want| / max(|want|, 1e-12) at the last step; +inf when the lists'
// lengths differ, one is empty, or a loss is not finite.
double lastLossDistance(const std::vector<double> &got, const std::vector<double> &want);

// The largest finite lastLossDistance of PyTorch's rows from `reference`;
// none when no row's is finite.
std::optional<double> torchSpread(const std::vector<const std::vector<double> *> &rows,
                                  const std::vector<double> &reference);

// max(kLossTolerance, kTorchAmpLossFactor * torchAmpDistance); fp32 (no
// PyTorch AMP distance): kLossTolerance.
double lossBound(std::optional<double> torchAmpDistance);

// "losses 2.1e-06 <= 1.0e-03 at step 20", "... (4x torch amp 3.0e-04)";
// `f64`: the reference is PyTorch f64's ("... (4x torch fp32 vs f64 ...)").
std::string describeLossCheck(double distance, double bound, std::optional<double> torchAmp,
                              size_t steps, bool f64 = false);

// The steps an fp16 run skipped for overflow (1-based): those after which
// its loss scale (one per step, as tc-run --train and GradScaler report it)
// was below the one before, the first from `initialScale` (both sides start
// at 65536).
std::vector<size_t> skippedSteps(const std::vector<double> &scales, double initialScale = 65536);

// "; steps skipped for overflow: tc 1,2,5, PyTorch 1,2" (an AMP row's
// failed loss check: where two runs parted); "" when either has no scales.
std::string describeSkips(const std::vector<double> &tcScales,
                          const std::vector<double> &torchScales);

// "2.32236,2.36784" (%.7g each): the losses as stored; and read back.
std::string joinLosses(const std::vector<double> &losses);

} // namespace tc::bench
