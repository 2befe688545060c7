// tc-bench: runs a benchmark suite of models/manifest.json through the tc
// tools and records every result in a SQLite history (docs/bench.md).
#include "tc/Bench/Aggregate.h"
#include "tc/Bench/Grid.h"
#include "tc/Bench/Manifest.h"
#include "tc/Bench/Merge.h"
#include "tc/Bench/Progress.h"
#include "tc/Bench/ResultStore.h"
#include "tc/Bench/Runner.h"
#include "tc/Bench/Subprocess.h"
#include "tc/Bench/TorchBaseline.h"
#include "tc/Bench/TorchTrainer.h"
#include "tc/Bench/TrainRunner.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tc::tools {

namespace {

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      out.push_back(item);
  return out;
}

std::vector<int64_t> parseSizes(const std::string &s, const char *flag) {
  std::vector<int64_t> out;
  for (const std::string &item : splitList(s)) {
    char *end = nullptr;
    long long n = std::strtoll(item.c_str(), &end, 10);
    if (*end || n < 1)
      fail("--", flag, ": '", item, "' is not a positive integer");
    out.push_back(n);
  }
  return out;
}

// Output of a command, first line; "" when it fails (git or nvidia-smi absent).
std::string firstLineOf(const std::vector<std::string> &argv) {
  bench::ProcessResult p = bench::runProcess(argv, 30);
  if (!p.ok())
    return "";
  return p.out.substr(0, p.out.find('\n'));
}

// --shard K/N: part K (1-based) of N.
std::pair<size_t, size_t> parseShard(const std::string &s) {
  size_t slash = s.find('/');
  char *end = nullptr;
  long k = std::strtol(s.c_str(), &end, 10);
  long n = slash == std::string::npos ? 0 : std::strtol(s.c_str() + slash + 1, &end, 10);
  if (slash == std::string::npos || *end || k < 1 || n < 1 || k > n)
    fail("--shard: '", s, "' is not K/N with 1 <= K <= N");
  return {size_t(k), size_t(n)};
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string hostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "unknown";
}

// What --commit / --machine / --date / --run-id left out: the source tree's
// commit, this host, now, and a run id of this invocation.
void completeRun(bench::RunInfo &run) {
  if (run.commit.empty())
    run.commit = firstLineOf({"git", "-C", TC_SOURCE_DIR, "rev-parse", "--short=10", "HEAD"});
  if (run.commit.empty())
    run.commit = "unknown";
  if (run.machine.empty())
    run.machine = hostName();
  if (run.date.empty())
    run.date = nowUtc();
  if (run.runId.empty())
    run.runId = run.date + " " + run.machine + " " + std::to_string(getpid());
}

// tc-bench --import-grid: each kernel-grid.py --out file is one run (its
// target and device) of grid rows in --db, all or none of a file's points.
int importGrid(const std::vector<std::string> &files, bench::RunInfo run, const std::string &target,
               const std::string &dbPath) {
  std::vector<bench::GridFile> read;
  for (const std::string &f : files)
    read.push_back(bench::readGridJsonl(f, target));
  auto store = bench::ResultStore::open(dbPath);
  bool oneRunId = !run.runId.empty();
  completeRun(run);
  run.suite = bench::kGridSuite;
  for (size_t i = 0; i < read.size(); ++i) {
    bench::RunInfo r = run;
    r.target = read[i].target;
    r.device = read[i].device.empty() ? "unknown" : read[i].device;
    if (!oneRunId && read.size() > 1)
      r.runId += " " + std::to_string(i); // without --run-id, one run per file
    std::vector<bench::StoredResult> rows;
    size_t failed = 0;
    for (const bench::BenchResult &p : read[i].points) {
      rows.push_back({r, p});
      failed += !p.passed;
    }
    store->addAll(rows);
    std::cerr << "tc-bench: " << files[i] << ": " << rows.size() << " grid points (" << failed
              << " failed, " << r.target << ", " << r.device << ") added to " << dbPath << "\n";
  }
  return 0;
}

} // namespace

int tcBenchMain(int argc, char **argv) {
  return runTool("tc-bench", [&] {
    CommonOptions common;
    std::string suiteName = "ci", manifest = std::string(TC_SOURCE_DIR) + "/models/manifest.json";
    std::string dbPath = "bench.db", modelsDir, binDir, workDir, modes, precisions = "fp32,amp";
    std::string only, batchFlag, dynamicFlag, torchFlag = "auto", python = "python3";
    std::string torchScript = std::string(TC_SOURCE_DIR) + "/utils/bench-gpu.py";
    std::string trainScript = std::string(TC_SOURCE_DIR) + "/utils/bench-train.py";
    std::string torchModes, shard, mergeOutput;
    std::vector<std::string> extra, mergeInputs, gridFiles;
    bool exportMissing = false, trainMode = false, f64Reference = false;
    bench::TrainOptions to;
    bench::RunInfo run;
    bench::RunnerOptions ro;
    bool listSuites = false;
    po::options_description opts("tc-bench options");
    opts.add_options()("suite", po::value(&suiteName)->value_name("NAME"),
                       "suite of the manifest to run (default ci; --list-suites)")(
        "target", po::value(&ro.target)->value_name(targetNames("|")),
        "where to compile and run (cpu)")(
        "db", po::value(&dbPath)->value_name("FILE"),
        "SQLite file the results are added to (default bench.db)")(
        "models", po::value(&only)->value_name("A,B"), "only these models of the suite")(
        "shard", po::value(&shard)->value_name("K/N"),
        "only part K of N of the suite's models (every Nth, from the Kth): a suite in parts, one "
        "GPU call each; give the parts one --run-id and --merge their databases")(
        "run-id", po::value(&run.runId)->value_name("ID"),
        "the run the rows belong to (default: date, machine, process id): the parts of one run "
        "share it")("add-model", po::value(&extra)->composing()->value_name("NAME=FILE.onnx"),
                    "also run this ONNX file (random inputs, reference executor); repeatable")(
        "modes", po::value(&modes)->value_name("LIST"),
        "eager,default,cudagraphs,dynamic (default: all the target has; eager is the "
        "baseline of speedups)")("precisions", po::value(&precisions)->value_name("LIST"),
                                 "fp32,amp (default both)")(
        "iterations", po::value(&ro.iterations)->value_name("N"), "timed runs per result (20)")(
        "warmup", po::value(&ro.warmup)->value_name("N"), "untimed runs first (3)")(
        "batch", po::value(&batchFlag)->value_name("N"), "batch of the static modes (the suite's)")(
        "dynamic-batches", po::value(&dynamicFlag)->value_name("A,B"),
        "sizes the dynamic mode also runs at (the suite's)")(
        "timeout", po::value(&ro.timeoutSeconds)->value_name("S"),
        "time limit of each tool run; past it the step fails as 'timeout' (600)")(
        "threads", po::value(&ro.threads)->value_name("N"), "tc-run --threads on the CPU")(
        "arch", po::value(&ro.level)->value_name("LEVEL"),
        "the target's tc-codegen level (CUDA: its --arch, e.g. sm_90; CPU: its --cpu; default: "
        "tc-codegen's)")("opt-arg", po::value(&ro.optArgs)->value_name("FLAG"),
                         "one more tc-opt flag for tc's compiles, repeatable (e.g. "
                         "--opt-arg=--precision-policy=autocast)")(
        "codegen-arg", po::value(&ro.codegenArgs)->value_name("FLAG"),
        "one more tc-codegen flag, repeatable (e.g. --codegen-arg=--tune "
        "--codegen-arg=--tuning-cache=FILE)")(
        "models-dir", po::value(&modelsDir)->value_name("DIR"),
        "where exported (not committed) models are: NAME/model.onnx, NAME.onnx or "
        "NAME.dynamo.onnx")("manifest", po::value(&manifest)->value_name("FILE"),
                            "the manifest (models/manifest.json of the source tree)")(
        "bin", po::value(&binDir)->value_name("DIR"),
        "where tc-import ... tc-run are (default: beside tc-bench)")(
        "work-dir", po::value(&workDir)->value_name("DIR"),
        "keep intermediate files (IR, artifacts, reference data) here (default: a temporary "
        "folder, removed)")("torch", po::value(&torchFlag)->value_name("auto|on|off"),
                            "also time PyTorch eager and torch.compile (auto: on CUDA when "
                            "python can import torch)")(
        "torch-modes", po::value(&torchModes)->value_name("LIST"),
        "PyTorch's modes: eager, compile (torch.compile()), reduce-overhead (torch.compile "
        "with CUDA graphs) (default eager,reduce-overhead; --train: eager,compile)")(
        "train", po::bool_switch(&trainMode),
        "time train steps instead of inference: tc's compiled train step (mode default) beside "
        "PyTorch eager and torch.compile, same weights, batches, AdamW and cross-entropy; "
        "rows of kind train, passing when the losses match PyTorch's (docs/bench.md)")(
        "steps", po::value(&to.steps)->value_name("N"),
        "--train: steps per side and precision, each loss read back (20)")(
        "f64-reference", po::bool_switch(&f64Reference),
        "--train: fp32 losses are held to PyTorch f64 eager's, within max(1e-3, 4x PyTorch "
        "fp32's own distance), not to PyTorch fp32's (batch-norm nets: docs/training.md)")(
        "train-script", po::value(&trainScript)->value_name("FILE"),
        "utils/bench-train.py (--train: PyTorch's train steps, exports)")(
        "export", po::bool_switch(&exportMissing),
        "export the models with a recipe that --models-dir lacks (bench-gpu.py "
        "--export-for-bench); a failed export is the model's result")(
        "python", po::value(&python)->value_name("EXE"), "python for the PyTorch baseline")(
        "torch-script", po::value(&torchScript)->value_name("FILE"),
        "utils/bench-gpu.py (times PyTorch, exports models)")(
        "commit", po::value(&run.commit)->value_name("SHA"),
        "commit recorded (default: git rev-parse of the source tree)")(
        "machine", po::value(&run.machine)->value_name("NAME"), "machine recorded (host name)")(
        "date", po::value(&run.date)->value_name("ISO"), "date recorded (now, UTC)")(
        "list-suites", po::bool_switch(&listSuites), "print the manifest's suites and exit")(
        "merge", po::value(&mergeInputs)->multitoken()->value_name("A.db B.db ..."),
        "join databases (a suite's parts) into -o FILE, the newest of a result measured twice, "
        "and exit")("output,o", po::value(&mergeOutput)->value_name("FILE"),
                    "--merge: the database written (must not exist)")(
        "import-grid", po::value(&gridFiles)->multitoken()->value_name("A.jsonl ..."),
        "add utils/kernel-grid.py --out files to --db as grid rows (one run per file, or one "
        "--run-id for all; the dashboard's kernel-grid pages) and exit");
    po::variables_map vm;
    if (!parseCommandLine("tc-bench", "--suite NAME [--target cpu|cuda] [--db FILE] [options]",
                          argc, argv, opts, common, vm, /*withOutput=*/false))
      return 0;
    if (common.input != "-")
      fail("unexpected argument '", common.input, "' (give the suite with --suite)");
    if (!mergeInputs.empty() || !mergeOutput.empty()) {
      if (mergeOutput.empty())
        fail("--merge: give the database to write with -o FILE");
      size_t n = bench::mergeDatabases(mergeInputs, mergeOutput);
      std::cerr << "tc-bench: " << n << " results from " << mergeInputs.size()
                << " databases written to " << mergeOutput << "\n";
      return 0;
    }
    if (!gridFiles.empty())
      return importGrid(gridFiles, run, vm.count("target") ? ro.target : "", dbPath);
    if (listSuites) {
      for (const std::string &s : bench::suiteNames(manifest))
        std::cout << s << "\n";
      return 0;
    }
    // The compile-time column is a cold compile, never shortened by an
    // earlier run: the tools it runs skip the compile cache unless the
    // caller set TC_CACHE_DIR (then the times are what that cache gives).
    setenv("TC_CACHE_DIR", "off", /*overwrite=*/0);
    const Target &target = requireTarget(ro.target, "--target");
    bool graphs = *target.graphsFlag; // a target that replays graphs has mode cudagraphs
    if (trainMode && !modes.empty())
      fail("--modes: --train times one tc mode (default: -O2); not with --modes");
    if (trainMode && to.steps < 1)
      fail("--steps must be >= 1");
    if (torchModes.empty())
      torchModes = trainMode ? "eager,compile" : "eager,reduce-overhead";
    ro.modes = splitList(modes.empty()
                             ? graphs ? "eager,default,cudagraphs,dynamic" : "eager,default,dynamic"
                             : modes);
    for (const std::string &m : ro.modes)
      if (m != "eager" && m != "default" && m != "cudagraphs" && m != "dynamic")
        fail("unknown mode '", m, "' (eager, default, cudagraphs, dynamic)");
      else if (m == "cudagraphs" && !graphs)
        for (const Target &t : targets())
          if (*t.graphsFlag)
            fail("mode cudagraphs needs --target=", t.name);
    // eager first: the other modes' speedups are relative to it.
    std::stable_partition(ro.modes.begin(), ro.modes.end(),
                          [](const std::string &m) { return m == "eager"; });
    ro.precisions = splitList(precisions);
    for (const std::string &p : ro.precisions)
      if (p != "fp32" && p != "amp")
        fail("unknown precision '", p, "' (fp32, amp)");
    if (ro.iterations < 1 || ro.warmup < 0)
      fail("--iterations must be >= 1 and --warmup >= 0");
    if (!batchFlag.empty())
      ro.batch = parseSizes(batchFlag, "batch").at(0);
    if (!dynamicFlag.empty())
      ro.dynamicBatches = parseSizes(dynamicFlag, "dynamic-batches");
    if (torchFlag != "auto" && torchFlag != "on" && torchFlag != "off")
      fail("unknown --torch '", torchFlag, "' (auto, on, off)");
    std::vector<std::string> torchRows, trainTorchModes;
    for (const std::string &m : splitList(torchModes)) {
      if (trainMode) {
        if (std::none_of(std::begin(bench::kTorchTrainModes), std::end(bench::kTorchTrainModes),
                         [&](const bench::TorchTrainMode &t) { return m == t.flag; }))
          fail("unknown --torch-modes '", m, "' with --train (eager, compile)");
        trainTorchModes.push_back(m);
        continue;
      }
      auto it = std::find_if(std::begin(bench::kTorchModes), std::end(bench::kTorchModes),
                             [&](const bench::TorchMode &t) { return m == t.flag; });
      if (it == std::end(bench::kTorchModes))
        fail("unknown --torch-modes '", m, "' (eager, compile, reduce-overhead)");
      torchRows.push_back(it->row);
    }
    if (exportMissing && modelsDir.empty())
      fail("--export: give the folder to export into with --models-dir");

    bench::Suite suite = bench::loadSuite(manifest, suiteName, modelsDir);
    if (!only.empty()) {
      std::vector<std::string> want = splitList(only);
      std::vector<bench::BenchModel> kept;
      for (const std::string &w : want) {
        auto it = std::find_if(suite.models.begin(), suite.models.end(),
                               [&](const bench::BenchModel &m) { return m.name == w; });
        if (it == suite.models.end())
          fail("--models: suite '", suiteName, "' has no model '", w, "'");
        kept.push_back(*it);
      }
      suite.models = kept;
    }
    for (const std::string &e : extra) {
      auto [name, file] = splitAssignment(e, "add-model");
      bench::BenchModel m;
      m.name = name;
      m.group = "extra";
      if (fs::is_regular_file(file))
        m.onnxPath = fs::absolute(file).string();
      else
        m.missing = "no file " + file;
      suite.models.push_back(m);
    }
    std::string part;
    if (!shard.empty()) {
      auto [k, n] = parseShard(shard);
      std::vector<bench::BenchModel> kept;
      for (size_t i = k - 1; i < suite.models.size(); i += n)
        kept.push_back(suite.models[i]);
      suite.models = kept;
      part = " part " + shard;
    }

    // The tools beside this one, unless told.
    if (binDir.empty())
      binDir = fs::read_symlink("/proc/self/exe").parent_path().string();
    ro.binDir = binDir;

    bench::TorchBaseline pytorch(python, torchScript, target.gpu ? "cuda" : "cpu",
                                 ro.timeoutSeconds, ro.iterations, torchRows);
    bench::TorchTrainer trainer(python, trainScript, target.gpu ? "cuda" : "cpu", ro.timeoutSeconds,
                                trainTorchModes);
    trainer.setF64Reference(f64Reference);
    // Training rows pass only against PyTorch's losses: auto asks for
    // PyTorch on every target; inference times it on the GPU only.
    bool withTorch = torchFlag == "on" || (torchFlag == "auto" && (target.gpu || trainMode));
    bool torchWorks =
        (withTorch || exportMissing) && (trainMode ? trainer.available() : pytorch.available());
    if ((withTorch || exportMissing) && !torchWorks) {
      if (torchFlag == "on" || exportMissing)
        fail(exportMissing ? "--export" : "--torch=on", ": ", python, " cannot import torch, or ",
             trainMode ? trainScript : torchScript, " is missing");
      withTorch = false;
    }
    ro.torch = withTorch && !torchRows.empty() ? &pytorch : nullptr;
    to.torch = withTorch && trainMode ? &trainer : nullptr;
    if (exportMissing) {
      ro.exporter = &pytorch;
      to.exporter = &trainer;
      ro.exportDir = modelsDir;
    }

    completeRun(run);
    run.device = target.deviceName();
    if (run.device.empty())
      run.device = ro.target;
    run.suite = suiteName;
    run.target = ro.target;

    auto store = bench::ResultStore::open(dbPath);
    // The work folder last: every check that can fail has passed.
    bool keepWork = !workDir.empty();
    if (!keepWork) {
      char tmpl[] = "/tmp/tc-bench-XXXXXX";
      if (!mkdtemp(tmpl))
        fail("cannot create a temporary folder: ", std::strerror(errno));
      workDir = tmpl;
    }
    ro.workDir = workDir;
    // Removed however the run ends (a full disk, an unwritable database).
    struct RemoveOnExit {
      std::string dir;
      ~RemoveOnExit() {
        std::error_code ec;
        if (!dir.empty())
          fs::remove_all(dir, ec);
      }
    } cleanup{keepWork ? "" : workDir};
    std::vector<bench::StoredResult> rows;
    std::cerr << "tc-bench: suite " << suiteName << part << " (" << suite.models.size()
              << " models) on " << run.device << "\n";
    bench::Progress progress(trainMode ? bench::countTrainUnits(suite, ro, to)
                                       : bench::countUnits(suite, ro),
                             ::isatty(2));
    auto keep = [&](const bench::BenchResult &r) {
      store->add(run, r); // now: a run cut short keeps what it measured
      rows.push_back({run, r});
    };
    if (trainMode)
      bench::runTrainSuite(suite, ro, to, progress, keep);
    else
      bench::runSuite(suite, ro, progress, keep);
    progress.finish();

    // The same numbers the dashboard shows, for this run.
    std::vector<bench::GroupHistory> groups = bench::groupHistories(rows);
    std::sort(groups.begin(), groups.end(),
              [](const auto &a, const auto &b) { return bench::displayLess(a.key, b.key); });
    for (const bench::GroupHistory &h : groups) {
      const bench::GroupSummary &s = h.latest();
      std::ostringstream line;
      line.setf(std::ios::fixed);
      line.precision(2);
      line << "summary " << (h.key.train() ? "train " : "") << h.key.mode << " " << h.key.precision
           << ": pass " << s.passed << "/" << s.total;
      if (s.geomeanSpeedup)
        line << ", geomean speedup " << *s.geomeanSpeedup << "x";
      if (s.meanCompileS)
        line << ", mean compile " << *s.meanCompileS << " s";
      if (s.geomeanCompression)
        line << ", memory compression " << *s.geomeanCompression << "x";
      if (s.geomeanVsTorchEager)
        line << ", vs torch eager " << *s.geomeanVsTorchEager << "x";
      if (s.geomeanVsTorchReduceOverhead)
        line << ", vs reduce-overhead " << *s.geomeanVsTorchReduceOverhead << "x";
      if (s.geomeanVsTorchCompile)
        line << ", vs torch.compile " << *s.geomeanVsTorchCompile << "x";
      if (s.geomeanMemoryVsTorch)
        line << ", memory vs torch " << *s.geomeanMemoryVsTorch << "x";
      if (s.slowVsReduceOverhead)
        line << ", " << s.slowVsReduceOverhead << " below " << bench::kSlowVsReduceOverhead
             << "x reduce-overhead";
      if (s.withHostSteps)
        line << ", " << s.withHostSteps << " with host steps";
      std::cout << line.str() << "\n";
    }
    std::cerr << "tc-bench: " << rows.size() << " results added to " << dbPath << "\n";
    return 0;
  });
}

} // namespace tc::tools
