// The CUDA driver API, opened at run time (dlopen of libcuda.so.1): no tool
// links libcuda, so every tool starts on a machine without a GPU, and this
// is the one place that decides "no CUDA device". Only the entry points the
// CUDA runtime uses, declared here (no CUDA header needed to build).
#pragma once
#include <cstddef>
#include <string>

namespace tc::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

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
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*launchKernel)(CUfunction fn, unsigned gridX, unsigned gridY, unsigned gridZ,
                           unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
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
  DeviceMemory(DeviceMemory &&o) noexcept : ptr_(o.ptr_) { o.ptr_ = 0; }
  DeviceMemory &operator=(DeviceMemory &&o) noexcept;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory();
  CUdeviceptr get() const { return ptr_; }

private:
  CUdeviceptr ptr_ = 0;
};

// cuStreamCreate's flag: no implicit synchronization with the legacy default stream.
inline constexpr unsigned kStreamNonBlocking = 1;

// Device attributes (CUdevice_attribute) the runtime reads.
inline constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

} // namespace tc::cuda
