// Measured algorithm choice for one library call (tc-codegen --tune on a
// GPU; LibraryTuning.h holds what is recorded). A call's create() is handed
// a CallTuning: a recorded choice to apply (from the artifact, or a cache
// hit), or a Tuner that times its candidates on the device and keeps the
// fastest. A recorded choice the library turns down leaves the heuristic's
// and says why (`rejected`).
#pragma once
#include "tc/CodeGen/LibraryTuning.h"
#include "tc/Runtime/CudaDriver.h"
#include <functional>
#include <string>

namespace tc::cuda {

// Times candidates on one stream: a few warm runs, then the mean of
// kTimedRuns between two events.
class Tuner {
public:
  static constexpr int kWarmRuns = 2, kTimedRuns = 5;
  // How many of the heuristic's candidates each library offers.
  static constexpr int kTopK = 8;
  explicit Tuner(CUstream stream);
  ~Tuner();
  Tuner(const Tuner &) = delete;
  Tuner &operator=(const Tuner &) = delete;
  // Mean ms of `enqueue` on the stream; < 0 when it throws (the candidate is
  // passed over) or the driver has no events.
  double timeMs(const std::function<void()> &enqueue);
  // A workspace of at least `bytes` for the candidates (grown, never shrunk).
  CUdeviceptr workspace(size_t bytes);
  // Fills `bytes` at `p` with random f16 values in [0.5, 1) (as f32 or bf16
  // words: small normal numbers, never NaN or denormal).
  void fillRandom(CUdeviceptr p, size_t bytes);
  CUstream stream() const { return stream_; }
  double timingMs = 0; // spent timing, all calls

private:
  CUstream stream_;
  CUevent start_ = nullptr, stop_ = nullptr;
  DeviceMemory workspace_;
};

struct CallTuning {
  const TunedCall *recorded = nullptr; // apply this choice
  Tuner *tuner = nullptr;              // else time candidates (nullptr: the heuristic's)
  Tf32 tf32 = Tf32::None;
  // The candidates are a generated kernel's variants, not a library's
  // algorithms (the notes' words).
  bool kernel = false;
  // Set by create():
  std::string chosen; // the choice made, in the recorded form ("" : the heuristic's, untimed)
  double us = 0;
  std::string rejected; // why `recorded` was turned down
  // Picks among `count` candidates: the recorded one (`matches`), else the
  // tuner's fastest (`enqueue(i)` runs candidate i), else 0 (the heuristic's
  // first). `name(i)` is candidate i's recorded form. nullopt when count is 0.
  std::optional<size_t> pick(size_t count, const std::function<std::string(size_t)> &name,
                             const std::function<void(size_t)> &enqueue);
};

} // namespace tc::cuda
