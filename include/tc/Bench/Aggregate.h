// The dashboard's numbers, computed from stored rows (ResultStore.h):
// per suite x target x mode x precision and run, the pass rate, the
// geometric mean speedups vs tc eager, PyTorch eager and reduce-overhead,
// the mean compile time and the geometric mean peak-memory ratios (vs tc
// eager, vs PyTorch: the four numbers of PyTorch's compiler dashboard); and
// which changes between two runs are regressions rather than noise.
#pragma once
#include "tc/Bench/Result.h"
#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

// Geometric mean of the positive, finite values (ratios average
// geometrically: 2x faster and 2x slower cancel out); nullopt when none.
std::optional<double> geomean(const std::vector<double> &xs);
std::optional<double> mean(const std::vector<double> &xs);

struct GroupKey {
  std::string suite, target, mode, precision;
  std::string kind = kInference; // training rows are their own groups
  auto operator<=>(const GroupKey &) const = default;
  // "ci/cpu/default/fp32"; a training group "train-ci/cpu/default/fp32/train"
  std::string str() const;
  bool train() const { return kind == kTrain; }
};
GroupKey keyOf(const StoredResult &r);
// The order tables list groups in: inference before training, suite,
// target, then modes as a reader expects them (eager, default, cudagraphs,
// dynamic, torch-eager, torch-compile, torch-reduce-overhead) and fp32
// before amp; unknown names last.
bool displayLess(const GroupKey &a, const GroupKey &b);

// One group in one run.
struct GroupSummary {
  GroupKey key;
  RunInfo run; // the run's commit, date, machine, device
  int passed = 0, total = 0;
  // Over the passing rows that have the metric (speedup: rows at the
  // eager baseline's batch; compression: rows whose memory was measured).
  std::optional<double> geomeanSpeedup, meanCompileS, geomeanCompression;
  // Over the passing rows with PyTorch's numbers (CUDA, models with a recipe).
  std::optional<double> geomeanVsTorchEager, geomeanVsTorchReduceOverhead, geomeanMemoryVsTorch;
  std::optional<double> geomeanVsTorchCompile; // vs torch.compile() (default mode)
  int slowVsReduceOverhead = 0;                // passing rows flagged by slowerThanReduceOverhead
  int withHostSteps = 0;                       // rows whose artifact has host steps
  double passRate() const { return total ? double(passed) / total : 0; }
};

// A group over the recorded history, oldest run first.
struct GroupHistory {
  GroupKey key;
  std::vector<GroupSummary> runs;
  // The group over each model's newest row (model and batch) in any run,
  // dated by the latest run: a suite measured a few models a sweep, each
  // sweep its own run (the training zoo's train-zoo-SHA), is the sum of its
  // sweeps, not the last one. Each row's ratios to PyTorch are its own run's.
  GroupSummary standing;
  int standingRuns = 0; // the runs the standing rows come from
  const GroupSummary &latest() const { return runs.back(); }
  // What the latest run is compared with: the latest run of another commit.
  // Runs of one commit are repeats; what differs between them is noise.
  const GroupSummary *previous() const;
};

// `rows` in history order (ResultStore::all): one GroupHistory per key, sorted by key.
std::vector<GroupHistory> groupHistories(const std::vector<StoredResult> &rows);

// Noise. Timing a model twice never gives the same number; a change is a
// regression only when it is larger than `kNoise` (10%) AND outside the
// spread the two runs recorded: the new run's p10 is above the old run's
// p90 (their p10..p90 ranges do not overlap). Rows without a spread use the
// threshold alone. The p10..p90 of one run misses what changes between runs
// (other load on the machine, clocks): run a commit more than once and its
// runs' ranges are joined (mergeRepeats), so run-to-run noise widens the band.
inline constexpr double kNoise = 0.10;
bool latencyRegressed(const BenchResult &before, const BenchResult &after, double noise = kNoise);
// A model that passed and now fails.
bool statusRegressed(const BenchResult &before, const BenchResult &after);
// A group whose pass count fell, or whose headline speedup fell by more than
// `noise` (a geomean has no recorded spread: the threshold alone).
// Inference: the geomean speedup vs tc eager. Training has no tc eager
// step: the geomean speedup vs PyTorch eager (the same run's, so a slower
// machine slows both sides).
std::optional<double> headlineSpeedup(const GroupSummary &s);
bool groupRegressed(const GroupSummary &before, const GroupSummary &after, double noise = kNoise);
// The latest run of `h` against previous(): the pass count, and the best
// geomean speedup of the latest commit's runs against the worst of the
// previous commit's.
bool groupRegressed(const GroupHistory &h, double noise = kNoise);

// A model tc runs at less than half the speed of torch.compile(mode=
// "reduce-overhead"): flagged on the dashboard whatever its trend.
inline constexpr double kSlowVsReduceOverhead = 0.5;
bool slowerThanReduceOverhead(const BenchResult &r);

// One model's results in several runs of one commit as one: the latest
// run's result, with p10..p90 widened to cover every run's.
BenchResult mergeRepeats(const std::vector<BenchResult> &repeats);

// A model in a group's latest run and what it is compared with.
struct ModelChange {
  BenchResult now;                   // the latest run's row
  std::optional<BenchResult> before; // same model and batch, previous() run
  bool regressed = false;            // latencyRegressed over merged repeats, or statusRegressed
};
std::vector<ModelChange> modelChanges(const std::vector<StoredResult> &rows, const GroupHistory &h,
                                      double noise = kNoise);

// The same over the standing rows (GroupHistory::standing): each model's
// newest row, against that model's newest row in a run of another, earlier
// commit.
std::vector<ModelChange> standingChanges(const std::vector<StoredResult> &rows,
                                         const GroupHistory &h, double noise = kNoise);

// The rows of group `key` in run `runId`.
std::vector<BenchResult> rowsOf(const std::vector<StoredResult> &rows, const GroupKey &key,
                                const std::string &runId);

} // namespace tc::bench
