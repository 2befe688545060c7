// The CPU runtime's parallel-for over a kernel's rows. It runs on OpenMP's
// thread team, the same team oneDNN's primitives use: two pools on the same
// cores (ours waiting on a condition variable, OpenMP's spinning after each
// region) measured up to 100x slower on a 2-core machine than one shared
// team (docs/cpu-backend.md).
#pragma once
#include <cstdint>
#include <functional>

namespace tc {

class ThreadPool {
public:
  // `threads` in total, the calling thread included (1: no threads).
  explicit ThreadPool(unsigned threads) : threads_(threads ? threads : 1) {}

  unsigned size() const { return threads_; }
  // Calls fn(begin, end) over disjoint chunks covering [0, n), at least
  // `grain` items each, and returns when all are done.
  void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);
  // Inside fn: which of the team's threads runs it (0: the calling thread).
  static unsigned currentThread();

private:
  unsigned threads_;
};

} // namespace tc
