// One benchmark result: a model compiled and run in one mode at one precision
// and batch, with why it failed or what it measured; and the run (one
// tc-bench invocation) it belongs to. These are the rows of the SQLite
// history (ResultStore.h) and what the dashboard aggregates (Aggregate.h).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tc::bench {

// What one tc-bench invocation shares between its rows.
struct RunInfo {
  // "<date> <machine> <pid>" per invocation, or --run-id: the parts of a
  // suite run in several invocations (--shard) share one to be one run.
  std::string runId;
  std::string commit;  // tc's git commit (git rev-parse, or --commit)
  std::string date;    // UTC, ISO 8601 ("2026-11-23T07:30:00Z"): sorts as time
  std::string machine; // host name (or --machine)
  std::string device;  // CPU model name, or the CUDA device tc-run reports
  std::string suite;   // manifest suite ("ci", "vision", ...)
  std::string target;  // "cpu" or "cuda"
};

// Why a result failed, in pipeline order; "" when it passed.
//   missing   - no ONNX file for the model (not exported)
//   import    - tc-import failed
//   reference - no expected outputs: the reference executor failed, or they hold NaN
//   compile   - tc-opt or tc-codegen failed
//   run       - tc-run failed (error, crash)
//   numerics  - outputs differ from the reference beyond tolerance (or NaN);
//               amp: relErr above errBound (AmpRule.h)
//   export    - the model's recipe could not be exported to ONNX (tc-bench --export)
//   timeout   - a step ran past --timeout (the step is named in `error`)
//   torch     - the PyTorch baseline failed
//   losses    - training: the losses differ from PyTorch's beyond LossRule.h's bound
// What a row measured: an inference run, a train step (tc-bench --train,
// TrainRunner.h: latency is ms per step, relErr the losses' distance), or a
// point of the kernel-family grid (utils/kernel-grid.py's JSON lines,
// tc-bench --import-grid, Grid.h: model is the point's name, group its
// family, precision its dtype, latency tc's time, roofline its fraction).
inline constexpr const char *kInference = "inference";
inline constexpr const char *kTrain = "train";
inline constexpr const char *kGrid = "grid";
struct BenchResult {
  std::string kind = kInference; // kInference, kTrain or kGrid
  std::string model, group;
  // eager, default, cudagraphs, dynamic; PyTorch's: torch-eager, torch-compile,
  // torch-reduce-overhead (TorchBaseline.h)
  std::string mode;
  std::string precision; // fp32 or amp
  int64_t batch = 0;
  bool passed = false;
  std::string reason; // see above
  std::string error;  // the failing tool's one-line error, or the mismatch line
  // Metrics: absent (SQL NULL) when not measured.
  std::optional<double> latencyMs;    // median (CUDA: device time by CUDA events; CPU: wall)
  std::optional<double> p10Ms, p90Ms; // spread of the timed iterations
  std::optional<double> speedup;      // eager latency / this latency (same model, precision, batch)
  std::optional<double> compileS;     // wall time of tc-import + tc-opt + tc-codegen
  // The three tools' seconds of compileS (a train step's), printed beside it
  // to show which stage a slow compile is in; not stored.
  std::optional<std::array<double, 3>> compileParts;
  std::optional<int64_t> peakBytes; // see memoryKind
  std::string memoryKind; // "device": CUDA bytes tc held at peak; "arena+weights": CPU plan
  std::optional<double> compression; // eager peakBytes / this peakBytes
  // tc-run's maximum resident set (getrusage): everything the process held
  // (runtime, JIT, libraries, inputs); an upper bound, not the model's own.
  std::optional<int64_t> rssBytes;
  // Steps of the plan that ran on the reference kernels (no generated kernel
  // or library call for them): why a mode is slow.
  std::optional<int64_t> fallbackSteps;
  // PyTorch's latency / this latency, same run, model, precision and batch:
  // vs eager and vs torch.compile(mode="reduce-overhead") (CUDA graphs, like
  // tc's cudagraphs mode). PyTorch rows carry theirs vs PyTorch eager.
  std::optional<double> vsTorchEager, vsTorchReduceOverhead;
  // ... and vs torch.compile() (default mode): training's compiled baseline.
  std::optional<double> vsTorchCompile;
  // PyTorch eager's peak (torch.cuda.max_memory_allocated) / peakBytes.
  std::optional<double> memoryVsTorch;
  // Groups tc-codegen left to the host (the artifact's host-steps section):
  // each costs copies off the device and the CUDA graph.
  std::optional<int64_t> hostSteps;
  // tc-run replayed the plan as one CUDA graph (CUDA only; NULL elsewhere).
  std::optional<bool> graphCaptured;
  // amp rows (AmpRule.h): tc's relative error max|out - ref| / max|ref|
  // (worst output), the bound it was held to, and PyTorch AMP's own error on
  // the same inputs that the bound came from (absent without PyTorch).
  // PyTorch's amp rows carry their torchAmpErr.
  // Training rows (LossRule.h): relErr is the losses' relative distance at
  // the last step from PyTorch's (fp32: eager fp32's; amp: fp32 eager's, as
  // PyTorch AMP's own distance is torchAmpErr), errBound its bound.
  std::optional<double> relErr, errBound, torchAmpErr;
  // Training: the steps run (each timed, its loss read back) and their
  // losses, "2.32236,2.36784,..." ("" for inference).
  std::optional<int64_t> trainSteps;
  std::string losses;
  // Grid points: the minimum traffic (every input read and output written
  // once), the FLOP count, which of the two bounds the roofline
  // ("memory" | "compute"), and the fraction of that roofline reached.
  std::optional<int64_t> trafficBytes;
  std::optional<double> flops, roofline;
  std::string bound;
};

// A stored row: the result and its run.
struct StoredResult {
  RunInfo run;
  BenchResult result;
};

} // namespace tc::bench
