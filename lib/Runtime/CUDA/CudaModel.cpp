#include "tc/Runtime/CudaModel.h"
#include "CudaShapePlan.h"
#include "Cupti.h"
#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/CodeGen/KernelFault.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/DeviceRanks.h"
#include "tc/Runtime/Ranks.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstdlib>
#include <optional>

namespace tc {

std::unique_ptr<CudaModel> CudaModel::load(Artifact artifact, const char *target, bool libraries,
                                           int ordinal) {
  std::unique_ptr<CudaModel> m(new CudaModel());
  m->libraries_ = libraries;
  m->cudnnApi_ = cuda::cudnnApiFromEnv();
  m->target_ = target;
  Artifact &a = m->artifact_ = std::move(artifact);
  if (a.target != target)
    fail(a.file, ": the artifact is for target '", a.target, "', not ", target);
  std::vector<CudaKernelEntry> table =
      parseCudaKernelTable(a.require(kSectionKernels).str(), a.file);
  unplannedShapes(a); // libtcrt refuses an artifact it cannot plan
  m->module_ = readBytecode(a.share(kSectionModule));
  m->controlFlow_ = deviceControlFlow(a, *m->module_);
  for (const CudaKernelEntry &e : table)
    if (!m->module_->lookup(e.group))
      fail(a.file, ": the kernel table names group @", e.group, ", which the module lacks");
  m->ranks_ = int(rankGroupSize(*m->module_));
  m->plans_ = std::make_unique<ShapePlanCache<ShapePlan>>();
  if (const MemoryBuffer *t = a.section(kSectionTuning))
    m->tuning_ = readTuningSection(t->str(), a.file);

  const cuda::Driver &d = cuda::driver();
  int count = 0;
  d.check(d.deviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    fail("no CUDA device ", ordinal, " (this machine has ", count, ")");
  d.check(d.deviceGet(&m->dev_, ordinal), "cuDeviceGet");
  int major = 0, minor = 0;
  d.check(d.deviceGetAttribute(&major, cuda::kComputeCapabilityMajor, m->dev_),
          "cuDeviceGetAttribute");
  d.check(d.deviceGetAttribute(&minor, cuda::kComputeCapabilityMinor, m->dev_),
          "cuDeviceGetAttribute");
  char name[256] = {};
  d.check(d.deviceGetName(name, sizeof name - 1, m->dev_), "cuDeviceGetName");
  m->device_ = name;
  m->cc_ = major * 10 + minor;
  std::optional<std::string> arch = pickCubinArch(a.arches, major, minor);
  if (!arch) {
    std::string built;
    for (const std::string &s : a.arches)
      built += (built.empty() ? "" : ",") + s;
    std::string sm = "sm_" + std::to_string(major * 10 + minor);
    fail(a.file, ": compiled for ", built, "; this GPU (", m->device_, ") is ", sm,
         ": recompile with tc-codegen --target=cuda --arch=", sm);
  }
  m->arch_ = *arch;
  // Cubins of a newer toolkit's major than the driver supports do not load:
  // say so with both versions (the minor versions are compatible).
  int driverVersion = 0;
  const std::string &toolkit = a.built.cudaToolkit;
  if (d.driverGetVersion && !toolkit.empty() && d.driverGetVersion(&driverVersion) == 0 &&
      std::atoi(toolkit.c_str()) > driverVersion / 1000)
    fail(a.file, ": built with the CUDA ", toolkit,
         " toolkit; this machine's driver supports CUDA ", driverVersion / 1000, ".",
         driverVersion % 1000 / 10, ": update the driver or recompile ", "with a CUDA ",
         driverVersion / 1000, " toolkit");
  d.check(d.primaryCtxRetain(&m->ctx_, m->dev_), "cuDevicePrimaryCtxRetain");
  d.check(d.ctxSetCurrent(m->ctx_), "cuCtxSetCurrent");
  // Non-blocking: no implicit synchronization with other work on the
  // legacy default stream (another library's, another model's).
  d.check(d.streamCreate(&m->stream_, cuda::kStreamNonBlocking), "cuStreamCreate");
  m->work_ = m->stream_;
  if (d.hasEvents()) { // device time of each run (a stand-in driver may lack them)
    d.check(d.eventCreate(&m->start_, 0), "cuEventCreate");
    d.check(d.eventCreate(&m->stop_, 0), "cuEventCreate");
  }
  // The driver reads a cubin's size from its ELF header; the sections are
  // views of the artifact, which outlives these calls.
  try {
    for (const MemoryBuffer *cubin : a.cubins(m->arch_)) {
      m->cubins_.push_back(nullptr);
      d.check(d.moduleLoadData(&m->cubins_.back(), cubin->data()), "cuModuleLoadData");
    }
    for (CudaKernelEntry &e : table) {
      // A library group without an epilogue has no kernel.
      Kernel k{std::move(e), nullptr};
      if (k.entry.hasKernel())
        k.fn = m->functionOf(k.entry.symbol);
      m->kernels_[k.entry.group] = std::move(k);
    }
    m->loadVariants();
    // Only a program with a kernel that may fault defines the record, and
    // such kernels are all in the first.
    size_t faultBytes = 0;
    if (d.moduleGetGlobal &&
        d.moduleGetGlobal(&m->fault_, &faultBytes, m->cubins_[0], kKernelFaultSymbol) != 0)
      m->fault_ = 0;
  } catch (const Error &e) {
    fail(a.file, ": cannot load the ", m->arch_, " cubin: ", e.what());
  }
  return m;
}

cuda::CUfunction CudaModel::functionOf(const std::string &symbol) const {
  const cuda::Driver &d = cuda::driver();
  cuda::CUfunction fn = nullptr;
  for (size_t i = 0; !fn; ++i) // in one of the programs
    if (int rc = d.moduleGetFunction(&fn, cubins_[i], symbol.c_str());
        rc != 0 && (rc != cuda::kErrorNotFound || i + 1 == cubins_.size()))
      d.check(rc, "cuModuleGetFunction");
  return fn;
}

void CudaModel::setCommunicator(void *comm) {
  int rank = 0, size = 1;
  ncclCommInfo(comm, rank, size);
  if (ranks_ && size != ranks_)
    fail(artifact_.file, ": its collectives are over ", ranks_,
         " ranks; the communicator given has ", size);
  comm_ = comm;
  commRank_ = rank;
}

// The communicator, made at the first plan that needs one: from the
// launcher's environment, or a 1-rank one for a 1-rank program (the same
// NCCL steps). Its rank is this process's (currentRank: what a train loop
// deals batches by).
void *CudaModel::communicator() {
  if (comm_)
    return comm_;
  std::optional<LaunchEnv> env = launchEnv();
  if (!env && ranks_ > 1)
    fail(artifact_.file, ": its collectives are over ", ranks_, " ranks: run it as ", ranks_,
         " processes, one GPU each (tc-run --gpus ", ranks_,
         ", or a launcher setting RANK, WORLD_SIZE, LOCAL_RANK and TC_NCCL_ID or TC_NCCL_ID_FILE)");
  LaunchEnv e = env.value_or(LaunchEnv{});
  if (e.size != std::max(ranks_, 1))
    fail(artifact_.file, ": its collectives are over ", ranks_, " ranks; the launcher started ",
         e.size, " processes");
  ownComm_ = std::make_unique<NcclCommunicator>(e);
  comm_ = ownComm_->handle();
  commRank_ = ownComm_->rank();
  return comm_;
}

void CudaModel::setTrace(RunTrace *trace) {
  if (cupti_)
    cuda::stopCupti();
  cupti_ = false;
  trace_ = trace;
  if (!trace)
    return;
  trace->backend = target_;
  trace->device = device_;
  std::string why;
  cupti_ = cuda::startCupti(why);
  if (cupti_)
    trace->deviceNote = "CUPTI activity records";
  else if (cuda::driver().hasEvents() && start_)
    trace->deviceNote = "CUDA events per step (CUPTI: " + why + ")";
  else
    trace->deviceNote = "none: the CUDA driver lacks event entry points (CUPTI: " + why + ")";
  if (cupti_ && lastPlan_ && lastPlan_->graph && !lastPlan_->work)
    learnStepWork(*lastPlan_);
}

CudaModel::~CudaModel() {
  if (cupti_)
    cuda::stopCupti();
  if (!ctx_)
    return;
  const cuda::Driver &d = cuda::driver(); // loaded, or there would be no context
  // Library state and device memory go while the context lives.
  plans_.reset();
  shards_.clear();
  ownComm_.reset();
  cublasLt_.reset();
  cudnn_.reset();
  weights_.clear();
  for (cuda::CUevent e : {start_, stop_})
    if (e)
      d.eventDestroy(e);
  if (stream_)
    d.streamDestroy(stream_);
  for (cuda::CUmodule c : cubins_)
    if (c)
      d.moduleUnload(c);
  d.primaryCtxRelease(dev_);
}

} // namespace tc
