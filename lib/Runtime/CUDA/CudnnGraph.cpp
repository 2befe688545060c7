// A conv group through cuDNN's graph (backend) API: tensors, a convolution
// forward op and the pointwise ops after it (bias, residual, activation) as
// one operation graph, or a backward-data / backward-filter op alone; engine configs from the
// heuristics (mode A, then fallback), the first that finalizes to a plan with a workspace we give
// wins. Equal graphs share the plan (Cudnn::graphPlans); each step binds
// its own pointers and the plan's workspace into a variant pack.
#ifdef TC_HAVE_CUDNN
#include "CudnnApi.h"
#include "CudnnAttention.h"
#include "tc/Support/Error.h"
#include <cstdlib>
#include <limits>
#include <optional>

namespace tc::cuda {

using dnn::api;
using Desc = cudnnBackendDescriptor_t;

Cudnn::GraphPlan::~GraphPlan() {
  for (Desc d : parts)
    api().backendDestroy(d);
}

namespace {

// A tensor of the graph: real ones carry a unique id and a pointer, the
// intermediates between its ops are virtual (f32). A pass-by-value scalar's
// pointer is a host address (the variant pack gives cuDNN its value).
struct Tensor {
  int64_t uid;
  std::vector<int64_t> dims, strides;
  cudnnDataType_t type;
  bool isVirtual = false;
  CUdeviceptr ptr = 0;
  bool byValue = false;
};

// The largest power of two up to 16 dividing the address (what the engines
// may assume of its vector loads).
int64_t alignment(CUdeviceptr p) {
  uint64_t a = p | 16;
  return int64_t(a & -a);
}

std::vector<int64_t> wide(const std::vector<int> &v) { return {v.begin(), v.end()}; }

cudnnPointwiseMode_t pointwiseMode(ConvPointwise::Mode m) {
  using Mode = ConvPointwise::Mode;
  switch (m) {
  case Mode::Add: return CUDNN_POINTWISE_ADD;
  case Mode::Mul: return CUDNN_POINTWISE_MUL;
  case Mode::Relu: return CUDNN_POINTWISE_RELU_FWD;
  case Mode::Sigmoid: return CUDNN_POINTWISE_SIGMOID_FWD;
  case Mode::Tanh: return CUDNN_POINTWISE_TANH_FWD;
  case Mode::Gelu: return CUDNN_POINTWISE_GELU_FWD;
  case Mode::GeluTanh: return CUDNN_POINTWISE_GELU_APPROX_TANH_FWD;
  }
  return CUDNN_POINTWISE_IDENTITY;
}

// Builds descriptors, remembering each in `plan.parts`; a failed call is a
// refusal (`error` says which), not an exception: the legacy API remains.
class Builder {
public:
  explicit Builder(Cudnn::GraphPlan &plan) : plan_(plan) {}
  std::string error;

  Desc make(cudnnBackendDescriptorType_t type) {
    Desc d = nullptr;
    if (ok(api().backendCreate(type, &d), "cudnnBackendCreateDescriptor"))
      plan_.parts.push_back(d);
    return d;
  }
  bool set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
           int64_t count, const void *values) {
    return d && ok(api().backendSet(d, name, type, count, values), "cudnnBackendSetAttribute");
  }
  bool set(Desc d, cudnnBackendAttributeName_t name, Desc value) {
    return set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
  }
  bool finalize(Desc d, const char *what) {
    if (!error.empty() || !d)
      return false;
    cudnnStatus_t s = api().backendFinalize(d);
    if (s != CUDNN_STATUS_SUCCESS)
      error = api().error(s, (std::string("cudnnBackendFinalize(") + what + ")").c_str());
    return s == CUDNN_STATUS_SUCCESS;
  }

  Desc tensor(const Tensor &t) {
    Desc d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = t.isVirtual || t.byValue ? 16 : alignment(t.ptr);
    int64_t n = int64_t(t.dims.size());
    set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t.type);
    set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, t.dims.data());
    set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, t.strides.data());
    set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid);
    set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    bool v = t.isVirtual;
    set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
    if (t.byValue) {
      bool byValue = true;
      set(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byValue);
    }
    finalize(d, "tensor");
    if (!t.isVirtual) {
      plan_.uids.push_back(t.uid);
      pointers.push_back(reinterpret_cast<void *>(t.ptr));
    }
    return d;
  }

  std::vector<void *> pointers; // of the real tensors, as plan.uids

private:
  bool ok(cudnnStatus_t s, const char *call) {
    if (s != CUDNN_STATUS_SUCCESS && error.empty())
      error = api().error(s, call);
    return s == CUDNN_STATUS_SUCCESS;
  }
  Cudnn::GraphPlan &plan_;
};

// An engine config's engine: its global index (-1 if unsaid) and whether
// its numerical notes say it rounds f32 operands (tensor cores, i.e. TF32,
// or inputs converted down): what f32 without TF32 must not take.
struct EngineInfo {
  int64_t index = -1;
  bool roundsF32 = false;
};

EngineInfo engineInfo(Builder &b, Desc config) {
  const dnn::Api &a = api();
  EngineInfo info;
  int64_t count = 0;
  Desc engine = b.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (engine && a.backendGet(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &count, &engine) == CUDNN_STATUS_SUCCESS) {
    a.backendGet(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &info.index);
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (a.backendGet(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                     CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) == CUDNN_STATUS_SUCCESS)
      for (int64_t i = 0; i < count && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i)
        info.roundsF32 |= notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                          notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
  }
  b.error.clear();
  return info;
}

// An execution plan of one engine config that finalized, with a workspace
// we give: a candidate.
struct Candidate {
  Desc plan;
  int64_t workspace, engine;
  std::string name; // "graph-fused cfg=A:2 engine=12"
};

// The engine configs of the heuristics (mode A, then fallback) that
// finalize to a plan needing at most kMaxWorkspace, in order: the first
// alone, or (tuning) up to kTopK or up to the recorded one. Empty with `why`.
// `exactF32`: f32 without TF32, no engine that rounds the operands.
std::vector<Candidate> candidatePlans(Builder &b, cudnnHandle_t handle, Desc graph,
                                      const std::string &path, const CallTuning &tuning,
                                      bool exactF32, std::string &why) {
  const dnn::Api &a = api();
  std::string last;
  std::vector<Candidate> found;
  size_t wanted = tuning.recorded || tuning.tuner ? size_t(Tuner::kTopK) : 1;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur = b.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    b.set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    b.set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (!b.finalize(heur, "engine heuristics")) {
      last = b.error;
      b.error.clear();
      continue;
    }
    int64_t n = 0;
    if (a.backendGet(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n,
                     nullptr) != CUDNN_STATUS_SUCCESS ||
        n <= 0)
      continue;
    std::vector<Desc> configs;
    for (int64_t i = 0; i < n; ++i)
      configs.push_back(b.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    if (!b.error.empty()) {
      why = b.error;
      return {};
    }
    if (cudnnStatus_t s = a.backendGet(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, configs.data());
        s != CUDNN_STATUS_SUCCESS) {
      last = a.error(s, "cudnnBackendGetAttribute(engine heuristics results)");
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      EngineInfo engine = engineInfo(b, configs[size_t(i)]);
      if (exactF32 && engine.roundsF32) {
        last = "engine " + std::to_string(engine.index) + " rounds f32 operands (TF32 is off)";
        continue;
      }
      Desc p = b.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      b.set(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      b.set(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[size_t(i)]);
      int64_t ws = 0, count = 0;
      if (!b.finalize(p, "execution plan") ||
          a.backendGet(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                       &ws) != CUDNN_STATUS_SUCCESS ||
          ws < 0 || size_t(ws) > dnn::kMaxWorkspace) {
        last =
            b.error.empty() ? "an engine's workspace of " + std::to_string(ws) + " bytes" : b.error;
        b.error.clear();
        continue;
      }
      found.push_back({p, ws, engine.index,
                       path + " cfg=" + (mode == CUDNN_HEUR_MODE_A ? "A:" : "F:") +
                           std::to_string(i) + " engine=" + std::to_string(engine.index)});
      if (found.size() == wanted ||
          (tuning.recorded && found.back().name == tuning.recorded->choice))
        return found;
    }
  }
  if (found.empty())
    why = "no engine takes it" + (last.empty() ? "" : " (last: " + last + ")");
  return found;
}

// A variant pack of `plan`'s uids and `pointers` with `workspace` (of which
// the engine uses `engineBytes`, the scratch output the tail); nullptr if
// refused.
Desc variantPack(const Cudnn::GraphPlan &plan, std::vector<void *> pointers, CUdeviceptr workspace,
                 int64_t engineBytes) {
  const dnn::Api &a = api();
  const std::vector<int64_t> &uids = plan.uids;
  if (plan.scratchSlot >= 0)
    pointers.at(size_t(plan.scratchSlot)) = reinterpret_cast<void *>(
        workspace + CUdeviceptr(Cudnn::GraphPlan::scratchOffset(engineBytes)));
  Desc pack = nullptr;
  void *ws = reinterpret_cast<void *>(workspace);
  int64_t n = int64_t(pointers.size());
  if (a.backendCreate(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) != CUDNN_STATUS_SUCCESS)
    return nullptr;
  if (a.backendSet(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids.data()) ||
      a.backendSet(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                   pointers.data()) ||
      a.backendSet(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws) ||
      a.backendFinalize(pack)) {
    a.backendDestroy(pack);
    return nullptr;
  }
  return pack;
}

// The candidate `tuning` picks (CallTuning::pick: recorded, fastest or
// first) made the plan's; false with `why` when none finalized.
bool choosePlan(Builder &b, Cudnn::GraphPlan &plan, cudnnHandle_t handle, Desc graph,
                const std::string &path, CallTuning &tuning, bool exactF32, std::string &why) {
  std::vector<Candidate> found = candidatePlans(b, handle, graph, path, tuning, exactF32, why);
  std::vector<Desc> packs(found.size(), nullptr);
  std::optional<size_t> best = tuning.pick(
      found.size(), [&](size_t i) { return found[i].name; },
      [&](size_t i) {
        if (!packs[i]) {
          int64_t ws = found[i].workspace;
          if (plan.scratchBytes)
            ws = Cudnn::GraphPlan::scratchOffset(ws) + plan.scratchBytes;
          packs[i] = variantPack(plan, b.pointers, tuning.tuner->workspace(size_t(ws)),
                                 found[i].workspace);
        }
        if (!packs[i])
          fail("cuDNN graph: variant pack refused");
        api().check(api().backendExecute(handle, found[i].plan, packs[i]), "cudnnBackendExecute");
      });
  for (Desc p : packs)
    if (p)
      api().backendDestroy(p);
  if (!best)
    return false;
  plan.plan = found[*best].plan;
  plan.workspace = found[*best].workspace;
  plan.engine = found[*best].engine;
  plan.choice = tuning.chosen;
  plan.us = tuning.us;
  plan.rejected = tuning.rejected;
  return true;
}

std::vector<int64_t> packedStrides(const std::vector<int64_t> &d) {
  std::vector<int64_t> st(d.size(), 1);
  for (size_t i = d.size() - 1; i-- > 0;)
    st[i] = st[i + 1] * d[i + 1];
  return st;
}

// The ops of a graph (a conv's epilogue chain, an attention), each
// finalized in order into `ops`; the intermediates `virt` makes are virtual
// tensors with packed strides.
struct GraphOps {
  explicit GraphOps(Builder &b) : b(b) {}
  Builder &b;
  std::vector<Desc> ops;
  int64_t nextUid = 100;

  Desc virt(const std::vector<int64_t> &d, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return b.tensor({nextUid++, d, packedStrides(d), type, true});
  }
  void add(Desc op, const char *what) {
    b.finalize(op, what);
    ops.push_back(op);
  }
  // y = mode(x[, operand[, select]]) computed in `prec`; GEN_INDEX along `axis`.
  void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc y, Desc operand = nullptr,
                 Desc select = nullptr, cudnnDataType_t prec = CUDNN_DATA_FLOAT,
                 int64_t axis = -1) {
    Desc pw = b.make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    b.set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    b.set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0)
      b.set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    b.finalize(pw, "pointwise");
    Desc op = b.make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    b.set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    b.set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (operand)
      b.set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, operand);
    if (select)
      b.set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, select);
    b.set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    add(op, "pointwise operation");
  }
  // c = a b over the last two dims, batched over the first two (f32 math).
  void matmul(Desc a, Desc bm, Desc c) {
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    Desc mm = b.make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    b.set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    b.finalize(mm, "matmul");
    Desc op = b.make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    b.set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    b.set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, bm);
    b.set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    b.set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    add(op, "matmul operation");
  }
  // y = reduce(x) along the axes where y's dim is 1.
  void reduce(cudnnReduceTensorOp_t mode, Desc x, Desc y) {
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    Desc r = b.make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    b.set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    b.set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    b.finalize(r, "reduction");
    Desc op = b.make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    b.set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
    b.set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    b.set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    add(op, "reduction operation");
  }
};

// `ops` as one operation graph, finalized, with its plan chosen into `plan`
// (choosePlan): `plan` when an engine takes it, else an empty plan holding
// why (the descriptors go with `plan`).
std::shared_ptr<Cudnn::GraphPlan> planGraph(Builder &b, std::shared_ptr<Cudnn::GraphPlan> plan,
                                            cudnnHandle_t handle, const std::vector<Desc> &ops,
                                            const std::string &path, CallTuning &tuning,
                                            bool exactF32 = false) {
  Desc graph = b.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  b.set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  b.set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()),
        ops.data());
  std::string refusal;
  if (b.finalize(graph, "operation graph") &&
      choosePlan(b, *plan, handle, graph, path, tuning, exactF32, refusal))
    return plan;
  auto refused = std::make_shared<Cudnn::GraphPlan>();
  refused->refusal = b.error.empty() ? refusal : b.error;
  return refused;
}

// A step's use of a (shared) plan: false with `why` where it was refused,
// else the plan's choice (its first step's) in `tuning`.
bool usePlan(const Cudnn::GraphPlan &cached, CallTuning &tuning, std::string &why) {
  if (!cached.plan) {
    why = cached.refusal;
    return false;
  }
  tuning.chosen = cached.choice;
  tuning.us = cached.us;
  tuning.rejected = cached.rejected;
  return true;
}

} // namespace

CudnnConv::Graph::~Graph() {
  if (pack)
    api().backendDestroy(pack);
}

void CudnnConv::Graph::bind(CUdeviceptr workspace) {
  if (pack)
    api().backendDestroy(pack);
  pack = variantPack(*plan, pointers, workspace, plan->workspace);
  if (!pack)
    fail("cuDNN graph: the variant pack (pointers and workspace) was refused");
}

void CudnnConv::Graph::run() const {
  if (!pack)
    fail("cuDNN graph: run before its workspace was bound");
  api().check(api().backendExecute(handle, plan->plan, pack), "cudnnBackendExecute");
}

std::unique_ptr<CudnnConv> CudnnConv::createGraph(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                                  bool withEpilogue, CallTuning &tuning,
                                                  std::string &why) {
  auto handle = static_cast<cudnnHandle_t>(lib.handle_);
  // The chain after the convolution: the bias, then (withEpilogue) the
  // epilogue's ops; the last writes y, the others virtual f32 tensors.
  std::vector<ConvPointwise> chain;
  if (c.bias >= 0)
    chain.push_back({ConvPointwise::Mode::Add, c.bias, true});
  if (withEpilogue)
    chain.insert(chain.end(), c.fused.begin(), c.fused.end());
  if (c.pass != ConvDesc::Pass::Forward && !chain.empty()) {
    why = "a backward pass with a bias or epilogue";
    return nullptr;
  }
  cudnnDataType_t type = dnn::dataType(c.dtype);
  auto ptr = [&](int arg) { return p.args.at(size_t(arg)); };
  std::vector<int64_t> ydims = wide(c.y), ystrides = wide(dnn::packedStrides(c.y, c.channelsLast));
  std::vector<int> perChannel(c.y.size(), 1);
  perChannel[1] = c.y[1];
  // x, w and y of the forward convolution; a backward pass writes dx or dw
  // (p.y) and reads dy (the group's `grad`).
  using Pass = ConvDesc::Pass;
  Tensor x{1,    wide(c.x), wide(dnn::packedStrides(c.x, c.channelsLast)),
           type, false,     c.pass == Pass::BackwardData ? p.y : ptr(c.input)};
  Tensor w{2,    wide(c.w), wide(dnn::packedStrides(c.w, c.channelsLast)),
           type, false,     c.pass == Pass::BackwardFilter ? p.y : ptr(c.weights)};
  Tensor y{3, ydims, ystrides, type, false, c.pass == Pass::Forward ? p.y : ptr(c.grad)};
  std::vector<Tensor> operands, between; // per link: its operand (if binary), its input
  for (size_t i = 0; i < chain.size(); ++i) {
    const ConvPointwise &op = chain[i];
    if (op.operand >= 0)
      operands.push_back(
          op.perChannel ? Tensor{int64_t(10 + i), wide(perChannel),
                                 wide(dnn::packedStrides(perChannel, c.channelsLast)), type, false,
                                 ptr(op.operand)}
                        : Tensor{int64_t(10 + i), ydims, ystrides, type, false, ptr(op.operand)});
    else
      operands.push_back({-1, {}, {}, type});
    between.push_back({int64_t(100 + i), ydims, ystrides, CUDNN_DATA_FLOAT, true});
  }

  // What the plan depends on: the shared plan's key.
  bool exactF32 = c.dtype == DType::F32 && tuning.tf32 == Tf32::None;
  std::string key = c.describe(false) + " [" + c.fusedText() + "]" +
                    (withEpilogue ? "" : " alone") + (exactF32 ? " fma" : "") + " align";
  for (const Tensor *t : {&x, &w, &y})
    key += " " + std::to_string(alignment(t->ptr));
  for (const Tensor &t : operands)
    key += " " + (t.uid < 0 ? std::string("-") : std::to_string(alignment(t.ptr)));
  std::shared_ptr<Cudnn::GraphPlan> &cached = lib.graphPlans()[key];
  std::vector<void *> pointers;
  if (!cached) {
    auto plan = std::make_shared<Cudnn::GraphPlan>();
    Builder b(*plan);
    int64_t sp = int64_t(c.x.size()) - 2;
    Desc conv = b.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT; // accumulate in f32
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    std::vector<int64_t> pads = wide(c.pads), strides = wide(c.strides), dil = wide(c.dilations);
    b.set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sp);
    b.set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    b.set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    b.set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, sp, pads.data());
    b.set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, sp, pads.data());
    b.set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, sp, dil.data());
    b.set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, sp, strides.data());
    b.finalize(conv, "convolution");
    // Real tensors in a fixed order (x, w, y, the operands): the uids.
    Desc xd = b.tensor(x), wd = b.tensor(w), yd = b.tensor(y);
    GraphOps g(b);
    float alpha = 1, beta = 0;
    Desc out = chain.empty() ? yd : b.tensor(between[0]);
    // The pass's operation: its descriptor type and the attributes naming
    // the forward's x, w and y (dx / dw written, dy read by the backward
    // ones), the convolution, alpha and beta. A backward pass has no chain.
    struct ConvOp {
      cudnnBackendDescriptorType_t type;
      cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
      const char *what;
    };
    static const ConvOp kOps[] = {
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, "convolution forward"},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, "convolution backward data"},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, "convolution backward filter"}};
    const ConvOp &k = kOps[int(c.pass)];
    Desc op = b.make(k.type);
    b.set(op, k.x, xd);
    b.set(op, k.w, wd);
    b.set(op, k.y, out);
    b.set(op, k.conv, conv);
    b.set(op, k.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    b.set(op, k.beta, CUDNN_TYPE_FLOAT, 1, &beta);
    g.add(op, k.what);
    for (size_t i = 0; i < chain.size(); ++i) {
      Desc next = i + 1 == chain.size() ? yd : b.tensor(between[i + 1]);
      g.pointwise(pointwiseMode(chain[i].mode), out, next,
                  operands[i].uid >= 0 ? b.tensor(operands[i]) : nullptr);
      out = next;
    }
    cached =
        planGraph(b, plan, handle, g.ops, withEpilogue ? "graph-fused" : "graph", tuning, exactF32);
    pointers = b.pointers;
  } else if (cached->plan) {
    // The same real tensors in the same order as when the plan was made.
    for (const Tensor *t : {&x, &w, &y})
      pointers.push_back(reinterpret_cast<void *>(t->ptr));
    for (const Tensor &t : operands)
      if (t.uid >= 0)
        pointers.push_back(reinterpret_cast<void *>(t.ptr));
  }
  if (!usePlan(*cached, tuning, why))
    return nullptr;
  std::unique_ptr<CudnnConv> call(new CudnnConv());
  call->graph_ = std::make_unique<Graph>();
  call->graph_->handle = handle;
  call->graph_->plan = cached;
  call->graph_->pointers = std::move(pointers);
  call->takesEpilogue_ = withEpilogue || c.epilogueFolded;
  std::string fused = withEpilogue ? c.fusedText() : c.bias >= 0 ? "bias" : "";
  call->describe_ = "cudnn-graph " + c.describe(false) +
                    (fused.empty() ? "" : " epilogue=" + fused) +
                    " engine=" + std::to_string(cached->engine);
  return call;
}

namespace {

// TEST AND DIAGNOSIS ONLY -- TC_TEST_CUDNN_SDPA_VARIANT=1|2|3 builds another
// form of the attention graph, to learn on a real cuDNN which form its
// engines take; unset or 0 is the default, the graph cuDNN's frontend builds
// for inference (softmax with its statistics, virtual). Read here alone,
// once per process; nothing else depends on it.
//   1: softmax without the statistics (the graph before: cuDNN 9.14 on the
//      H100 refuses it, "Dropout set of ops not configured correctly").
//   2: the statistics a real f32 output, as the frontend's training graph
//      (generate_stats) has them, kept in the workspace's tail.
//   3: the default with P, the second matmul's A, virtual in f32 rather
//      than the i/o type.
enum class SdpaVariant { Frontend, NoStats, RealStats, F32Probs };

SdpaVariant sdpaVariant() {
  static const SdpaVariant variant = [] {
    const char *v = std::getenv("TC_TEST_CUDNN_SDPA_VARIANT");
    if (!v || !*v || std::string(v) == "0")
      return SdpaVariant::Frontend;
    std::string s(v);
    if (s != "1" && s != "2" && s != "3")
      fail("TC_TEST_CUDNN_SDPA_VARIANT=", s, ": expected 0, 1, 2 or 3 (a test-only switch)");
    return SdpaVariant(s[0] - '0');
  }();
  return variant;
}

} // namespace

CudnnAttention::CudnnAttention() = default;
CudnnAttention::~CudnnAttention() = default;

size_t CudnnAttention::workspaceBytes() const { return size_t(graph_->plan->workspaceBytes()); }
void CudnnAttention::setWorkspace(CUdeviceptr ws) { graph_->bind(ws); }
void CudnnAttention::run() const { graph_->run(); }

std::unique_ptr<CudnnAttention> CudnnAttention::create(Cudnn &lib, const AttentionDesc &a,
                                                       const Pointers &p, CallTuning &tuning,
                                                       std::string &why) {
  auto handle = static_cast<cudnnHandle_t>(lib.handle_);
  cudnnDataType_t type = dnn::dataType(a.dtype);
  auto at = [&](const AttentionDesc::View &v, CUdeviceptr base) {
    return base + CUdeviceptr(v.offset) * 2; // f16 and bf16 elements
  };
  // What the backend's matmul reads: k^T [B, Hkv, D, Skv], k's own bytes
  // with its last two dims and strides swapped.
  std::vector<int64_t> ktDims = a.k.dims, ktStrides = a.k.strides;
  std::swap(ktDims[2], ktDims[3]);
  std::swap(ktStrides[2], ktStrides[3]);
  std::vector<Tensor> real = {
      {1, a.q.dims, a.q.strides, type, false, at(a.q, p.args.at(size_t(a.q.arg)))},
      {2, ktDims, ktStrides, type, false, at(a.k, p.args.at(size_t(a.k.arg)))},
      {3, a.v.dims, a.v.strides, type, false, at(a.v, p.args.at(size_t(a.v.arg)))},
      {4, a.o.dims, a.o.strides, type, false, at(a.o, p.o)}};
  if (a.mask)
    real.push_back({5, a.mask->dims, a.mask->strides, dnn::dataType(a.maskType), false,
                    p.args.at(size_t(a.mask->arg))});
  std::string key = a.describe() + " align";
  for (const Tensor &t : real)
    key += " " + std::to_string(alignment(t.ptr));
  std::shared_ptr<Cudnn::GraphPlan> &cached = lib.graphPlans()[key];
  // The variant pack's pointers: the real tensors, then the scalars the
  // plan holds (the scale, and -inf for the causal mask).
  auto pointersOf = [&](Cudnn::GraphPlan &plan) {
    std::vector<void *> out;
    for (const Tensor &t : real)
      out.push_back(reinterpret_cast<void *>(t.ptr));
    out.push_back(&plan.scalars[0]);
    if (a.causal)
      out.push_back(&plan.scalars[1]);
    if (plan.scratchSlot >= 0) // the statistics: bound with the workspace
      out.push_back(nullptr);
    return out;
  };
  if (!cached) {
    auto plan = std::make_shared<Cudnn::GraphPlan>();
    plan->scalars[0] = a.scale;
    // What the frontend masks with: older engines want the lowest float.
    plan->scalars[1] = Cudnn::version() < 91000 ? std::numeric_limits<float>::lowest()
                                                : -std::numeric_limits<float>::infinity();
    Builder b(*plan);
    std::vector<Desc> io;
    for (const Tensor &t : real)
      io.push_back(b.tensor(t));
    auto scalar = [&](int64_t uid, float &value) {
      return b.tensor({uid,
                       {1, 1, 1, 1},
                       {1, 1, 1, 1},
                       CUDNN_DATA_FLOAT,
                       false,
                       CUdeviceptr(reinterpret_cast<uintptr_t>(&value)),
                       true});
    };
    Desc scale = scalar(6, plan->scalars[0]);
    Desc lowest = a.causal ? scalar(7, plan->scalars[1]) : nullptr;
    GraphOps g(b);
    std::vector<int64_t> scores{a.batch, a.heads, a.sq, a.skv}, rows{a.batch, a.heads, a.sq, 1};
    Desc s = g.virt(scores);
    g.matmul(io[0], io[1], s);
    Desc next = g.virt(scores);
    g.pointwise(CUDNN_POINTWISE_MUL, s, next, scale);
    s = next;
    if (a.mask) {
      next = g.virt(scores);
      g.pointwise(CUDNN_POINTWISE_ADD, s, next, io[4]);
      s = next;
    }
    if (a.causal) { // keep key j of query i where i >= j, else -inf
      Desc row = g.virt(scores, CUDNN_DATA_INT32), col = g.virt(scores, CUDNN_DATA_INT32);
      Desc keep = g.virt(scores, CUDNN_DATA_BOOLEAN);
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, row, nullptr, nullptr, CUDNN_DATA_FLOAT, 2);
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, col, nullptr, nullptr, CUDNN_DATA_FLOAT, 3);
      g.pointwise(CUDNN_POINTWISE_CMP_GE, row, keep, col, nullptr, CUDNN_DATA_BOOLEAN);
      next = g.virt(scores);
      g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, next, lowest, keep);
      s = next;
    }
    // Softmax along the keys, exp(s - max) / sum, as the frontend's softmax
    // node builds it: max, sub, exp, sum, then the statistics max + log(sum)
    // (what a training graph's backward pass reads), then div. The frontend
    // emits the statistics even for inference, as a virtual output; without
    // them cuDNN 9.14's matcher refuses the graph on the H100 ("Dropout set
    // of ops not configured correctly": softmax not found where it ends).
    Desc max = g.virt(rows), shifted = g.virt(scores), e = g.virt(scores), sum = g.virt(rows);
    g.reduce(CUDNN_REDUCE_TENSOR_MAX, s, max);
    g.pointwise(CUDNN_POINTWISE_SUB, s, shifted, max);
    g.pointwise(CUDNN_POINTWISE_EXP, shifted, e);
    g.reduce(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    SdpaVariant variant = sdpaVariant();
    if (variant != SdpaVariant::NoStats) {
      Desc logSum = g.virt(rows);
      g.pointwise(CUDNN_POINTWISE_LOG, sum, logSum);
      Desc stats;
      if (variant == SdpaVariant::RealStats) {
        plan->scratchSlot = int(b.pointers.size());
        plan->scratchBytes = a.batch * a.heads * a.sq * int64_t(sizeof(float));
        stats = b.tensor({8, rows, packedStrides(rows), CUDNN_DATA_FLOAT, false, 0});
      } else {
        stats = g.virt(rows);
      }
      g.pointwise(CUDNN_POINTWISE_ADD, max, stats, logSum);
    }
    // The second matmul's A in the i/o type, as the frontend has it.
    Desc probs = g.virt(scores, variant == SdpaVariant::F32Probs ? CUDNN_DATA_FLOAT : type);
    g.pointwise(CUDNN_POINTWISE_DIV, e, probs, sum);
    g.matmul(probs, io[2], io[3]);
    cached = planGraph(b, plan, handle, g.ops, "sdpa", tuning);
  }
  if (!usePlan(*cached, tuning, why))
    return nullptr;
  std::unique_ptr<CudnnAttention> call(new CudnnAttention());
  call->graph_ = std::make_unique<CudnnConv::Graph>();
  call->graph_->handle = handle;
  call->graph_->plan = cached;
  call->graph_->pointers = pointersOf(*cached);
  call->describe_ =
      "cudnn-graph " + a.describe(false) + " engine=" + std::to_string(cached->engine);
  if (sdpaVariant() != SdpaVariant::Frontend)
    call->describe_ += " test-variant=" + std::to_string(int(sdpaVariant()));
  return call;
}

} // namespace tc::cuda
#endif
