// Known rows for the bench unit tests: two runs of suite ci on the CPU,
// mode default, where model b gets 50% slower (beyond its spread) and model
// c stops passing in the second.
#pragma once
#include "tc/Bench/Result.h"
#include <vector>

namespace tc::bench::testing {

inline RunInfo run(const std::string &id, const std::string &date) {
  return {id, "c" + id, date, "host", "cpu", "ci", "cpu"};
}

inline BenchResult row(const std::string &model, const std::string &mode, bool pass,
                       std::optional<double> ms = std::nullopt,
                       std::optional<double> speedup = std::nullopt,
                       std::optional<double> compile = std::nullopt,
                       std::optional<double> compression = std::nullopt) {
  BenchResult r;
  r.model = model;
  r.mode = mode;
  r.precision = "fp32";
  r.batch = 2;
  r.passed = pass;
  r.reason = pass ? "" : "numerics";
  r.latencyMs = ms;
  if (ms) {
    r.p10Ms = *ms * 0.95;
    r.p90Ms = *ms * 1.05;
  }
  r.speedup = speedup;
  r.compileS = compile;
  r.compression = compression;
  return r;
}

inline std::vector<StoredResult> history() {
  RunInfo r1 = run("1", "2026-11-22T10:00:00Z"), r2 = run("2", "2026-11-23T10:00:00Z");
  return {
      {r1, row("a", "default", true, 1.0, 2.0, 1.0, 2.0)},
      {r1, row("b", "default", true, 2.0, 8.0, 3.0, 0.5)},
      {r1, row("c", "default", true, 1.0, 1.0, 2.0, 1.0)},
      {r2, row("a", "default", true, 1.0, 2.0, 1.0, 2.0)},
      {r2, row("b", "default", true, 3.0, 4.0, 2.0, 0.5)},
      {r2, row("c", "default", false)},
      {r2, row("d", "default", false)},
  };
}

// One vision run on CUDA in two parts (one run id, two dates), mode
// cudagraphs, with PyTorch's ratios: r50 (4x eager, 0.25x reduce-overhead:
// flagged, 2 host steps), vit (4x, 1x), bert failing with a host step.
inline std::vector<StoredResult> visionOnCuda() {
  RunInfo part1{"zoo", "c1", "2026-11-22T10:00:00Z", "gpu", "H100", "vision", "cuda"};
  RunInfo part2 = part1;
  part2.date = "2026-11-22T10:20:00Z";
  auto gpuRow = [](const std::string &model, bool pass, double vsEager, double vsRo, double memory,
                   double compile, int64_t hostSteps) {
    BenchResult r = row(model, "cudagraphs", pass, pass ? std::optional(1.0) : std::nullopt,
                        std::nullopt, pass ? std::optional(compile) : std::nullopt);
    if (pass) {
      r.vsTorchEager = vsEager;
      r.vsTorchReduceOverhead = vsRo;
      r.memoryVsTorch = memory;
      r.graphCaptured = hostSteps == 0;
    }
    r.hostSteps = hostSteps;
    return r;
  };
  return {{part1, gpuRow("r50", true, 4.0, 0.25, 8.0, 10.0, 2)},
          {part2, gpuRow("vit", true, 4.0, 1.0, 2.0, 20.0, 0)},
          {part2, gpuRow("bert", false, 0, 0, 0, 0, 1)}};
}

// Two training runs (tc-bench --train) of suite train-ci, commits c1 and
// c2: tc's step (mode default) against PyTorch eager and torch.compile; in
// the second, m's step takes twice as long (vs PyTorch eager 4x -> 2x) and
// n's losses diverge (reason losses).
inline std::vector<StoredResult> trainingHistory() {
  RunInfo r1{"t1", "c1", "2026-11-22T10:00:00Z", "gpu", "H100", "train-ci", "cuda"};
  RunInfo r2{"t2", "c2", "2026-11-23T10:00:00Z", "gpu", "H100", "train-ci", "cuda"};
  auto step = [](const std::string &model, bool pass, double ms, double vsEager) {
    BenchResult r = row(model, "default", pass, ms, std::nullopt, 2.0);
    r.kind = kTrain;
    r.reason = pass ? "" : "losses";
    r.vsTorchEager = vsEager;
    r.vsTorchCompile = vsEager / 2;
    r.memoryVsTorch = 1.5;
    r.trainSteps = 3;
    r.losses = "2.3,2.2,2.1";
    r.relErr = pass ? 1e-6 : 1e-2;
    r.errBound = 1e-3;
    return r;
  };
  return {{r1, step("m", true, 1.0, 4.0)},
          {r1, step("n", true, 1.0, 4.0)},
          {r2, step("m", true, 2.0, 2.0)},
          {r2, step("n", false, 1.0, 4.0)}};
}

} // namespace tc::bench::testing
