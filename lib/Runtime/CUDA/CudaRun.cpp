// CudaModel::run: per-shape plans over one device arena, kernel launches per
// the kernel table's launch rule, cuBLASLt/cuDNN calls for library groups,
// host fallbacks through the reference kernels (the same per-op path as the
// CPU runtime's). Everything of a run is enqueued on one stream, work_: the
// model's own or the caller's (runOn).
#include "CudaShapePlan.h"
#include "Cupti.h"
#include "LibraryLoader.h"
#include "tc/Analysis/StepCost.h"
#include "tc/CodeGen/KernelFault.h"
#include "tc/CodeGen/MultiTensor.h"
#include "tc/IR/OpTable.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/Ranks.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <unordered_set>

namespace tc {

namespace {

uint64_t alignUp(uint64_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

} // namespace

// The device copy of constant `v`: the artifact's weights are uploaded once
// per model, constants folded for one shape once per plan (`folded`: the
// plan's; an unplanned run's own). On the run's stream, so the steps after
// it see the bytes (the source outlives the copy).
cuda::CUdeviceptr CudaModel::weightOnDevice(const Value &v,
                                            std::map<const uint8_t *, cuda::DeviceMemory> &folded) {
  const TensorData &data = *v.data;
  if (!data.size)
    return 0;
  const MemoryBuffer &sec = artifact_.require(kSectionModule);
  bool inArtifact = data.ptr >= reinterpret_cast<const uint8_t *>(sec.data()) &&
                    data.ptr < reinterpret_cast<const uint8_t *>(sec.data()) + sec.size();
  auto &cache = inArtifact ? weights_ : folded;
  auto it = cache.find(data.ptr);
  if (it == cache.end()) {
    cuda::DeviceMemory mem(data.size);
    const cuda::Driver &d = cuda::driver();
    d.check(d.memcpyHtoDAsync(mem.get(), data.ptr, data.size, work_), "cuMemcpyHtoDAsync");
    it = cache.emplace(data.ptr, std::move(mem)).first;
  }
  return it->second.get();
}

// This rank's part of a RankSlice'd weight, uploaded once per model (the
// whole stays in the artifact's host memory; the device holds the part).
cuda::CUdeviceptr CudaModel::shardOnDevice(const Op &rankSlice) {
  const Value &w = *rankSlice.operand(0);
  if (!w.isConstant())
    fail(artifact_.file, ": ", rankSlice.where(), ": RankSlice of %", w.name,
         ", a computed value: only weights are sharded (tc-opt folds what computes them)");
  communicator();                          // this process's rank
  int64_t axis = rankSlice.getInt("axis"); // checked by the shape rule
  if (axis < 0)
    axis += int64_t(w.type.shape.size());
  auto key = std::make_pair(w.data->ptr, axis);
  auto it = shards_.find(key);
  if (it == shards_.end()) {
    HostTensor whole(w.type.dtype, staticDims(w.type.shape));
    std::copy(w.data->ptr, w.data->ptr + whole.byteSize(), whole.bytes());
    HostTensor part(w.type.dtype, staticDims(rankSlice.result()->type.shape));
    copyPart(whole, part, axis, commRank_, false);
    cuda::DeviceMemory mem(part.byteSize());
    const cuda::Driver &d = cuda::driver();
    d.check(d.memcpyHtoDAsync(mem.get(), part.bytes(), part.byteSize(), work_),
            "cuMemcpyHtoDAsync");
    d.check(d.streamSynchronize(work_), "cuStreamSynchronize"); // `part` goes now
    it = shards_.emplace(key, std::move(mem)).first;
  }
  return it->second.get();
}

// A kernel's by-value parameter over `values` (its arguments, then
// results); `at` gives a value's buffer (default: where the plan put it).
std::vector<uint64_t> CudaModel::kernelParams(ShapePlan &plan,
                                              const std::vector<const Value *> &values,
                                              const std::vector<cuda::CUdeviceptr> &at) {
  std::vector<uint64_t> bufs;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < values.size(); ++i) {
    bufs.push_back(i < at.size() && at[i] ? at[i] : devicePtr(plan, values[i]));
    for (const Dim &d : values[i]->type.shape)
      dims.push_back(d.size);
  }
  return packKernelParams(bufs, dims);
}

// A MatMul/Gemm/Conv group of the plan as a library call (makeLibraryStep)
// over the plan's buffers. Returns the step's report.
std::string CudaModel::planLibraryStep(ShapePlan &plan, const Op &op, const Kernel &k, Step &s) {
  LibraryOperands o;
  o.group = plan.planned->module->lookup(op.getString("callee"));
  for (const Value *v : op.operands)
    o.args.push_back(v->type);
  o.result = op.result()->type;
  o.operand = [&](size_t i) { return devicePtr(plan, op.operand(i)); };
  o.result0 = devicePtr(plan, op.result());
  o.epilogueParams = [&](cuda::CUdeviceptr anchor) {
    // The epilogue group's arguments: the group's, then the anchor's result
    // (result 0's buffer itself unless the dtype changes); its results: the
    // group's. (The anchor's slot has result 0's dims: the same shape.)
    std::vector<const Value *> values(op.operands.begin(), op.operands.end());
    values.push_back(op.result());
    std::vector<cuda::CUdeviceptr> at(values.size(), 0);
    at.back() = anchor;
    values.insert(values.end(), op.results.begin(), op.results.end());
    return kernelParams(plan, values, at);
  };
  return makeLibraryStep(o, k, s);
}

// The group as a library call, then (unless the library took the whole
// epilogue) its epilogue kernel in place over the result, or why the host
// runs it. Returns the step's report.
std::string CudaModel::makeLibraryStep(const LibraryOperands &o, const Kernel &k, Step &s) {
  auto host = [&](const std::string &why) {
    s.kind = Step::Kind::Host;
    return "host (reference kernels): " + why;
  };
  if (!libraries_)
    return host("--cuda-libraries=off");
  const Function &group = *o.group;
  const std::vector<TensorType> &args = o.args;
  const TensorType &result = o.result;
  // The anchor writes the result in place, or, when the epilogue changes the
  // dtype (a Cast the library does not fold), a buffer of its own the
  // epilogue kernel reads.
  const TensorType anchored{group.ops.front()->result()->type.dtype, result.shape};
  cuda::CUdeviceptr out = o.result0;
  auto ownBuffer = [&] {
    if (anchored.dtype == result.dtype)
      return;
    s.scratch = cuda::DeviceMemory(*byteSize(anchored));
    out = s.scratch.get();
  };
  auto ptr = [&](int arg) { return arg < 0 ? 0 : o.operand(size_t(arg)); };
  std::string why, what;
  bool folded = false;
  if (k.entry.library == "cublaslt") {
    std::optional<GemmDesc> g = describeGemm(group, args, anchored, why);
    if (!g)
      return host(why);
    if (!g->castF32)
      ownBuffer();
    if (!g->epilogueFolded && !k.entry.hasKernel())
      return host("the epilogue has no CUDA kernel");
    if (!cublasLt_) {
      cuda::requireLibraryMajor("cuBLASLt", cuda::CublasLt::version(), artifact_.built.cublasLt,
                                artifact_.file);
      cublasLt_ = std::make_unique<cuda::CublasLt>();
    }
    cuda::CallTuning tuning;
    auto call = [&] {
      what = "cublaslt " + g->describe();
      tuning = callTuning(what);
      s.gemm = cuda::CublasLtCall::create(
          *cublasLt_, *g, {ptr(g->a), ptr(g->b), ptr(g->c), ptr(g->bias), out}, tuning, why);
    };
    call();
    // A cuBLASLt without an algorithm for the folded epilogue (f32 D from
    // halves, a bias, ReLU or GELU, a residual C): the GEMM alone, into a
    // buffer of its own where the dtype changes, then the epilogue kernel,
    // not the host.
    std::string refused;
    if (!s.gemm && g->epilogueFolded && k.entry.hasKernel()) {
      refused = " (" + why + ": the epilogue kernel instead)";
      if ((g = describeGemm(group, args, anchored, why, /*fold=*/false))) {
        ownBuffer();
        call();
      }
    }
    if (!s.gemm)
      return host(why);
    what += (g->dtype == DType::F32 && tuning.tf32 == Tf32::All ? " tf32" : "") +
            tunedText(what, tuning) + refused;
    folded = g->epilogueFolded;
  } else {
    std::optional<ConvDesc> c = describeConv(group, args, anchored, why);
    if (!c)
      return host(why);
    ownBuffer();
    if (!c->graphTakesEpilogue() && !k.entry.hasKernel())
      return host("the epilogue has no CUDA kernel");
    if (!cudnn_) {
      cuda::requireLibraryMajor("cuDNN", cuda::Cudnn::version(), artifact_.built.cudnn,
                                artifact_.file);
      cudnn_ = std::make_unique<cuda::Cudnn>(work_);
    }
    cuda::CudnnConv::Pointers p{{}, out};
    for (size_t i = 0; i < args.size(); ++i)
      p.args.push_back(ptr(int(i)));
    // The key of a conv's recorded choice: what it computes and fuses.
    std::string key = "cudnn " + c->describe(false) + " [" + c->fusedText() + "]";
    cuda::CallTuning tuning = callTuning(key);
    s.conv = cuda::CudnnConv::create(*cudnn_, *c, p, cudnnApi_, tuning, why);
    if (!s.conv)
      return host(why);
    folded = s.conv->takesEpilogue();
    if (!folded && !k.entry.hasKernel()) {
      s.conv.reset();
      return host("the epilogue has no CUDA kernel and the graph API turned it down");
    }
    what = s.conv->describe() + tunedText(key, tuning);
  }
  s.kind = Step::Kind::Library;
  if (folded)
    return what;
  s.fn = k.fn;
  s.launch = *launchDims(k.entry, staticDims(result.shape)); // not empty: checked before
  s.params = o.epilogueParams(out);
  return what + " + kernel " + k.entry.symbol + " <<<" + std::to_string(s.launch.grid) + ", " +
         std::to_string(s.launch.block) + ">>>";
}

// auto's rule without a recorded choice: cuDNN for long sequences and for
// many unmasked scores. On the H100 (cuDNN 9.14, docs/cuda-bench.md session
// 24) its engine ran S = 1024 and 4096 at 1.75-2.83x PyTorch's flash and
// 2.2-2.7x tc's kernel, whisper's 1500 x 1500 at 1.7x the kernel, and
// vit_b_16 at batch 32 (32 x 12 x 197 x 197 scores, no mask) 1.057x faster
// end to end; with fewer scores or a mask the kernel was as fast or faster
// (bert and gpt2 at 8 x 12 x 128 x 128: 0.994; beit's masked 32 x 12 x 197^2:
// 0.956; every one at batch 1: 0.93-0.95).
namespace {
bool cudnnByDefault(const AttentionDesc &a) {
  if (a.sq >= 512 && a.skv >= 512)
    return true;
  return !a.mask && !a.causal && a.batch * a.heads * a.sq * a.skv >= (int64_t(1) << 23);
}
} // namespace

// An Attention group planned as its kernel (`kernel`: the step's report)
// run through cuDNN's fused flash attention instead, when the choice
// (attention_, or under auto the recorded one) says cuDNN and cuDNN takes
// it; a refusal keeps the kernel and says why (the step and one note).
// Under tc-codegen --tune, auto times both and records the winner by the
// attention's description. Returns the step's report.
std::string CudaModel::planAttentionStep(ShapePlan &plan, const Op &op, Step &s,
                                         std::string kernel) {
  if (attention_ == AttentionImpl::Kernel || !libraries_)
    return kernel;
  const Function &group = *plan.planned->module->lookup(op.getString("callee"));
  std::vector<TensorType> args;
  for (const Value *v : op.operands)
    args.push_back(v->type);
  std::string why;
  std::optional<AttentionDesc> a = describeAttention(group, args, op.result()->type, why);
  std::string choiceKey = "implementation " + (a ? a->describe() : std::string());
  bool timing = false;
  if (attention_ == AttentionImpl::Auto) {
    // What cuDNN is not offered runs the kernel without a note. Else the
    // recorded choice (the artifact's, or --tune's cache), else --tune
    // times both, else the rule below.
    if (!a)
      return kernel + " (cuDNN: " + why + ")";
    cuda::CallTuning recorded = callTuning(choiceKey);
    if (recorded.recorded) {
      recorded.chosen = recorded.recorded->choice;
      recorded.us = recorded.recorded->us;
      tunedText(choiceKey, recorded); // --tune: a cache hit is a winner too
      if (recorded.chosen != "cudnn")
        return kernel;
    } else {
      timing = tuneRun_ != nullptr;
      if (!timing && !cudnnByDefault(*a))
        return kernel;
    }
  }
  auto refused = [&](const std::string &reason) {
    tuningNote("attention @" + op.getString("callee") + " runs tc's kernel: cuDNN " +
               (a ? "turned it down (" : "is not offered it (") + reason + ")");
    return kernel + " (cuDNN: " + reason + ")";
  };
  if (!a)
    return refused(why);
  if (!cudnn_) {
    try {
      cuda::requireLibraryMajor("cuDNN", cuda::Cudnn::version(), artifact_.built.cudnn,
                                artifact_.file);
      cudnn_ = std::make_unique<cuda::Cudnn>(work_);
    } catch (const Error &e) { // no cuDNN here: the kernel runs
      return refused(e.what());
    }
  }
  cuda::CudnnAttention::Pointers p{{}, devicePtr(plan, op.result())};
  for (const Value *v : op.operands)
    p.args.push_back(devicePtr(plan, v));
  std::string key = "cudnn " + a->describe();
  cuda::CallTuning tuning = callTuning(key);
  std::unique_ptr<cuda::CudnnAttention> call;
  try {
    call = cuda::CudnnAttention::create(*cudnn_, *a, p, tuning, why);
  } catch (const Error &e) { // a candidate that failed to run while timed
    why = e.what();
  }
  if (!call)
    return refused(why);
  std::string what = call->describe() + tunedText(key, tuning);
  if (timing) { // the kernel against cuDNN's fastest engine, on the same data
    double ms = tuneRun_->tuner.timeMs([&] { s.launchKernel(tuneRun_->tuner.stream()); });
    bool cudnnWins = tuning.us > 0 && (ms < 0 || tuning.us < ms * 1000);
    cuda::CallTuning won;
    won.chosen = cudnnWins ? "cudnn" : "kernel";
    won.us = cudnnWins ? tuning.us : ms * 1000;
    tunedText(choiceKey, won); // recorded in the artifact and the cache
    if (!cudnnWins)
      return kernel + " (tuned: kernel " + std::to_string(int(ms * 1000)) + " us, cuDNN " +
             std::to_string(int(tuning.us)) + " us)";
  }
  s.kind = Step::Kind::Library;
  s.sdpa = std::move(call);
  s.fn = nullptr; // a library step's kernel is its epilogue's: none here
  s.params.clear();
  return what;
}

namespace {

// Whether result `r` of Fused `op` (calling `callee`) depends on the
// callee's argument `k`.
bool resultReads(const Function &callee, const Op &op, const Value *r, size_t k) {
  auto at = std::find(op.results.begin(), op.results.end(), r);
  if (at == op.results.end() || size_t(at - op.results.begin()) >= callee.results.size())
    return false;
  std::vector<const Value *> todo{callee.results[size_t(at - op.results.begin())]};
  std::unordered_set<const Value *> seen;
  while (!todo.empty()) {
    const Value *v = todo.back();
    todo.pop_back();
    if (v == callee.args[k])
      return true;
    if (!v || !seen.insert(v).second || !v->def)
      continue;
    todo.insert(todo.end(), v->def->operands.begin(), v->def->operands.end());
  }
  return false;
}

// The model outputs a generated pointwise kernel can write over one of its
// inputs (result -> argument index): the input has the output's type, every
// other reader, through views too (a BN weight's Unsqueeze in the forward,
// its Reshape in the backward), runs before the kernel's launch (a
// multi-tensor run's: its first member's), inside the group only
// elementwise ops read it, and no value of the group is larger (the domain
// is the output: each element is read by the one thread that then writes
// it; a broadcast to a larger result would have several threads read an
// element one of them already overwrote). A decode step's present.N =
// Where(slot, new, past.N) then lands in past.N's slot, and a train step's
// updated weights and moments in their inputs' (the optimizer reads a
// weight last): feeding them back as the next step's inputs copies nothing,
// and they take no room in the arena (repackArena).
std::unordered_map<const Value *, size_t>
inPlaceResults(const Module &m, const Function &f,
               const std::function<bool(const Op &)> &pointwiseKernel,
               const std::function<bool(const Op &)> &view) {
  std::unordered_map<const Value *, size_t> argOf, taken, viewed, resultUses;
  // Op indices reading a value's bytes: its own readers and its views'.
  std::unordered_map<const Value *, std::vector<size_t>> readers;
  std::unordered_map<const Value *, const Value *> viewOf; // a view -> the value it views
  std::unordered_map<const Value *, std::unordered_set<size_t>> throughView;
  auto root = [&](const Value *v) {
    for (auto at = viewOf.find(v); at != viewOf.end(); at = viewOf.find(v))
      v = at->second;
    return v;
  };
  for (size_t i = 0; i < f.args.size(); ++i)
    argOf[f.args[i]] = i;
  std::vector<size_t> launchAt(f.ops.size()); // a multi-tensor run launches at its first member
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op &op = *f.ops[i];
    int64_t run = multiTensorRun(op);
    launchAt[i] = i > 0 && run && run == multiTensorRun(*f.ops[i - 1]) ? launchAt[i - 1] : i;
    for (const Value *v : op.operands) {
      const Value *bytes = root(v);
      readers[bytes].push_back(i);
      if (bytes != v) // the kernel itself reads the bytes through a view
        throughView[bytes].insert(i);
      if (view(op))
        ++viewed[v];
    }
    if (view(op) && !op.operands.empty())
      for (const Value *r : op.results)
        viewOf[r] = root(op.operand(0));
  }
  for (const Value *r : f.results)
    ++resultUses[r];
  // A train step's new state is the next step's input: over its own slot
  // when it can be (not over another state tensor of its type, which would
  // then be copied back).
  std::unordered_map<const Value *, const Value *> feedsBack, fedBy;
  if (std::optional<TrainSignature> sig = trainSignature(m); sig && sig->step)
    for (size_t j = 0; j < sig->state; ++j) {
      const Value *r = f.results[f.results.size() - sig->state + j],
                  *a = f.args[f.args.size() - sig->state + j];
      feedsBack[r] = a;
      fedBy[a] = r;
    }
  std::unordered_map<const Value *, size_t> out;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const auto &op = f.ops[i];
    if (!op->is(OpKind::Fused) || !pointwiseKernel(*op))
      continue;
    const Function *callee = m.lookup(op->getString("callee"));
    if (!callee)
      continue;
    for (const Value *r : op->results) {
      auto uses = resultUses.find(r);
      if (uses == resultUses.end() || uses->second != 1 || viewed.count(r))
        continue;
      std::vector<size_t> order(op->operands.size());
      for (size_t k = 0; k < order.size(); ++k)
        order[k] = k;
      if (auto own = feedsBack.find(r); own != feedsBack.end())
        std::stable_partition(order.begin(), order.end(),
                              [&](size_t k) { return op->operands[k] == own->second; });
      for (size_t k : order) {
        const Value *a = op->operands[k];
        auto arg = argOf.find(a);
        auto owner = fedBy.find(a);
        auto viewing = throughView.find(a);
        const std::vector<size_t> &by = readers[a];
        if (arg == argOf.end() || a->type != r->type || resultUses.count(a) || taken.count(a) ||
            (owner != fedBy.end() && owner->second != r) ||
            (viewing != throughView.end() && viewing->second.count(i)) ||
            k >= callee->args.size() ||
            std::any_of(by.begin(), by.end(), [&](size_t j) { return j != i && j >= launchAt[i]; }))
          continue;
        std::optional<int64_t> n = staticNumElements(a->type.shape);
        bool elementwise = n.has_value();
        for (const auto &inner : callee->ops) {
          for (const Value *v : inner->operands)
            if (v == callee->args[k] && opInfo(inner->kind).category != FusionCategory::Pointwise)
              elementwise = false;
          for (const Value *v : inner->results) {
            std::optional<int64_t> m = staticNumElements(v->type.shape);
            if (!m || !n || *m > *n)
              elementwise = false;
          }
        }
        // With more than one result, only over an input r itself depends
        // on: the kernel's buffers are __restrict, so a result that does
        // not read `a` may be stored before `a` is loaded for another one
        // (MemoryPlan.cpp's writesInPlace).
        if (!elementwise || (op->results.size() > 1 && !resultReads(*callee, *op, r, k)))
          continue;
        out[r] = arg->second;
        taken[a] = 1;
        break;
      }
      // A new state value whose kernel does not read its input (a weight's
      // f16 copy the update writes: weight-shadows) takes the input's slot
      // where everything reading it runs before the launch.
      auto own = feedsBack.find(r);
      if (out.count(r) || own == feedsBack.end())
        continue;
      const Value *a = own->second;
      const std::vector<size_t> &by = readers[a];
      if (a->type == r->type && !resultUses.count(a) && !taken.count(a) && !viewed.count(a) &&
          std::all_of(by.begin(), by.end(), [&](size_t j) { return j < launchAt[i]; })) {
        out[r] = argOf.at(a);
        taken[a] = 1;
      }
    }
  }
  return out;
}

// A run of full reductions (MultiTensor.h), not of pointwise kernels.
bool multiTensorReduction(const CudaKernelEntry &e) {
  return e.launch == LaunchKind::MultiTensor && e.kind == KernelKind::Reduction;
}

// A multi-tensor run's member step: its values (operands, then results),
// the shape of its flat ones and their element count.
struct MultiTensorMember {
  MultiTensorMember(const Op &op, bool reduction) : values(op.operands.begin(), op.operands.end()) {
    values.insert(values.end(), op.results.begin(), op.results.end());
    shape = multiTensorShape(values, op.operands.size(), reduction);
    n = staticNumElements(shape).value_or(0);
  }
  std::vector<const Value *> values;
  Shape shape;
  int64_t n = 0;
};

} // namespace

std::unique_ptr<CudaModel::ShapePlan>
CudaModel::makePlan(const std::map<std::string, int64_t> &sizes) {
  auto plan = std::make_unique<ShapePlan>();
  plan->planned = planShape(artifact_, sizes);
  if (!plan->planned)
    return nullptr;
  PlannedModule &pm = *plan->planned;
  const Function &f = pm.main();
  plan->inPlace = inPlaceResults(
      *pm.module, f,
      [&](const Op &op) {
        auto k = kernels_.find(op.getString("callee"));
        // A multi-tensor launch runs each member's elements as its own
        // kernel would (the members read no other's results).
        return k != kernels_.end() && k->second.entry.library.empty() &&
               (k->second.entry.launch == LaunchKind::Pointwise ||
                k->second.entry.launch == LaunchKind::MultiTensor) &&
               k->second.entry.kind == KernelKind::Pointwise;
      },
      [&](const Op &op) { return pm.aliases(op); });
  if (!plan->inPlace.empty())
    repackArena(pm.memory, [&](const Value *v) { return plan->inPlace.count(v) != 0; });
  uint64_t bytes = alignUp(pm.memory.arenaBytes);
  for (const Value *a : f.args) {
    plan->inputOffsets.push_back(bytes);
    bytes += alignUp(byteSize(a->type).value_or(0));
  }
  plan->arena = cuda::DeviceMemory(bytes);
  if (tuneRun_) // the candidates are timed on data, not on whatever the memory held
    tuneRun_->tuner.fillRandom(plan->arena.get(), bytes);
  // One scratch for the plan's `columns` and `split` kernels (they run one at a time on
  // the stream; the emitter gives them all one grid and block), its
  // counters zeroed once on the run's stream (ZeroedScratch): each launch
  // leaves them zero.
  // (Variants too: any may run.)
  uint64_t scratchBytes = 0;
  auto scratchFor = [&](const Kernel &k) {
    if (readsScratch(k.entry.launch))
      scratchBytes = std::max(scratchBytes, columnsScratchBytes(*launchDims(k.entry, {1})));
  };
  for (const auto &[callee, k] : kernels_)
    scratchFor(k);
  for (const auto &[callee, v] : variants_)
    for (const Kernel &k : v.kernels)
      scratchFor(k);
  // Each member of a multi-tensor reduction has a scratch of its own, after those.
  uint64_t memberScratchAt = scratchBytes = alignUp(scratchBytes);
  for (const auto &op : f.ops) {
    auto k = op->is(OpKind::Fused) ? kernels_.find(op->getString("callee")) : kernels_.end();
    if (k != kernels_.end() && multiTensorReduction(k->second.entry))
      scratchBytes += multiTensorScratchBytes(
          uint64_t(multiTensorSplitBlocks(MultiTensorMember(*op, true).n, k->second.entry.block)));
  }
  plan->columnsScratch.reserve(scratchBytes, work_);
  const Op *runLead = nullptr; // the multi-tensor run's first step, which launches it
  size_t runLeadAt = 0;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op &op = *f.ops[i];
    Step s;
    s.op = &op;
    std::string what = "host (reference kernels)";
    auto k = op.is(OpKind::Fused) ? kernels_.find(op.getString("callee")) : kernels_.end();
    bool multi = k != kernels_.end() && k->second.entry.launch == LaunchKind::MultiTensor;
    if (multi && i > 0 && runLead && multiTensorRun(op) == multiTensorRun(*runLead)) {
      s.kind = Step::Kind::Nothing;
      s.launchedBy = int64_t(runLeadAt);
      what = "in the multi-tensor launch of %" + runLead->result()->name;
    } else if (multi) {
      runLead = &op;
      runLeadAt = i;
      what = planMultiTensorStep(*plan, f, i, k->second, s, memberScratchAt);
    } else if (pm.aliases(op)) {
      s.kind = Step::Kind::Nothing; // same bytes, another shape
      what = "view";
    } else if (op.is(OpKind::RankSlice)) {
      s.kind = Step::Kind::Nothing;
      plan->shards[op.result()] = shardOnDevice(op);
      what = "rank " + std::to_string(commRank_) + "'s part of %" + op.operand(0)->name +
             " (on the device once)";
    } else if (isRankOp(op.kind)) {
      s.kind = Step::Kind::Library;
      s.collective = cuda::collectiveFor(op, devicePtr(*plan, op.operand(0)),
                                         devicePtr(*plan, op.result()), communicator());
      what = "NCCL " + std::string(op.name()) + " over " + std::to_string(op.getInt("ranks")) +
             " ranks";
    } else if (k != kernels_.end() &&
               std::find(op.operands.begin(), op.operands.end(), nullptr) == op.operands.end()) {
      std::vector<int64_t> domain = staticDims(op.result()->type.shape);
      std::optional<LaunchDims> l;
      if (std::find(domain.begin(), domain.end(), 0) != domain.end()) {
        s.kind = Step::Kind::Nothing;
        what = "nothing (empty)";
      } else if (!k->second.entry.library.empty()) {
        what = planLibraryStep(*plan, op, k->second, s);
      } else if ((l = launchDims(k->second.entry, domain))) {
        std::vector<const Value *> values(op.operands.begin(), op.operands.end());
        values.insert(values.end(), op.results.begin(), op.results.end());
        s.kind = Step::Kind::Kernel;
        s.fn = k->second.fn;
        s.launch = *l;
        s.params = kernelParams(*plan, values);
        if (readsScratch(k->second.entry.launch)) // after the buffers, before dims
          s.params.insert(s.params.begin() + long(values.size()), plan->columnsScratch.get());
        if (l->passField) // `split`: the pass, set at each launch
          s.params.push_back(0);
        what = "kernel " + k->second.entry.symbol + " <<<" + std::to_string(s.launch.grid) + ", " +
               std::to_string(s.launch.block) + ">>>";
        if (auto v = variants_.find(k->first); v != variants_.end())
          what = pickVariant(v->second, op, domain, s);
        if (k->second.entry.kind == KernelKind::Attention)
          what = planAttentionStep(*plan, op, s, what);
      }
    }
    for (const Value *r : op.results)
      if (auto in = plan->inPlace.find(r); in != plan->inPlace.end())
        what += ", %" + r->name + " in place of input %" + f.args[in->second]->name;
    plan->report.push_back(
        "%" + op.result()->name + " = " +
        (op.is(OpKind::Fused) ? "@" + op.getString("callee") : std::string(op.name())) + ": " +
        what);
    s.what = std::move(what);
    plan->steps.push_back(std::move(s));
  }
  // One cuDNN workspace for the plan, as large as its largest call needs.
  size_t workspace = 0;
  for (const Step &s : plan->steps)
    workspace = std::max(workspace, s.conv   ? s.conv->workspaceBytes()
                                    : s.sdpa ? s.sdpa->workspaceBytes()
                                             : 0);
  plan->convWorkspace = cuda::DeviceMemory(workspace);
  plan->deviceBytes = bytes + workspace + scratchBytes;
  for (const cuda::DeviceMemory &t : plan->tables)
    plan->deviceBytes += t.size();
  for (const Step &s : plan->steps)
    plan->deviceBytes += s.scratch.size();
  for (const auto &[name, size] : sizes)
    plan->shape += (plan->shape.empty() ? "" : ",") + name + "=" + std::to_string(size);
  if (plan->shape.empty())
    plan->shape = "the static shape";
  for (Step &s : plan->steps)
    if (s.conv)
      s.conv->setWorkspace(plan->convWorkspace.get());
    else if (s.sdpa)
      s.sdpa->setWorkspace(plan->convWorkspace.get());
  return plan;
}

constexpr int64_t kMultiTensorWork = 8;

// The multi-tensor run starting at step `first` of `f` as one launch
// (tc/CodeGen/MultiTensor.h): each member's parameter over its sizes
// erased, its first block and block count, in a table in device memory.
// A reduction's members take their scratch from the plan's at `scratchAt`
// on. Returns the step's report.
std::string CudaModel::planMultiTensorStep(ShapePlan &plan, const Function &f, size_t first,
                                           const Kernel &k, Step &s, uint64_t &scratchAt) {
  std::vector<uint64_t> words;
  uint64_t blocks = 0;
  size_t count = 0;
  int64_t run = multiTensorRun(*f.ops[first]);
  const bool reduction = multiTensorReduction(k.entry);
  for (size_t i = first; i < f.ops.size() && multiTensorRun(*f.ops[i]) == run; ++i, ++count) {
    const MultiTensorMember m(*f.ops[i], reduction);
    std::vector<uint64_t> bufs;
    for (const Value *v : m.values)
      bufs.push_back(devicePtr(plan, v));
    uint64_t grid = 0;
    if (reduction) { // its blocks (multiTensorSplitBlocks), its own scratch
      grid = uint64_t(multiTensorSplitBlocks(m.n, k.entry.block));
      bufs.push_back(plan.columnsScratch.get() + scratchAt);
      scratchAt += multiTensorScratchBytes(grid);
    } else {
      // A member's blocks each take kMultiTensorWork pointwise blocks' worth of
      // elements (the kernel loops over them): every block first finds its
      // member in the table, a binary search of dependent loads that at one
      // pointwise block's work took most of the time (resnet50's 161 weight
      // gradients cast to f32 at 750 GB/s).
      int64_t per = int64_t(k.entry.block) * std::max<int64_t>(k.entry.vec, 1) * kMultiTensorWork;
      grid = uint64_t(std::max<int64_t>((m.n + per - 1) / per, 1));
    }
    std::vector<uint64_t> p = packKernelParams(bufs, multiTensorDims(m.values, m.shape, m.n));
    if (reduction)
      p.push_back(0); // the `split` kernel's pass: its only one
    words.insert(words.end(), p.begin(), p.end());
    words.push_back(blocks);
    words.push_back(grid);
    blocks += grid;
  }
  if (blocks > (uint64_t(1) << 31) - 1)
    fail(artifact_.file, ": a multi-tensor launch of ", blocks, " blocks");
  const cuda::Driver &d = cuda::driver();
  plan.tableWords.push_back(std::move(words));
  const std::vector<uint64_t> &table = plan.tableWords.back();
  plan.tables.emplace_back(table.size() * 8);
  d.check(d.memcpyHtoDAsync(plan.tables.back().get(), table.data(), table.size() * 8, work_),
          "cuMemcpyHtoDAsync");
  s.kind = Step::Kind::Kernel;
  s.fn = k.fn;
  s.launch = LaunchDims{unsigned(blocks), k.entry.block};
  s.params = {plan.tables.back().get(), uint64_t(count)};
  return "multi-tensor kernel " + k.entry.symbol + " <<<" + std::to_string(blocks) + ", " +
         std::to_string(k.entry.block) + ">>>: " + std::to_string(count) + " tensors in 1 launch";
}

cuda::CUdeviceptr CudaModel::devicePtr(ShapePlan &plan, const Value *v) {
  if (auto shard = plan.shards.find(v); shard != plan.shards.end())
    return shard->second;
  if (auto in = plan.inPlace.find(v); in != plan.inPlace.end())
    return plan.arena.get() + plan.inputOffsets[in->second];
  ValuePlace at = plan.planned->placeOf(v);
  if (at.kind == ValuePlace::Kind::Constant)
    return weightOnDevice(*v, plan.folded);
  return plan.arena.get() + at.offset +
         (at.kind == ValuePlace::Kind::Argument ? plan.inputOffsets[at.arg] : 0);
}

void CudaModel::Step::launchKernel(cuda::CUstream stream) const {
  const cuda::Driver &d = cuda::driver();
  void *args[] = {const_cast<uint64_t *>(params.data())};
  if (launch.passField) { // `split`: the last field is the pass
    std::vector<uint64_t> p = params;
    args[0] = p.data();
    for (unsigned pass = 0; pass < launch.passes; ++pass) {
      p.back() = pass;
      d.check(d.launchKernel(fn, launch.grid, 1, 1, launch.block, 1, 1, 0, stream, args, nullptr),
              "cuLaunchKernel");
    }
    return;
  }
  d.check(d.launchKernel(fn, launch.grid, 1, 1, launch.block, 1, 1, 0, stream, args, nullptr),
          "cuLaunchKernel");
}

// Every step of `plan` on the stream; host steps download their operands
// (draining the stream) and upload their results.
void CudaModel::enqueueSteps(ShapePlan &plan,
                             const std::function<HostTensor(const Value *)> &download,
                             const char *traceNote) {
  const cuda::Driver &d = cuda::driver();
  auto launch = [&](const Step &s) { s.launchKernel(work_); };
  using Kind = Step::Kind;
  bool profiling = !plan.stepEvents.empty();
  if (trace_)
    firstStepUs_ = trace_->nowUs();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    Step &s = plan.steps[i];
    if (profiling)
      d.check(d.eventRecord(plan.stepEvents[i], work_), "cuEventRecord");
    if (s.kind == Kind::Nothing)
      continue;
    double start = trace_ ? trace_->nowUs() : 0;
    if (s.kind == Kind::Kernel) {
      launch(s);
    } else if (s.kind == Kind::Library) {
      if (s.collective)
        s.collective->run(work_);
      else if (s.gemm)
        s.gemm->run(work_);
      else if (s.sdpa)
        s.sdpa->run();
      else
        s.conv->run();
      if (s.fn) // the epilogue, in place over the result
        launch(s);
    } else {
      std::vector<HostTensor> outs = runOpOnReference(*plan.planned->module, *s.op, download);
      for (size_t i = 0; i < outs.size(); ++i)
        if (outs[i].byteSize())
          d.check(d.memcpyHtoDAsync(devicePtr(plan, s.op->results[i]), outs[i].bytes(),
                                    outs[i].byteSize(), work_),
                  "cuMemcpyHtoDAsync");
      // `outs` goes now; make sure the copies have read it.
      d.check(d.streamSynchronize(work_), "cuStreamSynchronize");
    }
    if (trace_)
      traceHost(plan.info[i].group, plan.info[i].kind, int(i), start, traceNote ? traceNote : "");
  }
}

CudaModel::ShapePlan::~ShapePlan() {
  if (graph)
    cuda::driver().graphExecDestroy(graph);
  for (cuda::CUevent e : stepEvents)
    cuda::driver().eventDestroy(e);
}

// Computed when asked (tc-run's report), not on every run.
uint64_t CudaModel::plannedDeviceBytes() const {
  if (!lastPlan_)
    return 0;
  uint64_t bytes = lastPlan_->deviceBytes;
  for (const auto &[_, w] : weights_)
    bytes += w.size();
  for (const auto &[_, w] : lastPlan_->folded)
    bytes += w.size();
  return bytes + (cublasLt_ ? cuda::CublasLt::kWorkspaceBytes : 0);
}

std::vector<CudaModel::StepProfile> CudaModel::stepProfile() const {
  std::vector<StepProfile> out;
  if (lastPlan_ && lastPlan_->profiledRuns)
    for (size_t i = 0; i < lastPlan_->stepMs.size(); ++i)
      out.push_back({lastPlan_->report[i], lastPlan_->stepMs[i] / double(lastPlan_->profiledRuns)});
  return out;
}

// Records the plan's steps (all on the device) as a graph. A library call
// that cannot be captured leaves the plan running step by step, with why.
// On the model's own stream, whatever stream the run is on: a caller's
// stream may be in a capture of its own, and the graph replays on any.
void CudaModel::capture(ShapePlan &plan) {
  const cuda::Driver &d = cuda::driver();
  const int threadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  d.check(d.streamBeginCapture(stream_, threadLocal), "cuStreamBeginCapture");
  cuda::CUstream run = work_;
  cuda::CUgraph g = nullptr;
  try {
    useStream(stream_);
    enqueueSteps(plan, nullptr, "captured into a CUDA graph, not run");
    useStream(run);
  } catch (const Error &e) {
    useStream(run);
    d.streamEndCapture(stream_, &g); // ends the (invalidated) capture
    if (g)
      d.graphDestroy(g);
    plan.noGraph = std::string("capture failed: ") + e.what();
    return;
  }
  cuda::CUresult r = d.streamEndCapture(stream_, &g);
  if (r == 0 && g) {
    d.graphGetNodes(g, nullptr, &plan.graphNodes);
    r = d.graphInstantiate(&plan.graph, g, 0);
  }
  if (g)
    d.graphDestroy(g);
  if (r != 0 || !plan.graph) {
    plan.graph = nullptr;
    const char *name = nullptr;
    d.getErrorName(r, &name);
    plan.noGraph = std::string("capture failed: ") + (name ? name : "unknown error");
    return;
  }
  recorded_ = true;
  graphNote_ =
      "recorded a CUDA graph of " + std::to_string(plan.graphNodes) + " nodes for " + plan.shape;
}

bool CudaModel::runPlanned(ShapePlan &plan, const std::vector<Input> &inputs,
                           std::vector<Output> &outputs, bool wait) {
  const cuda::Driver &d = cuda::driver();
  const std::vector<Value *> &results = plan.planned->main().results;
  // Checked before anything is enqueued: a failed run leaves nothing half done.
  for (size_t i = 0; i < results.size(); ++i) {
    Output &o = outputs[i];
    o.shape = staticDims(results[i]->type.shape);
    o.bytes = byteSize(results[i]->type).value_or(0);
    if (o.to == Output::To::CallerDevice && o.bytes && (!o.device || o.bytes > o.capacity))
      fail("output '", results[i]->name, "' (", results[i]->type.str(), ") needs ", o.bytes,
           " bytes; the device buffer given has ", o.device ? o.capacity : 0);
  }
  if (trace_) {
    describeSteps(plan);
    trace_->steps = plan.info;
    traced_.clear(); // what a failed run left
  }
  double since = trace_ ? trace_->nowUs() : 0;
  // Into the arena: from pageable host memory (the call returns once the
  // bytes are staged, so the inputs may change after it), or device to
  // device (the arena's addresses are what the plan's steps and graph hold).
  // A device input may be the last run's output in another input's slot
  // (written in place: inPlaceResults): such sources are staged first, so
  // no copy into a slot overwrites one still to be read (a rare case: the
  // staging memory is freed at the run's end, which waits for the stream).
  const cuda::CUdeviceptr arenaHi = plan.arena.get() + plan.arena.size(),
                          arenaLo =
                              inputs.empty() ? arenaHi : plan.arena.get() + plan.inputOffsets[0];
  std::vector<std::pair<size_t, cuda::DeviceMemory>> staged;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (const RunInput &in = inputs[i]; !in.host && in.bytes && in.device >= arenaLo &&
                                        in.device < arenaHi &&
                                        in.device != plan.arena.get() + plan.inputOffsets[i]) {
      staged.emplace_back(i, cuda::DeviceMemory(in.bytes));
      d.check(d.memcpyDtoDAsync(staged.back().second.get(), in.device, in.bytes, work_),
              "cuMemcpyDtoDAsync");
    }
  for (size_t i = 0, s = 0; i < inputs.size(); ++i) {
    cuda::CUdeviceptr at = plan.arena.get() + plan.inputOffsets[i];
    cuda::CUdeviceptr from = inputs[i].device;
    if (s < staged.size() && staged[s].first == i)
      from = staged[s++].second.get();
    if (inputs[i].host && inputs[i].host->byteSize())
      d.check(d.memcpyHtoDAsync(at, inputs[i].host->bytes(), inputs[i].host->byteSize(), work_),
              "cuMemcpyHtoDAsync");
    else if (!inputs[i].host && inputs[i].bytes && from != at)
      d.check(d.memcpyDtoDAsync(at, from, inputs[i].bytes, work_), "cuMemcpyDtoDAsync");
  }
  if (trace_)
    traceHost("upload inputs", "memcpy", -1, since);
  // A value's bytes on the host: the stream drained up to here (host steps
  // only: device steps never wait).
  auto download = [&](const Value *v) {
    HostTensor t(v->type.dtype, staticDims(v->type.shape));
    if (v->isConstant())
      std::copy(v->data->ptr, v->data->ptr + t.byteSize(), t.bytes());
    else if (t.byteSize()) {
      d.check(d.memcpyDtoHAsync(t.bytes(), devicePtr(plan, v), t.byteSize(), work_),
              "cuMemcpyDtoHAsync");
      d.check(d.streamSynchronize(work_), "cuStreamSynchronize");
    }
    return t;
  };
  using Kind = Step::Kind;
  for (const Step &s : plan.steps) {
    kernelSteps_ += s.kind == Kind::Kernel;
    librarySteps_ += s.kind == Kind::Library;
    hostSteps_ += s.kind == Kind::Host;
  }
  // Tracing without CUPTI times each step as profiling does.
  bool profiling = (profile_ || (trace_ && !cupti_)) && d.hasEvents() && start_;
  // A traced graph replay's kernels are attributed by what a traced
  // step-by-step run of the plan launched: lacking that, go step by step.
  bool stepByStep = profiling || (trace_ && cupti_ && !plan.work);
  // Besides the caller's asking, the end of the run waits for the stream only
  // for what reads its results on the host: Host outputs, the events (device
  // time, profiles), traces.
  wait = wait || trace_ || profiling ||
         std::any_of(outputs.begin(), outputs.end(),
                     [](const Output &o) { return o.to == Output::To::Host; });
  if (profiling && plan.stepEvents.empty()) { // events made once per plan
    plan.stepEvents.resize(plan.steps.size());
    plan.stepMs.assign(plan.steps.size(), 0);
    for (cuda::CUevent &e : plan.stepEvents)
      d.check(d.eventCreate(&e, 0), "cuEventCreate");
  }
  if (!profiling && !plan.stepEvents.empty()) {
    for (cuda::CUevent e : plan.stepEvents)
      d.eventDestroy(e);
    plan.stepEvents.clear();
  }
  if (!graphs_)
    plan.noGraph = "--cuda-graphs=off";
  else if (!d.hasGraphs())
    plan.noGraph = "the driver has no CUDA graphs";
  else if (hostSteps_)
    plan.noGraph = std::to_string(hostSteps_) + " steps run on the host";
  if (!plan.graph && plan.noGraph.empty() && plan.runs > 0 && !stepByStep)
    capture(plan);
  if (plan.runs == 1 && !plan.noGraph.empty())
    graphNote_ = "no CUDA graph for " + plan.shape + ": " + plan.noGraph;
  ++plan.runs;
  bool timed = start_ && stop_ && wait;
  if (timed)
    d.check(d.eventRecord(start_, work_), "cuEventRecord");
  ranGraph_ = plan.graph && !stepByStep;
  if (ranGraph_) {
    since = trace_ ? trace_->nowUs() : 0;
    d.check(d.graphLaunch(plan.graph, work_), "cuGraphLaunch");
    if (trace_)
      traceHost("CUDA graph of " + std::to_string(plan.graphNodes) + " nodes", "graph", -1, since);
  } else {
    enqueueSteps(plan, download);
  }
  if (timed)
    d.check(d.eventRecord(stop_, work_), "cuEventRecord");
  since = trace_ ? trace_->nowUs() : 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const Value *r = results[i];
    Output &o = outputs[i];
    if (o.to == Output::To::Host) {
      o.host = HostTensor(r->type.dtype, o.shape);
      if (r->isConstant())
        std::copy(r->data->ptr, r->data->ptr + o.bytes, o.host.bytes());
      else if (o.bytes)
        d.check(d.memcpyDtoHAsync(o.host.bytes(), devicePtr(plan, r), o.bytes, work_),
                "cuMemcpyDtoHAsync");
    } else if (o.to == Output::To::ModelDevice) {
      o.device = o.bytes ? devicePtr(plan, r) : 0;
    } else if (o.bytes) {
      d.check(d.memcpyDtoDAsync(o.device, devicePtr(plan, r), o.bytes, work_), "cuMemcpyDtoDAsync");
    }
  }
  if (trace_)
    traceHost("download outputs", "memcpy", -1, since);
  if (!wait)
    return false;
  // A kernel's or library call's fault surfaces here, named.
  d.check(d.streamSynchronize(work_), "cuStreamSynchronize");
  checkFault();
  float ms = -1;
  if (timed)
    d.check(d.eventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
  deviceMs_ = ms;
  if (profiling) { // step i: from its event to the next (the last: to stop_)
    double at = 0; // ms from the first step's event
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      float step = 0;
      cuda::CUevent end = i + 1 < plan.steps.size() ? plan.stepEvents[i + 1] : stop_;
      d.check(d.eventElapsedTime(&step, plan.stepEvents[i], end), "cuEventElapsedTime");
      plan.stepMs[i] += step;
      // Without CUPTI, the events are the Device track: their lengths are
      // the device's; their start is placed from the host time of the first
      // step (the device runs behind the host, so it is approximate).
      if (trace_ && !cupti_ && plan.steps[i].kind != Step::Kind::Nothing) {
        TraceEvent e;
        e.track = TraceEvent::Track::Device;
        e.name = plan.info[i].group;
        e.category = plan.info[i].kind;
        e.step = int(i);
        e.run = trace_->currentRun;
        e.startUs = firstStepUs_ + at * 1000;
        e.durUs = step * 1000.0;
        e.note = "CUDA events around the step";
        traced_.push_back(std::move(e));
      }
      at += step;
    }
    ++plan.profiledRuns;
  }
  if (trace_)
    finishTrace(plan);
  return true;
}

// Once per plan, outside the timed events.
void CudaModel::describeSteps(ShapePlan &plan) {
  if (!plan.info.empty())
    return;
  for (const Step &s : plan.steps) {
    plan.info.push_back(describeStep(*plan.planned->module, *s.op));
    using K = Step::Kind;
    plan.info.back().kind = s.kind == K::Kernel    ? "kernel"
                            : s.kind == K::Library ? "library"
                            : s.kind == K::Host    ? "fallback"
                                                   : "view"; // also "nothing (empty)"
    plan.info.back().detail = s.what;
    // A multi-tensor launch moves and computes every member's share: its
    // row (the launching step's, which its events time) counts them all.
    if (s.launchedBy >= 0) {
      plan.info[size_t(s.launchedBy)].bytes += plan.info.back().bytes;
      plan.info[size_t(s.launchedBy)].flops += plan.info.back().flops;
    }
  }
}

// What each step of `plan` launches, for its graph replays to be attributed
// (setTrace, under CUPTI): one step-by-step pass over the arena as the last
// run left it. A plan with a graph has no host steps, so the pass needs no
// inputs and recomputes the same values; its events are dropped, so the
// traced runs after it are graph replays like the untraced ones before.
void CudaModel::learnStepWork(ShapePlan &plan) {
  const cuda::Driver &d = cuda::driver();
  d.check(d.ctxSetCurrent(ctx_), "cuCtxSetCurrent");
  useStream(stream_);
  describeSteps(plan);
  traced_.clear();
  enqueueSteps(plan, nullptr);
  d.check(d.streamSynchronize(stream_), "cuStreamSynchronize");
  cuda::CuptiRecords r = cuda::collectCupti(*trace_);
  traced_.insert(traced_.end(), r.events.begin(), r.events.end());
  plan.work = attributeDeviceEvents(traced_, cuda::currentThreadId(), plan.steps.size(), nullptr);
  traced_.clear();
}

void CudaModel::traceHost(std::string name, std::string category, int step, double startUs,
                          std::string note) {
  TraceEvent e;
  e.name = std::move(name);
  e.category = std::move(category);
  e.step = step;
  e.run = trace_->currentRun;
  e.startUs = startUs;
  e.durUs = trace_->nowUs() - startUs;
  e.note = std::move(note);
  traced_.push_back(std::move(e));
}

// The run's events into the trace: with CUPTI, its records since the last
// run joined in and attributed to steps.
void CudaModel::finishTrace(ShapePlan &plan) {
  // Collecting is the tracer's cost, not the run's: its own Host event,
  // which tc-prof takes out of the run's wall time.
  double since = trace_->nowUs();
  if (cupti_) {
    cuda::CuptiRecords r = cuda::collectCupti(*trace_);
    for (TraceEvent &e : r.events) {
      e.run = trace_->currentRun;
      traced_.push_back(std::move(e));
    }
    const StepWork *learned = plan.work ? &*plan.work : nullptr;
    if (std::optional<StepWork> w =
            attributeDeviceEvents(traced_, cuda::currentThreadId(), plan.steps.size(), learned))
      plan.work = std::move(w);
    std::string run = "run " + std::to_string(trace_->currentRun) + ": ";
    if (!r.problem.empty())
      trace_->deviceNote += "; " + run + r.problem;
    if (r.dropped)
      trace_->deviceNote += "; " + run + std::to_string(r.dropped) + " CUPTI records dropped";
  }
  traceHost("collect the trace (CUPTI flush, attribution)", "tracing", -1, since);
  for (TraceEvent &e : traced_)
    trace_->add(std::move(e));
  traced_.clear();
}

std::vector<HostTensor> CudaModel::run(const std::vector<HostTensor> &inputs) {
  std::vector<Input> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    in[i].host = &inputs[i];
  std::vector<Output> out(module_->main().results.size());
  runOn(nullptr, in, out);
  std::vector<HostTensor> results;
  for (Output &o : out)
    results.push_back(std::move(o.host));
  return results;
}

void CudaModel::useStream(cuda::CUstream stream) {
  if (cudnn_ && stream != work_)
    cudnn_->setStream(stream);
  work_ = stream;
}

bool CudaModel::runOn(cuda::CUstream stream, const std::vector<Input> &inputs,
                      std::vector<Output> &outputs) {
  kernelSteps_ = librarySteps_ = hostSteps_ = countReads_ = controlReads_ = 0;
  arenaBytes_ = 0;
  lastPlan_ = nullptr;
  ranGraph_ = planned_ = recorded_ = false;
  graphNote_.clear();
  deviceMs_ = -1;
  const Function &main = module_->main();
  if (outputs.size() != main.results.size())
    fail("runOn: ", outputs.size(), " outputs given, the model has ", main.results.size());
  std::vector<InputType> types;
  bool onDevice = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input &in = inputs[i];
    if (in.host) {
      types.push_back({in.host->dtype(), &in.host->shape()});
      continue;
    }
    onDevice = true;
    if (in.dtype == DType::Str)
      fail("input ", i, " is str on the device: strings stay on the host");
    std::optional<size_t> bytes;
    if (std::all_of(in.shape.begin(), in.shape.end(), [](int64_t n) { return n >= 0; }))
      bytes = byteSize(TensorType{in.dtype, makeShape(in.shape)});
    if (!bytes || *bytes != in.bytes || (in.bytes && !in.device))
      fail("input ", i, " on the device: ",
           in.device ? std::to_string(in.bytes) + " bytes" : std::string("no buffer"), " for ",
           TensorType{in.dtype, makeShape(in.shape)}.str(),
           bytes ? ", which takes " + std::to_string(*bytes) + " bytes" : ": not a tensor");
    types.push_back({in.dtype, &in.shape});
  }
  // Plans allocate and upload too: the context must be this thread's.
  const cuda::Driver &d = cuda::driver();
  d.check(d.ctxSetCurrent(ctx_), "cuCtxSetCurrent");
  useStream(stream ? stream : stream_);
  std::optional<ShapeKey> key = shapeKeyOfTypes(main, types);
  if (!key && onDevice) { // the reference executor says why for host inputs
    std::string got, want;
    for (const InputType &t : types)
      got += (got.empty() ? "" : ", ") + TensorType{t.dtype, makeShape(*t.dims)}.str();
    for (const Value *a : main.args)
      want += (want.empty() ? "" : ", ") + a->name + ": " + a->type.str();
    fail("inputs (", got, ") do not fit ", main.name, "(", want, ")");
  }
  if (key)
    if (ShapePlan *plan = plans_->get(key->dims, [&] {
          planned_ = true;
          return makePlan(key->sizes);
        })) {
      arenaBytes_ = plan->planned->memory.arenaBytes;
      lastPlan_ = plan;
      return runPlanned(*plan, inputs, outputs, !stream);
    }
  return runUnplanned(inputs, outputs);
}

void CudaModel::copyToHost(cuda::CUstream stream, cuda::CUdeviceptr from, void *to, size_t bytes) {
  if (!bytes)
    return;
  const cuda::Driver &d = cuda::driver();
  d.check(d.ctxSetCurrent(ctx_), "cuCtxSetCurrent");
  cuda::CUstream on = stream ? stream : stream_;
  d.check(d.memcpyDtoHAsync(to, from, bytes, on), "cuMemcpyDtoHAsync");
  d.check(d.streamSynchronize(on), "cuStreamSynchronize");
}

cuda::CUdeviceptr CudaModel::keepOnDevice(const void *data, size_t bytes) {
  const cuda::Driver &d = cuda::driver();
  d.check(d.ctxSetCurrent(ctx_), "cuCtxSetCurrent");
  kept_.emplace_back(std::max<size_t>(bytes, 1));
  if (bytes) {
    d.check(d.memcpyHtoDAsync(kept_.back().get(), data, bytes, stream_), "cuMemcpyHtoDAsync");
    d.check(d.streamSynchronize(stream_), "cuStreamSynchronize");
  }
  return kept_.back().get();
}

void CudaModel::checkFault() {
  if (!fault_)
    return;
  const cuda::Driver &d = cuda::driver();
  int64_t f[4] = {0, 0, 0, 0};
  d.check(d.memcpyDtoHAsync(f, fault_, sizeof f, work_), "cuMemcpyDtoHAsync");
  d.check(d.streamSynchronize(work_), "cuStreamSynchronize");
  if (!f[0])
    return;
  const int64_t none[4] = {0, 0, 0, 0};
  d.check(d.memcpyHtoDAsync(fault_, none, sizeof none, work_), "cuMemcpyHtoDAsync");
  d.check(d.streamSynchronize(work_), "cuStreamSynchronize");
  // A division's record carries its group's tag (KernelFault.h).
  const Op *at = nullptr;
  for (const auto &fn : module_->functions)
    if (kernelFaultGroupTag(fn->name) == f[2] && f[1] >= 0 && size_t(f[1]) < fn->ops.size())
      at = fn->ops[size_t(f[1])].get();
  fail(at ? at->where() : artifact_.file, ": ", kernelFaultMessage(f[0], f[2], f[3]));
}

std::vector<std::string> CudaModel::stepReport() const {
  return lastPlan_ ? lastPlan_->report : std::vector<std::string>();
}

} // namespace tc
