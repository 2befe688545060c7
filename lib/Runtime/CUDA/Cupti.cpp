#include "Cupti.h"
#include <sys/syscall.h>
#include <unistd.h>

namespace tc::cuda {
unsigned currentThreadId() { return unsigned(::syscall(SYS_gettid)); }
} // namespace tc::cuda

// Built without cupti_activity.h (no CUDA toolkit): traces fall back to
// per-step CUDA events, saying why.
#ifndef TC_HAVE_CUPTI
namespace tc::cuda {
bool startCupti(std::string &why) {
  why = "tc was built without cupti_activity.h";
  return false;
}
void stopCupti() {}
CuptiRecords collectCupti(const RunTrace &) { return {}; }
} // namespace tc::cuda
#else
#include "LibraryLoader.h"
#include "tc/Support/Error.h"
#include <cstdlib>
#include <cstring>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <mutex>

namespace tc::cuda {

namespace {

// Signatures from the header the runtime was built with.
struct Api {
  decltype(&cuptiGetResultString) resultString;
  decltype(&cuptiSetThreadIdType) setThreadIdType;
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks;
  decltype(&cuptiActivityEnable) enable;
  decltype(&cuptiActivityDisable) disable;
  decltype(&cuptiActivityFlushAll) flushAll;
  decltype(&cuptiActivityGetNextRecord) nextRecord;
  decltype(&cuptiActivityGetNumDroppedRecords) droppedRecords;
  decltype(&cuptiGetTimestamp) timestamp;
  decltype(&cuptiGetCallbackName) callbackName;

  void check(CUptiResult r, const std::string &call) const {
    if (r == CUPTI_SUCCESS)
      return;
    const char *name = nullptr;
    if (resultString(r, &name) != CUPTI_SUCCESS || !name)
      name = "an unknown CUPTI error";
    fail(call, ": ", name, " (", int(r), ")");
  }
};

const struct {
  CUpti_ActivityKind kind;
  const char *name;
} kKinds[] = {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
              {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
              {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
              {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
              {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"}};

// A record copied out of CUPTI's buffer (the buffer is freed once read);
// start/end in CUPTI's nanoseconds until collectCupti converts them.
struct Record {
  TraceEvent event;
  uint64_t start, end;
};

// Process-wide, as CUPTI is. `state` guards loading and the user count;
// `buffered` the records, which completion callbacks append on whatever
// thread CUPTI calls them from (possibly while another thread waits in
// cuptiActivityFlushAll: never hold `buffered` around a CUPTI call).
// Never destroyed: CUPTI may deliver a buffer while the process exits,
// after static destructors ran.
struct Shared {
  std::mutex state, buffered;
  Api api;
  bool loaded = false;
  std::string failure; // CUPTI failed once: the answer from then on
  int users = 0;
  std::vector<Record> records;
  uint64_t dropped = 0;
};
Shared &shared() {
  static Shared *s = new Shared;
  return *s;
}
Api &api = shared().api;

constexpr size_t kBufferBytes = 4 << 20;

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxRecords) {
  // Records are 8-byte aligned structs (ACTIVITY_RECORD_ALIGNMENT).
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxRecords = 0; // as many as fit
}

bool launchesWork(const char *call) {
  for (const char *prefix : {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cudaLaunch",
                             "cudaGraphLaunch", "cudaMemcpy", "cudaMemset"})
    if (std::strncmp(call, prefix, std::strlen(prefix)) == 0)
      return true;
  return false;
}

const char *copyKind(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
  default: return "other";
  }
}

// The records tc-prof shows; everything else (the driver's other calls,
// most of what DRIVER and RUNTIME record) is dropped here.
void keep(const CUpti_Activity *r, std::vector<Record> &out) {
  using Track = TraceEvent::Track;
  Record rec{};
  TraceEvent &e = rec.event;
  switch (r->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    // CUDA 13's current kernel record (cupti_activity.h names it for both kinds).
    const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(r);
    e.track = Track::Device;
    e.lane = k->streamId;
    e.name = k->name ? k->name : "(unnamed kernel)"; // CUPTI's string: copied
    e.category = "kernel";
    e.correlation = k->correlationId;
    rec.start = k->start;
    rec.end = k->end;
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto *m = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(r);
    e.track = Track::Device;
    e.lane = m->streamId;
    e.name = std::string("memcpy ") + copyKind(m->copyKind) + " " + std::to_string(m->bytes) + " B";
    e.category = "memcpy";
    e.correlation = m->correlationId;
    rec.start = m->start;
    rec.end = m->end;
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto *m = reinterpret_cast<const CUpti_ActivityMemset4 *>(r);
    e.track = Track::Device;
    e.lane = m->streamId;
    e.name = "memset " + std::to_string(m->bytes) + " B";
    e.category = "memset";
    e.correlation = m->correlationId;
    rec.start = m->start;
    rec.end = m->end;
    break;
  }
  case CUPTI_ACTIVITY_KIND_DRIVER:
  case CUPTI_ACTIVITY_KIND_RUNTIME: {
    const auto *a = reinterpret_cast<const CUpti_ActivityAPI *>(r);
    bool driver = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
    const char *name = nullptr;
    if (api.callbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid,
                         &name) != CUPTI_SUCCESS ||
        !name || !launchesWork(name))
      return;
    e.track = Track::Api;
    e.lane = a->threadId;
    e.name = name; // "cuLaunchKernel", "cudaLaunchKernelExC_v11060"
    e.category = driver ? "driver" : "runtime";
    e.correlation = a->correlationId;
    rec.start = a->start;
    rec.end = a->end;
    break;
  }
  default: return;
  }
  out.push_back(std::move(rec));
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t,
                              size_t valid) {
  std::vector<Record> got;
  CUpti_Activity *r = nullptr;
  // Stops at the end (CUPTI_ERROR_MAX_LIMIT_REACHED) or at an incomplete record.
  while (valid && api.nextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
    keep(r, got);
  size_t lost = 0;
  api.droppedRecords(ctx, stream, &lost);
  std::free(buffer);
  Shared &sh = shared();
  std::lock_guard<std::mutex> lock(sh.buffered);
  sh.records.insert(sh.records.end(), std::make_move_iterator(got.begin()),
                    std::make_move_iterator(got.end()));
  sh.dropped += lost;
}

void load() {
  // CUPTI reaches the driver through cuGetExportTable; a stand-in driver
  // (test/Runtime/Inputs/fake_libcuda.c) has none, and CUPTI would only
  // say CUPTI_ERROR_UNKNOWN.
  if (void *cu = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    bool nvidia = ::dlsym(cu, "cuGetExportTable");
    ::dlclose(cu);
    if (!nvidia)
      fail("the CUDA driver is a stand-in (it lacks cuGetExportTable, which CUPTI needs)");
  }
  void *lib = openLibrary("CUPTI", {"libcupti.so.13", "libcupti.so"});
  auto bind = [&](auto &fn, const char *name) { bindSymbol(lib, fn, name, "CUPTI"); };
  bind(api.resultString, "cuptiGetResultString");
  bind(api.setThreadIdType, "cuptiSetThreadIdType");
  bind(api.registerCallbacks, "cuptiActivityRegisterCallbacks");
  bind(api.enable, "cuptiActivityEnable");
  bind(api.disable, "cuptiActivityDisable");
  bind(api.flushAll, "cuptiActivityFlushAll");
  bind(api.nextRecord, "cuptiActivityGetNextRecord");
  bind(api.droppedRecords, "cuptiActivityGetNumDroppedRecords");
  bind(api.timestamp, "cuptiGetTimestamp");
  bind(api.callbackName, "cuptiGetCallbackName");
  // gettid, comparable with currentThreadId() (the default is pthread_self).
  api.check(api.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
  api.check(api.registerCallbacks(bufferRequested, bufferCompleted),
            "cuptiActivityRegisterCallbacks");
}

void disableAll() {
  for (const auto &k : kKinds)
    api.disable(k.kind);
}

} // namespace

bool startCupti(std::string &why) {
  Shared &sh = shared();
  std::lock_guard<std::mutex> lock(sh.state);
  if (sh.failure.empty() && !sh.users) {
    try {
      if (!sh.loaded)
        load();
      sh.loaded = true;
      // Enabling works with the context already made (the model's): the
      // driver attaches CUPTI to existing contexts (seen on the H100).
      for (const auto &k : kKinds)
        api.check(api.enable(k.kind), std::string("cuptiActivityEnable(") + k.name + ")");
      std::lock_guard<std::mutex> drop(sh.buffered); // late deliveries of an earlier session
      sh.records.clear();
      sh.dropped = 0;
    } catch (const Error &e) {
      sh.failure = e.what();
      if (sh.loaded)
        disableAll();
    }
  }
  if (!sh.failure.empty()) {
    why = sh.failure;
    return false;
  }
  ++sh.users;
  return true;
}

void stopCupti() {
  Shared &sh = shared();
  std::lock_guard<std::mutex> lock(sh.state);
  if (!sh.users || --sh.users)
    return;
  disableAll();
  api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> drop(sh.buffered);
  sh.records.clear();
  sh.dropped = 0;
}

CuptiRecords collectCupti(const RunTrace &trace) {
  Shared &sh = shared();
  CuptiRecords out;
  double at = 0;
  uint64_t now = 0;
  try {
    std::lock_guard<std::mutex> lock(sh.state);
    if (!sh.users)
      return out;
    // Forced: also buffers not full yet (the caller synchronized, so the
    // records in them are complete).
    api.check(api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    // Both clocks at one moment: CUPTI's (ns, its own origin) between two
    // readings of the trace's; per call, so the two never drift apart far.
    double before = trace.nowUs();
    api.check(api.timestamp(&now), "cuptiGetTimestamp");
    at = (before + trace.nowUs()) / 2;
  } catch (const Error &e) {
    out.problem = e.what();
    return out;
  }
  auto us = [&](uint64_t t) { return at + double(int64_t(t - now)) / 1000.0; };
  std::vector<Record> got;
  {
    std::lock_guard<std::mutex> lock(sh.buffered);
    got.swap(sh.records);
    out.dropped = sh.dropped;
    sh.dropped = 0;
  }
  for (Record &r : got) {
    TraceEvent &e = r.event;
    if (!r.start && !r.end) { // CUPTI's way of saying it could not time it
      e.note = "no timestamp from CUPTI";
    } else {
      e.startUs = us(r.start);
      e.durUs = r.end > r.start ? double(r.end - r.start) / 1000.0 : 0;
    }
    out.events.push_back(std::move(e));
  }
  return out;
}

} // namespace tc::cuda
#endif
