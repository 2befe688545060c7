// A shape that cannot be planned (sizes known only from the data: a
// NonZero's count, a Reshape to a computed shape), or host inputs that do
// not fit (which the reference executor reports): the entry op by op, the
// reference executor walking it (it binds symbols, checks every result
// against its declared type, runs control flow) while the data stays on
// the device. Its tensors are the values' shapes; their bytes are current
// only where `Place::onHost` says so.
//   - a group with a generated kernel runs on the device, at the sizes its
//     operands give (groupDims); a compaction kernel (NonZero, Compress)
//     first counts on the device, and the count is read back (one i64: a
//     sync, not a host step) to size its results; a `columns` or `split`
//     kernel reads a scratch of the run's (zeroed once), `split` a launch
//     per pass;
//   - a MatMul/Gemm/Conv group is its cuBLASLt/cuDNN call (and epilogue
//     kernel), set up for the sizes the run finds (CudaRun.cpp's
//     makeLibraryStep: the plan's choices, once per op and run, no graph);
//   - a view (Reshape, Flatten, Squeeze, Unsqueeze, Identity) is its
//     operand's bytes, uploaded first where only the host has them;
//     Shape and Size read no bytes;
//   - anything else is a host step: its operands read back first, its
//     results uploaded when a device step reads them.
#include "CudaControlFlow.h"
#include "CudaShapePlan.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/ElementMove.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Runtime/GroupDims.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <map>
#include <memory>
#include <unordered_map>

namespace tc {

namespace {

// Where a value of the run is: its device bytes (shared by the views of
// it), and whether the host tensor the executor holds has them too.
struct Place {
  std::shared_ptr<cuda::DeviceMemory> memory; // null: not ours (a device input)
  cuda::CUdeviceptr at = 0;
  bool onHost = false;
};

bool isSameBytesView(const Op &op) {
  return op.is(OpKind::Reshape) || op.is(OpKind::Flatten) || op.is(OpKind::Squeeze) ||
         op.is(OpKind::Unsqueeze) || op.is(OpKind::Identity);
}

} // namespace

bool CudaModel::runUnplanned(const std::vector<Input> &inputs, std::vector<Output> &outputs) {
  const cuda::Driver &d = cuda::driver();
  const Function &main = module_->main();
  std::unordered_map<const Value *, Place> places;
  std::vector<HostTensor> host;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input &in = inputs[i];
    if (in.host) {
      host.push_back(*in.host);
      continue;
    }
    host.emplace_back(in.dtype, in.shape); // its bytes read back only if a host step reads them
    if (i < main.args.size())
      places[main.args[i]] = {nullptr, in.device, false};
  }
  auto sync = [&] { d.check(d.streamSynchronize(work_), "cuStreamSynchronize"); };
  // A value's bytes into the executor's tensor `t` (a host step reads them).
  auto toHost = [&](const Value *v, const HostTensor *t) {
    auto p = places.find(v);
    if (p == places.end() || p->second.onHost)
      return;
    HostTensor &mutableT = const_cast<HostTensor &>(*t); // the executor's own, shape only so far
    if (mutableT.byteSize()) {
      d.check(d.memcpyDtoHAsync(mutableT.bytes(), p->second.at, mutableT.byteSize(), work_),
              "cuMemcpyDtoHAsync");
      sync();
    }
    p->second.onHost = true;
  };
  std::map<const uint8_t *, cuda::DeviceMemory> folded; // constants not in the artifact
  auto toDevice = [&](const Value *v, const HostTensor *t) {
    auto p = places.find(v);
    if (p != places.end())
      return p->second.at;
    if (v->isConstant() && v->data) { // the artifact's weights: uploaded once per model
      cuda::CUdeviceptr at = weightOnDevice(*v, folded);
      places[v] = {nullptr, at, true};
      return at;
    }
    auto memory = std::make_shared<cuda::DeviceMemory>(t->byteSize());
    if (t->byteSize()) // staged from pageable memory: `t` may go once this returns
      d.check(d.memcpyHtoDAsync(memory->get(), t->bytes(), t->byteSize(), work_),
              "cuMemcpyHtoDAsync");
    cuda::CUdeviceptr at = memory->get();
    places[v] = {std::move(memory), at, true};
    return at;
  };
  auto allToHost = [&](const Op &op, const std::vector<const HostTensor *> &ins) {
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i])
        toHost(op.operands[i], ins[i]);
  };

  // The library steps of the run: their calls, scratch and cuDNN
  // workspaces live until the final sync.
  std::vector<std::unique_ptr<Step>> libraryCalls;
  std::vector<cuda::DeviceMemory> workspaces;
  // A library group (cuBLASLt/cuDNN) on the device at the run's sizes;
  // nullopt: the reference runs it.
  auto runLibrary =
      [&](const Op &op, const Function &f, const Kernel &k,
          const std::vector<const HostTensor *> &ins) -> std::optional<std::vector<HostTensor>> {
    std::optional<GroupDims> g = groupDims(op, f, ins, std::nullopt, [&] { allToHost(op, ins); });
    if (!g || f.results.empty())
      return std::nullopt;
    LibraryOperands o;
    o.group = &f;
    std::vector<cuda::CUdeviceptr> bufs;
    for (size_t i = 0; i < ins.size(); ++i) {
      o.args.push_back(ins[i]->type());
      bufs.push_back(toDevice(op.operands[i], ins[i]));
    }
    std::vector<HostTensor> outs;
    std::vector<Place> made;
    for (size_t r = 0; r < f.results.size(); ++r) {
      outs.emplace_back(f.results[r]->type.dtype, g->results[r]);
      auto memory = std::make_shared<cuda::DeviceMemory>(outs.back().byteSize());
      made.push_back({memory, memory->get(), false});
    }
    o.result = outs[0].type();
    o.operand = [&](size_t i) { return bufs[i]; };
    o.result0 = made[0].at;
    o.epilogueParams = [&](cuda::CUdeviceptr anchor) {
      // The group's arguments, the anchor's result (result 0's dims), its results.
      std::vector<uint64_t> b(bufs.begin(), bufs.end());
      b.push_back(anchor);
      for (const Place &p : made)
        b.push_back(p.at);
      size_t argDims = 0;
      for (const HostTensor *t : ins)
        argDims += t->shape().size();
      std::vector<int64_t> dims(g->dims.begin(), g->dims.begin() + std::ptrdiff_t(argDims));
      dims.insert(dims.end(), g->results[0].begin(), g->results[0].end());
      dims.insert(dims.end(), g->dims.begin() + std::ptrdiff_t(argDims), g->dims.end());
      return packKernelParams(b, dims);
    };
    auto step = std::make_unique<Step>();
    makeLibraryStep(o, k, *step);
    if (step->kind != Step::Kind::Library)
      return std::nullopt;
    if (step->gemm) {
      step->gemm->run(work_);
    } else {
      step->conv->setWorkspace(workspaces.emplace_back(step->conv->workspaceBytes()).get());
      step->conv->run();
    }
    if (step->fn) // the epilogue, in place over the result
      step->launchKernel(work_);
    libraryCalls.push_back(std::move(step));
    for (size_t r = 0; r < made.size(); ++r)
      places[op.results[r]] = std::move(made[r]);
    ++librarySteps_;
    return outs;
  };

  // A group's generated kernel on the device; nullopt: the reference runs it.
  auto runKernel =
      [&](const Op &op,
          const std::vector<const HostTensor *> &ins) -> std::optional<std::vector<HostTensor>> {
    auto k = kernels_.find(op.getString("callee"));
    const Function *f = module_->lookup(op.getString("callee"));
    if (k == kernels_.end() || !f)
      return std::nullopt;
    for (const HostTensor *t : ins)
      if (!t || t->dtype() == DType::Str)
        return std::nullopt;
    if (!k->second.entry.library.empty())
      return runLibrary(op, *f, k->second, ins);
    // `multi-tensor` reads a plan's table: a host step here (a multi-tensor
    // run exists only where the artifact stores a plan).
    if (!k->second.entry.hasKernel() || k->second.entry.launch == LaunchKind::MultiTensor)
      return std::nullopt;
    std::vector<uint64_t> bufs;
    for (size_t i = 0; i < ins.size(); ++i)
      bufs.push_back(toDevice(op.operands[i], ins[i]));
    bool compact = k->second.entry.launch == LaunchKind::Compact;
    auto launch = [&](const std::vector<uint64_t> &b, const std::vector<int64_t> &dims,
                      const LaunchDims &l, std::optional<int64_t> pass) {
      std::vector<uint64_t> p = packKernelParams(b, dims);
      if (pass)
        p.push_back(uint64_t(*pass));
      void *args[] = {p.data()};
      d.check(d.launchKernel(k->second.fn, l.grid, 1, 1, l.block, 1, 1, 0, work_, args, nullptr),
              "cuLaunchKernel");
    };
    int64_t count = 0;
    if (compact) {                    // pass 0: the count, read back (a sync)
      size_t bytes = sizeof(int64_t); // the count, then a byte per argument element
      for (const HostTensor *t : ins)
        bytes += size_t(t->numElements());
      if (countBuffer_.size() < bytes)
        countBuffer_ = cuda::DeviceMemory(bytes);
      std::optional<GroupDims> zero = groupDims(op, *f, ins, 0);
      if (!zero)
        return std::nullopt;
      std::vector<uint64_t> b = bufs;
      b.resize(b.size() + f->results.size(), 0);
      b.push_back(countBuffer_.get());
      launch(b, zero->dims, *launchDims(k->second.entry, {}), 0);
      d.check(d.memcpyDtoHAsync(&count, countBuffer_.get(), sizeof count, work_),
              "cuMemcpyDtoHAsync");
      sync();
      checkFault();
      ++countReads_;
      if (count < 0) { // inputs the reference rejects: it runs the op and says why
        allToHost(op, ins);
        return std::nullopt;
      }
    }
    std::optional<GroupDims> g = groupDims(
        op, *f, ins, compact ? std::optional(count) : std::nullopt, [&] { allToHost(op, ins); });
    if (!g)
      return std::nullopt;
    std::vector<HostTensor> outs;
    std::vector<Place> made;
    for (size_t r = 0; r < f->results.size(); ++r) {
      outs.emplace_back(f->results[r]->type.dtype, g->results[r]);
      auto memory = std::make_shared<cuda::DeviceMemory>(outs.back().byteSize());
      bufs.push_back(memory->get());
      made.push_back({memory, memory->get(), false});
    }
    if (compact) {
      bufs.push_back(countBuffer_.get());
      launch(bufs, g->dims, *launchDims(k->second.entry, {}), 1);
    } else if (std::optional<LaunchDims> l = launchDims(k->second.entry, g->results[0])) {
      // `columns` and `split` read a zeroed scratch after their results (as
      // a plan's: CudaRun.cpp); `split` launches once per pass.
      if (readsScratch(k->second.entry.launch))
        bufs.push_back(stepScratch_.reserve(columnsScratchBytes(*l), work_));
      if (l->passField)
        for (unsigned pass = 0; pass < l->passes; ++pass)
          launch(bufs, g->dims, *l, pass);
      else
        launch(bufs, g->dims, *l, std::nullopt); // none: an empty result
    }
    for (size_t r = 0; r < made.size(); ++r)
      places[op.results[r]] = std::move(made[r]);
    ++kernelSteps_;
    return outs;
  };

  OpOverride onDevice;
  // A control-flow callee op by op like the entry, its arguments' bytes
  // where the caller has them; what a previous call of it left is
  // forgotten first (a Loop body's values of the last iteration).
  cuda::StepByStepRun controlFlow;
  controlFlow.stream = work_;
  controlFlow.sync = [&] {
    sync();
    checkFault();
  };
  controlFlow.reads = &controlReads_;
  controlFlow.runFunction = [&](const Function &f, const std::vector<cuda::DeviceTensor> &args) {
    for (const Value *a : f.args)
      places.erase(a);
    for (const auto &o : f.ops)
      for (const Value *r : o->results)
        places.erase(r);
    std::vector<HostTensor> shapes;
    for (size_t i = 0; i < args.size() && i < f.args.size(); ++i) {
      shapes.emplace_back(args[i].dtype, args[i].dims);
      places[f.args[i]] = {args[i].memory, args[i].at, false};
    }
    std::vector<HostTensor> results = runReference(module_.get(), f, shapes, nullptr, &onDevice);
    std::vector<cuda::DeviceTensor> out;
    for (size_t k = 0; k < results.size(); ++k) {
      cuda::CUdeviceptr at = toDevice(f.results[k], &results[k]);
      out.push_back({results[k].dtype(), results[k].shape(), places[f.results[k]].memory, at});
    }
    return out;
  };
  // A control-flow op codegen compiled: on the device, its results' bytes
  // where its callees left them.
  auto runControlFlow = [&](const Op &op, const std::vector<const HostTensor *> &ins) {
    std::vector<cuda::DeviceTensor> operands(ins.size());
    std::vector<const cuda::DeviceTensor *> ptrs;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) {
        ptrs.push_back(nullptr);
        continue;
      }
      cuda::CUdeviceptr at = toDevice(op.operands[i], ins[i]);
      operands[i] = {ins[i]->dtype(), ins[i]->shape(), places[op.operands[i]].memory, at};
      ptrs.push_back(&operands[i]);
    }
    std::vector<cuda::DeviceTensor> results =
        cuda::runControlFlowOnDevice(*module_, op, ptrs, controlFlow);
    std::vector<HostTensor> outs;
    for (size_t r = 0; r < results.size() && r < op.results.size(); ++r) {
      outs.emplace_back(results[r].dtype, results[r].dims); // the shape only
      places[op.results[r]] = {results[r].memory, results[r].at, false};
    }
    return outs;
  };
  onDevice =
      [&](const Op &op,
          const std::vector<const HostTensor *> &ins) -> std::optional<std::vector<HostTensor>> {
    if (isControlFlowOp(op) && controlFlow_.count(&op))
      return runControlFlow(op, ins);
    if (op.is(OpKind::Fused))
      if (std::optional<std::vector<HostTensor>> outs = runKernel(op, ins))
        return outs;
    // A view is its data's bytes on the device. Data only the host has (a
    // host input, a host step's result) is uploaded first, as a device
    // step's operands are: a Reshape or Unsqueeze whose shape or axes are
    // run-time inputs runs op by op for want of a shape plan, and its view
    // of a host input is no host step. Strings stay on the host.
    bool tensorData = !op.operands.empty() && op.operand(0) && !ins.empty() && ins[0] &&
                      ins[0]->dtype() != DType::Str;
    if (isSameBytesView(op) && tensorData) {
      for (size_t i = 1; i < ins.size(); ++i) // a Reshape's shape
        if (ins[i])
          toHost(op.operands[i], ins[i]);
      if (std::optional<std::vector<TensorType>> types = runTimeResultTypes(op, ins)) {
        std::vector<HostTensor> outs;
        outs.emplace_back(types->at(0).dtype, staticDims(types->at(0).shape));
        if (outs[0].byteSize() == ins[0]->byteSize()) {
          toDevice(op.operand(0), ins[0]); // a no-op where the device has them
          Place p = places[op.operand(0)];
          p.onHost = false; // `outs` holds the shape only
          places[op.result()] = p;
          return outs;
        }
      }
    }
    if (!op.is(OpKind::Shape) && !op.is(OpKind::Size)) { // those read no bytes
      allToHost(op, ins);
      ++hostSteps_;
    }
    return std::nullopt;
  };
  if (trace_) // nothing traced step by step: no steps is how the caller knows
    trace_->steps.clear();
  std::vector<HostTensor> results = runReference(module_.get(), main, host, nullptr, &onDevice);
  unplannedOutputs_.clear();
  for (size_t i = 0; i < results.size(); ++i) {
    Output &o = outputs[i];
    const Value *r = main.results[i];
    auto p = places.find(r);
    bool onDevice = p != places.end() && !p->second.onHost;
    o.shape = results[i].shape();
    o.bytes = results[i].byteSize();
    if (o.to == Output::To::Host) {
      o.host = std::move(results[i]);
      if (onDevice && o.bytes) // into the tensor the caller gets (the sync below waits)
        d.check(d.memcpyDtoHAsync(o.host.bytes(), p->second.at, o.bytes, work_),
                "cuMemcpyDtoHAsync");
      continue;
    }
    if (results[i].dtype() == DType::Str)
      fail("output '", r->name, "' is str: strings stay on the host");
    if (o.to == Output::To::ModelDevice)
      o.device = unplannedOutputs_.emplace_back(o.bytes).get();
    else if (o.bytes > o.capacity || (o.bytes && !o.device))
      fail("output '", r->name, "' (", results[i].typeStr(), ") needs ", o.bytes,
           " bytes; the device buffer given has ", o.device ? o.capacity : 0);
    if (o.bytes && onDevice)
      d.check(d.memcpyDtoDAsync(o.device, p->second.at, o.bytes, work_), "cuMemcpyDtoDAsync");
    else if (o.bytes)
      d.check(d.memcpyHtoDAsync(o.device, results[i].bytes(), o.bytes, work_), "cuMemcpyHtoDAsync");
  }
  // The copies have read what `places` and `results` hold before they go;
  // a kernel's fault surfaces here, named.
  sync();
  checkFault();
  return true;
}

} // namespace tc
