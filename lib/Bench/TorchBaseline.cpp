#include "tc/Bench/TorchBaseline.h"
#include "LastJsonLine.h"
#include "tc/Bench/Subprocess.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <filesystem>

namespace tc::bench {

namespace {
std::string joined(const std::vector<int64_t> &xs) {
  std::string s;
  for (int64_t x : xs)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
} // namespace

bool TorchBaseline::available() const {
  if (!std::filesystem::exists(script_))
    return false;
  return runProcess({python_, script_, "--check-torch"}, 120).ok();
}

std::string TorchBaseline::exportModel(const BenchModel &model, const std::string &dir,
                                       const std::vector<int64_t> &batches) const {
  ProcessResult p = runProcess({python_, script_, "--export-for-bench", dir, "--models",
                                model.recipe, "--batches", joined(batches)},
                               timeout_);
  return p.ok() ? "" : "bench-gpu.py --export-for-bench: " + p.errorLine();
}

std::vector<BenchResult> TorchBaseline::time(const BenchModel &model, const std::string &precision,
                                             const std::vector<int64_t> &shape,
                                             const std::string &dtype,
                                             const std::string &inputDir) const {
  std::vector<const TorchMode *> modes;
  std::string scriptModes;
  for (const TorchMode &m : kTorchModes)
    if (std::find(modes_.begin(), modes_.end(), m.row) != modes_.end()) {
      modes.push_back(&m);
      scriptModes += (scriptModes.empty() ? "" : ",") + std::string(m.script);
    }
  std::vector<std::string> argv(
      {python_, script_, "--torch-only", "--models", model.recipe, "--precision", precision,
       "--input-shape", joined(shape), "--input-dtype", dtype, "--iterations",
       std::to_string(iterations_), "--device", device_, "--modes", scriptModes});
  if (!inputDir.empty()) {
    argv.push_back("--inputs");
    argv.push_back(inputDir);
  }
  ProcessResult p = runProcess(argv, timeout_);
  std::vector<BenchResult> rows;
  auto failAll = [&](const std::string &why) {
    for (const TorchMode *mode : modes) {
      BenchResult r;
      r.mode = mode->row;
      r.precision = precision;
      r.reason = p.timedOut ? "timeout" : "torch";
      r.error = why;
      rows.push_back(r);
    }
    return rows;
  };
  if (!p.ok())
    return failAll("bench-gpu.py: " + p.errorLine());
  std::optional<llvm::json::Value> v = lastJsonLine(p.out);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o)
    return failAll("bench-gpu.py --torch-only printed no JSON");
  std::optional<double> ampErr = precision == "amp" ? o->getNumber("amp_err") : std::nullopt;
  for (const TorchMode *mode : modes) {
    BenchResult r;
    r.mode = mode->row;
    r.precision = precision;
    const llvm::json::Object *m = o->getObject(mode->script);
    if (!m || m->getString("error")) {
      r.reason = "torch";
      r.error = m ? m->getString("error")->str() : "no '" + std::string(mode->script) + "' result";
    } else {
      r.passed = true;
      r.latencyMs = m->getNumber("ms");
      r.p10Ms = m->getNumber("p10_ms");
      r.p90Ms = m->getNumber("p90_ms");
      r.torchAmpErr = ampErr;
      r.compileS = m->getNumber("compile_s");
      if (auto peak = m->getInteger("peak_bytes")) { // torch.cuda.max_memory_allocated
        r.peakBytes = *peak;
        r.memoryKind = "device";
      }
    }
    rows.push_back(r);
  }
  return rows;
}

std::optional<double> TorchBaseline::ampError(const BenchModel &model,
                                              const std::string &inputDir) const {
  ProcessResult p =
      runProcess({python_, script_, "--torch-only", "--models", model.recipe, "--precision", "amp",
                  "--device", device_, "--modes", "", "--inputs", inputDir},
                 timeout_);
  std::optional<llvm::json::Value> v = p.ok() ? lastJsonLine(p.out) : std::nullopt;
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  return o ? o->getNumber("amp_err") : std::nullopt;
}

} // namespace tc::bench
