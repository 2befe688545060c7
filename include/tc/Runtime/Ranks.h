// The ranks of a tensor-parallel program run as threads of one process: the
// reference executor's collectives (AllReduce, AllGather, ReduceScatter,
// RankSlice; Ops.def "Distributed") read the running thread's rank and
// exchange tensors through its group, so an N-rank program is checked on one
// machine (`tc-run --ranks N`) against its one-rank original.
#pragma once
#include "tc/Runtime/HostTensor.h"
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tc {

// N ranks meeting at collectives. A rank that fails or finishes while the
// others wait at a collective aborts the group: every waiting and later
// exchange throws, so a mismatched program is an error, never a hang.
class RankGroup {
public:
  explicit RankGroup(int size);
  int size() const { return size_; }
  // Rank `rank`'s tensor at the collective `what` (the op and its value, which
  // every rank must reach in the same order); every rank's, in rank order,
  // once all have arrived.
  std::shared_ptr<const std::vector<HostTensor>> exchange(int rank, const HostTensor &mine,
                                                          const std::string &what);
  // A rank stopped (failed, or ran out of ops): waiting ranks give up.
  void leave(int rank, bool failed);

private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  int arrived_ = 0, left_ = 0;
  bool failed_ = false;
  std::vector<HostTensor> slots_;
  std::vector<std::string> whats_;
  std::string reason_; // why the group stopped, where every rank should say the same
  std::shared_ptr<const std::vector<HostTensor>> done_;
};

// The running thread's rank, group and the group's size: a simulated rank's
// (runRanks), else this process's (setProcessRank: one of `size` processes,
// one GPU each, whose collectives are NCCL's; no group), else rank 0 of 1.
struct RankContext {
  int rank = 0;
  RankGroup *group = nullptr;
  int size = 1;
};
const RankContext &currentRank();
// This process is rank `rank` of `size` (tc-run --gpus, a launcher): what
// currentRank() gives threads outside runRanks from then on.
void setProcessRank(int rank, int size);

// Part `part` along `axis` of a whole tensor: copied out of `src` (the whole)
// into `dst` (the part), or, with `gather`, from `src` (the part) into its
// place in `dst` (the whole). A rank's shard, an all-gather's pieces.
void copyPart(const HostTensor &src, HostTensor &dst, int64_t axis, int64_t part, bool gather);

// Runs fn(rank) for rank 0..n-1, each on its own thread within its rank's
// context; after all have stopped, rethrows the first failure (the cause:
// the ranks it stopped fail with "another rank failed").
void runRanks(int n, const std::function<void(int)> &fn);

} // namespace tc
