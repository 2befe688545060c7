// Runs a suite: every model through tc-import, tc-opt, tc-codegen and
// tc-run (subprocesses, ToolSteps.h) in each mode and precision, checked
// against the reference, timed, and turned into BenchResult rows.
//
// Modes (docs/bench.md):
//   eager      tc-opt -O0: op by op, no fusion; CUDA graphs off. The baseline.
//   default    tc-opt -O2 --target=<target>; CUDA graphs off.
//   cudagraphs default's artifact, run with CUDA graphs on (CUDA only).
//   dynamic    tc-opt -O2 with the symbolic dims kept: compiled once, run at
//              the suite's batch and at each of its dynamic batches.
// Precisions: fp32, and amp (tc-opt --precision=fp16; checked by the
// relative rule of AmpRule.h, not elementwise).
// The static modes specialize every symbolic dim of the signature to the
// batch (tc-opt --dim).
#pragma once
#include "tc/Bench/Manifest.h"
#include "tc/Bench/Progress.h"
#include "tc/Bench/Result.h"
#include "tc/Bench/TorchBaseline.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

struct RunnerOptions {
  std::string binDir;         // where tc-import ... tc-run are
  std::string workDir;        // intermediate files (IR, artifacts, reference data)
  std::string target = "cpu"; // a name in the target registry (Targets.def)
  std::string level;          // the target's tc-codegen level flag (--arch=sm_90); "": its default
  std::vector<std::string> optArgs;     // more tc-opt flags (--precision-policy=autocast)
  std::vector<std::string> codegenArgs; // more tc-codegen flags (--tune, --tuning-cache=FILE)
  std::vector<std::string> modes{"eager", "default", "dynamic"};
  std::vector<std::string> precisions{"fp32", "amp"};
  int iterations = 20, warmup = 3;
  unsigned threads = 0; // tc-run --threads on the CPU (0: tc-run's default)
  unsigned timeoutSeconds = 600;
  std::optional<int64_t> batch; // overrides the suite's
  std::optional<std::vector<int64_t>> dynamicBatches;
  // Set: PyTorch rows too (models with a recipe), timed before tc's modes
  // so that tc's rows carry their ratios to PyTorch.
  const TorchBaseline *torch = nullptr;
  // Set: a model with a recipe not found in `exportDir` is exported there
  // first; a failed export is the model's reason ("export").
  const TorchBaseline *exporter = nullptr;
  std::string exportDir;
};

// Units of work the progress bar counts for `suite` under `opts`.
size_t countUnits(const Suite &suite, const RunnerOptions &opts);

// Runs every model; `onResult` gets each row as soon as it is known (so a
// run cut short keeps what it measured). Failures are rows, never
// exceptions; only a broken work folder throws.
void runSuite(const Suite &suite, const RunnerOptions &opts, Progress &progress,
              const std::function<void(const BenchResult &)> &onResult);

// One line for a result: "small_cnn default fp32 b2: pass 1.23 ms ..." or
// "broken eager fp32 b2: FAIL import: tc-import: error: ...".
std::string formatResult(const BenchResult &r);

} // namespace tc::bench
