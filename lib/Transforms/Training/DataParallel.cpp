// data-parallel: a train step that N ranks run on N micro-batches at once
// (issue 37), between autodiff and append-optimizer. Each gradient, the loss
// and the buffers' new values (batch norm's running statistics) become
// their mean over the ranks, AllReduce(x) / N, so every rank applies the
// same update to the same state, as one rank accumulating the N
// micro-batches' gradients would (append-optimizer{accumulate=N}: the check
// in test/Training/data-parallel.test). A batch norm's batch statistics stay
// each rank's own, as PyTorch's DistributedDataParallel without SyncBatchNorm.
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"

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
  auto mean = [&](Value *v) {
    Location loc = v->def ? v->def->loc : Location{};
    loc.phase = Phase::Backward;
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
  std::vector<size_t> which;
  for (size_t i = 0; i <= sig->grads; ++i) // the loss, then the gradients
    which.push_back(i);
  for (size_t i = f.results.size() - sig->buffers; i < f.results.size(); ++i)
    which.push_back(i);
  for (size_t i : which)
    if (isFloat(f.results[i]->type.dtype)) {
      Value *old = f.results[i];
      f.results[i] = mean(old);
      std::swap(old->name, f.results[i]->name); // the mean keeps the public name
    }
  return true;
}

} // namespace tc
