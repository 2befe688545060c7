#include "tc/Bench/ToolSteps.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <filesystem>

namespace tc::bench {

std::string ToolSteps::path(const std::string &tool) const {
  return (std::filesystem::path(binDir_) / tool).string();
}

std::optional<Failure> ToolSteps::run(const std::string &tool, const std::vector<std::string> &args,
                                      const char *reason, ProcessResult &proc) const {
  std::vector<std::string> argv{path(tool)};
  argv.insert(argv.end(), args.begin(), args.end());
  proc = runProcess(argv, timeout_);
  if (proc.ok())
    return std::nullopt;
  if (proc.timedOut)
    return Failure{"timeout", tool + " " + proc.errorLine()};
  std::string line = proc.errorLine();
  // Tools start their errors with their name; a crash does not.
  if (line.rfind(tool, 0) != 0)
    line = tool + ": " + line;
  return Failure{reason, line};
}

int64_t countHostSteps(const Artifact &a) {
  const MemoryBuffer *s = a.section(kSectionHostSteps);
  if (!s)
    return 0;
  std::string_view text = s->str();
  return int64_t(std::count(text.begin(), text.end(), '\n'));
}

std::optional<RunReport> parseRunReport(const std::string &json, std::string &error) {
  auto v = llvm::json::parse(json);
  if (!v) {
    error = llvm::toString(v.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *o = v->getAsObject();
  if (!o || !o->getBoolean("ok")) {
    error = "not a tc-run report";
    return std::nullopt;
  }
  RunReport r;
  r.ok = *o->getBoolean("ok");
  if (const llvm::json::Array *outs = o->getArray("outputs"))
    for (const llvm::json::Value &line : *outs)
      if (auto s = line.getAsString(); s && s->contains("MISMATCH")) {
        r.mismatch = s->str();
        break;
      }
  // CUDA reports device time (CUDA events) beside host wall time; the
  // device time is what the GPU took, without launch and copy noise.
  const llvm::json::Object *lat = o->getObject("device_ms");
  if (!lat)
    lat = o->getObject("latency_ms");
  if (lat) {
    r.medianMs = lat->getNumber("median").value_or(0);
    // Reports without p10 (older tc-run) fall back to the minimum.
    r.p10Ms = lat->getNumber("p10").value_or(lat->getNumber("min").value_or(0));
    r.p90Ms = lat->getNumber("p90").value_or(0);
  }
  r.device = o->getString("device").value_or("").str();
  if (auto peak = o->getInteger("peak_device_bytes"))
    r.peakDeviceBytes = *peak;
  r.arenaBytes = o->getInteger("arena_bytes").value_or(0);
  if (auto n = o->getInteger("fallback_steps"))
    r.fallbackSteps = *n;
  r.cudaGraph = o->getBoolean("cuda_graph");
  return r;
}

} // namespace tc::bench
