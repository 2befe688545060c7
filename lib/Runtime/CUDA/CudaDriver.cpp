#include "tc/Runtime/CudaDriver.h"
#include "tc/Support/Error.h"
#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <type_traits>
#include <utility>

namespace tc::cuda {

namespace {

// Resolves every entry point (the versioned names cuda.h maps the API to),
// or says which one the installed driver lacks.
// TC_CUDA_DRIVER names another file to open: a stand-in driver for tests
// in a process that also runs NVRTC (tc-codegen --tune), which must not
// find the stand-in as its libcuda.so.1.
Driver open() {
  const char *path = std::getenv("TC_CUDA_DRIVER");
  path = path && *path ? path : "libcuda.so.1";
  void *lib = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    fail("no CUDA device (the CUDA driver ", path, " is not installed: ", ::dlerror(), ")");
  Driver d{};
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
    if (!fn)
      fail("no CUDA device (the CUDA driver lacks ", name, ": too old)");
  };
  bind(d.init, "cuInit");
  bind(d.deviceGetCount, "cuDeviceGetCount");
  bind(d.deviceGet, "cuDeviceGet");
  bind(d.deviceGetAttribute, "cuDeviceGetAttribute");
  bind(d.deviceGetName, "cuDeviceGetName");
  bind(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d.ctxSetCurrent, "cuCtxSetCurrent");
  bind(d.moduleLoadData, "cuModuleLoadData");
  bind(d.moduleUnload, "cuModuleUnload");
  bind(d.moduleGetFunction, "cuModuleGetFunction");
  bind(d.memAlloc, "cuMemAlloc_v2");
  bind(d.memFree, "cuMemFree_v2");
  bind(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(d.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(d.streamCreate, "cuStreamCreate");
  bind(d.streamDestroy, "cuStreamDestroy_v2");
  bind(d.streamSynchronize, "cuStreamSynchronize");
  bind(d.launchKernel, "cuLaunchKernel");
  auto optional = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
  };
  optional(d.streamBeginCapture, "cuStreamBeginCapture_v2");
  optional(d.streamEndCapture, "cuStreamEndCapture");
  optional(d.graphInstantiate, "cuGraphInstantiateWithFlags");
  optional(d.graphLaunch, "cuGraphLaunch");
  optional(d.graphExecDestroy, "cuGraphExecDestroy");
  optional(d.graphDestroy, "cuGraphDestroy");
  optional(d.graphGetNodes, "cuGraphGetNodes");
  optional(d.eventCreate, "cuEventCreate");
  optional(d.eventDestroy, "cuEventDestroy_v2");
  optional(d.eventRecord, "cuEventRecord");
  optional(d.eventElapsedTime, "cuEventElapsedTime_v2");
  optional(d.driverGetVersion, "cuDriverGetVersion");
  optional(d.moduleGetGlobal, "cuModuleGetGlobal_v2");
  bind(d.getErrorName, "cuGetErrorName");
  bind(d.getErrorString, "cuGetErrorString");
  int n = 0;
  if (d.init(0) != 0 || d.deviceGetCount(&n) != 0 || n == 0)
    fail("no CUDA device (the driver is installed but reports no usable GPU)");
  return d;
}

} // namespace

void Driver::check(CUresult r, const char *call) const {
  if (r == 0)
    return;
  const char *name = nullptr, *text = nullptr;
  if (getErrorName(r, &name) != 0 || !name)
    name = "an unknown CUDA error";
  if (getErrorString(r, &text) != 0 || !text)
    text = "no description";
  // A launch failure or an illegal instruction is what a kernel's __trap
  // leaves (sticky: every later call fails too); tc's kernels trap only on
  // an index past its axis.
  bool trap = r == 715 || r == 719; // CUDA_ERROR_ILLEGAL_INSTRUCTION, _LAUNCH_FAILED
  fail(call, ": ", name, ": ", text, " (", r, ")", trap ? kKernelStoppedHint : "");
}

namespace {
std::atomic<size_t> inUse{0}, peak{0};
} // namespace

size_t deviceBytesInUse() { return inUse; }
size_t deviceBytesPeak() { return peak; }
void resetDeviceBytesPeak() { peak = size_t(inUse); }

DeviceMemory::DeviceMemory(size_t bytes) {
  if (!bytes)
    return;
  driver().check(driver().memAlloc(&ptr_, bytes), "cuMemAlloc");
  bytes_ = bytes;
  size_t now = inUse += bytes, was = peak;
  while (now > was && !peak.compare_exchange_weak(was, now)) {
  }
}

DeviceMemory &DeviceMemory::operator=(DeviceMemory &&o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

DeviceMemory::~DeviceMemory() {
  if (!ptr_)
    return;
  driver().memFree(ptr_); // nothing to report from a destructor; a failure leaks at worst
  inUse -= bytes_;
}

CUdeviceptr ZeroedScratch::reserve(size_t bytes, CUstream stream) {
  if (memory_.size() < bytes) {
    memory_ = DeviceMemory(bytes);
    zeros_.assign(bytes, 0);
    driver().check(driver().memcpyHtoDAsync(memory_.get(), zeros_.data(), bytes, stream),
                   "cuMemcpyHtoDAsync");
  }
  return memory_.get();
}

const Driver &driver() {
  // A failed load is not cached: the error is thrown again on the next call.
  static const Driver d = open();
  return d;
}

} // namespace tc::cuda
