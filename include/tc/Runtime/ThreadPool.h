// A fixed pool of worker threads for splitting a kernel's rows: the CPU
// runtime's parallel-for. Threads start once and wait between calls.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tc {

class ThreadPool {
public:
  // `threads` workers in total, the calling thread included (1: no threads).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return unsigned(workers_.size()) + 1; }
  // Calls fn(begin, end) over disjoint chunks covering [0, n), at least
  // `grain` items each, and returns when all are done.
  void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

private:
  void work(unsigned index);
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;
  unsigned chunks_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

} // namespace tc
