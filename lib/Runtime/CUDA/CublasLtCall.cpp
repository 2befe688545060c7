#include "CublasLtCall.h"
#include "LibraryLoader.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <vector>

// Built without the cublasLt.h header (no CUDA toolkit): cuBLASLt is unavailable,
// the one error below; everything else of the CUDA runtime builds.
#ifndef TC_HAVE_CUBLASLT
namespace tc::cuda {
[[noreturn]] static void unavailable() {
  fail("cuBLASLt not available (tc was built without cublasLt.h)");
}
CublasLt::CublasLt() { unavailable(); }
size_t CublasLt::version() { unavailable(); }
CublasLt::~CublasLt() = default;
struct CublasLtCall::Impl {};
CublasLtCall::~CublasLtCall() = default;
std::unique_ptr<CublasLtCall> CublasLtCall::create(CublasLt &, const GemmDesc &, const Pointers &,
                                                   CallTuning &, std::string &) {
  unavailable();
}
void CublasLtCall::run(CUstream) const { unavailable(); }
} // namespace tc::cuda
#else
#include <cublasLt.h>

namespace tc::cuda {

namespace {

struct Api {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtGetVersion) version;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusName) statusName;
  decltype(&cublasLtMatmulDescCreate) descCreate;
  decltype(&cublasLtMatmulDescDestroy) descDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) descSet;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layoutSet;
  decltype(&cublasLtMatmulPreferenceCreate) prefCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) prefDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) prefSet;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;

  void check(cublasStatus_t s, const char *call) const {
    if (s != CUBLAS_STATUS_SUCCESS)
      fail(call, ": ", statusName(s), " (", int(s), ")",
           s == CUBLAS_STATUS_EXECUTION_FAILED ? kKernelStoppedHint : "");
  }
};

// Loaded once; a failed load is not cached (the error comes again).
const Api &api() {
  static const Api a = [] {
    void *lib = openLibrary("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so"});
    Api a{};
    auto bind = [&](auto &fn, const char *name) { bindSymbol(lib, fn, name, "cuBLASLt"); };
    bind(a.create, "cublasLtCreate");
    bind(a.version, "cublasLtGetVersion");
    bind(a.destroy, "cublasLtDestroy");
    bind(a.statusName, "cublasLtGetStatusName");
    bind(a.descCreate, "cublasLtMatmulDescCreate");
    bind(a.descDestroy, "cublasLtMatmulDescDestroy");
    bind(a.descSet, "cublasLtMatmulDescSetAttribute");
    bind(a.layoutCreate, "cublasLtMatrixLayoutCreate");
    bind(a.layoutDestroy, "cublasLtMatrixLayoutDestroy");
    bind(a.layoutSet, "cublasLtMatrixLayoutSetAttribute");
    bind(a.prefCreate, "cublasLtMatmulPreferenceCreate");
    bind(a.prefDestroy, "cublasLtMatmulPreferenceDestroy");
    bind(a.prefSet, "cublasLtMatmulPreferenceSetAttribute");
    bind(a.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(a.matmul, "cublasLtMatmul");
    return a;
  }();
  return a;
}

cudaDataType_t cudaType(DType t) {
  return t == DType::F16    ? CUDA_R_16F
         : t == DType::BF16 ? CUDA_R_16BF
         : t == DType::F64  ? CUDA_R_64F
                            : CUDA_R_32F;
}

// The largest power of two (up to 256) dividing every one of `bytes`: what
// the heuristic may assume of a matrix's address.
uint32_t alignment(std::initializer_list<uint64_t> bytes) {
  uint64_t all = 256;
  for (uint64_t b : bytes)
    all |= b;
  return uint32_t(all & -all);
}

} // namespace

size_t CublasLt::version() { return api().version(); }

CublasLt::CublasLt() {
  cublasLtHandle_t h = nullptr;
  api().check(api().create(&h), "cublasLtCreate");
  handle_ = h;
  workspace_ = DeviceMemory(kWorkspaceBytes);
}

CublasLt::~CublasLt() {
  if (handle_)
    api().destroy(static_cast<cublasLtHandle_t>(handle_));
}

struct CublasLtCall::Impl {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr; // cuBLASLt's A, B, C = D
  cublasLtMatmulAlgo_t algo{};
  float alpha = 1, beta = 0;
  double alpha64 = 1, beta64 = 0; // f64 GEMMs scale in f64
  bool f64 = false;
  CUdeviceptr pa = 0, pb = 0, pc = 0, pd = 0, workspace = 0;
  size_t workspaceBytes = 0;

  ~Impl() {
    for (cublasLtMatrixLayout_t l : {a, b, d})
      if (l)
        api().layoutDestroy(l);
    if (op)
      api().descDestroy(op);
  }
};

CublasLtCall::~CublasLtCall() = default;

std::unique_ptr<CublasLtCall> CublasLtCall::create(CublasLt &lib, const GemmDesc &g,
                                                   const Pointers &p, CallTuning &tuning,
                                                   std::string &why) {
  const Api &x = api();
  std::unique_ptr<CublasLtCall> call(new CublasLtCall());
  call->impl_ = std::make_unique<Impl>();
  Impl &c = *call->impl_;
  c.handle = static_cast<cublasLtHandle_t>(lib.handle_);
  // cuBLASLt is column-major; a row-major matrix is its transpose there, so
  // the row-major D = A B is computed as D^T = B^T A^T: cuBLASLt's A is our
  // B, its B our A, its D (n x m, ld n) our D.
  cudaDataType_t t = cudaType(g.dtype);
  // Compute in f32: f16/bf16 accumulate in f32; f32 stays exact to f32
  // rounding unless --allow-tf32=all lets its operands round to TF32. f64
  // computes and scales in f64.
  bool f64 = g.dtype == DType::F64;
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F
                                : g.dtype == DType::F32 && tuning.tf32 == Tf32::All
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  x.check(x.descCreate(&c.op, compute, f64 ? CUDA_R_64F : CUDA_R_32F), "cublasLtMatmulDescCreate");
  auto setOp = [&](cublasLtMatmulDescAttributes_t attr, const auto &v) {
    x.check(x.descSet(c.op, attr, &v, sizeof v), "cublasLtMatmulDescSetAttribute");
  };
  setOp(CUBLASLT_MATMUL_DESC_TRANSA, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N);
  setOp(CUBLASLT_MATMUL_DESC_TRANSB, g.transA ? CUBLAS_OP_T : CUBLAS_OP_N);
  // Its bias is per row of its D: a per-column bias of ours.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.bias >= 0)
    epilogue = g.relu       ? CUBLASLT_EPILOGUE_RELU_BIAS
               : g.geluTanh ? CUBLASLT_EPILOGUE_GELU_BIAS
                            : CUBLASLT_EPILOGUE_BIAS;
  else if (g.relu || g.geluTanh)
    epilogue = g.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_GELU;
  setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  if (g.bias >= 0)
    setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, reinterpret_cast<const void *>(p.bias));

  auto layout = [&](cublasLtMatrixLayout_t &l, int64_t rows, int64_t cols, int64_t ld,
                    int64_t stride) {
    x.check(x.layoutCreate(&l, t, uint64_t(rows), uint64_t(cols), ld),
            "cublasLtMatrixLayoutCreate");
    if (g.batch == 1)
      return;
    int32_t count = int32_t(g.batch);
    x.check(x.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
            "cublasLtMatrixLayoutSetAttribute");
    x.check(x.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
            "cublasLtMatrixLayoutSetAttribute");
  };
  // Row-major B stored k x n is column-major n x k (ld n); stored n x k (transB), k x n.
  if (g.transB)
    layout(c.a, g.k, g.n, g.k, g.strideB);
  else
    layout(c.a, g.n, g.k, g.n, g.strideB);
  if (g.transA)
    layout(c.b, g.m, g.k, g.m, g.strideA);
  else
    layout(c.b, g.k, g.m, g.k, g.strideA);
  // D (and C, the same layout) in f32 where the group's cast folds (castF32):
  // `layout` reads t.
  if (g.castF32)
    t = CUDA_R_32F;
  layout(c.d, g.n, g.m, g.n, g.strideD);

  c.alpha = g.alpha;
  c.beta = g.c >= 0 ? g.beta : 0;
  c.f64 = f64;
  c.alpha64 = c.alpha;
  c.beta64 = c.beta;
  c.pa = p.b;
  c.pb = p.a;
  c.pc = g.c >= 0 ? p.c : p.d;
  c.pd = p.d;
  c.workspace = lib.workspace_.get();
  c.workspaceBytes = CublasLt::kWorkspaceBytes;

  cublasLtMatmulPreference_t pref = nullptr;
  x.check(x.prefCreate(&pref), "cublasLtMatmulPreferenceCreate");
  uint64_t elem = dtypeSize(g.dtype), elemD = g.castF32 ? 4 : elem;
  auto setPref = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto &v) {
    x.check(x.prefSet(pref, attr, &v, sizeof v), "cublasLtMatmulPreferenceSetAttribute");
  };
  int found = 0;
  // The top kTopK when a choice is recorded or timed, else the first.
  int wanted = tuning.recorded || tuning.tuner ? Tuner::kTopK : 1;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(wanted));
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  try {
    setPref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(c.workspaceBytes));
    setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
            alignment({c.pa, uint64_t(g.strideB) * elem}));
    setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            alignment({c.pb, uint64_t(g.strideA) * elem}));
    setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
            alignment({c.pc, uint64_t(g.strideD) * elemD}));
    setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
            alignment({c.pd, uint64_t(g.strideD) * elemD}));
    s = x.heuristic(c.handle, c.op, c.a, c.b, c.d, c.d, pref, wanted, results.data(), &found);
  } catch (...) {
    x.prefDestroy(pref);
    throw;
  }
  x.prefDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
    why =
        std::string("cuBLASLt has no algorithm for ") + g.describe() + " (" + x.statusName(s) + ")";
    return nullptr;
  }
  // Only the results it marks valid are candidates (in its order).
  results.resize(size_t(std::min(found, wanted)));
  std::erase_if(results, [](const cublasLtMatmulHeuristicResult_t &r) {
    return r.state != CUBLAS_STATUS_SUCCESS;
  });
  std::optional<size_t> i = tuning.pick(
      results.size(), [](size_t i) { return "heuristic=" + std::to_string(i); },
      [&](size_t i) {
        c.algo = results[i].algo;
        call->run(tuning.tuner->stream());
      });
  if (!i) {
    why = "cuBLASLt has no valid algorithm for " + g.describe();
    return nullptr;
  }
  c.algo = results[*i].algo;
  return call;
}

void CublasLtCall::run(CUstream stream) const {
  const Impl &c = *impl_;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  // Scales of the compute type's precision: double for an f64 GEMM.
  bool f64 = c.f64;
  const void *alpha = f64 ? static_cast<const void *>(&c.alpha64) : &c.alpha;
  const void *beta = f64 ? static_cast<const void *>(&c.beta64) : &c.beta;
  api().check(api().matmul(c.handle, c.op, alpha, ptr(c.pa), c.a, ptr(c.pb), c.b, beta, ptr(c.pc),
                           c.d, ptr(c.pd), c.d, &c.algo, ptr(c.workspace), c.workspaceBytes,
                           reinterpret_cast<cudaStream_t>(stream)),
              "cublasLtMatmul");
}

} // namespace tc::cuda
#endif
