// The steps of the pipeline as the bench runs them: each tc tool a
// subprocess from one bin folder with a time limit, a failure turned into a
// reason and the tool's error line, and tc-run's JSON report read back.
#pragma once
#include "tc/Bench/Subprocess.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tc {
struct Artifact;
}

namespace tc::bench {

// Why a step failed: the BenchResult reason ("import", "compile", "run",
// "timeout", ...) and one line of detail.
struct Failure {
  std::string reason, error;
};

class ToolSteps {
public:
  ToolSteps(std::string binDir, unsigned timeoutSeconds)
      : binDir_(std::move(binDir)), timeout_(timeoutSeconds) {}

  // Runs `tool` (e.g. "tc-opt") with `args`. On failure returns a Failure
  // with `reason` (or "timeout") and the tool's error line; `proc` gets the
  // process result either way.
  std::optional<Failure> run(const std::string &tool, const std::vector<std::string> &args,
                             const char *reason, ProcessResult &proc) const;
  std::string path(const std::string &tool) const;

private:
  std::string binDir_;
  unsigned timeout_;
};

// The groups tc-codegen left to the host: the lines of the artifact's
// host-steps section (what tc-codegen --stats reports).
int64_t countHostSteps(const Artifact &a);

// What the bench reads from `tc-run --report=json`.
struct RunReport {
  bool ok = false;      // outputs matched the expected ones
  std::string mismatch; // the first output line that did not ("... [MISMATCH]")
  double medianMs = 0, p10Ms = 0, p90Ms = 0; // CUDA: device time (events); else wall
  std::string device;                        // CUDA device name ("" on the CPU)
  std::optional<int64_t> peakDeviceBytes;    // CUDA: what tc held at peak
  int64_t arenaBytes = 0;                    // the plan's one arena (0: sized at run time)
  std::optional<int64_t> fallbackSteps;      // steps on the reference kernels
  std::optional<bool> cudaGraph;             // CUDA: the plan ran as one CUDA graph
};
// Parses tc-run's JSON; nullopt (and `error`) when it is not a report.
std::optional<RunReport> parseRunReport(const std::string &json, std::string &error);

} // namespace tc::bench
