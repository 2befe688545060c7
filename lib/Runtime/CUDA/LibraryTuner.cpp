#include "LibraryTuner.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <random>
#include <vector>

namespace tc::cuda {

Tuner::Tuner(CUstream stream) : stream_(stream) {
  const Driver &d = driver();
  if (!d.hasEvents())
    return;
  d.check(d.eventCreate(&start_, 0), "cuEventCreate");
  d.check(d.eventCreate(&stop_, 0), "cuEventCreate");
}

Tuner::~Tuner() {
  const Driver &d = driver();
  for (CUevent e : {start_, stop_})
    if (e)
      d.eventDestroy(e);
}

double Tuner::timeMs(const std::function<void()> &enqueue) {
  const Driver &d = driver();
  if (!start_)
    return -1;
  try {
    for (int i = 0; i < kWarmRuns; ++i)
      enqueue();
    d.check(d.eventRecord(start_, stream_), "cuEventRecord");
    for (int i = 0; i < kTimedRuns; ++i)
      enqueue();
    d.check(d.eventRecord(stop_, stream_), "cuEventRecord");
    d.check(d.streamSynchronize(stream_), "cuStreamSynchronize");
  } catch (const Error &) {
    d.streamSynchronize(stream_); // the candidates before it finish; this one is passed over
    return -1;
  }
  float ms = 0;
  d.check(d.eventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
  timingMs += ms;
  return double(ms) / kTimedRuns;
}

CUdeviceptr Tuner::workspace(size_t bytes) {
  if (bytes > workspace_.size())
    workspace_ = DeviceMemory(bytes);
  return workspace_.get();
}

void Tuner::fillRandom(CUdeviceptr p, size_t bytes) {
  const Driver &d = driver();
  std::mt19937 rng(0x7c);
  std::vector<uint16_t> chunk(size_t(1) << 20); // 2 MiB, copied over and over
  for (uint16_t &v : chunk)
    v = uint16_t(0x3800 + rng() % 0x400);
  size_t chunkBytes = chunk.size() * sizeof(uint16_t);
  for (size_t at = 0; at < bytes; at += chunkBytes)
    d.check(d.memcpyHtoDAsync(p + at, chunk.data(), std::min(chunkBytes, bytes - at), stream_),
            "cuMemcpyHtoDAsync");
  d.check(d.streamSynchronize(stream_), "cuStreamSynchronize");
}

std::optional<size_t> CallTuning::pick(size_t count, const std::function<std::string(size_t)> &name,
                                       const std::function<void(size_t)> &enqueue) {
  if (count == 0)
    return std::nullopt;
  if (recorded) {
    for (size_t i = 0; i < count; ++i)
      if (name(i) == recorded->choice) {
        chosen = recorded->choice;
        us = recorded->us;
        return i;
      }
    rejected = "'" + recorded->choice + "' is not among the " +
               (kernel ? "kernel's " : "library's ") + std::to_string(count) + " candidates here";
    return 0;
  }
  if (!tuner)
    return 0;
  std::vector<double> ms;
  std::optional<size_t> best =
      pickFastest(count, [&](size_t i) { return tuner->timeMs([&] { enqueue(i); }); }, &ms);
  if (!best)
    return 0; // none ran: the heuristic's, untimed
  chosen = name(*best);
  us = ms[*best] * 1000;
  return best;
}

} // namespace tc::cuda
