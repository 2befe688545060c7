#include "CudnnConv.h"
#include "CudnnAttention.h"
#include "LibraryLoader.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace tc::cuda {

CudnnApi cudnnApiFromEnv() {
  const char *v = std::getenv("TC_CUDNN_API");
  if (!v || !*v || std::strcmp(v, "graph") == 0)
    return CudnnApi::Graph;
  if (std::strcmp(v, "all-graph") == 0)
    return CudnnApi::AllGraph;
  if (std::strcmp(v, "legacy") == 0)
    return CudnnApi::Legacy;
  fail("TC_CUDNN_API=", v, ": expected graph (the default), all-graph or legacy");
}

} // namespace tc::cuda

// Built without the cudnn.h header (no CUDA toolkit): cuDNN is unavailable,
// the one error below; everything else of the CUDA runtime builds.
#ifndef TC_HAVE_CUDNN
namespace tc::cuda {
[[noreturn]] static void unavailable() {
  fail("cuDNN not available (tc was built without cudnn.h)");
}
Cudnn::Cudnn(CUstream) { unavailable(); }
size_t Cudnn::version() { unavailable(); }
void Cudnn::setStream(CUstream) {}
Cudnn::~Cudnn() = default;
struct Cudnn::GraphPlan {};
struct CudnnConv::Impl {};
struct CudnnConv::Graph {};
CudnnConv::CudnnConv() = default;
CudnnConv::~CudnnConv() = default;
std::unique_ptr<CudnnConv> CudnnConv::create(Cudnn &, const ConvDesc &, const Pointers &, CudnnApi,
                                             CallTuning &, std::string &) {
  unavailable();
}
size_t CudnnConv::workspaceBytes() const { return 0; }
void CudnnConv::setWorkspace(CUdeviceptr) {}
void CudnnConv::run() const { unavailable(); }
CudnnAttention::CudnnAttention() = default;
CudnnAttention::~CudnnAttention() = default;
std::unique_ptr<CudnnAttention> CudnnAttention::create(Cudnn &, const AttentionDesc &,
                                                       const Pointers &, CallTuning &,
                                                       std::string &) {
  unavailable();
}
size_t CudnnAttention::workspaceBytes() const { return 0; }
void CudnnAttention::setWorkspace(CUdeviceptr) {}
void CudnnAttention::run() const { unavailable(); }
} // namespace tc::cuda
#else
#include "CudnnApi.h"

namespace tc::cuda {

namespace dnn {

std::string Api::error(cudnnStatus_t s, const char *call) const {
  // An execution failure after a kernel's __trap (CudaDriver.h).
  bool stopped =
      int(s) >= CUDNN_STATUS_EXECUTION_FAILED && int(s) < CUDNN_STATUS_EXECUTION_FAILED + 100;
  return std::string(call) + ": " + errorString(s) + " (" + std::to_string(int(s)) + ")" +
         (stopped ? kKernelStoppedHint : "");
}

void Api::check(cudnnStatus_t s, const char *call) const {
  if (s != CUDNN_STATUS_SUCCESS)
    fail(error(s, call));
}

// libcudnn.so.9 is cuDNN 9's front library: it loads its parts (graph, ops,
// cnn, engines).
const Api &api() {
  static const Api a = [] {
    void *lib = openLibrary("cuDNN", {"libcudnn.so.9", "libcudnn.so"});
    Api a{};
    auto bind = [&](auto &fn, const char *name) { bindSymbol(lib, fn, name, "cuDNN"); };
    bind(a.create, "cudnnCreate");
    bind(a.version, "cudnnGetVersion");
    bind(a.destroy, "cudnnDestroy");
    bind(a.setStream, "cudnnSetStream");
    bind(a.errorString, "cudnnGetErrorString");
    bind(a.createTensor, "cudnnCreateTensorDescriptor");
    bind(a.setTensor, "cudnnSetTensorNdDescriptor");
    bind(a.destroyTensor, "cudnnDestroyTensorDescriptor");
    bind(a.createFilter, "cudnnCreateFilterDescriptor");
    bind(a.setFilter, "cudnnSetFilterNdDescriptor");
    bind(a.destroyFilter, "cudnnDestroyFilterDescriptor");
    bind(a.createConv, "cudnnCreateConvolutionDescriptor");
    bind(a.setConv, "cudnnSetConvolutionNdDescriptor");
    bind(a.setGroups, "cudnnSetConvolutionGroupCount");
    bind(a.setMath, "cudnnSetConvolutionMathType");
    bind(a.destroyConv, "cudnnDestroyConvolutionDescriptor");
    bind(a.outputDim, "cudnnGetConvolutionNdForwardOutputDim");
    bind(a.algorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
    bind(a.workspaceSize, "cudnnGetConvolutionForwardWorkspaceSize");
    bind(a.forward, "cudnnConvolutionForward");
    bind(a.addTensor, "cudnnAddTensor");
    bind(a.dataAlgorithms, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    bind(a.dataWorkspaceSize, "cudnnGetConvolutionBackwardDataWorkspaceSize");
    bind(a.backwardData, "cudnnConvolutionBackwardData");
    bind(a.filterAlgorithms, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    bind(a.filterWorkspaceSize, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    bind(a.backwardFilter, "cudnnConvolutionBackwardFilter");
    bind(a.backendCreate, "cudnnBackendCreateDescriptor");
    bind(a.backendDestroy, "cudnnBackendDestroyDescriptor");
    bind(a.backendSet, "cudnnBackendSetAttribute");
    bind(a.backendGet, "cudnnBackendGetAttribute");
    bind(a.backendFinalize, "cudnnBackendFinalize");
    bind(a.backendExecute, "cudnnBackendExecute");
    return a;
  }();
  return a;
}

cudnnDataType_t dataType(DType t) {
  return t == DType::F16    ? CUDNN_DATA_HALF
         : t == DType::BF16 ? CUDNN_DATA_BFLOAT16
                            : CUDNN_DATA_FLOAT;
}

std::vector<int> packedStrides(const std::vector<int> &d, bool channelsLast) {
  std::vector<size_t> order(d.size()); // axes, outermost first
  for (size_t i = 0; i < d.size(); ++i)
    order[i] = i;
  if (channelsLast)
    std::rotate(order.begin() + 1, order.begin() + 2, order.end());
  std::vector<int> s(d.size());
  int inner = 1;
  for (size_t i = d.size(); i-- > 0;) {
    s[order[i]] = inner;
    inner *= d[order[i]];
  }
  return s;
}

} // namespace dnn

using dnn::api;

size_t Cudnn::version() { return api().version(); }

Cudnn::Cudnn(CUstream stream) {
  cudnnHandle_t h = nullptr;
  api().check(api().create(&h), "cudnnCreate");
  handle_ = h;
  setStream(stream);
}

void Cudnn::setStream(CUstream stream) {
  api().check(
      api().setStream(static_cast<cudnnHandle_t>(handle_), reinterpret_cast<cudaStream_t>(stream)),
      "cudnnSetStream");
}

Cudnn::~Cudnn() {
  if (handle_)
    api().destroy(static_cast<cudnnHandle_t>(handle_));
}

struct CudnnConv::Impl {
  ConvDesc::Pass pass = ConvDesc::Pass::Forward;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0; // the pass's cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  size_t workspaceBytes = 0;
  // The forward convolution's x, w and y (dx, dw, dy in the backward passes).
  CUdeviceptr px = 0, pw = 0, pbias = 0, py = 0, workspace = 0;

  ~Impl() {
    for (cudnnTensorDescriptor_t t : {x, y, bias})
      if (t)
        api().destroyTensor(t);
    if (w)
      api().destroyFilter(w);
    if (conv)
      api().destroyConv(conv);
  }
};

CudnnConv::CudnnConv() = default;
CudnnConv::~CudnnConv() = default;
size_t CudnnConv::workspaceBytes() const {
  return graph_ ? size_t(graph_->plan->workspace) : impl_->workspaceBytes;
}
void CudnnConv::setWorkspace(CUdeviceptr ws) {
  if (graph_)
    graph_->bind(ws);
  else
    impl_->workspace = ws;
}

// The graph API where it may help (half types, f32's backward passes; see
// CudnnApi: f32 forward convs stay on the legacy API), the whole epilogue
// first, then the convolution and bias alone; else the legacy API. A graph
// refused says why in the step's description. A recorded choice applies
// to the path it names ("graph-fused", "graph", "legacy"); recorded for
// another path than the one taken, it is rejected.
std::unique_ptr<CudnnConv> CudnnConv::create(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                             CudnnApi api, CallTuning &tuning, std::string &why) {
  // The tuning of one path: the recorded choice only if it names the path.
  auto forPath = [&](const char *path) {
    CallTuning t = tuning;
    std::string prefix = std::string(path) + " ";
    if (t.recorded && t.recorded->choice.rfind(prefix, 0) != 0)
      t.recorded = nullptr;
    return t;
  };
  auto taken = [&](std::unique_ptr<CudnnConv> call, CallTuning &t) {
    if (call) {
      tuning.chosen = t.chosen;
      tuning.us = t.us;
      tuning.rejected = t.rejected;
      if (tuning.recorded && t.chosen.empty() && t.rejected.empty())
        tuning.rejected = "'" + tuning.recorded->choice + "' names another path than " +
                          call->describe_.substr(0, call->describe_.find(' '));
    }
    return call;
  };
  std::string refused;
  // The backward passes of half types through the graph API too: the legacy
  // v7 heuristic picks non-tensor-core kernels for many of them (resnet50's
  // f16 NHWC bwd-data on the H200: cuDNN's dgrad2d_alg1_1, 10 ms a step).
  // Their bias, if any, goes to the legacy API (cudnnAddTensor).
  bool forward = c.pass == ConvDesc::Pass::Forward;
  // f32's backward passes too (engines that round f32 left out without
  // TF32): the v7 heuristic's dgrad/wgrad kernels ran resnet50's fp32
  // backward in 37.0 ms of device time, the graph's in 28.0 (the H200,
  // session 40); its forward convs were as fast either way.
  bool graph =
      api == CudnnApi::AllGraph || (api == CudnnApi::Graph && (c.dtype != DType::F32 || !forward));
  if (graph && !c.exact && (forward || c.bias < 0)) {
    if (forward && !c.fused.empty()) {
      CallTuning t = forPath("graph-fused");
      if (std::unique_ptr<CudnnConv> g = createGraph(lib, c, p, true, t, refused))
        return taken(std::move(g), t);
      refused = "fused graph refused: " + refused;
    }
    std::string alone;
    CallTuning t = forPath("graph");
    if (std::unique_ptr<CudnnConv> g = createGraph(lib, c, p, false, t, alone)) {
      if (!refused.empty())
        g->describe_ += " (" + refused + ")";
      return taken(std::move(g), t);
    }
    refused = "graph refused: " + alone;
  }
  CallTuning t = forPath("legacy");
  std::unique_ptr<CudnnConv> call = createLegacy(lib, c, p, t, why);
  if (call && !refused.empty())
    call->describe_ += " (" + refused + ")";
  return taken(std::move(call), t);
}

std::unique_ptr<CudnnConv> CudnnConv::createLegacy(Cudnn &lib, const ConvDesc &c, const Pointers &p,
                                                   CallTuning &tuning, std::string &why) {
  const dnn::Api &a = api();
  std::unique_ptr<CudnnConv> call(new CudnnConv());
  call->impl_ = std::make_unique<Impl>();
  call->takesEpilogue_ = c.epilogueFolded;
  Impl &k = *call->impl_;
  k.handle = static_cast<cudnnHandle_t>(lib.handle_);
  auto ptr = [&](int arg) { return arg < 0 ? 0 : p.args.at(size_t(arg)); };
  using Pass = ConvDesc::Pass;
  k.pass = c.pass;
  k.px = c.pass == Pass::BackwardData ? p.y : ptr(c.input);
  k.pw = c.pass == Pass::BackwardFilter ? p.y : ptr(c.weights);
  k.py = c.pass == Pass::Forward ? p.y : ptr(c.grad);
  k.pbias = ptr(c.bias);
  cudnnDataType_t t = dnn::dataType(c.dtype);
  int rank = int(c.x.size());
  auto tensor = [&](cudnnTensorDescriptor_t &d, const std::vector<int> &dims, bool last) {
    a.check(a.createTensor(&d), "cudnnCreateTensorDescriptor");
    a.check(a.setTensor(d, t, rank, dims.data(), dnn::packedStrides(dims, last).data()),
            "cudnnSetTensorNdDescriptor");
  };
  tensor(k.x, c.x, c.channelsLast);
  tensor(k.y, c.y, c.channelsLast);
  if (c.bias >= 0) { // per channel of the result (y, or dx), either layout
    std::vector<int> b(c.y.size(), 1);
    b[1] = c.pass == Pass::BackwardData ? c.x[1] : c.y[1];
    tensor(k.bias, b, false);
  }
  a.check(a.createFilter(&k.w), "cudnnCreateFilterDescriptor");
  a.check(
      a.setFilter(k.w, t, c.channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, rank, c.w.data()),
      "cudnnSetFilterNdDescriptor");
  a.check(a.createConv(&k.conv), "cudnnCreateConvolutionDescriptor");
  // Accumulate in f32 for every dtype (f16/bf16: cuDNN's pseudo-half).
  a.check(a.setConv(k.conv, rank - 2, c.pads.data(), c.strides.data(), c.dilations.data(),
                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "cudnnSetConvolutionNdDescriptor");
  a.check(a.setGroups(k.conv, c.groups), "cudnnSetConvolutionGroupCount");
  // f32: FMA only, unless TF32 is allowed for convs (--allow-tf32, on by
  // default as in PyTorch): the default math lets cuDNN use TF32 tensor
  // cores, which round the operands to 10 bits; f16/bf16: tensor cores.
  bool tf32 = c.dtype == DType::F32 && tuning.tf32 != Tf32::None;
  cudnnMathType_t math = c.dtype != DType::F32 ? CUDNN_TENSOR_OP_MATH
                         : tf32                ? CUDNN_DEFAULT_MATH
                                               : CUDNN_FMA_MATH;
  a.check(a.setMath(k.conv, math), "cudnnSetConvolutionMathType");
  std::vector<int> out(c.y.size());
  a.check(a.outputDim(k.conv, k.x, k.w, rank, out.data()), "cudnnGetConvolutionNdForwardOutputDim");
  if (out != c.y) {
    why = "cuDNN's output size differs from the IR's for " + c.describe();
    return nullptr;
  }
  // The pass's algorithms as the heuristic rates them, best first.
  struct Algo {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnMathType_t math;
  };
  std::vector<Algo> rated;
  auto collect = [&](const auto *perf, int found) {
    for (int i = 0; i < found; ++i)
      rated.push_back({int(perf[i].algo), perf[i].status, perf[i].memory, perf[i].mathType});
  };
  int found = 0;
  const char *path = "legacy";
  if (c.pass == Pass::Forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    a.check(a.algorithms(k.handle, k.x, k.w, k.conv, k.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                         perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
    collect(perf, found);
  } else if (c.pass == Pass::BackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    a.check(a.dataAlgorithms(k.handle, k.w, k.y, k.conv, k.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                             &found, perf),
            "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    collect(perf, found);
    path = "legacy-bwd-data";
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    a.check(a.filterAlgorithms(k.handle, k.x, k.y, k.conv, k.w,
                               CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
            "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    collect(perf, found);
    path = "legacy-bwd-filter";
  }
  // The heuristic's algorithms that work with our math (no tensor ops for
  // f32 without TF32) and a workspace of reasonable size, best first. An
  // exact conv (integer operands, forward only: TF32 keeps values up to 2^11
  // exact) takes only the GEMM-like and direct algorithms, which add the
  // products themselves: Winograd's and FFT's transforms round.
  auto sumsProducts = [&](int algo) {
    return c.pass == Pass::Forward &&
           (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
            algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
            algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT);
  };
  std::vector<const Algo *> usable;
  for (const Algo &r : rated)
    if (r.status == CUDNN_STATUS_SUCCESS && r.memory <= dnn::kMaxWorkspace &&
        (c.dtype != DType::F32 || tf32 || r.math != CUDNN_TENSOR_OP_MATH) &&
        (!c.exact || sumsProducts(r.algo)))
      usable.push_back(&r);
  // Half types and TF32: the math the algorithm was rated with (as
  // frameworks do; an algorithm without tensor ops may refuse
  // TENSOR_OP_MATH). f32 without TF32 stays FMA.
  auto use = [&](const Algo &alg) {
    k.algo = alg.algo;
    if (c.dtype != DType::F32 || tf32)
      a.check(a.setMath(k.conv, alg.math), "cudnnSetConvolutionMathType");
    if (c.pass == Pass::Forward)
      a.check(a.workspaceSize(k.handle, k.x, k.w, k.conv, k.y, cudnnConvolutionFwdAlgo_t(k.algo),
                              &k.workspaceBytes),
              "cudnnGetConvolutionForwardWorkspaceSize");
    else if (c.pass == Pass::BackwardData)
      a.check(a.dataWorkspaceSize(k.handle, k.w, k.y, k.conv, k.x,
                                  cudnnConvolutionBwdDataAlgo_t(k.algo), &k.workspaceBytes),
              "cudnnGetConvolutionBackwardDataWorkspaceSize");
    else
      a.check(a.filterWorkspaceSize(k.handle, k.x, k.y, k.conv, k.w,
                                    cudnnConvolutionBwdFilterAlgo_t(k.algo), &k.workspaceBytes),
              "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  };
  std::optional<size_t> best = tuning.pick(
      usable.size(),
      [&](size_t i) {
        return std::string(path) + " algo=" + std::to_string(usable[i]->algo) +
               " math=" + std::to_string(int(usable[i]->math));
      },
      [&, prepared = usable.size()](size_t i) mutable {
        if (prepared != i) { // set up once per candidate, outside its timed runs
          use(*usable[i]);
          k.workspace = tuning.tuner->workspace(k.workspaceBytes);
          prepared = i;
        }
        call->run();
      });
  if (!best) {
    why = "cuDNN has no algorithm for " + c.describe();
    return nullptr;
  }
  use(*usable[*best]);
  k.workspace = 0; // the plan's, bound by setWorkspace
  call->describe_ =
      "cudnn " + c.describe() + " algo=" + std::to_string(k.algo) + (tf32 ? " tf32" : "");
  return call;
}

void CudnnConv::run() const {
  if (graph_) {
    graph_->run();
    return;
  }
  const dnn::Api &a = api();
  const Impl &k = *impl_;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  // Scaling factors are float for every data type here (cuDNN: double only for double data).
  const float one = 1, zero = 0;
  using Pass = ConvDesc::Pass;
  if (k.pass == Pass::Forward)
    a.check(a.forward(k.handle, &one, k.x, ptr(k.px), k.w, ptr(k.pw), k.conv,
                      cudnnConvolutionFwdAlgo_t(k.algo), ptr(k.workspace), k.workspaceBytes, &zero,
                      k.y, ptr(k.py)),
            "cudnnConvolutionForward");
  else if (k.pass == Pass::BackwardData)
    a.check(a.backwardData(k.handle, &one, k.w, ptr(k.pw), k.y, ptr(k.py), k.conv,
                           cudnnConvolutionBwdDataAlgo_t(k.algo), ptr(k.workspace),
                           k.workspaceBytes, &zero, k.x, ptr(k.px)),
            "cudnnConvolutionBackwardData");
  else
    a.check(a.backwardFilter(k.handle, &one, k.x, ptr(k.px), k.y, ptr(k.py), k.conv,
                             cudnnConvolutionBwdFilterAlgo_t(k.algo), ptr(k.workspace),
                             k.workspaceBytes, &zero, k.w, ptr(k.pw)),
            "cudnnConvolutionBackwardFilter");
  if (k.bias) { // onto the result: y, or dx
    bool data = k.pass == Pass::BackwardData;
    a.check(a.addTensor(k.handle, &one, k.bias, ptr(k.pbias), &one, data ? k.x : k.y,
                        ptr(data ? k.px : k.py)),
            "cudnnAddTensor");
  }
}

} // namespace tc::cuda
#endif
