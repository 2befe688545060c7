#include "tc/CodeGen/Artifact.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/OpTable.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/DeviceRanks.h"
#include "tc/Runtime/Ranks.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Runtime/ShapePlanner.h"
#include "tc/Support/Error.h"
#include "tc/Tools/DecodeLoop.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/GpuLauncher.h"
#include "tc/Tools/ToolCommon.h"
#include "tc/Tools/TrainLoop.h"
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>

namespace tc::tools {

namespace {

// tc-run --decode: random past caches of length `past` (batch 1 unless
// --dim says; fixed-capacity caches: `past` tokens cached, the capacity
// its bucket's), opts.steps steps on the target (a GPU one keeps the caches
// on the device between steps) or the reference executor.
int runDecodeLoop(const Function &f, const Module *m, Executable *exe, const Target *backend,
                  const std::string &target, InputSources src, int64_t past, DecodeOptions opts,
                  const std::string &outputDir, const std::string &compareDir, double rtol,
                  double atol) {
  DecodeSignature sig = decodeSignature(f);
  src.random = true;
  if (past >= 0 || !src.dims.count(sig.pastDim))
    src.dims[sig.pastDim] = past >= 0 ? past : 128;
  int64_t start = src.dims[sig.pastDim];
  if (sig.fixedCapacity) { // the last step's slot must fit a bucket too: said before any step runs
    bucketFor(opts.buckets, start + opts.steps - 1);
    src.dims[sig.pastDim] = bucketFor(opts.buckets, start);
  }
  for (const Value *a : f.args)
    for (const Dim &d : a->type.shape)
      if (d.isSymbolic())
        src.dims.emplace(d.symbol, 1);
  std::vector<HostTensor> inputs = gatherInputs(f, src);
  if (sig.fixedCapacity) // the new token's slot
    inputs[1].setInt(0, start);
  opts.position = start;
  opts.deviceCache = backend && backend->gpu;
  RunFn run = [&](const std::vector<RunInput> &in, std::vector<RunOutput> &out) {
    if (exe) {
      exe->runOn(nullptr, in, out);
      return exe->lastRun();
    }
    std::vector<HostTensor> host;
    for (const RunInput &i : in)
      host.push_back(*i.host);
    std::vector<HostTensor> results = runReference(m, f, host);
    for (size_t i = 0; i < results.size(); ++i)
      out[i].host = std::move(results[i]);
    return RunEvents{};
  };
  int64_t batch = inputs[0].shape()[0];
  std::vector<HostTensor> first = inputs;
  DecodeResult r = runDecode(f, sig, std::move(inputs), opts, run);
  if (currentRank().rank != 0) // on simulated ranks (--ranks), rank 0 speaks
    return 0;
  std::string where = target + (exe ? exe->latencyNote() : std::string()) +
                      (opts.deviceCache ? "; caches stay on the device" : "; caches on the host");
  printDecodeReport(std::cerr, r, batch, start, where);
  std::cout << "tokens (batch row 0):";
  for (const std::vector<int64_t> &t : r.tokens)
    std::cout << " " << t[0];
  std::cout << "\n";
  if (!outputDir.empty()) // the first step's inputs, the last step's outputs
    writeTestDataSet(outputDir, f, first, r.outputs);
  std::ostringstream results;
  bool ok = true;
  if (compareDir.empty())
    printOutputSummary(f, r.outputs, results);
  else
    ok = compareOutputs(f, r.outputs, compareDir, rtol, atol, results, src.bf16AsU16);
  std::cout << results.str();
  return ok ? 0 : 1;
}

// One call of f on `ranks` simulated ranks (each the same inputs); a
// tensor-parallel program's outputs are replicated, so every rank's must be
// rank 0's, bit for bit (each combines in rank order).
std::vector<HostTensor> runOnRanks(const Module &m, const Function &f,
                                   const std::vector<HostTensor> &inputs, int ranks) {
  std::vector<std::vector<HostTensor>> outs(static_cast<size_t>(ranks));
  runRanks(ranks, [&](int r) { outs[size_t(r)] = runReference(&m, f, inputs); });
  for (int r = 1; r < ranks; ++r)
    for (size_t i = 0; i < outs[0].size(); ++i) {
      const HostTensor &a = outs[0][i], &b = outs[size_t(r)][i];
      if (!a.sameType(b) || a.byteSize() != b.byteSize() ||
          std::memcmp(a.bytes(), b.bytes(), a.byteSize()) != 0)
        fail("output '", f.results[i]->name, "' of rank ", r, " differs from rank 0's (",
             b.typeStr(), " against ", a.typeStr(),
             "): a tensor-parallel program must return the same outputs on every rank");
    }
  return std::move(outs[0]);
}

// --decode-buckets 128,256: ascending positive capacities.
std::vector<int64_t> parseBuckets(const std::string &list) {
  std::vector<int64_t> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 1 ||
        (!out.empty() && v <= out.back()))
      fail("--decode-buckets wants ascending positive capacities (128,256,512), not '", list, "'");
    out.push_back(v);
  }
  return out;
}

} // namespace

int tcRunMain(int argc, char **argv) {
  return runTool("tc-run", [&] {
    CommonOptions common;
    std::string target, outputDir, compareDir;
    int iterations = 0, warmup = 1, decode = 0, ranks = 1, gpus = 0;
    int64_t past = -1, decodeToken = -1;
    std::string decodeBuckets;
    std::string report;
    bool printSteps = false, printInfo = false, noVerify = false;
    InputFlags inputFlags;
    double rtol = 1e-4, atol = 1e-5;
    po::options_description opts("tc-run options");
    opts.add_options()("target", po::value(&target)->value_name("ref|" + targetNames("|")),
                       "ref: the reference executor over IR (or an artifact's own IR); a code "
                       "generation target: a compiled artifact (default: the artifact's)");
    addInputOptions(opts, inputFlags);
    opts.add_options()("ranks", po::value(&ranks)->value_name("N"),
                       "run a tensor-parallel program on N ranks simulated as threads (the "
                       "reference executor: its RankSlice and collectives meet across them); "
                       "every rank must return the same outputs, which are rank 0's; with "
                       "--train, rank r trains on micro-batches r, N + r, ...; with --decode, "
                       "each rank keeps its own caches and rank 0 reports (1)");
    opts.add_options()("gpus", po::value(&gpus)->value_name("N"),
                       "run a multi-rank artifact (tc-opt --tensor-parallel N or --data-parallel "
                       "N, compiled for a GPU) as N processes, one GPU each, its collectives on "
                       "NCCL: this command without --gpus, started with the launcher variables "
                       "RANK, WORLD_SIZE, LOCAL_RANK and TC_NCCL_ID; rank 0 reports (its outputs "
                       "are every rank's); with --train, rank r trains on micro-batches r, N + r, "
                       "...; a rank that fails stops the others (after 10 s to end on their own)");
    opts.add_options()("output-dir", po::value(&outputDir)->value_name("DIR"),
                       "write input_N.pb and output_N.pb to DIR (an ONNX test_data_set)")(
        "compare", po::value(&compareDir)->value_name("DIR"),
        "compare outputs with DIR/output_N.pb (or NAME.npy); exit 1 on a mismatch")(
        "rtol", po::value(&rtol)->value_name("R"), "relative tolerance of --compare (1e-4)")(
        "atol", po::value(&atol)->value_name("A"), "absolute tolerance of --compare (1e-5)")(
        "iterations", po::value(&iterations)->value_name("N"),
        "time N runs after the warm-up and print min/median/p90 latency")(
        "warmup", po::value(&warmup)->value_name("W"), "untimed runs before --iterations (1)")(
        "report", po::value(&report)->value_name("json"),
        "json: print one JSON object (latency, steps, arena, compare results) instead of text")(
        "print-steps", po::bool_switch(&printSteps),
        "artifacts: print to stderr what ran each step (generated kernel, library call, "
        "reference kernels, view); with --iterations: each step's mean time instead, then "
        "the ten that take longest")(
        "bf16-as-u16", po::bool_switch(&inputFlags.src.bf16AsU16),
        "read a u16 tensor given for a bf16 input as bf16 bit patterns, and compare a bf16 "
        "result with a u16 expected value bit-exactly as bf16 (older ONNX test data stores "
        "bf16 so); off by default");
    opts.add_options()("decode", po::value(&decode)->value_name("N"),
                       "run N steps of a KV-cache decode step (token ids and past caches in, "
                       "logits and present caches out), each fed the last one's argmax token "
                       "and present caches; print tokens/s and per-token latency")(
        "past", po::value(&past)->value_name("P"),
        "--decode: the random past caches' length (default 128; batch 1 unless --dim); on a "
        "fixed-capacity cache the first step's position")(
        "decode-token", po::value(&decodeToken)->value_name("T"),
        "--decode: feed token T every step instead of the argmax")(
        "decode-buckets", po::value(&decodeBuckets)->value_name("C1,C2,.."),
        "--decode on a fixed-capacity cache (export_decode_step.py --static): the cache "
        "capacities, ascending (default: powers of two from 128); each is one planned shape "
        "and one CUDA graph");
    TrainOptions train;
    bool evalRun = false;
    std::string evalModelPath;
    opts.add_options()("train", po::value(&train.steps)->value_name("N"),
                       "run N steps of a train step (tc-opt --train) over --data's batches, each "
                       "step's new state fed to the next; prints the loss and samples/s")(
        "data", po::value(&train.data)->value_name("DIR"),
        "--train: test_data_set_* folders (one batch each, cycled) or one such folder")(
        "checkpoint", po::value(&train.checkpoint)->value_name("FILE"),
        "--train: write the trained state at the end: FILE (safetensors, keyed by the ONNX "
        "initializer names) and FILE's .optimizer.safetensors")(
        "checkpoint-every", po::value(&train.checkpointEvery)->value_name("K"),
        "--train: also write the checkpoint every K steps")(
        "resume", po::value(&train.resume)->value_name("FILE"),
        "--train: start from this checkpoint (and its .optimizer.safetensors)")(
        "log-every", po::value(&train.logEvery)->value_name("K"),
        "--train: a loss line every K steps (default: ten lines)")(
        "eval-model", po::value(&evalModelPath)->value_name("FILE"),
        "--train: evaluate with this eval step (tc-opt --eval of the same model, built like the "
        "train step) on the train state after the last step and every --eval-every steps")(
        "eval-data", po::value(&train.evalData)->value_name("DIR"),
        "--eval-model: its batches (test_data_set_* folders; default --data)")(
        "eval-every", po::value(&train.evalEvery)->value_name("K"),
        "--eval-model: also evaluate every K steps")(
        "eval", po::bool_switch(&evalRun),
        "run an eval step (tc-opt --eval) over every batch of --data once, on --resume's "
        "checkpoint (or the initial weights): the mean loss and top-1 accuracy");
    opts.add_options()("print-info", po::bool_switch(&printInfo),
                       "artifacts: print what it was built with and for, and its sections with "
                       "sizes and checksums (verified), then stop");
    addVerifyOption(opts, noVerify);
    std::vector<TargetOption> runOptions = allRunOptions();
    addTargetOptions(opts, runOptions);
    po::variables_map vm;
    if (!parseCommandLine("tc-run",
                          "[options] [--input NAME=FILE ...] <model.tcx | model.tcbc | model.tcir>",
                          argc, argv, opts, common, vm, /*withOutput=*/false))
      return 0;
    if (!report.empty() && report != "json")
      fail("unknown --report '", report, "' (json)");
    if (vm.count("gpus")) {
      if (ranks != 1)
        fail("--gpus runs an artifact on GPUs; --ranks simulates ranks on the reference "
             "executor: one or the other");
      if (gpus < 1)
        fail("--gpus takes N >= 1");
      // What the ranks would each find, said once here: not a GPU artifact, no GPU.
      auto in = MemoryBuffer::open(common.input);
      std::optional<Artifact> a;
      if (isArtifact(in->str()))
        a = readArtifact(in);
      const Target *t = a ? findTarget(a->target) : nullptr;
      if (!t || !t->gpu)
        fail(common.input, ": --gpus runs an artifact compiled for a GPU target");
      int64_t group = rankGroupSize(*readBytecode(a->share(kSectionModule)));
      if (group && group != gpus)
        fail(common.input, ": its collectives are over ", group, " ranks; --gpus ", gpus,
             " starts ", gpus, " processes");
      t->openDevice();
      return runOnGpus(gpus, argc, argv);
    }
    // A process of a group a launcher started (--gpus, torchrun, mpirun):
    // its GPU is its local rank; rank 0 alone reports.
    int device = 0;
    if (std::optional<LaunchEnv> env = launchEnv()) {
      setProcessRank(env->rank, env->size);
      device = env->localRank;
    }
    bool speaks = currentRank().rank == 0;
    TargetOptionValues runValues = targetOptionValues(vm, runOptions);
    if (iterations < 0 || warmup < 0)
      fail("--iterations and --warmup must be >= 0");
    if (decode < 0 || (decode == 0 && (past >= 0 || decodeToken >= 0)))
      fail("--decode N takes N >= 1; --past and --decode-token go with it");
    DecodeOptions decodeOpts;
    decodeOpts.steps = decode;
    decodeOpts.fixedToken = decodeToken;
    if (!decodeBuckets.empty()) {
      if (!decode)
        fail("--decode-buckets goes with --decode");
      decodeOpts.buckets = parseBuckets(decodeBuckets);
    }
    if (decode && (iterations || !report.empty()))
      fail("--decode times its own steps: not with --iterations or --report");
    if (vm.count("past") && past < 0)
      fail("--past must be >= 0");
    if (!(rtol >= 0) || !(atol >= 0))
      fail("--rtol and --atol must be non-negative");
    InputSources src = inputSources(inputFlags);
    auto buf = MemoryBuffer::open(common.input);
    // Read (and verified) once: before anything of it is mapped or run.
    std::optional<Artifact> artifact;
    if (isArtifact(buf->str()))
      artifact = readArtifact(buf, artifactCheck(noVerify));
    if (printInfo) {
      if (!artifact)
        fail(common.input, ": --print-info describes an artifact (.tcx); this is IR");
      std::cout << artifactInfo(*artifact);
      return 0;
    }
    if (target.empty())
      target = artifact ? artifact->target : "ref";
    // ref: the reference executor over IR, or over an artifact's own IR.
    const Target *backend = target == "ref" ? nullptr : findTarget(target);
    if (target != "ref" && !backend)
      fail("unknown target '", target, "' (ref, ", targetNames(), ")");
    if (backend) // "no CUDA device" first, whatever the input
      backend->openDevice();
    std::unique_ptr<Executable> exe;
    std::unique_ptr<Module> ir;
    if (artifact && backend) {
      noteRunTimePlanning("tc-run", *artifact);
      exe = backend->load(std::move(*artifact), runValues, device);
    } else if (artifact)
      ir = readBytecode(artifact->share(kSectionModule));
    else if (backend)
      fail(common.input,
           ": IR runs on the reference executor (--target=ref); compile it with "
           "tc-codegen --target=",
           target, " first");
    else
      ir = loadModule(buf);
    const Module *m = ir ? ir.get() : &exe->module();
    const Function &f = m->main();
    if (train.steps < 0 || train.checkpointEvery < 0 || train.logEvery < 0)
      fail("--train, --checkpoint-every and --log-every take N >= 0");
    if (ranks < 1 || (ranks > 1 && (exe || evalRun)))
      fail(ranks < 1 ? "--ranks takes N >= 1"
                     : "--ranks runs IR on the reference executor (--target=ref): one call, "
                       "--train or --decode; a compiled artifact runs its ranks on GPUs: --gpus N");
    if (evalRun) {
      if (train.steps || !train.checkpoint.empty())
        fail("--eval updates nothing: no --train or --checkpoint");
      return runEvalLoop(*m, exe.get(), train);
    }
    if (!train.steps && (!train.data.empty() || !train.checkpoint.empty() || !train.resume.empty()))
      fail("--data, --checkpoint and --resume go with --train N or --eval");
    if (!train.steps && (!evalModelPath.empty() || !train.evalData.empty() || train.evalEvery))
      fail("--eval-model, --eval-data and --eval-every go with --train N");
    if (train.evalEvery < 0)
      fail("--eval-every takes K >= 0");
    if (evalModelPath.empty() && (!train.evalData.empty() || train.evalEvery))
      fail("--eval-data and --eval-every go with --eval-model");
    if (train.steps) {
      train.deviceState = backend && backend->gpu;
      // The eval step, loaded as the train step is (same target).
      std::unique_ptr<Executable> evalExe;
      std::unique_ptr<Module> evalIr;
      if (!evalModelPath.empty()) {
        auto ebuf = MemoryBuffer::open(evalModelPath);
        if (isArtifact(ebuf->str())) {
          Artifact ea = readArtifact(ebuf, artifactCheck(noVerify));
          if (backend && ea.target != target)
            fail(evalModelPath, ": built for ", ea.target, ", the train step runs on ", target);
          if (backend)
            evalExe = backend->load(std::move(ea), runValues, device);
          else
            evalIr = readBytecode(ea.share(kSectionModule));
        } else if (backend) {
          fail(evalModelPath,
               ": IR runs on the reference executor; compile it with tc-codegen "
               "--target=",
               target, " as the train step is");
        } else {
          evalIr = loadModule(ebuf);
        }
        train.evalModule = evalIr ? evalIr.get() : &evalExe->module();
        train.evalExe = evalExe.get();
      }
      if (ranks > 1) { // a data-parallel step (tc-opt --data-parallel N) on N threads
        runRanks(ranks, [&](int) { runTrainLoop(*m, nullptr, train); });
        return 0;
      }
      return runTrainLoop(*m, exe.get(), train);
    }
    if (decode && ranks > 1) { // a tensor-parallel decode step: each rank its heads' caches
      int rc = 0;
      runRanks(ranks, [&](int r) {
        int code = runDecodeLoop(f, m, nullptr, backend, target, src, past, decodeOpts, outputDir,
                                 compareDir, rtol, atol);
        if (r == 0)
          rc = code;
      });
      return rc;
    }
    if (decode)
      return runDecodeLoop(f, m, exe.get(), backend, target, src, past, decodeOpts, outputDir,
                           compareDir, rtol, atol);
    // A train step runs once on its inputs from @init's state (the gradients
    // of a step without an optimizer, as tests compare them).
    std::vector<HostTensor> inputs = gatherRunInputs(*m, src);
    // A device run returns with the device synchronized and the outputs on
    // the host: its wall time is the latency, copies included. Its note
    // (a CUDA graph recorded for a new shape, or why not) is worth a line.
    auto runOnce = [&] {
      if (!exe && ranks > 1)
        return runOnRanks(*m, f, inputs, ranks);
      if (!exe)
        return runReference(m, f, inputs);
      std::vector<HostTensor> outs = exe->run(inputs);
      if (!exe->runNote().empty() && report != "json")
        std::cerr << "tc-run: " << exe->runNote() << "\n";
      return outs;
    };
    // The first run plans the input shape (ShapePlan.h): its wall time is
    // what a new shape costs a caller.
    auto first0 = std::chrono::steady_clock::now();
    std::vector<HostTensor> outputs = runOnce();
    double firstMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first0)
            .count();
    if (printSteps && exe && iterations <= 0)
      for (const std::string &line : exe->stepReport())
        std::cerr << "step " << line << "\n";
    if (printSteps && exe)
      exe->setProfiling(true);    // the timed runs also time each step
    std::vector<double> ms;       // sorted latencies of the timed runs
    std::vector<double> deviceMs; // their device times, where the target measures them
    if (exe)
      exe->startMeasuring(); // from here: what running takes
    if (iterations > 0) {
      for (int i = 1; i < std::max(warmup, exe ? exe->minWarmup() : 0); ++i)
        runOnce();
      for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        runOnce();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        if (exe && exe->deviceMs() >= 0)
          deviceMs.push_back(exe->deviceMs());
      }
      std::sort(ms.begin(), ms.end());
      std::sort(deviceMs.begin(), deviceMs.end());
      if (printSteps && exe) { // every step, then the ten that take longest
        std::vector<StepTime> steps = exe->stepProfile();
        for (const StepTime &p : steps)
          std::cerr << "step " << p.step << " [" << p.meanMs << " ms]\n";
        std::stable_sort(steps.begin(), steps.end(),
                         [](const auto &a, const auto &b) { return a.meanMs > b.meanMs; });
        double total = 0;
        for (const StepTime &p : steps)
          total += p.meanMs;
        for (size_t i = 0; i < std::min<size_t>(10, steps.size()); ++i)
          std::cerr << "top " << i + 1 << ": " << steps[i].meanMs << " ms ("
                    << int(100 * steps[i].meanMs / std::max(total, 1e-9)) << "%) " << steps[i].step
                    << "\n";
      }
    }
    auto at = [](const std::vector<double> &v, double q) {
      return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
    };
    auto stats = [&](const std::vector<double> &v) {
      std::ostringstream o;
      // p10 and p90: the spread tc-bench records beside the median.
      o << "{\"min\": " << v.front() << ", \"p10\": " << at(v, 0.1)
        << ", \"median\": " << at(v, 0.5) << ", \"p90\": " << at(v, 0.9)
        << ", \"max\": " << v.back() << "}";
      return o.str();
    };
    if (!outputDir.empty() && speaks)
      writeTestDataSet(outputDir, f, inputs, outputs);
    std::ostringstream results;
    bool ok = true;
    if (compareDir.empty())
      printOutputSummary(f, outputs, results);
    else
      ok = compareOutputs(f, outputs, compareDir, rtol, atol, results, src.bf16AsU16);
    if (!speaks) // every rank compares; rank 0 reports
      return ok ? 0 : 1;
    if (report == "json") {
      // One JSON object on stdout, for scripts (utils/bench-cpu.py).
      std::ostringstream js;
      js << "{\"target\": \"" << target << "\", \"iterations\": " << iterations;
      js << ", \"first_run_ms\": " << firstMs;
      if (!ms.empty())
        js << ", \"latency_ms\": " << stats(ms);
      if (!deviceMs.empty())
        js << ", \"device_ms\": " << stats(deviceMs);
      if (exe)
        exe->printJson(js);
      js << ", \"compared\": " << (compareDir.empty() ? "false" : "true")
         << ", \"ok\": " << (ok ? "true" : "false") << ", \"outputs\": [";
      std::istringstream lines(results.str());
      bool first = true;
      for (std::string line; std::getline(lines, line); first = false) {
        js << (first ? "" : ", ") << "\"";
        for (char c : line)
          js << (c == '"' || c == '\\' ? "\\" : "") << c;
        js << "\"";
      }
      js << "]}\n";
      std::cout << js.str();
      return ok ? 0 : 1;
    }
    if (!ms.empty())
      std::cerr << "latency over " << iterations << " runs (" << target
                << (exe ? exe->latencyNote() : std::string()) << "): min " << ms.front()
                << " ms, median " << at(ms, 0.5) << " ms, p90 " << at(ms, 0.9) << " ms\n"
                << "first run (plans the input shape): " << firstMs << " ms\n";
    if (!deviceMs.empty())
      std::cerr << "device time over " << iterations << " runs (" << exe->deviceTimeNote()
                << "): min " << deviceMs.front() << " ms, median " << at(deviceMs, 0.5)
                << " ms, p90 " << at(deviceMs, 0.9) << " ms\n";
    if (exe)
      exe->printSummary(std::cerr);
    std::cout << results.str();
    return ok ? 0 : 1;
  });
}

} // namespace tc::tools
