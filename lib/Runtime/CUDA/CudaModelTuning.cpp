// CudaModel's library algorithm choice: the environment key, the recorded
// choice (or the tuner) each library call is handed, what it reports, and
// tune() (tc-codegen --tune).
#include "CudaShapePlan.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Support/Error.h"
#include <algorithm>

namespace tc {

TuningEnv CudaModel::tuningEnv() const {
  TuningEnv e;
  e.gpu = device_;
  e.cc = cc_;
  try {
    e.cudnn = cuda::Cudnn::version();
  } catch (const Error &) {
  }
  try {
    e.cublasLt = cuda::CublasLt::version();
  } catch (const Error &) {
  }
  const cuda::Driver &d = cuda::driver();
  if (d.driverGetVersion)
    d.driverGetVersion(&e.driver);
  return e;
}

void CudaModel::tuningNote(const std::string &note) {
  if (std::find(tuningNotes_.begin(), tuningNotes_.end(), note) == tuningNotes_.end())
    tuningNotes_.push_back(note);
}

cuda::CallTuning CudaModel::callTuning(const std::string &key) {
  cuda::CallTuning t;
  t.tf32 = tuning_.tf32;
  if (tuneRun_) {
    if (const TunedCall *hit = tuneRun_->cache.find(env_, key)) {
      t.recorded = hit;
    } else {
      t.tuner = &tuneRun_->tuner;
    }
    return t;
  }
  if (tuning_.calls.empty())
    return t;
  if (env_.empty())
    env_ = tuningEnv().key();
  if (tuning_.env != env_)
    tuningNote(artifact_.file + ": algorithms tuned on '" + tuning_.env + "', this machine is '" +
               env_ + "': the heuristics' choices are used");
  else if (auto it = tuning_.calls.find(key); it != tuning_.calls.end())
    t.recorded = &it->second;
  return t;
}

std::string CudaModel::tunedText(const std::string &key, const cuda::CallTuning &t) {
  if (!t.rejected.empty()) {
    const char *what = t.kernel ? "variant" : "algorithm";
    tuningNote(artifact_.file + ": the recorded " + what + " of " + key + " was turned down (" +
               t.rejected + "): the " + (t.kernel ? "default" : "heuristic's") + " is used");
    if (tuneRun_) // timed again by the next --tune
      tuneRun_->cache.erase(env_, key);
    return std::string(" (recorded ") + what + " turned down)";
  }
  if (t.chosen.empty())
    return "";
  if (tuneRun_ && !tuneRun_->winners.count(key)) {
    if (t.recorded) // not one this compile timed
      tuneRun_->hits.insert(key);
    tuneRun_->winners[key] = {t.chosen, t.us};
    tuneRun_->cache.put(env_, key, {t.chosen, t.us});
  }
  return " tuned(" + t.chosen + ")";
}

std::map<std::string, TunedCall> CudaModel::tune(TuningCache &cache, TuningSummary &summary) {
  env_ = tuningEnv().key();
  TuneRun run(work_, cache);
  tuneRun_ = &run;
  try {
    std::unique_ptr<ShapePlan> plan = makePlan({});
    if (!plan)
      fail(artifact_.file, ": --tune plans the static shape: the module has symbolic dims");
  } catch (...) {
    tuneRun_ = nullptr;
    throw;
  }
  tuneRun_ = nullptr;
  for (const auto &[key, won] : run.winners) {
    bool kernel = isKernelTuningKey(key);
    (kernel ? summary.kernels : summary.shapes) += 1;
    (kernel ? summary.kernelHits : summary.hits) += run.hits.count(key);
  }
  summary.timingMs += run.tuner.timingMs;
  return run.winners;
}

} // namespace tc
