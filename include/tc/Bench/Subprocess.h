// Runs a tool as a child process with a time limit. The bench runs every
// compile and run step this way so that a model that crashes or hangs a tool
// fails alone, with the tool's own error line, and the suite goes on.
// (Spawning is llvm::sys::ExecuteAndWait; this adds output capture, wall
// time and a one-line description of the failure.)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tc::bench {

struct ProcessResult {
  int exitCode = 0;      // meaningful when neither timedOut nor crashed
  bool timedOut = false; // killed after the time limit
  bool crashed = false;  // killed by a signal, or could not be started
  std::string out, err;  // captured stdout and stderr
  double wallSeconds = 0;
  uint64_t peakRssBytes = 0; // the child's maximum resident set (getrusage)
  std::string failure;       // why it failed (ExecuteAndWait's message for a signal)

  bool ok() const { return !timedOut && !crashed && exitCode == 0; }
  // One line saying why the step failed: the tool's "tc-X: error: ..." line
  // (the last line of stderr that has "error:", else the last line), or the
  // signal / time limit.
  std::string errorLine() const;
};

// Runs argv[0] (a path, or a name looked up in PATH) with argv; a timeout
// of 0 waits forever. Never
// throws for the child's failures; throws tc::Error when the output cannot
// be captured (no temporary files).
ProcessResult runProcess(const std::vector<std::string> &argv, unsigned timeoutSeconds);

} // namespace tc::bench
