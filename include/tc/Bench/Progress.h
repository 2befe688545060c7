// What tc-bench shows while it runs. On a terminal (stderr is a tty): a bar
// with done/total, elapsed time, ETA and what runs now, redrawn in place,
// with each result printed above it. Otherwise (CI logs, pipes): only one
// plain line per result.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace tc::bench {

class Progress {
public:
  // `total` units of work (model x precision x mode); `terminal`: draw the bar.
  Progress(size_t total, bool terminal);
  // Names what runs now (redraws the bar on a terminal).
  void start(const std::string &label);
  // A result line (stdout), without advancing.
  void line(const std::string &text);
  // `units` more units done.
  void advance(size_t units = 1);
  // Clears the bar.
  void finish();

  // "1m05s": the bar's time format, for tests.
  static std::string formatDuration(double seconds);

private:
  void draw();
  void clear();
  size_t total_, done_ = 0;
  bool terminal_;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace tc::bench
