#include "tc/Runtime/CpuModel.h"
#include "BlockedLayout.h"
#include "HostFeatures.h"
#include "KernelLibrary.h"
#include "MoveStep.h"
#include "OneDnnCall.h"
#include "tc/Analysis/KernelCount.h"
#include "tc/Analysis/MemoryPlan.h"
#include "tc/Analysis/StepCost.h"
#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/CodeGen/KernelFault.h"
#include "tc/CodeGen/KernelTable.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/CodeGen/MultiTensor.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/ElementMove.h"
#include "tc/Runtime/ConstantTensor.h"
#include "tc/Runtime/GroupDims.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/ShapePlan.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <unordered_map>

namespace tc {

// The module specialized to one set of input sizes (ShapePlan.h), its
// arena, and its steps with every pointer and size resolved (inputs bound
// per run).
struct CpuModel::ShapePlan {
  std::unique_ptr<PlannedModule> planned;
  std::unique_ptr<uint8_t, void (*)(uint8_t *)> arena{nullptr, nullptr};
  struct Step {
    const Op *op = nullptr;
    // MultiTensor: a run's first step, which runs the run (`members`);
    // InRun: a later member of it (nothing of its own to run).
    enum class Kind {
      View,
      Kernel,
      Library,
      Move,
      Reference,
      MultiTensor,
      InRun
    } kind = Kind::Reference;
    KernelFn kernel = nullptr; // Kernel: the group's; Library: its epilogue, if left
    std::unique_ptr<OneDnnCall> call;
    MoveStep move;
    std::vector<void *> bufs; // operands then results (Library: operands, result, result)
    std::vector<int64_t> dims;
    std::vector<int64_t> domain;
    struct InputSlot {
      size_t slot, arg;
      uint64_t offset; // a Slice view of the input
    };
    std::vector<InputSlot> inputSlots; // bufs[slot] = inputs[arg] + offset
    // MultiTensor: each member as a Kernel step over its sizes erased
    // (tc/CodeGen/MultiTensor.h: domain [n]), with `flat`: the (bufs
    // index, element bytes) of each of its flat values.
    std::vector<Step> members;
    std::vector<std::pair<size_t, size_t>> flat;
  };
  std::vector<Step> steps;
  std::vector<std::string> report; // CpuModel::stepReport
  std::vector<StepInfo> info;      // for traces, made at the first traced run
  std::vector<double> seconds;     // per step, summed over profiled runs
  size_t runs = 0;                 // profiled runs
};

CpuModel::~CpuModel() = default;

std::unique_ptr<CpuModel> CpuModel::load(Artifact artifact, const char *target, unsigned threads) {
  std::unique_ptr<CpuModel> model(new CpuModel());
  model->pool_ = std::make_unique<ThreadPool>(
      threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
  model->artifact_ = std::move(artifact);
  model->target_ = target;
  const Artifact &a = model->artifact_;
  if (a.target != target)
    fail(a.file, ": the artifact is for target '", a.target, "', not ", target);
  std::vector<std::string> missing = missingHostFeatures(a.cpuFeatures);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &f : missing)
      list += (list.empty() ? "" : ",") + f;
    fail(a.file, ": compiled for CPU '", a.cpu, "' with features this machine lacks (", list,
         "); recompile with tc-codegen --cpu=native or an older --cpu level");
  }
  unplannedShapes(a); // libtcrt refuses an artifact it cannot plan
  model->module_ = readBytecode(a.share(kSectionModule));
  model->controlFlow_ = deviceControlFlow(a, *model->module_);

  // Kernel table lines (lib/CodeGen/CpuCodegen.cpp writes them):
  //   <group> <symbol> <kind> <library> <epilogue> <epilogue-kind>
  // <symbol>: the whole group's kernel, of family <kind> (KernelKind.h);
  // <library>: "onednn" for a group that calls it, its epilogue's kernel
  // <epilogue> run after the call. "-" for none, kinds too.
  struct Entry {
    std::string group, symbol, library, epilogue;
    std::optional<KernelKind> kind, epilogueKind;
  };
  std::vector<Entry> entries;
  for (const KernelTableLine &line : splitKernelTable(a.require(kSectionKernels).str())) {
    const std::vector<std::string> &f = line.fields;
    Entry e;
    if (f.size() != 6 || !parseKernelKindField(f[2], f[1], e.kind) ||
        !parseKernelKindField(f[5], f[4], e.epilogueKind) || (f[1] == "-" && f[3] == "-"))
      failKernelTableLine(a.file, "CPU", line);
    e.group = f[0], e.symbol = f[1], e.library = f[3], e.epilogue = f[4];
    if (!model->module_->lookup(e.group))
      fail(a.file, ": the kernel table names group @", e.group, ", which the module lacks");
    if (e.library != "-" && e.library != "onednn")
      fail(a.file, ": group @", e.group, " asks for library '", e.library,
           "', which this tc-run lacks");
    // Codegen decided the call (CpuCodegen.cpp); a group of another shape
    // than a library op plus a pointwise epilogue is a corrupt table, not a
    // second decision (the call would write the wrong buffer).
    if (e.library == "onednn" && !isLibraryAnchored(*model->module_->lookup(e.group)))
      fail(a.file, ": group @", e.group,
           " is not a library call plus a pointwise epilogue; its oneDNN call is corrupt");
    entries.push_back(e);
  }
  OneDnnCall::setThreads(model->pool_->size());
  if (entries.empty())
    return model;
  model->library_ = std::make_unique<KernelLibrary>(a.require(kSectionObject).str(), a.file);
  auto lookup = [&](const std::string &symbol) -> KernelFn {
    return symbol == "-" ? nullptr : reinterpret_cast<KernelFn>(model->library_->symbol(symbol));
  };
  for (const Entry &e : entries)
    model->kernels_[e.group] = {lookup(e.symbol), e.kind, e.library == "-" ? "" : e.library,
                                lookup(e.epilogue)};
  model->fault_ = static_cast<int64_t *>(model->library_->find(kKernelFaultSymbol));
  return model;
}

void CpuModel::checkFault(const Module &m, const Op &fused, bool epilogue) {
  if (!fault_ || !fault_[0])
    return;
  int64_t what = fault_[0], at = fault_[1], a = fault_[2], b = fault_[3];
  fault_[0] = 0;
  const Function *g = epilogue ? nullptr : m.lookup(fused.getString("callee"));
  const Op &op = g && at >= 0 && size_t(at) < g->ops.size() ? *g->ops[size_t(at)] : fused;
  fail(op.where(), ": ", kernelFaultMessage(what, a, b));
}

// A Fused step with a kernel: result dims follow from the callee's
// signature with its symbols bound to the operands' actual dims.
std::optional<std::vector<HostTensor>>
CpuModel::runKernel(const Op &op, const std::vector<const HostTensor *> &ins) {
  if (!op.is(OpKind::Fused))
    return std::nullopt;
  auto it = kernels_.find(op.getString("callee"));
  // A multi-tensor run's kernel takes its sizes erased (MultiTensor.h): the
  // reference runs it here (a run exists only where the artifact stores a plan).
  if (it == kernels_.end() || !it->second.kernel || multiTensorRun(op))
    return std::nullopt;
  const Function &f = *module_->lookup(it->first);
  // A compaction kernel's `?` dims are its count: pass 0 (the launch rule,
  // tc/CodeGen/KernelEmitter.h) over the inputs, no results yet.
  bool compaction = it->second.kind == KernelKind::Compaction;
  size_t flagBytes = 0;
  for (const HostTensor *t : ins)
    flagBytes += compaction && t ? size_t(t->numElements()) : 0;
  std::vector<int64_t> counted(1 + (flagBytes + 7) / 8); // the count, then a byte per element
  int64_t &count = counted[0];
  if (compaction) {
    std::optional<GroupDims> zero = groupDims(op, f, ins, 0);
    if (!zero)
      return std::nullopt;
    std::vector<void *> bufs;
    for (const HostTensor *t : ins)
      bufs.push_back(const_cast<uint8_t *>(t->bytes()));
    bufs.resize(bufs.size() + f.results.size(), nullptr);
    bufs.push_back(counted.data());
    it->second.kernel(bufs.data(), zero->dims.data(), 0, 1);
    if (count < 0) // inputs the reference rejects: it runs the op and says why
      return std::nullopt;
  }
  std::optional<GroupDims> g =
      groupDims(op, f, ins, compaction ? std::optional(count) : std::nullopt);
  if (!g)
    return std::nullopt;
  std::vector<HostTensor> outs;
  for (size_t k = 0; k < f.results.size(); ++k)
    outs.emplace_back(f.results[k]->type.dtype, g->results[k]);
  std::vector<void *> bufs;
  for (const HostTensor *t : ins) // the kernel only reads its inputs
    bufs.push_back(const_cast<uint8_t *>(t->bytes()));
  for (HostTensor &t : outs)
    bufs.push_back(t.bytes());
  if (compaction) { // pass 1, in order on this thread
    bufs.push_back(counted.data());
    it->second.kernel(bufs.data(), g->dims.data(), 1, 2);
  } else {
    launch(it->second.kernel, bufs.data(), g->dims.data(), outs[0].shape());
  }
  checkFault(*module_, op);
  ++kernelSteps_;
  return outs;
}

std::optional<std::vector<HostTensor>>
CpuModel::runCopy(const Op &op, const std::vector<const HostTensor *> &ins) {
  bool view = op.is(OpKind::Reshape) || op.is(OpKind::Flatten) || op.is(OpKind::Squeeze) ||
              op.is(OpKind::Unsqueeze) || op.is(OpKind::Identity);
  if (!view && !isCpuCopyMove(op.kind))
    return std::nullopt;
  std::optional<std::vector<TensorType>> types = runTimeResultTypes(op, ins);
  if (!types || types->size() != op.results.size())
    return std::nullopt;
  std::vector<HostTensor> outs;
  for (const TensorType &t : *types)
    outs.emplace_back(t.dtype, staticDims(t.shape));
  if (view) {
    if (!ins[0] || ins[0]->dtype() == DType::Str || outs[0].byteSize() != ins[0]->byteSize())
      return std::nullopt;
    if (outs[0].byteSize())
      std::memcpy(outs[0].bytes(), ins[0]->bytes(), outs[0].byteSize());
    return outs;
  }
  // The op at this run's sizes, for the planned run's copies (a Split's
  // sizes are its results': it reads its input alone).
  Function scratch;
  std::vector<Value *> operands;
  size_t n = op.is(OpKind::Split) ? 1 : ins.size();
  for (size_t i = 0; i < n; ++i)
    operands.push_back(ins[i] ? scratch.addArgument(op.operands[i]->name, ins[i]->type())
                              : nullptr);
  std::vector<std::string> names;
  for (const Value *r : op.results)
    names.push_back(r->name);
  Op *sized = scratch.addOp(op.kind, std::move(operands), std::move(names), *types, op.loc);
  sized->attrs = op.attrs;
  MoveStep move = makeMoveStep(*sized);
  if (!move)
    return std::nullopt;
  std::vector<void *> bufs;
  for (size_t i = 0; i < n; ++i)
    bufs.push_back(ins[i] ? const_cast<uint8_t *>(ins[i]->bytes()) : nullptr);
  for (HostTensor &t : outs)
    bufs.push_back(t.bytes());
  move(bufs.data());
  return outs;
}

void CpuModel::launch(KernelFn kernel, void *const *bufs, const int64_t *dims,
                      const std::vector<int64_t> &domain) {
  int64_t inner = domain.empty() ? 1 : domain.back(), n = 1;
  for (int64_t d : domain)
    n *= d;
  int64_t rows = inner == 0 ? 0 : n / inner;
  // Rows are independent: split them so each chunk has some 16K elements.
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(inner, 1));
  if (!trace_ || traceStep_ < 0) {
    pool_->parallelFor(rows, grain,
                       [&](int64_t begin, int64_t end) { kernel(bufs, dims, begin, end); });
    return;
  }
  // Traced: each thread's share is an event on its own lane.
  const StepInfo &info = trace_->steps[size_t(traceStep_)];
  pool_->parallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    double t0 = trace_->nowUs();
    kernel(bufs, dims, begin, end);
    TraceEvent e;
    e.track = TraceEvent::Track::Worker;
    e.lane = ThreadPool::currentThread();
    e.name = info.group;
    e.category = "kernel";
    e.step = traceStep_;
    e.run = trace_->currentRun;
    e.startUs = t0;
    e.durUs = trace_->nowUs() - t0;
    e.note = "rows " + std::to_string(begin) + ".." + std::to_string(end);
    trace_->add(std::move(e));
  });
}

// A multi-tensor run (tc/CodeGen/MultiTensor.h): one parallel loop over
// its members' elements concatenated, each piece its member's erased kernel
// over a part of it (flat pointers advanced, n the part's length).
void CpuModel::launchMultiTensor(const ShapePlan &plan, size_t step) {
  const std::vector<ShapePlan::Step> &members = plan.steps[step].members;
  std::vector<int64_t> at{0}; // each member's first element in the concatenation
  for (const ShapePlan::Step &m : members)
    at.push_back(at.back() + m.domain[0]);
  // Some 16K elements a piece. Test-only: TC_TEST_MULTI_TENSOR_GRAIN sets
  // it (multi-tensor.test: pieces starting inside a tensor).
  static const int64_t grain = [] {
    const char *g = std::getenv("TC_TEST_MULTI_TENSOR_GRAIN");
    return g ? std::max<int64_t>(1, std::atoll(g)) : int64_t(1) << 14;
  }();
  pool_->parallelFor(at.back(), grain, [&](int64_t begin, int64_t end) {
    size_t k = size_t(std::upper_bound(at.begin(), at.end(), begin) - at.begin()) - 1;
    std::vector<void *> bufs;
    std::vector<int64_t> dims;
    for (; k < members.size() && at[k] < end; ++k) {
      const ShapePlan::Step &m = members[k];
      int64_t from = std::max(begin, at[k]) - at[k], to = std::min(end, at[k + 1]) - at[k];
      bufs = m.bufs;
      for (auto [slot, bytes] : m.flat)
        bufs[slot] = static_cast<uint8_t *>(bufs[slot]) + from * int64_t(bytes);
      dims.assign(m.dims.size(), to - from);
      m.kernel(bufs.data(), dims.data(), 0, 1);
    }
  });
}

// nullptr when this shape cannot be planned (sizes unknown until run time).
CpuModel::ShapePlan *CpuModel::planFor(const std::vector<HostTensor> &inputs) {
  std::optional<ShapeKey> key = shapeKeyOf(module_->main(), inputs);
  if (!key)
    return nullptr; // runReference reports it
  return plans_.get(key->dims, [&]() -> std::unique_ptr<ShapePlan> {
    planned_ = true;
    auto plan = std::make_unique<ShapePlan>();
    plan->planned = planShape(artifact_, key->sizes);
    if (!plan->planned)
      return nullptr;
    size_t bytes = std::max<uint64_t>(plan->planned->memory.arenaBytes, kArenaAlignment);
    plan->arena = {static_cast<uint8_t *>(::operator new(bytes, std::align_val_t(kArenaAlignment))),
                   [](uint8_t *p) { ::operator delete(p, std::align_val_t(kArenaAlignment)); }};
    buildSteps(*plan);
    return plan;
  });
}

// A oneDNN step small in both work and traffic runs on the calling thread
// alone: no parallel region, no barrier to wait at for a descheduled worker.
// Measured on this 2-core AVX-512 box (--threads 2, median us with the team /
// alone; docs/cpu-backend.md): single-op models, conv 3x3 16 ch 8x8
// (0.29 MFLOP) 4.6 / 3.2, MatMul 8x128x128 (0.26 MFLOP) 2.1 / 1.8, conv 16 ch
// 16x16 (1.2 MFLOP) 7.5 / 7.9, MatMul 16x256x256 (2.1 MFLOP) 6.0 / 9.1; global
// average pooling (memory-bound, few FLOPs) of 65 KiB 2.05 / 2.0, 97 KiB
// 2.5-3.0 / 2.7, 130 KiB 2.95 / 3.55, 400 KiB 7.5 / 12.2. In small_cnn, its
// three convs of 0.44-0.59 MFLOP with the team: 16.4 us a run instead of 19.0
// with all of its steps alone (a line at 0.3-0.43 MFLOP: the same 16.4).
constexpr double kSerialFlops = 0.4e6;
constexpr uint64_t kSerialBytes = 96 << 10;

bool CpuModel::serialStep(const PlannedModule &pm, const Op &op) const {
  if (pool_->size() < 2)
    return false; // nothing to share: no note in the report
  StepInfo cost = describeStep(*pm.module, op);
  return cost.flops < kSerialFlops && cost.bytes < kSerialBytes;
}

// Resolves every step of a plan once: which code runs it, and the pointer
// and dims of each operand and result (inputs are bound on each run).
void CpuModel::buildSteps(ShapePlan &plan) {
  using Step = ShapePlan::Step;
  const PlannedModule &pm = *plan.planned;
  const Function &f = pm.main();
  // A value's bytes: in the arena, a weight in the artifact, or input `arg`.
  struct Place {
    uint8_t *ptr = nullptr;
    size_t arg = SIZE_MAX;
    uint64_t offset = 0;
  };
  auto placeOf = [&](const Value *v) -> Place {
    ValuePlace at = pm.placeOf(v);
    if (at.kind == ValuePlace::Kind::Argument)
      return {nullptr, at.arg, at.offset};
    if (at.kind == ValuePlace::Kind::Constant)
      return {const_cast<uint8_t *>(at.weight)};
    return {plan.arena.get() + at.offset};
  };
  for (const auto &p : f.ops) {
    const Op &op = *p;
    Step s;
    s.op = &op;
    std::string what = "reference kernels";
    auto code = op.is(OpKind::Fused) ? kernels_.find(op.getString("callee")) : kernels_.end();
    if (pm.aliases(op)) {
      s.kind = Step::Kind::View; // same bytes, another shape: nothing to do
      what = "view";
    } else if ((s.move = makeMoveStep(op))) {
      s.kind = Step::Kind::Move;
      what = "copy";
    } else if (code != kernels_.end()) {
      std::string why;
      if (code->second.library == "onednn")
        s.call = OneDnnCall::create(*pm.module->lookup(code->first), op, why, serialStep(pm, op));
      if (s.call && (!s.call->epilogueLeft() || code->second.epilogue)) {
        s.kind = Step::Kind::Library;
        s.kernel = s.call->epilogueLeft() ? code->second.epilogue : nullptr;
        what = s.call->describe() + (s.kernel ? " + epilogue kernel" : "");
      } else if (code->second.kernel) {
        s.call.reset();
        s.kind = Step::Kind::Kernel;
        s.kernel = code->second.kernel;
        what = "generated kernel" + (why.empty() ? "" : " (" + why + ")");
      }
    }
    if (s.kind == Step::Kind::Kernel || s.kind == Step::Kind::Library ||
        s.kind == Step::Kind::Move) {
      std::vector<const Value *> vals(op.operands.begin(), op.operands.end());
      vals.insert(vals.end(), op.results.begin(), op.results.end());
      if (s.kind == Step::Kind::Library) // the epilogue reads the call's result in place
        vals.insert(vals.end() - 1, op.result());
      for (const Value *v : vals) {
        Place at = placeOf(v);
        if (at.arg != SIZE_MAX)
          s.inputSlots.push_back({s.bufs.size(), at.arg, at.offset});
        s.bufs.push_back(at.ptr);
        for (const Dim &d : v->type.shape)
          s.dims.push_back(d.size);
      }
      s.domain = staticDims(op.result()->type.shape);
      if (int64_t run = s.kind == Step::Kind::Kernel ? multiTensorRun(op) : 0) {
        // Its kernel takes the sizes erased; the run's first step runs it.
        const Shape &domain = op.result()->type.shape;
        int64_t n = staticNumElements(domain).value_or(0);
        s.dims = multiTensorDims(vals, domain, n);
        s.domain = {n};
        for (size_t k = 0; k < vals.size(); ++k)
          if (multiTensorFlat(vals[k]->type, domain))
            s.flat.push_back({k, dtypeSize(vals[k]->type.dtype)});
        Step *lead = nullptr;
        for (size_t k = plan.steps.size(); k-- > 0 && !lead;)
          if (plan.steps[k].kind != Step::Kind::InRun)
            lead = &plan.steps[k];
        if (lead && lead->kind == Step::Kind::MultiTensor && multiTensorRun(*lead->op) == run) {
          lead->members.push_back(std::move(s));
          s = Step{};
          s.op = &op;
          s.kind = Step::Kind::InRun;
          what = "in the multi-tensor run of %" + lead->op->result()->name;
        } else {
          Step first;
          first.op = &op;
          first.kind = Step::Kind::MultiTensor;
          first.members.push_back(std::move(s));
          s = std::move(first);
          what = "generated kernel, multi-tensor run";
        }
      }
    }
    plan.report.push_back(
        "%" + op.result()->name + " = " +
        (op.is(OpKind::Fused) ? "@" + op.getString("callee") : std::string(op.name())) + ": " +
        what);
    plan.steps.push_back(std::move(s));
  }
  keepBlockedLayouts(plan);
}

// Which activations stay in oneDNN's blocked layout between convolutions
// (BlockedLayout.h): what each step needs of its values' layouts, then each
// conv call drops the reorders of the values kept blocked. The report says
// which steps compute in a blocked layout.
void CpuModel::keepBlockedLayouts(ShapePlan &plan) {
  using Kind = ShapePlan::Step::Kind;
  const Module &m = *plan.planned->module;
  size_t n = plan.steps.size();
  auto groupOf = [&](const Op &op) {
    return op.is(OpKind::Fused) ? m.lookup(op.getString("callee")) : nullptr;
  };
  // The Fused operand a library group's anchor reads as its src.
  auto srcOf = [&](const Op &op) {
    const Function *group = groupOf(op);
    const auto &args = group->args;
    auto it = std::find(args.begin(), args.end(), group->ops.front()->operand(0));
    return it == args.end() ? SIZE_MAX : size_t(it - args.begin());
  };
  // Generated pool kernels that could run as oneDNN pooling reading a conv's
  // layout; dropped again (below) where that layout is not kept.
  std::vector<std::unique_ptr<OneDnnCall>> pools(n);
  std::vector<const Value *> convSrc;
  std::unordered_map<const Value *, const OneDnnCall *> convDst; // value -> the call writing it
  std::unordered_map<const Value *, std::string> blocked;
  auto layoutOf = [&](const Value *v) {
    auto it = v ? blocked.find(v) : blocked.end();
    return it == blocked.end() ? std::string() : it->second;
  };
  for (bool first = true;; first = false) {
    std::vector<LayoutNeeds> needs;
    convSrc.assign(n, nullptr);
    convDst.clear();
    for (size_t i = 0; i < n; ++i) {
      const ShapePlan::Step &s = plan.steps[i];
      const Op &op = *s.op;
      const Function *group = groupOf(op);
      LayoutNeeds need;
      std::vector<bool> listed(op.operands.size());
      bool resultListed = false;
      // ops[from..] of the group elementwise over same-shape values.
      auto together = [&](size_t from) {
        std::optional<std::vector<size_t>> args;
        if (group && op.results.size() == 1)
          args = elementwiseArgs(*group, from);
        if (!args)
          return false;
        need.together.push_back(op.result());
        for (size_t a : *args)
          need.together.push_back(op.operand(a)), listed[a] = true;
        return true;
      };
      bool pointwise = s.kind == Kind::Kernel &&
                       kernels_.at(op.getString("callee")).kind == KernelKind::Pointwise;
      size_t src = s.kind == Kind::Library || s.kind == Kind::Kernel ? srcOf(op) : SIZE_MAX;
      auto producer = src == SIZE_MAX ? convDst.end() : convDst.find(op.operand(src));
      if (first && s.kind == Kind::Kernel && !pointwise && producer != convDst.end())
        pools[i] =
            OneDnnCall::poolReading(*group, op, *producer->second, serialStep(*plan.planned, op));
      const OneDnnCall *call = pools[i] ? pools[i].get() : s.call.get();
      if (call && !(call->srcLayout().empty() && call->dstLayout().empty())) { // conv, pool
        if (src != SIZE_MAX) {
          convSrc[i] = op.operand(src);
          need.fixed.push_back({convSrc[i], call->srcLayout()});
          listed[src] = true;
        }
        // An epilogue kernel runs in place over the call's dst.
        if (pools[i] || !s.kernel || together(1)) {
          need.fixed.push_back({op.result(), call->dstLayout()});
          resultListed = true;
          convDst[op.result()] = call;
        }
      } else if (s.kind == Kind::Library && s.call->readsAnyLayout()) {
        if (producer != convDst.end() && s.call->readSrcLike(*producer->second, false)) {
          need.any.push_back(op.operand(src));
          convSrc[i] = op.operand(src);
          listed[src] = true;
        }
      } else if (pointwise) {
        resultListed = together(0);
      }
      for (size_t a = 0; a < op.operands.size(); ++a)
        if (!listed[a] && op.operand(a))
          need.fixed.push_back({op.operand(a), ""});
      for (const Value *r : op.results)
        if (!resultListed || r != op.result())
          need.fixed.push_back({r, ""});
      needs.push_back(std::move(need));
    }
    blocked = planBlockedLayouts(plan.planned->main(), needs);
    // A pool reads its producer's layout: where that is not kept, it stays
    // the generated kernel, which can make other values plain: plan again.
    bool dropped = false;
    for (size_t i = 0; i < n; ++i)
      if (pools[i] && layoutOf(convSrc[i]).empty())
        pools[i].reset(), dropped = true;
    if (!dropped)
      break;
  }
  for (size_t i = 0; i < n; ++i) {
    ShapePlan::Step &s = plan.steps[i];
    std::string in = layoutOf(convSrc[i]), out = layoutOf(s.op->result());
    std::string &line = plan.report[i]; // "%y = @group: what ran it"
    auto what = [&](const std::string &w) {
      line = line.substr(0, line.find(": ", line.find(" = ")) + 2) + w;
    };
    if (pools[i]) { // reads its src in place: a library step without an epilogue
      s.kind = Kind::Library;
      s.call = std::move(pools[i]);
      s.kernel = nullptr;
      what(s.call->describe());
    }
    if (s.kind == Kind::Library && s.call->readsAnyLayout()) {
      if (!in.empty() && !s.call->readSrcLike(*convDst.at(convSrc[i])))
        fail(s.op->where(), ": oneDNN turned down the layout it accepted a moment ago");
      if (!in.empty())
        what(s.call->describe() + " (in " + in + ")");
    } else if (s.kind == Kind::Library) {
      s.call->keepLayouts(!in.empty(), !out.empty());
      auto producer = convSrc[i] ? convDst.find(convSrc[i]) : convDst.end();
      if (in.empty() && producer != convDst.end() && s.call->shareSrcOf(*producer->second))
        line += " (src shared)";
      if (!in.empty() || !out.empty())
        line += " (" + (in.empty() ? "" : "in " + in) + (in.empty() || out.empty() ? "" : ", ") +
                (out.empty() ? "" : "out " + out) + ")";
    } else if (!out.empty()) {
      line += " (over " + out + ")";
    }
  }
}

std::vector<HostTensor> CpuModel::runPlanned(ShapePlan &plan,
                                             const std::vector<HostTensor> &inputs) {
  const PlannedModule &pm = *plan.planned;
  const Function &f = pm.main();
  auto ptrOf = [&](const Value *v) -> uint8_t * {
    ValuePlace at = pm.placeOf(v);
    if (at.kind == ValuePlace::Kind::Argument)
      return const_cast<uint8_t *>(inputs[at.arg].bytes()) + at.offset;
    if (at.kind == ValuePlace::Kind::Constant) // weights in place, from the artifact
      return const_cast<uint8_t *>(at.weight);
    return plan.arena.get() + at.offset;
  };
  auto tensorAt = [&](const Value *v) {
    std::optional<size_t> n = byteSize(v->type);
    return HostTensor::fromBytes(v->type.dtype, staticDims(v->type.shape), ptrOf(v), n.value_or(0));
  };
  using Kind = ShapePlan::Step::Kind;
  auto runStep = [&](ShapePlan::Step &step) {
    for (const auto &in : step.inputSlots)
      step.bufs[in.slot] = const_cast<uint8_t *>(inputs[in.arg].bytes()) + in.offset;
    if (step.kind == Kind::View || step.kind == Kind::InRun)
      return;
    if (step.kind == Kind::MultiTensor) {
      for (ShapePlan::Step &m : step.members)
        for (const auto &in : m.inputSlots)
          m.bufs[in.slot] = const_cast<uint8_t *>(inputs[in.arg].bytes()) + in.offset;
      launchMultiTensor(plan, size_t(&step - plan.steps.data()));
      ++kernelSteps_;
      return;
    }
    if (step.kind == Kind::Kernel) {
      launch(step.kernel, step.bufs.data(), step.dims.data(), step.domain);
      checkFault(*pm.module, *step.op);
      ++kernelSteps_;
      return;
    }
    if (step.kind == Kind::Move) {
      step.move(step.bufs.data());
      ++moveSteps_;
      return;
    }
    if (step.kind == Kind::Library) {
      size_t n = step.op->operands.size();
      step.call->run(step.bufs.data(), step.bufs[n]);
      ++librarySteps_;
      if (step.kernel) {
        launch(step.kernel, step.bufs.data(), step.dims.data(), step.domain);
        checkFault(*pm.module, *step.op, /*epilogue=*/true);
      }
      return;
    }
    const Op &op = *step.op;
    // Any other step: the reference kernels on copies, results copied into
    // the arena.
    ++fallbackSteps_;
    std::vector<HostTensor> outs = runOpOnReference(*pm.module, op, tensorAt);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].byteSize())
        std::memcpy(ptrOf(op.results[i]), outs[i].bytes(), outs[i].byteSize());
  };
  if (profile_ && plan.seconds.size() != plan.steps.size())
    plan.seconds.assign(plan.steps.size(), 0.0);
  if (trace_)
    traceSteps(plan);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (!profile_ && !trace_) {
      runStep(plan.steps[i]);
      continue;
    }
    traceStep_ = trace_ ? int(i) : -1;
    auto t0 = std::chrono::steady_clock::now();
    runStep(plan.steps[i]);
    auto t1 = std::chrono::steady_clock::now();
    traceStep_ = -1;
    if (profile_)
      plan.seconds[i] += std::chrono::duration<double>(t1 - t0).count();
    if (trace_ && plan.steps[i].kind != ShapePlan::Step::Kind::View) {
      TraceEvent e;
      e.name = plan.info[i].group;
      e.category = plan.info[i].kind;
      e.step = int(i);
      e.run = trace_->currentRun;
      e.startUs = trace_->toUs(t0);
      e.durUs = trace_->toUs(t1) - e.startUs;
      trace_->add(std::move(e));
    }
  }
  plan.runs += profile_;
  std::vector<HostTensor> results;
  for (const Value *r : f.results)
    results.push_back(tensorAt(r));
  return results;
}

// The plan's steps as a trace shows them (StepCost.h), made once per plan.
void CpuModel::traceSteps(ShapePlan &plan) {
  using Kind = ShapePlan::Step::Kind;
  if (plan.info.empty())
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const ShapePlan::Step &s = plan.steps[i];
      StepInfo info = describeStep(*plan.planned->module, *s.op);
      info.kind = s.kind == Kind::View ? "view"
                  : s.kind == Kind::Kernel || s.kind == Kind::MultiTensor || s.kind == Kind::InRun
                      ? "kernel"
                  : s.kind == Kind::Library ? "library"
                  : s.kind == Kind::Move    ? "copy"
                                            : "fallback";
      const std::string &line = plan.report[i]; // "%y = @group: what ran it"
      info.detail = line.substr(std::min(line.size(), line.find(": ") + 2));
      if (s.kind == Kind::View)
        info.bytes = 0, info.flops = 0; // nothing moves
      plan.info.push_back(std::move(info));
    }
  trace_->backend = target_;
  trace_->device = "CPU, " + std::to_string(pool_->size()) + " threads";
  trace_->deviceNote = "host clock per step and per thread's share of each kernel";
  trace_->steps = plan.info;
}

std::vector<CpuModel::StepProfile> CpuModel::stepProfile() const {
  std::vector<StepProfile> out;
  if (!lastPlan_ || !lastPlan_->runs)
    return out;
  for (size_t i = 0; i < lastPlan_->steps.size(); ++i)
    out.push_back({lastPlan_->report[i], lastPlan_->seconds[i] / double(lastPlan_->runs)});
  return out;
}

std::vector<HostTensor> CpuModel::run(const std::vector<HostTensor> &inputs) {
  kernelSteps_ = librarySteps_ = moveSteps_ = fallbackSteps_ = 0;
  stepReport_ = nullptr;
  lastPlan_ = nullptr;
  arenaBytes_ = 0;
  planned_ = false;
  if (ShapePlan *plan = planFor(inputs)) {
    arenaBytes_ = plan->planned->memory.arenaBytes;
    stepReport_ = &plan->report;
    lastPlan_ = plan;
    return runPlanned(*plan, inputs);
  }
  OpOverride viaKernels;
  viaKernels = [this, &viaKernels](const Op &op, const std::vector<const HostTensor *> &ins) {
    // Control flow codegen compiled: its callees' steps through this
    // override too (kernels, copies); else the reference runs it whole.
    if (isControlFlowOp(op) && controlFlow_.count(&op))
      return std::optional(runControlFlow(*module_, op, ins, &viaKernels));
    auto r = runKernel(op, ins);
    if (!r && (r = runCopy(op, ins)))
      ++moveSteps_;
    else if (!r)
      ++fallbackSteps_;
    return r;
  };
  return runReference(module_.get(), module_->main(), inputs, nullptr, &viaKernels);
}

} // namespace tc
