#include "tc/Runtime/ThreadPool.h"
#include <algorithm>
#include <omp.h>

namespace tc {

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  int64_t want = std::max<int64_t>(1, std::min<int64_t>(size(), n / std::max<int64_t>(grain, 1)));
  if (want == 1) {
    fn(0, n);
    return;
  }
  int64_t chunk = (n + want - 1) / want;
#pragma omp parallel num_threads(int(want))
  {
    int64_t begin = int64_t(omp_get_thread_num()) * chunk, end = std::min(n, begin + chunk);
    if (begin < end)
      fn(begin, end);
  }
}

unsigned ThreadPool::currentThread() { return unsigned(omp_get_thread_num()); }

} // namespace tc
