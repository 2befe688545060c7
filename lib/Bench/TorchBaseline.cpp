#include "tc/Bench/TorchBaseline.h"
#include "tc/Bench/Subprocess.h"
#include "llvm/Support/JSON.h"
#include <filesystem>

namespace tc::bench {

bool TorchBaseline::available() const {
  if (!std::filesystem::exists(script_))
    return false;
  return runProcess({python_, "-c", "import torch"}, 120).ok();
}

std::vector<BenchResult> TorchBaseline::time(const BenchModel &model, const std::string &precision,
                                             const std::vector<int64_t> &shape,
                                             const std::string &dtype) const {
  std::string dims;
  for (int64_t d : shape)
    dims += (dims.empty() ? "" : ",") + std::to_string(d);
  // bench-gpu.py's modes: "eager" and "inductor" (torch.compile()).
  ProcessResult p =
      runProcess({python_, script_, "--torch-only", "--models", model.recipe, "--precision",
                  precision, "--input-shape", dims, "--input-dtype", dtype, "--iterations",
                  std::to_string(iterations_), "--device", device_, "--modes", "eager,inductor"},
                 timeout_);
  std::vector<BenchResult> rows;
  auto failAll = [&](const std::string &why) {
    for (const char *mode : kModes) {
      BenchResult r;
      r.mode = mode;
      r.precision = precision;
      r.reason = p.timedOut ? "timeout" : "torch";
      r.error = why;
      rows.push_back(r);
    }
    return rows;
  };
  if (!p.ok())
    return failAll("bench-gpu.py: " + p.errorLine());
  // The last line of stdout is the JSON object; PyTorch may print before it.
  std::string last = p.out.substr(0, p.out.find_last_not_of("\n") + 1);
  last = last.substr(last.find_last_of('\n') + 1);
  auto v = llvm::json::parse(last);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o) {
    if (!v)
      llvm::consumeError(v.takeError());
    return failAll("bench-gpu.py --torch-only printed no JSON");
  }
  for (const char *mode : kModes) {
    std::string key = mode == std::string("torch-eager") ? "eager" : "inductor";
    BenchResult r;
    r.mode = mode;
    r.precision = precision;
    const llvm::json::Object *m = o->getObject(key);
    if (!m || m->getString("error")) {
      r.reason = "torch";
      r.error = m ? m->getString("error")->str() : "no '" + key + "' result";
    } else {
      r.passed = true;
      r.latencyMs = m->getNumber("ms");
      r.p10Ms = m->getNumber("p10_ms");
      r.p90Ms = m->getNumber("p90_ms");
      r.compileS = m->getNumber("compile_s");
      if (auto peak = m->getInteger("peak_bytes"))
        r.peakBytes = *peak;
      r.memoryKind = "device";
    }
    rows.push_back(r);
  }
  return rows;
}

} // namespace tc::bench
