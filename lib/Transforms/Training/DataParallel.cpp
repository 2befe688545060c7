// data-parallel: a train step that N ranks run on N micro-batches at once
// (issue 37), between autodiff and append-optimizer. Each gradient, the loss
// and the buffers' new values (batch norm's running statistics) become
// their mean over the ranks, AllReduce(x) / N, so every rank applies the
// same update to the same state, as one rank accumulating the N
// micro-batches' gradients would (append-optimizer{accumulate=N}: the check
// in test/Training/data-parallel.test). A batch norm's batch statistics stay
// each rank's own, as PyTorch's DistributedDataParallel without SyncBatchNorm.
//
// Gradients are reduced in buckets, as DistributedDataParallel does: those
// of a dtype, in order, flattened and joined by one Concat up to `bucket-mb`
// MiB (and 64 gradients), one AllReduce of the bucket, and each gradient's mean a contiguous
// Slice of the bucket's (a view), reshaped. One collective call a bucket,
// not one a gradient (a transformer has ~200: NCCL's latency each), for a
// copy of the gradients into the bucket.
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <map>

namespace tc {

bool runDataParallelPass(Module &m, const PassOptions &opts) {
  int64_t ranks = opts.getInt("ranks");
  if (ranks < 1)
    fail("data-parallel: ranks must be >= 1, not ", ranks);
  Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig || sig->grads == 0 || sig->step)
    fail("data-parallel: main must return the loss and the gradients (after autodiff, before "
         "append-optimizer)");
  if (ranks == 1)
    return false;
  auto locOf = [](Value *v) {
    Location loc = v->def ? v->def->loc : Location{};
    loc.phase = Phase::Backward;
    return loc;
  };
  auto mean = [&](Value *v) {
    Location loc = locOf(v);
    Op *ar =
        f.addOp(OpKind::AllReduce, {v}, {f.uniqueName(v->name + "_ranks_sum")}, {v->type}, loc);
    ar->setAttr("ranks", Attribute(ranks));
    HostTensor inv(v->type.dtype, {});
    inv.setDouble(0, 1.0 / double(ranks));
    Value *k = f.addConstant(f.uniqueName(v->name + "_ranks_inv"), TensorType{v->type.dtype, {}},
                             TensorData::copyOf(inv.bytes(), inv.byteSize()), loc);
    return f
        .addOp(OpKind::Mul, {ar->result(), k}, {f.uniqueName(v->name + "_ranks_mean")}, {v->type},
               loc)
        ->result();
  };
  // Result i becomes `to`, which takes the public name.
  auto replace = [&](size_t i, Value *to) {
    Value *old = f.results[i];
    f.results[i] = to;
    std::swap(old->name, to->name);
  };
  // The buckets: gradient results (static float) by dtype, in order, at most
  // kBucketParts a Concat (its kernel's parameter holds a pointer and dims each).
  constexpr size_t kBucketParts = 64;
  int64_t bucketBytes = opts.getInt("bucket-mb") << 20;
  std::vector<std::vector<size_t>> buckets;
  std::vector<int64_t> filled;     // each bucket's bytes
  std::map<DType, size_t> open;    // dtype -> its bucket being filled
  std::vector<size_t> alone = {0}; // the loss, and what no bucket takes
  for (size_t i = 1; i <= sig->grads; ++i) {
    const TensorType &t = f.results[i]->type;
    std::optional<size_t> bytes = byteSize(t);
    if (!isFloat(t.dtype) || !bytes || bucketBytes <= 0) {
      alone.push_back(i);
      continue;
    }
    auto it = open.find(t.dtype);
    if (it == open.end() || filled[it->second] + int64_t(*bytes) > bucketBytes ||
        buckets[it->second].size() == kBucketParts) {
      it = open.insert_or_assign(t.dtype, buckets.size()).first;
      buckets.emplace_back();
      filled.push_back(0);
    }
    buckets[it->second].push_back(i);
    filled[it->second] += int64_t(*bytes);
  }
  for (size_t i = f.results.size() - sig->buffers; i < f.results.size(); ++i)
    alone.push_back(i);
  for (const std::vector<size_t> &bucket : buckets) {
    if (bucket.size() == 1) {
      alone.push_back(bucket[0]);
      continue;
    }
    Location loc = locOf(f.results[bucket[0]]);
    std::vector<Value *> flat;
    std::vector<int64_t> sizes;
    for (size_t i : bucket) {
      Value *g = f.results[i];
      sizes.push_back(*staticNumElements(g->type.shape));
      flat.push_back(addInferredOp(f, OpKind::Reshape,
                                   {g, addIntsConstant(f, g->name + "_flat", {-1}, loc)}, {},
                                   g->name, loc));
    }
    Value *joined = addInferredOp(f, OpKind::Concat, flat, {{"axis", Attribute(int64_t(0))}},
                                  f.results[bucket[0]]->name + "_bucket", loc);
    Value *avg = mean(joined);
    int64_t start = 0;
    for (size_t k = 0; k < bucket.size(); ++k) {
      Value *g = f.results[bucket[k]];
      Value *part = addInferredOp(f, OpKind::Slice,
                                  {avg, addIntsConstant(f, g->name + "_starts", {start}, loc),
                                   addIntsConstant(f, g->name + "_ends", {start + sizes[k]}, loc),
                                   addIntsConstant(f, g->name + "_axes", {0}, loc)},
                                  {}, g->name + "_ranks", loc);
      start += sizes[k];
      Value *shape = addIntsConstant(f, g->name + "_shape", staticDims(g->type.shape), loc);
      replace(bucket[k],
              addInferredOp(f, OpKind::Reshape, {part, shape}, {}, g->name + "_ranks", loc));
    }
  }
  for (size_t i : alone)
    if (isFloat(f.results[i]->type.dtype))
      replace(i, mean(f.results[i]));
  return true;
}

} // namespace tc
