#include "tc/Bench/TrainRunner.h"
#include "tc/Bench/LossRule.h"
#include "tc/Bench/ToolSteps.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include "tc/Target/Target.h"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace tc::bench {

namespace {

// Training batches: test_data_set_* with the labels (input_1.pb). An
// inference export's sets (input_0.pb, output_0.pb) are not.
bool hasBatches(const fs::path &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return false;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("test_data_set_", 0) == 0 &&
        fs::is_regular_file(e.path() / "input_1.pb", ec))
      return true;
  return false;
}

// The value at fraction q of the sorted `xs` (nearest rank).
double quantile(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  return xs[size_t(std::lround(q * double(xs.size() - 1)))];
}

// What tc-run --train --log-every 1 printed.
struct TcSteps {
  std::vector<double> losses, ms; // per step
  std::vector<double> scales;     // fp16: the loss scale after each step
  std::optional<int64_t> peakBytes;
};

TcSteps parseTrainLog(const ProcessResult &p) {
  TcSteps t;
  static const std::regex step(
      R"(^step \d+/\d+  loss (\S+)  (\S+) samples/s(?:  loss scale (\S+))?$)");
  static const std::regex samples(R"(steps of (\d+) samples)");
  static const std::regex peak(R"(peak device memory (\S+) MiB)");
  std::smatch m;
  double perStep = 1;
  if (std::regex_search(p.err, m, samples))
    perStep = std::stod(m[1]);
  std::istringstream out(p.out);
  for (std::string line; std::getline(out, line);)
    if (std::regex_match(line, m, step)) {
      t.losses.push_back(std::strtod(m[1].str().c_str(), nullptr));
      double rate = std::strtod(m[2].str().c_str(), nullptr);
      t.ms.push_back(rate > 0 ? 1e3 * perStep / rate : NAN);
      if (m[3].matched)
        t.scales.push_back(std::strtod(m[3].str().c_str(), nullptr));
    }
  if (std::regex_search(p.err, m, peak))
    t.peakBytes = int64_t(std::stod(m[1]) * (1 << 20));
  return t;
}

class TrainModelRun {
public:
  TrainModelRun(const Suite &suite, const BenchModel &model, const RunnerOptions &opts,
                const TrainOptions &train, Progress &progress,
                const std::function<void(const BenchResult &)> &emit)
      : suite_(suite), model_(model), opts_(opts), train_(train),
        tools_(opts.binDir, opts.timeoutSeconds), progress_(progress), emit_(emit) {
    std::string folder = model.name;
    for (char &c : folder)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
        c = '_';
    dir_ = fs::path(opts.workDir) / ("train." + folder);
    batch_ = opts.batch.value_or(model.trainBatch ? model.trainBatch : suite.batch);
  }

  void run() {
    try {
      fs::create_directories(dir_);
      if (prepare())
        for (const std::string &p : opts_.precisions)
          runPrecision(p);
    } catch (const std::exception &e) {
      failRest({"run", std::string("tc-bench: ") + e.what()});
    }
  }

private:
  std::vector<std::string> torchRows() const {
    std::vector<std::string> rows;
    if (train_.torch)
      for (const TorchTrainMode &m : kTorchTrainModes)
        if (std::count(train_.torch->modes().begin(), train_.torch->modes().end(), m.flag))
          rows.push_back(m.row);
    return rows;
  }
  BenchResult row(const std::string &mode, const std::string &precision) const {
    BenchResult r;
    r.kind = kTrain;
    r.model = model_.name;
    r.group = model_.group;
    r.mode = mode;
    r.precision = precision;
    r.batch = batch_;
    return r;
  }
  void report(const BenchResult &r) {
    done_.push_back(r.precision + " " + r.mode);
    progress_.line(formatTrainResult(r));
    emit_(r);
    progress_.advance();
  }
  // Every row not yet reported fails for the same reason.
  void failRest(const Failure &f) {
    for (const std::string &p : opts_.precisions) {
      std::vector<std::string> modes = torchRows();
      modes.push_back("default");
      for (const std::string &m : modes)
        if (!std::count(done_.begin(), done_.end(), p + " " + m)) {
          BenchResult r = row(m, p);
          r.reason = f.reason;
          r.error = f.error;
          report(r);
        }
    }
  }
  bool prepare();
  void runPrecision(const std::string &precision);
  BenchResult runTc(const std::string &precision);

  const Suite &suite_;
  BenchModel model_;
  const RunnerOptions &opts_;
  const TrainOptions &train_;
  ToolSteps tools_;
  Progress &progress_;
  const std::function<void(const BenchResult &)> &emit_;
  fs::path dir_;
  int64_t batch_;
  std::string data_, ir_;
  double importSeconds_ = 0;
  std::vector<double> tcScales_;  // the last tc run's loss scale after each step (fp16)
  std::vector<std::string> done_; // "precision mode" reported
};

bool TrainModelRun::prepare() {
  if (model_.onnxPath.empty() && train_.exporter && !model_.recipe.empty()) {
    progress_.start(model_.name + " export");
    std::string why = train_.exporter->exportModel(model_, opts_.exportDir, batch_);
    if (why.empty() && !locateExported(model_, opts_.exportDir))
      why = "bench-train.py --export-for-train wrote no " + opts_.exportDir + "/" + model_.name +
            "/model.onnx";
    if (!why.empty()) {
      failRest({"export", why});
      return false;
    }
  }
  if (model_.onnxPath.empty()) {
    failRest({"missing", model_.missing});
    return false;
  }
  data_ = trainDataDir(model_.onnxPath);
  if (data_.empty()) {
    failRest({"missing", "no training batches (test_data_set_* with input_1.pb, the labels) "
                         "beside " +
                             model_.onnxPath});
    return false;
  }
  // The batch the rows record: the one trained on (input 0's leading dim).
  std::vector<std::string> sets;
  for (const fs::directory_entry &e : fs::directory_iterator(data_))
    if (e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  HostTensor x = readTensorFile((fs::path(sets.front()) / "input_0.pb").string()).tensor;
  if (x.rank() > 0)
    batch_ = x.shape()[0];
  progress_.start(model_.name + " import");
  ir_ = (dir_ / "model.tcbc").string();
  ProcessResult proc;
  if (auto f = tools_.run("tc-import", {model_.onnxPath, "-o", ir_}, "import", proc)) {
    failRest(*f);
    return false;
  }
  importSeconds_ = proc.wallSeconds;
  return true;
}

void TrainModelRun::runPrecision(const std::string &precision) {
  bool amp = precision == "amp";
  // PyTorch first: its losses are what tc's are checked against.
  TorchTraining torch;
  if (train_.torch) {
    progress_.start(model_.name + " PyTorch train " + precision);
    torch = train_.torch->train(model_, model_.onnxPath, data_, precision, train_.steps,
                                opts_.warmup, opts_.threads);
  }
  const TorchSteps *eager = nullptr;
  if (train_.torch && torch.error.empty() && torch.modes.count("eager") &&
      torch.modes["eager"].error.empty())
    eager = &torch.modes["eager"];
  // The reference losses (fp32: PyTorch eager's, or PyTorch f64 eager's
  // where asked; amp: PyTorch fp32 eager's) and PyTorch's own distance from
  // a reference one precision up: its farthest row's (LossRule.h).
  std::optional<std::vector<double>> reference;
  std::optional<double> torchAmp;
  bool f64 = !amp && !torch.f64EagerLosses.empty();
  if (eager && !amp)
    reference = f64 ? torch.f64EagerLosses : eager->losses;
  if (eager && amp && !torch.fp32EagerLosses.empty())
    reference = torch.fp32EagerLosses;
  if (eager && reference && (amp || f64)) {
    std::vector<const std::vector<double> *> rows; // PyTorch's rows in this precision
    for (const auto &[flag, steps] : torch.modes)
      if (steps.error.empty())
        rows.push_back(&steps.losses);
    torchAmp = torchSpread(rows, *reference);
  }
  // Checks `r`'s losses against the reference (fails it with "losses").
  auto check = [&](BenchResult &r, const std::vector<double> &losses) {
    r.trainSteps = int64_t(losses.size());
    r.losses = joinLosses(losses);
    r.passed = true;
    if (!reference)
      return;
    r.relErr = lastLossDistance(losses, *reference);
    r.torchAmpErr = torchAmp;
    r.errBound = lossBound(torchAmp);
    if (!(*r.relErr <= *r.errBound)) {
      r.passed = false;
      r.reason = "losses";
      r.error = describeLossCheck(*r.relErr, *r.errBound, torchAmp, losses.size(), f64);
    }
  };
  std::vector<BenchResult> torchRows;
  if (train_.torch)
    for (const TorchTrainMode &m : kTorchTrainModes) {
      if (!std::count(train_.torch->modes().begin(), train_.torch->modes().end(), m.flag))
        continue;
      BenchResult r = row(m.row, precision);
      const TorchSteps &s = torch.modes[m.flag];
      if (!torch.error.empty() || !s.error.empty()) {
        r.reason = torch.timedOut ? "timeout" : "torch";
        r.error = torch.error.empty() ? s.error : torch.error;
      } else {
        check(r, s.losses);
        // PyTorch fp32 eager is the reference itself: nothing to hold it to.
        if (&s == eager && !amp && !f64)
          r.relErr = r.errBound = std::nullopt;
        r.latencyMs = s.ms;
        r.p10Ms = s.p10Ms;
        r.p90Ms = s.p90Ms;
        r.compileS = s.compileS;
        r.peakBytes = s.peakBytes;
        r.memoryKind = s.peakBytes ? "device" : "";
      }
      torchRows.push_back(r);
    }
  BenchResult tc = runTc(precision);
  if (tc.reason.empty() && !tc.losses.empty()) {
    std::vector<double> losses;
    std::stringstream in(tc.losses);
    for (std::string l; std::getline(in, l, ',');)
      losses.push_back(std::strtod(l.c_str(), nullptr));
    check(tc, losses);
    if (!tc.passed && eager)
      tc.error += describeSkips(tcScales_, eager->scales);
    if (!reference) {
      tc.passed = false;
      tc.reason = "reference";
      tc.error = "no PyTorch losses to compare with" +
                 std::string(!train_.torch          ? " (--torch off, or torch missing)"
                             : !torch.error.empty() ? ": " + torch.error
                                                    : ": PyTorch eager failed");
    }
  }
  // The ratios of PyTorch's step times and peaks to each row's.
  auto torchRow = [&](const char *mode) -> const BenchResult * {
    for (const BenchResult &r : torchRows)
      if (r.mode == mode && r.latencyMs)
        return &r;
    return nullptr;
  };
  auto relate = [&](BenchResult &r) {
    if (!r.latencyMs || *r.latencyMs <= 0)
      return;
    if (const BenchResult *e = torchRow("torch-eager")) {
      r.vsTorchEager = *e->latencyMs / *r.latencyMs;
      if (e->peakBytes && r.peakBytes && *r.peakBytes > 0)
        r.memoryVsTorch = double(*e->peakBytes) / double(*r.peakBytes);
    }
    if (const BenchResult *c = torchRow("torch-compile"))
      r.vsTorchCompile = *c->latencyMs / *r.latencyMs;
  };
  for (BenchResult &r : torchRows) {
    relate(r);
    report(r);
  }
  relate(tc);
  report(tc);
}

BenchResult TrainModelRun::runTc(const std::string &precision) {
  progress_.start(model_.name + " train " + precision);
  BenchResult r = row("default", precision);
  auto failed = [&](const Failure &f) {
    r.reason = f.reason;
    r.error = f.error;
    return r;
  };
  std::ostringstream optimizer;
  optimizer << "--optimizer=adamw:lr=" << kTrainLr << ",weight-decay=" << kTrainWeightDecay;
  std::string opt = (dir_ / ("train." + precision + ".tcbc")).string();
  std::string artifact = (dir_ / ("train." + precision + ".tcx")).string();
  std::vector<std::string> args{"--train", "--loss=cross-entropy", optimizer.str(), "-O2",
                                "--target=" + opts_.target};
  if (precision == "amp")
    args.push_back("--precision=fp16");
  args.insert(args.end(), model_.trainArgs.begin(), model_.trainArgs.end());
  args.insert(args.end(), opts_.optArgs.begin(), opts_.optArgs.end());
  for (const std::string &a : {ir_, std::string("-o"), opt})
    args.push_back(a);
  ProcessResult proc;
  if (auto f = tools_.run("tc-opt", args, "compile", proc))
    return failed(*f);
  double optSeconds = proc.wallSeconds, seconds = importSeconds_ + optSeconds;
  std::vector<std::string> cg{"--target=" + opts_.target, opt, "-o", artifact};
  if (!opts_.level.empty())
    cg.push_back(std::string("--") + requireTarget(opts_.target).levelFlag + "=" + opts_.level);
  // fp32 against PyTorch with TF32 off: tc's convs and matmuls in full fp32
  // too (the GPU target rounds convs to TF32 by default, as cuDNN does).
  if (precision == "fp32" && requireTarget(opts_.target).gpu)
    cg.push_back("--allow-tf32=none");
  cg.insert(cg.end(), opts_.codegenArgs.begin(), opts_.codegenArgs.end());
  if (auto f = tools_.run("tc-codegen", cg, "compile", proc))
    return failed(*f);
  r.compileS = seconds + proc.wallSeconds;
  r.compileParts = std::array<double, 3>{importSeconds_, optSeconds, proc.wallSeconds};
  r.hostSteps = countHostSteps(readArtifact(MemoryBuffer::open(artifact)));
  std::vector<std::string> run{
      artifact, "--train", std::to_string(train_.steps), "--log-every", "1", "--data", data_};
  if (opts_.threads)
    run.push_back("--threads=" + std::to_string(opts_.threads));
  if (auto f = tools_.run("tc-run", run, "run", proc))
    return failed(*f);
  TcSteps steps = parseTrainLog(proc);
  tcScales_ = steps.scales;
  if (steps.losses.size() != size_t(train_.steps))
    return failed({"run", "tc-run --train printed " + std::to_string(steps.losses.size()) +
                              " losses for " + std::to_string(train_.steps) + " steps"});
  // Timed: the steps after the warm-up (all of them when there are no more).
  std::vector<double> timed(
      steps.ms.begin() +
          std::min<std::ptrdiff_t>(opts_.warmup, std::ptrdiff_t(steps.ms.size()) - 1),
      steps.ms.end());
  r.latencyMs = quantile(timed, 0.5);
  r.p10Ms = quantile(timed, 0.1);
  r.p90Ms = quantile(timed, 0.9);
  r.rssBytes = int64_t(proc.peakRssBytes);
  if (steps.peakBytes) {
    r.peakBytes = steps.peakBytes;
    r.memoryKind = "device";
  }
  r.losses = joinLosses(steps.losses);
  r.trainSteps = int64_t(steps.losses.size());
  return r;
}

} // namespace

std::string trainDataDir(const std::string &onnxPath) {
  fs::path onnx(onnxPath);
  fs::path dir =
      onnx.filename() == "model.onnx" ? onnx.parent_path() : onnx.parent_path() / onnx.stem();
  return hasBatches(dir) ? dir.string() : "";
}

size_t countTrainUnits(const Suite &suite, const RunnerOptions &opts, const TrainOptions &train) {
  size_t torch = train.torch ? train.torch->modes().size() : 0;
  return suite.models.size() * opts.precisions.size() * (1 + torch);
}

void runTrainSuite(const Suite &suite, const RunnerOptions &opts, const TrainOptions &train,
                   Progress &progress, const std::function<void(const BenchResult &)> &onResult) {
  for (const BenchModel &m : suite.models) {
    TrainModelRun run(suite, m, opts, train, progress, onResult);
    run.run();
  }
}

std::string formatTrainResult(const BenchResult &r) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << r.model << " " << r.mode << " " << r.precision << " b" << r.batch << " train: ";
  if (!r.passed)
    o << "FAIL " << r.reason << ": " << r.error;
  else
    o << "pass";
  if (r.latencyMs)
    o << (r.passed ? " " : "; ") << *r.latencyMs << " ms/step (p10 " << r.p10Ms.value_or(0)
      << ", p90 " << r.p90Ms.value_or(0) << ")";
  if (!r.passed)
    return o.str();
  o.precision(2);
  if (r.vsTorchEager)
    o << ", " << *r.vsTorchEager << "x torch eager";
  if (r.vsTorchCompile)
    o << ", " << *r.vsTorchCompile << "x torch.compile";
  if (r.compileS)
    o << ", compile " << *r.compileS << " s";
  if (r.compileParts)
    o << " (import " << (*r.compileParts)[0] << " + tc-opt " << (*r.compileParts)[1]
      << " + tc-codegen " << (*r.compileParts)[2] << ")";
  if (r.peakBytes)
    o << ", peak " << double(*r.peakBytes) / (1 << 20) << " MiB";
  if (r.memoryVsTorch)
    o << ", memory " << *r.memoryVsTorch << "x torch";
  if (r.hostSteps && *r.hostSteps)
    o << ", " << *r.hostSteps << " host steps";
  if (r.relErr && r.errBound && r.trainSteps)
    o << ", "
      << describeLossCheck(*r.relErr, *r.errBound, r.torchAmpErr, size_t(*r.trainSteps),
                           r.precision == "fp32" && r.torchAmpErr); // fp32's is vs f64's
  return o.str();
}

} // namespace tc::bench
