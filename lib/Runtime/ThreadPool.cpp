#include "tc/Runtime/ThreadPool.h"
#include <algorithm>

namespace tc {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < std::max(threads, 1u); ++i)
    workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

// Worker i runs chunk i of each call; the caller runs chunk 0.
void ThreadPool::work(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    if (index >= chunks_)
      continue;
    const auto *fn = fn_;
    int64_t begin = int64_t(index) * chunk_, end = std::min(n_, begin + chunk_);
    lock.unlock();
    (*fn)(begin, end);
    lock.lock();
    if (--pending_ == 0)
      done_.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  int64_t want = std::max<int64_t>(1, std::min<int64_t>(size(), n / std::max<int64_t>(grain, 1)));
  if (want == 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunk_ = (n + want - 1) / want;
    chunks_ = unsigned((n + chunk_ - 1) / chunk_);
    pending_ = chunks_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  fn(0, std::min(n, chunk_));
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

} // namespace tc
