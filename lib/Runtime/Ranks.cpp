#include "tc/Runtime/Ranks.h"
#include "tc/Support/Error.h"
#include <cstring>
#include <exception>
#include <thread>

namespace tc {

namespace {
RankContext gProcess;                 // setProcessRank's
thread_local RankContext tRank;       // runRanks' thread's
thread_local bool tSimulated = false; // tRank is set
} // namespace

const RankContext &currentRank() { return tSimulated ? tRank : gProcess; }

void setProcessRank(int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    fail("rank ", rank, " is not a rank of ", size);
  gProcess = RankContext{rank, nullptr, size};
}

void copyPart(const HostTensor &src, HostTensor &dst, int64_t axis, int64_t part, bool gather) {
  const HostTensor &whole = gather ? dst : src;
  const HostTensor &piece = gather ? src : dst;
  const std::vector<int64_t> &d = whole.shape();
  int64_t outer = 1, inner = int64_t(dtypeSize(whole.dtype()));
  for (int64_t a = 0; a < axis; ++a)
    outer *= d[size_t(a)];
  for (size_t a = size_t(axis) + 1; a < d.size(); ++a)
    inner *= d[a];
  int64_t wholeRow = d[size_t(axis)] * inner, pieceRow = piece.shape()[size_t(axis)] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    size_t w = size_t(o * wholeRow + part * pieceRow), p = size_t(o * pieceRow);
    if (gather)
      std::memcpy(dst.bytes() + w, src.bytes() + p, size_t(pieceRow));
    else
      std::memcpy(dst.bytes() + p, src.bytes() + w, size_t(pieceRow));
  }
}

RankGroup::RankGroup(int size) : size_(size), slots_(size_t(size)), whats_(size_t(size)) {
  if (size < 1)
    fail("a rank group needs at least one rank, not ", size);
}

std::shared_ptr<const std::vector<HostTensor>> RankGroup::exchange(int rank, const HostTensor &mine,
                                                                   const std::string &what) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto stopped = [&] {
    return !reason_.empty() ? reason_
           : failed_        ? std::string("another rank failed")
                     : "a rank finished without reaching it (the ranks run different programs?)";
  };
  if (failed_ || left_)
    fail("rank ", rank, " at ", what, ": ", stopped());
  uint64_t gen = generation_;
  slots_[size_t(rank)] = mine;
  whats_[size_t(rank)] = what;
  if (++arrived_ < size_) {
    cv_.wait(lock, [&] { return generation_ != gen || failed_ || left_; });
    if (generation_ == gen)
      fail("rank ", rank, " at ", what, ": ", stopped());
    return done_;
  }
  // The last to arrive: every rank must be at the same collective.
  for (int r = 0; r < size_; ++r)
    if (whats_[size_t(r)] != what) { // every rank says so, whichever reports first
      failed_ = true;
      reason_ = "the ranks reached different collectives: rank " + std::to_string(r) + " at " +
                whats_[size_t(r)] + ", rank " + std::to_string(rank) + " at " + what;
      cv_.notify_all();
      fail(reason_);
    }
  done_ = std::make_shared<const std::vector<HostTensor>>(std::move(slots_));
  slots_.assign(size_t(size_), HostTensor());
  arrived_ = 0;
  ++generation_;
  cv_.notify_all();
  return done_;
}

void RankGroup::leave(int, bool failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++left_;
  failed_ = failed_ || failed;
  cv_.notify_all();
}

void runRanks(int n, const std::function<void(int)> &fn) {
  RankGroup group(n);
  // The first failure in time is the cause; the others' are "another rank failed".
  std::mutex first;
  std::exception_ptr cause;
  auto body = [&](int rank) {
    tRank = RankContext{rank, &group, n};
    tSimulated = true;
    bool failed = false;
    try {
      fn(rank);
    } catch (...) {
      std::lock_guard<std::mutex> lock(first);
      if (!cause)
        cause = std::current_exception();
      failed = true;
    }
    group.leave(rank, failed);
    tRank = RankContext{};
    tSimulated = false;
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < n; ++r)
    threads.emplace_back(body, r);
  body(0);
  for (std::thread &t : threads)
    t.join();
  if (cause)
    std::rethrow_exception(cause);
}

} // namespace tc
