#include "tc/Bench/Runner.h"
#include "tc/Analysis/ModelSummary.h"
#include "tc/Bench/AmpRule.h"
#include "tc/Bench/Tf32Rule.h"
#include "tc/Bench/ToolSteps.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/IR/Bytecode.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include "tc/Target/Target.h"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace tc::bench {

namespace {

bool isStaticMode(const std::string &mode) { return mode != "dynamic"; }

// "ci/mlp" -> "ci_mlp": one work folder per model.
std::string folderName(const std::string &model) {
  std::string s = model;
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
      c = '_';
  return s;
}

std::unique_ptr<Module> readModule(const std::string &path) {
  return readBytecode(MemoryBuffer::open(path));
}

struct Compiled {
  std::optional<Failure> failure;
  std::string artifact;
  double seconds = 0;       // tc-opt + tc-codegen
  uint64_t weightBytes = 0; // of the optimized IR (CPU memory estimate)
  int64_t hostSteps = 0;    // groups tc-codegen left to the host
  bool tf32 = false;        // fp32 held to the TF32 rule (Tf32Rule.h)
};

struct Reference {
  std::optional<Failure> failure;
  std::string dir; // a test_data_set: input_N.pb and output_N.pb
};

// One model through every mode and precision. Artifacts and reference data
// are made once and shared: cudagraphs runs default's artifact, every mode
// at a batch uses the same reference.
class ModelRun {
public:
  ModelRun(const Suite &suite, const BenchModel &model, const RunnerOptions &opts,
           Progress &progress, const std::function<void(const BenchResult &)> &emit)
      : suite_(suite), model_(model), opts_(opts), tools_(opts.binDir, opts.timeoutSeconds),
        progress_(progress), emit_(emit), dir_(fs::path(opts.workDir) / folderName(model.name)),
        batch_(opts.batch.value_or(suite.batch)) {}

  void run();

private:
  BenchResult row(const std::string &mode, const std::string &precision, int64_t batch) const {
    BenchResult r;
    r.model = model_.name;
    r.group = model_.group;
    r.mode = mode;
    r.precision = precision;
    r.batch = batch;
    return r;
  }
  void report(BenchResult r) {
    reported_.insert(r.precision + " " + r.mode);
    progress_.line(formatResult(r));
    emit_(r);
  }
  // Every remaining (precision, mode) fails for the same reason (the model
  // is missing or does not import): one row each, so every mode's pass rate
  // counts it.
  void failAll(const Failure &f);
  bool importModel();
  std::vector<std::string> dimFlags(int64_t batch) const;
  const Compiled &compile(int level, const std::string &precision, std::optional<int64_t> batch);
  const Reference &reference(int64_t batch);
  BenchResult runArtifact(const std::string &mode, const std::string &precision, int64_t batch,
                          const Compiled &c, bool graphs);
  void runTorch(const std::string &precision);
  // PyTorch AMP's own error on the reference inputs at `batch` (AmpRule.h):
  // from runTorch's rows at the suite's batch, else asked for; nullopt
  // without PyTorch.
  std::optional<double> torchAmpErr(int64_t batch, const std::string &inputDir);
  void runModes();
  // Speedup and memory ratio vs tc's eager baseline (same precision, batch).
  void relate(BenchResult &r) const;

  const Suite &suite_;
  BenchModel model_; // a copy: an export (--export) fills in its files
  const RunnerOptions &opts_;
  ToolSteps tools_;
  Progress &progress_;
  const std::function<void(const BenchResult &)> &emit_;
  fs::path dir_;
  int64_t batch_;
  std::string ir_; // the imported IR
  double importSeconds_ = 0;
  std::vector<std::string> symbols_; // symbolic dims of the signature
  std::vector<int64_t> input0Shape_; // input 0 at batch_, for PyTorch
  std::string input0Type_;
  std::map<int64_t, std::string> data_; // batch -> test_data_set with expected outputs
  std::map<std::string, Compiled> compiled_;
  std::map<int64_t, Reference> references_;
  std::set<std::string> reported_;                                  // "precision mode" with a row
  std::map<std::string, BenchResult> eager_;                        // by precision: the baseline
  std::map<std::string, std::map<std::string, BenchResult>> torch_; // precision -> mode -> row
  std::map<int64_t, std::optional<double>> torchAmpErr_;            // batch -> PyTorch AMP's error
};

void ModelRun::failAll(const Failure &f) {
  for (const std::string &p : opts_.precisions)
    for (const std::string &m : opts_.modes)
      if (!reported_.count(p + " " + m)) {
        BenchResult r = row(m, p, batch_);
        r.reason = f.reason;
        r.error = f.error;
        report(r);
        progress_.advance();
      }
}

bool ModelRun::importModel() {
  progress_.start(model_.name + " import");
  if (model_.onnxPath.empty() && opts_.exporter && !model_.recipe.empty()) {
    progress_.start(model_.name + " export");
    std::vector<int64_t> batches{batch_};
    for (int64_t b : opts_.dynamicBatches.value_or(suite_.dynamicBatches))
      if (std::find(batches.begin(), batches.end(), b) == batches.end())
        batches.push_back(b);
    std::string why = opts_.exporter->exportModel(model_, opts_.exportDir, batches);
    if (why.empty() && !locateExported(model_, opts_.exportDir))
      why = "bench-gpu.py --export-for-bench wrote no " + opts_.exportDir + "/" + model_.name +
            "/model.onnx";
    if (!why.empty()) {
      failAll({"export", why});
      return false;
    }
  }
  if (model_.onnxPath.empty()) {
    failAll({"missing", model_.missing});
    return false;
  }
  ir_ = (dir_ / "model.tcbc").string();
  ProcessResult proc;
  if (auto f = tools_.run("tc-import", {model_.onnxPath, "-o", ir_}, "import", proc)) {
    failAll(*f);
    return false;
  }
  importSeconds_ = proc.wallSeconds;
  // The signature, read here (tc-import wrote and verified it): which dims
  // are symbolic, and input 0's shape for PyTorch.
  auto m = readModule(ir_);
  const Function &f = m->main();
  for (const Value *arg : f.args)
    for (const Dim &d : arg->type.shape)
      if (d.isSymbolic() && std::find(symbols_.begin(), symbols_.end(), d.symbol) == symbols_.end())
        symbols_.push_back(d.symbol);
  if (!f.args.empty()) {
    input0Type_ = std::string(dtypeName(f.args[0]->type.dtype));
    for (const Dim &d : f.args[0]->type.shape)
      input0Shape_.push_back(d.isStatic() ? d.size : batch_);
    // Each test data set's batch: input 0's size at its first symbolic dim.
    const Shape &s = f.args[0]->type.shape;
    auto sym = std::find_if(s.begin(), s.end(), [](const Dim &d) { return d.isSymbolic(); });
    for (const std::string &dir : model_.dataDirs) {
      try {
        HostTensor t = readTensorFile((fs::path(dir) / "input_0.pb").string()).tensor;
        if (sym != s.end() && size_t(sym - s.begin()) < t.rank())
          data_.emplace(t.shape()[size_t(sym - s.begin())], dir);
      } catch (const Error &) {
        // unreadable test data: the reference executor makes new data
      }
    }
  }
  return true;
}

std::vector<std::string> ModelRun::dimFlags(int64_t batch) const {
  std::vector<std::string> flags;
  for (const std::string &s : symbols_) {
    flags.push_back("--dim");
    flags.push_back(s + "=" + std::to_string(batch));
  }
  return flags;
}

const Compiled &ModelRun::compile(int level, const std::string &precision,
                                  std::optional<int64_t> batch) {
  std::string key = "O" + std::to_string(level) + "." + precision +
                    (batch ? ".b" + std::to_string(*batch) : ".dyn");
  auto it = compiled_.find(key);
  if (it != compiled_.end())
    return it->second;
  Compiled &c = compiled_[key];
  std::string opt = (dir_ / (key + ".tcbc")).string();
  c.artifact = (dir_ / (key + ".tcx")).string();
  std::vector<std::string> args{"-O" + std::to_string(level), ir_, "-o", opt};
  // What the target adds before fusion (CUDA: channels-last) is a layout
  // optimization: not part of the op-by-op baseline.
  if (level > 0)
    args.push_back("--target=" + opts_.target);
  if (precision == "amp")
    args.push_back("--precision=fp16");
  if (batch)
    for (const std::string &f : dimFlags(*batch))
      args.push_back(f);
  args.insert(args.end(), opts_.optArgs.begin(), opts_.optArgs.end());
  ProcessResult proc;
  if ((c.failure = tools_.run("tc-opt", args, "compile", proc)))
    return c;
  c.seconds = proc.wallSeconds;
  std::vector<std::string> cg{"--target=" + opts_.target, opt, "-o", c.artifact};
  if (!opts_.level.empty())
    cg.push_back(std::string("--") + requireTarget(opts_.target).levelFlag + "=" + opts_.level);
  cg.insert(cg.end(), opts_.codegenArgs.begin(), opts_.codegenArgs.end());
  if ((c.failure = tools_.run("tc-codegen", cg, "compile", proc)))
    return c;
  c.seconds += proc.wallSeconds;
  c.weightBytes = summarize(*readModule(opt)).weightBytes;
  Artifact a = readArtifact(MemoryBuffer::open(c.artifact));
  c.hostSteps = countHostSteps(a);
  c.tf32 = precision == "fp32" && heldToTf32Rule(a);
  return c;
}

const Reference &ModelRun::reference(int64_t batch) {
  auto it = references_.find(batch);
  if (it != references_.end())
    return it->second;
  Reference &r = references_[batch];
  if (data_.count(batch)) {
    r.dir = data_[batch]; // the exporter's own outputs (PyTorch)
  } else {
    // Same random inputs for every mode; the reference executor's outputs.
    r.dir = (dir_ / ("data.b" + std::to_string(batch))).string();
    std::vector<std::string> args{"--target=ref", ir_,  "--random-inputs", "--seed", "1",
                                  "--output-dir", r.dir};
    for (const std::string &f : dimFlags(batch))
      args.push_back(f);
    ProcessResult proc;
    if ((r.failure = tools_.run("tc-run", args, "reference", proc)))
      return r;
  }
  // NaN never passes: an expected output with NaN would let a NaN through.
  for (int i = 0;; ++i) {
    fs::path out = fs::path(r.dir) / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(out))
      break;
    try {
      HostTensor t = readTensorFile(out.string()).tensor;
      if (isFloat(t.dtype()))
        for (int64_t k = 0; k < t.numElements(); ++k)
          if (std::isnan(t.getDouble(k))) {
            r.failure = Failure{"reference", out.string() + " holds NaN"};
            return r;
          }
    } catch (const Error &e) {
      r.failure = Failure{"reference", e.what()};
      return r;
    }
  }
  return r;
}

BenchResult ModelRun::runArtifact(const std::string &mode, const std::string &precision,
                                  int64_t batch, const Compiled &c, bool graphs) {
  BenchResult r = row(mode, precision, batch);
  auto failed = [&](const Failure &f) {
    r.reason = f.reason;
    r.error = f.error;
    return r;
  };
  if (c.failure)
    return failed(*c.failure);
  r.compileS = importSeconds_ + c.seconds;
  const Reference &ref = reference(batch);
  if (ref.failure)
    return failed(*ref.failure);
  std::vector<std::string> args{c.artifact,
                                "--inputs",
                                ref.dir,
                                "--iterations",
                                std::to_string(opts_.iterations),
                                "--warmup",
                                std::to_string(opts_.warmup),
                                "--report=json"};
  // fp32: tc-run checks every element. amp, and fp32 where TF32 may round:
  // tc-run writes its outputs and the bench applies the relative rule
  // (AmpRule.h, Tf32Rule.h) to them.
  bool amp = precision == "amp", relative = amp || c.tf32;
  std::string outDir =
      (dir_ / ("out." + mode + "." + precision + ".b" + std::to_string(batch))).string();
  std::ostringstream rt, at;
  rt << model_.rtol;
  at << model_.atol;
  for (const std::string &a : relative ? std::vector<std::string>{"--output-dir", outDir}
                                       : std::vector<std::string>{"--compare", ref.dir, "--rtol",
                                                                  rt.str(), "--atol", at.str()})
    args.push_back(a);
  const Target &target = requireTarget(opts_.target);
  if (*target.graphsFlag)
    args.push_back(std::string("--") + target.graphsFlag + (graphs ? "=on" : "=off"));
  if (opts_.threads)
    args.push_back("--threads=" + std::to_string(opts_.threads));
  ProcessResult proc;
  std::optional<Failure> f = tools_.run("tc-run", args, "run", proc);
  if (f && f->reason == "timeout")
    return failed(*f);
  // A numerics mismatch exits 1 with a full report; anything else without
  // one is a run failure (error, crash).
  std::string why;
  std::optional<RunReport> rep = parseRunReport(proc.out, why);
  if (!rep)
    return failed(f ? *f : Failure{"run", "tc-run: no JSON report: " + why});
  if (!rep->ok)
    return failed({"numerics", rep->mismatch.empty() ? "outputs differ" : rep->mismatch});
  if (f)
    return failed(*f);
  if (relative) {
    r.torchAmpErr = amp ? torchAmpErr(batch, ref.dir) : std::nullopt;
    try {
      r.relErr = worstRelativeError(outDir, ref.dir);
    } catch (const Error &e) {
      return failed({"run", std::string("tc-bench: ") + e.what()});
    }
    fs::remove_all(outDir); // read: no need to keep a copy of every mode's outputs
    r.errBound = amp ? ampBound(model_.ampErr, r.torchAmpErr) : model_.tf32Err;
    if (!(*r.relErr <= *r.errBound))
      return failed({"numerics", amp ? describeAmpCheck(*r.relErr, *r.errBound, r.torchAmpErr)
                                     : describeTf32Check(*r.relErr, *r.errBound)});
  }
  r.passed = true;
  r.rssBytes = int64_t(proc.peakRssBytes);
  r.fallbackSteps = rep->fallbackSteps;
  r.hostSteps = c.hostSteps;
  r.graphCaptured = rep->cudaGraph;
  r.latencyMs = rep->medianMs;
  r.p10Ms = rep->p10Ms;
  r.p90Ms = rep->p90Ms;
  if (target.gpu) {
    r.memoryKind = "device";
    r.peakBytes = rep->peakDeviceBytes;
  } else if (rep->arenaBytes > 0) {
    r.memoryKind = "arena+weights";
    r.peakBytes = rep->arenaBytes + int64_t(c.weightBytes);
  }
  return r;
}

void ModelRun::runTorch(const std::string &precision) {
  progress_.start(model_.name + " PyTorch " + precision);
  // On tc's inputs at this batch, when there are some: PyTorch AMP's
  // error is then the one on tc's inputs.
  const Reference &ref = reference(batch_);
  std::string inputs = ref.failure ? "" : ref.dir;
  for (BenchResult r : opts_.torch->time(model_, precision, input0Shape_, input0Type_, inputs)) {
    r.model = model_.name;
    r.group = model_.group;
    r.batch = batch_;
    if (precision == "amp" && !inputs.empty() && !torchAmpErr_.count(batch_))
      torchAmpErr_[batch_] = r.torchAmpErr;
    torch_[precision][r.mode] = r;
    relate(r);
    report(r);
  }
  progress_.advance(opts_.torch->modes().size());
}

std::optional<double> ModelRun::torchAmpErr(int64_t batch, const std::string &inputDir) {
  if (!opts_.torch || model_.recipe.empty())
    return std::nullopt;
  auto it = torchAmpErr_.find(batch);
  if (it == torchAmpErr_.end())
    it = torchAmpErr_.emplace(batch, opts_.torch->ampError(model_, inputDir)).first;
  return it->second;
}

void ModelRun::relate(BenchResult &r) const {
  // The ratios of a baseline's latency and peak to this row's, when both
  // passed at the same batch.
  auto versus = [&](const BenchResult *base, std::optional<double> &speedup,
                    std::optional<double> *memory) {
    if (!base || !base->passed || !r.passed || base->batch != r.batch)
      return;
    if (base->latencyMs && r.latencyMs && *r.latencyMs > 0)
      speedup = *base->latencyMs / *r.latencyMs;
    if (memory && base->peakBytes && r.peakBytes && *r.peakBytes > 0)
      *memory = double(*base->peakBytes) / double(*r.peakBytes);
  };
  auto find = [](const auto &byKey, const std::string &key) {
    auto it = byKey.find(key);
    return it == byKey.end() ? nullptr : &it->second;
  };
  if (r.mode.rfind("torch-", 0) != 0)
    versus(find(eager_, r.precision), r.speedup, &r.compression);
  if (const auto *torch = find(torch_, r.precision)) {
    versus(find(*torch, kTorchEager), r.vsTorchEager, &r.memoryVsTorch);
    if (r.mode.rfind("torch-", 0) != 0) {
      versus(find(*torch, kTorchReduceOverhead), r.vsTorchReduceOverhead, nullptr);
      versus(find(*torch, "torch-compile"), r.vsTorchCompile, nullptr);
    }
  }
}

void ModelRun::run() {
  try {
    fs::create_directories(dir_);
    if (importModel())
      runModes();
  } catch (const std::exception &e) {
    // Reading what a tool wrote failed (it should not): the rows not yet
    // made fail with why, and the suite goes on.
    failAll({"run", std::string("tc-bench: ") + e.what()});
  }
}

void ModelRun::runModes() {
  for (const std::string &precision : opts_.precisions) {
    if (opts_.torch && !model_.recipe.empty())
      runTorch(precision);
    for (const std::string &mode : opts_.modes) {
      progress_.start(model_.name + " " + mode + " " + precision);
      if (isStaticMode(mode)) {
        int level = mode == "eager" ? 0 : 2;
        BenchResult r = runArtifact(mode, precision, batch_, compile(level, precision, batch_),
                                    mode == "cudagraphs");
        if (mode == "eager")
          eager_[precision] = r;
        relate(r);
        report(r);
      } else {
        // Compiled once with its symbolic dims, run at every size.
        std::vector<int64_t> sizes{batch_};
        for (int64_t b : opts_.dynamicBatches.value_or(suite_.dynamicBatches))
          if (std::find(sizes.begin(), sizes.end(), b) == sizes.end())
            sizes.push_back(b);
        const Compiled &c = compile(2, precision, std::nullopt);
        for (int64_t b : sizes) {
          BenchResult r = runArtifact(mode, precision, b, c, false);
          relate(r);
          report(r);
        }
      }
      progress_.advance();
    }
  }
}

} // namespace

size_t countUnits(const Suite &suite, const RunnerOptions &opts) {
  size_t perModel = opts.modes.size() * opts.precisions.size();
  size_t n = 0;
  for (const BenchModel &m : suite.models)
    n +=
        perModel +
        (opts.torch && !m.recipe.empty() ? opts.precisions.size() * opts.torch->modes().size() : 0);
  return n;
}

void runSuite(const Suite &suite, const RunnerOptions &opts, Progress &progress,
              const std::function<void(const BenchResult &)> &onResult) {
  for (const BenchModel &m : suite.models) {
    ModelRun run(suite, m, opts, progress, onResult);
    run.run();
  }
}

std::string formatResult(const BenchResult &r) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << r.model << " " << r.mode << " " << r.precision << " b" << r.batch << ": ";
  if (!r.passed) {
    o << "FAIL " << r.reason << ": " << r.error;
    return o.str();
  }
  o << "pass";
  if (r.latencyMs)
    o << " " << *r.latencyMs << " ms (p10 " << r.p10Ms.value_or(0) << ", p90 "
      << r.p90Ms.value_or(0) << ")";
  o.precision(2);
  if (r.speedup)
    o << ", " << *r.speedup << "x eager";
  if (r.compileS)
    o << ", compile " << *r.compileS << " s";
  if (r.peakBytes)
    o << ", peak " << double(*r.peakBytes) / (1 << 20) << " MiB (" << r.memoryKind << ")";
  if (r.compression)
    o << ", memory " << *r.compression << "x eager";
  if (r.vsTorchEager)
    o << ", " << *r.vsTorchEager << "x torch eager";
  if (r.vsTorchReduceOverhead)
    o << ", " << *r.vsTorchReduceOverhead << "x reduce-overhead";
  if (r.memoryVsTorch)
    o << ", memory " << *r.memoryVsTorch << "x torch";
  if (r.hostSteps && *r.hostSteps)
    o << ", " << *r.hostSteps << " host steps";
  if (r.graphCaptured)
    o << (*r.graphCaptured ? ", CUDA graph" : ", no CUDA graph");
  if (r.fallbackSteps && *r.fallbackSteps)
    o << ", " << *r.fallbackSteps << " steps on the reference kernels";
  if (r.relErr && r.errBound)
    o << ", " << describeAmpCheck(*r.relErr, *r.errBound, r.torchAmpErr);
  else if (r.torchAmpErr)
    o << ", amp err " << std::scientific << std::setprecision(1) << *r.torchAmpErr;
  return o.str();
}

} // namespace tc::bench
