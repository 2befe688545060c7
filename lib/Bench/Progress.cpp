#include "tc/Bench/Progress.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace tc::bench {

Progress::Progress(size_t total, bool terminal)
    : total_(total), terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

std::string Progress::formatDuration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}

void Progress::clear() {
  if (terminal_)
    std::cerr << "\r\033[K" << std::flush;
}

void Progress::draw() {
  if (!terminal_)
    return;
  const int width = 30;
  int filled = total_ ? int(width * done_ / total_) : width;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // ETA: the mean time of a finished unit times the units left; unknown
  // before the first one.
  std::string eta = done_ ? formatDuration(elapsed / double(done_) * double(total_ - done_)) : "?";
  std::string bar(size_t(filled), '#');
  bar.resize(width, '.');
  std::string label = label_.size() > 40 ? label_.substr(0, 37) + "..." : label_;
  std::cerr << "\r\033[K[" << bar << "] " << done_ << "/" << total_ << " "
            << formatDuration(elapsed) << " ETA " << eta << "  " << label << std::flush;
}

void Progress::start(const std::string &label) {
  label_ = label;
  draw();
}

void Progress::line(const std::string &text) {
  clear();
  std::cout << text << "\n" << std::flush;
  draw();
}

void Progress::advance(size_t units) {
  done_ += units;
  draw();
}

void Progress::finish() { clear(); }

} // namespace tc::bench
