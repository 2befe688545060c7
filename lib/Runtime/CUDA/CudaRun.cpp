// CudaModel::run: per-shape plans over one device arena, kernel launches per
// the kernel table's launch rule, host fallbacks through the reference
// kernels (the same per-op path as the CPU runtime's).
#include "CudaShapePlan.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <algorithm>

namespace tc {

namespace {

uint64_t alignUp(uint64_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

} // namespace

// The device copy of constant `v`: the artifact's weights are uploaded once
// per model, constants folded for one shape once per plan.
cuda::CUdeviceptr CudaModel::weightOnDevice(const Value &v, ShapePlan &plan) {
  const TensorData &data = *v.data;
  if (!data.size)
    return 0;
  const MemoryBuffer &sec = artifact_.require(kSectionModule);
  bool inArtifact = data.ptr >= reinterpret_cast<const uint8_t *>(sec.data()) &&
                    data.ptr < reinterpret_cast<const uint8_t *>(sec.data()) + sec.size();
  auto &cache = inArtifact ? weights_ : plan.folded;
  auto it = cache.find(data.ptr);
  if (it == cache.end()) {
    cuda::DeviceMemory mem(data.size);
    const cuda::Driver &d = cuda::driver();
    d.check(d.memcpyHtoD(mem.get(), data.ptr, data.size), "cuMemcpyHtoD");
    it = cache.emplace(data.ptr, std::move(mem)).first;
  }
  return it->second.get();
}

std::unique_ptr<CudaModel::ShapePlan>
CudaModel::makePlan(const std::map<std::string, int64_t> &sizes) {
  auto plan = std::make_unique<ShapePlan>();
  plan->planned = planShape(artifact_, sizes);
  if (!plan->planned)
    return nullptr;
  const PlannedModule &pm = *plan->planned;
  const Function &f = pm.main();
  uint64_t bytes = alignUp(pm.memory.arenaBytes);
  for (const Value *a : f.args) {
    plan->inputOffsets.push_back(bytes);
    bytes += alignUp(byteSize(a->type).value_or(0));
  }
  plan->arena = cuda::DeviceMemory(bytes);
  using Step = ShapePlan::Step;
  for (const auto &p : f.ops) {
    const Op &op = *p;
    Step s;
    s.op = &op;
    std::string what = "host (reference kernels)";
    auto k = op.is(OpKind::Fused) ? kernels_.find(op.getString("callee")) : kernels_.end();
    if (pm.aliases(op)) {
      s.kind = Step::Kind::Nothing; // same bytes, another shape
      what = "view";
    } else if (k != kernels_.end() &&
               std::find(op.operands.begin(), op.operands.end(), nullptr) == op.operands.end()) {
      std::vector<uint64_t> bufs;
      std::vector<int64_t> dims;
      for (const auto *values : {&op.operands, &op.results})
        for (const Value *v : *values) {
          bufs.push_back(devicePtr(*plan, v));
          for (const Dim &d : v->type.shape)
            dims.push_back(d.size);
        }
      std::optional<LaunchDims> l =
          launchDims(k->second.entry, staticDims(op.result()->type.shape));
      s.kind = l ? Step::Kind::Kernel : Step::Kind::Nothing;
      s.fn = k->second.fn;
      s.launch = l.value_or(LaunchDims{});
      s.params = packKernelParams(bufs, dims);
      what = l ? "kernel " + k->second.entry.symbol + " <<<" + std::to_string(s.launch.grid) +
                     ", " + std::to_string(s.launch.block) + ">>>"
               : "nothing (empty)";
    }
    plan->report.push_back(
        "%" + op.result()->name + " = " +
        (op.is(OpKind::Fused) ? "@" + op.getString("callee") : std::string(op.name())) + ": " +
        what);
    plan->steps.push_back(std::move(s));
  }
  return plan;
}

cuda::CUdeviceptr CudaModel::devicePtr(ShapePlan &plan, const Value *v) {
  ValuePlace at = plan.planned->placeOf(v);
  if (at.kind == ValuePlace::Kind::Constant)
    return weightOnDevice(*v, plan);
  return plan.arena.get() +
         (at.kind == ValuePlace::Kind::Argument ? plan.inputOffsets[at.arg] : at.offset);
}

std::vector<HostTensor> CudaModel::runPlanned(ShapePlan &plan,
                                              const std::vector<HostTensor> &inputs) {
  const cuda::Driver &d = cuda::driver();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].byteSize())
      d.check(d.memcpyHtoD(plan.arena.get() + plan.inputOffsets[i], inputs[i].bytes(),
                           inputs[i].byteSize()),
              "cuMemcpyHtoD");
  // A value's bytes copied to the host (synchronous: after every launch
  // before it on the default stream).
  auto download = [&](const Value *v) {
    HostTensor t(v->type.dtype, staticDims(v->type.shape));
    if (v->isConstant())
      std::copy(v->data->ptr, v->data->ptr + t.byteSize(), t.bytes());
    else if (t.byteSize())
      d.check(d.memcpyDtoH(t.bytes(), devicePtr(plan, v), t.byteSize()), "cuMemcpyDtoH");
    return t;
  };
  using Kind = ShapePlan::Step::Kind;
  for (ShapePlan::Step &s : plan.steps) {
    if (s.kind == Kind::Nothing)
      continue;
    if (s.kind == Kind::Kernel) {
      void *params[] = {s.params.data()};
      d.check(d.launchKernel(s.fn, s.launch.grid, 1, 1, s.launch.block, 1, 1, 0, nullptr, params,
                             nullptr),
              "cuLaunchKernel");
      ++kernelSteps_;
      continue;
    }
    ++hostSteps_;
    std::vector<HostTensor> outs = runOpOnReference(*plan.planned->module, *s.op, download);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].byteSize())
        d.check(
            d.memcpyHtoD(devicePtr(plan, s.op->results[i]), outs[i].bytes(), outs[i].byteSize()),
            "cuMemcpyHtoD");
  }
  // A kernel's fault surfaces here, named, rather than in the next copy.
  d.check(d.ctxSynchronize(), "cuCtxSynchronize");
  std::vector<HostTensor> results;
  for (const Value *r : plan.planned->main().results)
    results.push_back(download(r));
  return results;
}

std::vector<HostTensor> CudaModel::run(const std::vector<HostTensor> &inputs) {
  kernelSteps_ = hostSteps_ = 0;
  arenaBytes_ = 0;
  lastPlan_ = nullptr;
  // Plans allocate and upload too: the context must be this thread's.
  const cuda::Driver &d = cuda::driver();
  d.check(d.ctxSetCurrent(ctx_), "cuCtxSetCurrent");
  if (std::optional<ShapeKey> key = shapeKeyOf(module_->main(), inputs))
    if (ShapePlan *plan = plans_->get(key->dims, [&] { return makePlan(key->sizes); })) {
      arenaBytes_ = plan->planned->memory.arenaBytes;
      lastPlan_ = plan;
      return runPlanned(*plan, inputs);
    }
  // Unplannable (or bad inputs, which the reference executor reports): every
  // op on the host.
  OpOverride countHost = [this](const Op &, const std::vector<const HostTensor *> &) {
    ++hostSteps_;
    return std::optional<std::vector<HostTensor>>();
  };
  return runReference(module_.get(), module_->main(), inputs, nullptr, &countHost);
}

std::vector<std::string> CudaModel::stepReport() const {
  return lastPlan_ ? lastPlan_->report : std::vector<std::string>();
}

} // namespace tc
