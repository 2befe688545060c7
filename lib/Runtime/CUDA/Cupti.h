// CUPTI's activity API for traced runs (CudaModel::setTrace): every kernel,
// memcpy and memset the GPU ran and the API calls that launched them, with
// correlation ids. libcupti is dlopen'ed the first time a trace asks for it,
// as cuBLASLt is (LibraryLoader.h): tools start without it, and without a
// GPU. CUPTI's state is per process, so this is too: a count of the traces
// that use it.
#pragma once
#include "tc/Runtime/Trace.h"
#include <string>
#include <vector>

namespace tc::cuda {

// Enables the activity kinds (kernels, memcpy, memset, driver and runtime
// API calls); the first call loads libcupti and registers the buffer
// callbacks. False, with `why`, when CUPTI cannot record: not installed,
// built without its header, or refused by the driver (a stand-in driver:
// CUPTI_ERROR_UNKNOWN). The failure is remembered: later calls give the
// same answer without trying again.
bool startCupti(std::string &why);
// The last user of startCupti: disables the kinds and drops what is buffered.
void stopCupti();

struct CuptiRecords {
  // Api (lane: OS thread id, as gettid) for the calls that launch work:
  // cuLaunchKernel*, cuGraphLaunch, cuMemcpy*, cuMemset* and their runtime
  // API forms (cudaLaunchKernel...: cuBLASLt and cuDNN launch through the
  // CUDA runtime, whose calls the driver records do not show). Device
  // (lane: CUPTI's stream id) for kernels ("kernel", name as CUPTI reports
  // it), memcpys ("memcpy", "memcpy HtoD 4096 B") and memsets ("memset").
  // Times are on `trace`'s clock; step and run are -1.
  std::vector<TraceEvent> events;
  uint64_t dropped = 0; // records CUPTI dropped (no buffer)
  std::string problem;  // the flush or the clock failed: no events this time
};
// Flushes CUPTI (cuptiActivityFlushAll, forced: call it after the stream is
// synchronized) and returns the records delivered since the last call.
// Records may arrive over several flushes (CUPTI hands buffers back when
// full too): what one call returns is what has arrived by then.
CuptiRecords collectCupti(const RunTrace &trace);

// This thread's id as CUPTI's records give it (gettid).
unsigned currentThreadId();

} // namespace tc::cuda
