// The CUDA driver API, opened at run time (dlopen of libcuda.so.1): no tool
// links libcuda, so every tool starts on a machine without a GPU, and this
// is the one place that decides "no CUDA device". Only the entry points the
// CUDA runtime uses, declared here (no CUDA header needed to build).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tc::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

// Appended to an error that a kernel's __trap explains: the driver's launch
// failure, or a library call failing after it (the error is sticky).
inline constexpr const char *kKernelStoppedHint =
    ": a kernel of this run stopped the GPU (tc's kernels trap on an index past its axis: a "
    "Gather, GatherElements or ScatterND index out of range, e.g. a position past a model's "
    "table)";

struct Driver {
  CUresult (*init)(unsigned flags);
  CUresult (*deviceGetCount)(int *count);
  CUresult (*deviceGet)(CUdevice *dev, int ordinal);
  CUresult (*deviceGetAttribute)(int *value, int attribute, CUdevice dev);
  CUresult (*deviceGetName)(char *name, int len, CUdevice dev);
  CUresult (*primaryCtxRetain)(CUcontext *ctx, CUdevice dev);
  CUresult (*primaryCtxRelease)(CUdevice dev);
  CUresult (*ctxSetCurrent)(CUcontext ctx);
  CUresult (*moduleLoadData)(CUmodule *module, const void *image);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
  CUresult (*memAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*memFree)(CUdeviceptr ptr);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*memcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*launchKernel)(CUfunction fn, unsigned gridX, unsigned gridY, unsigned gridZ,
                           unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
  // Optional (nullptr when the driver lacks them, as a stand-in driver may):
  // CUDA graphs and events, and the driver's version. Without them runs are
  // not captured or timed on the device, and artifacts not checked against
  // the driver's CUDA version.
  CUresult (*streamBeginCapture)(CUstream stream, int mode);
  CUresult (*streamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*graphInstantiate)(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
  CUresult (*graphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*graphExecDestroy)(CUgraphExec exec);
  CUresult (*graphDestroy)(CUgraph graph);
  CUresult (*graphGetNodes)(CUgraph graph, void **nodes, size_t *count);
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventElapsedTime)(float *ms, CUevent start, CUevent end);
  // The CUDA version the driver supports (12040: 12.4).
  CUresult (*driverGetVersion)(int *version);
  // A module's global (the kernels' fault record, KernelFault.h).
  CUresult (*moduleGetGlobal)(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name);
  bool hasGraphs() const { return streamBeginCapture && graphLaunch && graphGetNodes; }
  bool hasEvents() const { return eventCreate && eventElapsedTime; }
  CUresult (*getErrorName)(CUresult error, const char **name);
  CUresult (*getErrorString)(CUresult error, const char **text);

  // Throws tc::Error "<call>: CUDA_ERROR_<NAME>: <the driver's message>"
  // unless `r` is success.
  void check(CUresult r, const char *call) const;
};

// The driver with cuInit done and at least one device; loaded once. Throws
// tc::Error "no CUDA device (<why>)" without a driver or a device.
const Driver &driver();

// Device memory freed on destruction (of the current context); 0 bytes
// allocate nothing (cuMemAlloc refuses 0).
class DeviceMemory {
public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes);
  DeviceMemory(DeviceMemory &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  DeviceMemory &operator=(DeviceMemory &&o) noexcept;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory();
  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return bytes_; }

private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// The scratch of `columns` and `split` kernels (tc/Runtime/CudaLaunch.h):
// zeroed on a stream when it grows, never shrunk; each launch leaves its
// counters zero again. The zeros are the async copy's source, kept as long
// as the memory.
class ZeroedScratch {
public:
  // At least `bytes` (none for 0), grown and zeroed on `stream` when smaller.
  CUdeviceptr reserve(size_t bytes, CUstream stream);
  CUdeviceptr get() const { return memory_.get(); }

private:
  DeviceMemory memory_;
  std::vector<char> zeros_;
};

// Bytes of DeviceMemory alive now and at most since the last reset: what the
// runtime itself holds on the device (weights, arenas, workspaces; not the
// libraries' or the context's own).
size_t deviceBytesInUse();
size_t deviceBytesPeak();
void resetDeviceBytesPeak();

// cuStreamCreate's flag: no implicit synchronization with the legacy default stream.
inline constexpr unsigned kStreamNonBlocking = 1;

// CUDA_ERROR_NOT_FOUND: cuModuleGetFunction's answer for a kernel another
// of the artifact's programs holds.
inline constexpr int kErrorNotFound = 500;

// Device attributes (CUdevice_attribute) the runtime reads.
inline constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

} // namespace tc::cuda
