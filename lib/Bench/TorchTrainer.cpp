#include "tc/Bench/TorchTrainer.h"
#include "LastJsonLine.h"
#include "tc/Bench/Subprocess.h"
#include "llvm/Support/JSON.h"
#include <filesystem>
#include <sstream>

namespace tc::bench {

namespace {
std::vector<double> numbers(const llvm::json::Array *a) {
  std::vector<double> out;
  if (a)
    for (const llvm::json::Value &v : *a)
      out.push_back(v.getAsNumber().value_or(std::nan("")));
  return out;
}

std::string str(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}
} // namespace

bool TorchTrainer::available() const {
  if (!std::filesystem::exists(script_))
    return false;
  return runProcess({python_, script_, "--check-torch"}, 120).ok();
}

std::string TorchTrainer::exportModel(const BenchModel &model, const std::string &dir,
                                      int64_t batch) const {
  ProcessResult p = runProcess({python_, script_, "--export-for-train", dir, "--models",
                                model.recipe, "--batch", std::to_string(batch)},
                               timeout_);
  return p.ok() ? "" : "bench-train.py --export-for-train: " + p.errorLine();
}

TorchTraining TorchTrainer::train(const BenchModel &model, const std::string &onnx,
                                  const std::string &dataDir, const std::string &precision,
                                  int steps, int warmup, unsigned threads) const {
  std::string modes;
  for (const std::string &m : modes_)
    modes += (modes.empty() ? "" : ",") + m;
  std::vector<std::string> argv{python_,
                                script_,
                                "--torch-train",
                                "--models",
                                model.recipe,
                                "--onnx",
                                onnx,
                                "--data",
                                dataDir,
                                "--steps",
                                std::to_string(steps),
                                "--warmup",
                                std::to_string(warmup),
                                "--precision",
                                precision,
                                "--modes",
                                modes,
                                "--device",
                                device_,
                                "--lr",
                                str(kTrainLr),
                                "--weight-decay",
                                str(kTrainWeightDecay)};
  if (threads) {
    argv.push_back("--threads");
    argv.push_back(std::to_string(threads));
  }
  if (f64Reference_ && precision == "fp32")
    argv.push_back("--f64-reference");
  ProcessResult p = runProcess(argv, timeout_);
  TorchTraining t;
  t.timedOut = p.timedOut;
  if (!p.ok()) {
    t.error = "bench-train.py: " + p.errorLine();
    return t;
  }
  std::optional<llvm::json::Value> v = lastJsonLine(p.out);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o) {
    t.error = "bench-train.py --torch-train printed no JSON";
    return t;
  }
  t.init = o->getString("init").value_or("").str();
  t.fp32EagerLosses = numbers(o->getArray("fp32_eager_losses"));
  t.f64EagerLosses = numbers(o->getArray("f64_eager_losses"));
  for (const std::string &mode : modes_) {
    TorchSteps &s = t.modes[mode];
    const llvm::json::Object *m = o->getObject(mode);
    if (!m || m->getString("error")) {
      s.error = m ? m->getString("error")->str() : "no '" + mode + "' result";
      continue;
    }
    s.losses = numbers(m->getArray("losses"));
    s.scales = numbers(m->getArray("scales"));
    s.ms = m->getNumber("ms");
    s.p10Ms = m->getNumber("p10_ms");
    s.p90Ms = m->getNumber("p90_ms");
    s.compileS = m->getNumber("compile_s");
    if (auto peak = m->getInteger("peak_bytes"))
      s.peakBytes = *peak;
  }
  return t;
}

} // namespace tc::bench
