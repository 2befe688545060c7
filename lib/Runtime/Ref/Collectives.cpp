// The tensor-parallel ops (Ops.def "Distributed") over the running thread's
// rank group (tc/Runtime/Ranks.h): ranks simulated as threads, the oracle an
// NCCL run is checked against. Combining goes in rank order, in double, so
// every rank computes the same bits.
#include "Kernels.h"
#include "tc/Runtime/Ranks.h"
#include <cstring>

namespace tc::ref {

namespace {

// The running rank of a group of `ranks`: rank 0 alone when ranks is 1.
RankContext rankOf(const Op &op) {
  int64_t ranks = op.getInt("ranks");
  const RankContext &c = currentRank();
  if (ranks == 1)
    return RankContext{};
  if (c.size != ranks)
    fail(op.info().name, " over ", ranks, " ranks runs on ", ranks, " ranks (tc-run --ranks ",
         ranks, "); this run has ", c.size);
  return c;
}

void combine(const Op &op, const std::vector<HostTensor> &all, HostTensor &out) {
  const std::string &how = op.getString("reduction");
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    double v = all[0].getDouble(i);
    for (size_t r = 1; r < all.size(); ++r) {
      double x = all[r].getDouble(i);
      v = how == "sum" ? v + x : how == "max" ? std::max(v, x) : std::min(v, x);
    }
    out.setDouble(i, v);
  }
}

void checkFixedSize(const Op &op, const HostTensor &x) {
  if (dtypeSize(x.dtype()) == 0)
    fail(op.info().name, " of ", x.typeStr(), ": strings are not exchanged between ranks");
}

// Every rank's X at this collective, in rank order; null for a one-rank
// group, whose result is X itself (copied into out).
std::shared_ptr<const std::vector<HostTensor>> gather(const Op &op, const HostTensor &x,
                                                      HostTensor &out, RankContext &c) {
  c = rankOf(op);
  checkFixedSize(op, x);
  if (c.size == 1) {
    out = x;
    return nullptr;
  }
  if (!c.group) // a process of several (one GPU each): its collectives are NCCL's steps
    fail(op.info().name, " of %", op.operand(0)->name,
         " on the host of one process of a group: only the device's NCCL step exchanges "
         "between processes");
  return c.group->exchange(c.rank, x, std::string(op.info().name) + " of %" + op.operand(0)->name);
}

void rankSliceKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                     std::vector<HostTensor> &outs) {
  RankContext c = rankOf(op);
  checkFixedSize(op, *ins[0]);
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(ins[0]->rank()));
  copyPart(*ins[0], outs[0], axis, c.rank, false);
}

void allReduceKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                     std::vector<HostTensor> &outs) {
  RankContext c;
  if (auto all = gather(op, *ins[0], outs[0], c))
    combine(op, *all, outs[0]);
}

void allGatherKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                     std::vector<HostTensor> &outs) {
  RankContext c;
  auto all = gather(op, *ins[0], outs[0], c);
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(ins[0]->rank()));
  for (size_t r = 0; all && r < all->size(); ++r)
    copyPart((*all)[r], outs[0], axis, int64_t(r), true);
}

void reduceScatterKernel(const Op &op, const std::vector<const HostTensor *> &ins,
                         std::vector<HostTensor> &outs) {
  RankContext c;
  auto all = gather(op, *ins[0], outs[0], c);
  if (!all)
    return;
  HostTensor sum(ins[0]->dtype(), ins[0]->shape());
  combine(op, *all, sum);
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(ins[0]->rank()));
  copyPart(sum, outs[0], axis, c.rank, false);
}

} // namespace

void registerCollectiveKernels(KernelTable &t) {
  t[size_t(OpKind::RankSlice)] = rankSliceKernel;
  t[size_t(OpKind::AllReduce)] = allReduceKernel;
  t[size_t(OpKind::AllGather)] = allGatherKernel;
  t[size_t(OpKind::ReduceScatter)] = reduceScatterKernel;
}

} // namespace tc::ref
