// The CPU backend's runtime half in the registry: a loaded artifact as a
// thin adapter over CpuModel (lib/Runtime/CPU). In tcTargetRuntime: no
// compiler library.
#include "../ModelExecutable.h"
#include "tc/Runtime/CpuModel.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <fstream>
#include <unistd.h>

namespace tc {

namespace {

class CpuExecutable : public ModelExecutable<CpuModel> {
public:
  using ModelExecutable::ModelExecutable;
  std::vector<StepTime> stepProfile() const override {
    std::vector<StepTime> out;
    for (const CpuModel::StepProfile &p : m_->stepProfile())
      out.push_back({p.step, p.meanSeconds * 1e3});
    return out;
  }
  StepCounts steps() const override {
    return {m_->kernelSteps(), m_->librarySteps(), m_->moveSteps(), m_->fallbackSteps()};
  }
  RunEvents lastRun() const override { return {m_->plannedShape(), false, false}; }
  std::string latencyNote() const override {
    return ", " + std::to_string(m_->threads()) + " threads";
  }
  void printJson(std::ostream &os) const override {
    os << ", \"threads\": " << m_->threads() << ", \"kernel_steps\": " << m_->kernelSteps()
       << ", \"library_steps\": " << m_->librarySteps() << ", \"copy_steps\": " << m_->moveSteps()
       << ", \"fallback_steps\": " << m_->fallbackSteps()
       << ", \"arena_bytes\": " << m_->arenaBytes();
  }
  void printSummary(std::ostream &os) const override {
    os << "steps: " << m_->kernelSteps() << " generated kernels, " << m_->librarySteps()
       << " library calls, " << m_->moveSteps() << " copies, " << m_->fallbackSteps()
       << " on the reference kernels; "
       << (m_->arenaBytes() ? "one arena of " + std::to_string(m_->arenaBytes()) + " bytes"
                            : std::string("no arena (sizes known only at run time)"))
       << "\n";
  }
  DevicePeaks peaks() const override { return cpuPeaks(m_->threads()); }
};

} // namespace

std::vector<TargetOption> CpuRunOptions() {
  return {{"threads",
           "N",
           "CPU artifacts: threads that split each kernel (default: one per hardware thread)",
           {}}};
}

std::unique_ptr<Executable> loadCpuExecutable(Artifact artifact,
                                              const TargetOptionValues &runOptions, int) {
  unsigned threads = 0;
  if (auto t = runOptions.find("threads"); t != runOptions.end()) {
    const std::string &v = t->second;
    if (v.empty() || v.size() > 6 || !std::all_of(v.begin(), v.end(), ::isdigit))
      fail("--threads wants a number of threads, not '", v, "'");
    threads = unsigned(std::stoul(v));
  }
  return std::make_unique<CpuExecutable>(CpuModel::load(std::move(artifact), kCpuTarget, threads));
}

void CpuOpenDevice() {} // this machine's CPU runs it (CpuModel::load checks its features)

std::string CpuDeviceName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2) + " (" +
             std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))) + " threads)";
  return "";
}

} // namespace tc
