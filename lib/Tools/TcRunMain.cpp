#include "tc/CodeGen/Artifact.h"
#include "tc/IR/Bytecode.h"
#include "tc/Runtime/CpuModel.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>
#include <sstream>

namespace tc::tools {

int tcRunMain(int argc, char **argv) {
  return runTool("tc-run", [&] {
    CommonOptions common;
    std::vector<std::string> inputFiles;
    std::string target, outputDir, compareDir;
    int iterations = 0, warmup = 1;
    unsigned threads = 0;
    std::string report, cudaLibraries = "on";
    bool printSteps = false;
    std::vector<std::string> dimFlags;
    InputSources src;
    double rtol = 1e-4, atol = 1e-5;
    po::options_description opts("tc-run options");
    opts.add_options()("target", po::value(&target)->value_name("ref|cpu|cuda"),
                       "ref: the reference executor over IR; cpu/cuda: a compiled artifact")(
        "inputs", po::value(&src.dir)->value_name("DIR"),
        "inputs from a test_data_set folder: input_N.pb for input N, or NAME.npy; "
        "--input wins where both give an input")(
        "input", po::value(&inputFiles)->composing()->value_name("NAME=FILE"),
        "read input NAME from a .pb or .npy file (repeatable)")(
        "random-inputs", po::bool_switch(&src.random),
        "uniform random data for inputs given no other way (floats in [-1,1) without 0, "
        "integers in [1,9])")("seed", po::value(&src.seed)->value_name("S"),
                              "random seed (default 0)")(
        "dim", po::value(&dimFlags)->composing()->value_name("NAME=N"),
        "size of symbolic dim NAME for random inputs (repeatable)")(
        "output-dir", po::value(&outputDir)->value_name("DIR"),
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
        "CPU and CUDA artifacts: print to stderr what ran each step (generated kernel, "
        "library call, reference kernels, view); CPU with --iterations: also its mean time")(
        "cuda-libraries", po::value(&cudaLibraries)->value_name("on|off"),
        "CUDA artifacts: off runs MatMul/Gemm/Conv groups on the host's reference kernels "
        "instead of cuBLASLt/cuDNN (to bisect numerics; no library needed)")(
        "threads", po::value(&threads)->value_name("N"),
        "CPU artifacts: threads that split each kernel (default: one per hardware thread)")(
        "bf16-as-u16", po::bool_switch(&src.bf16AsU16),
        "read a u16 tensor given for a bf16 input as bf16 bit patterns, and compare a bf16 "
        "result with a u16 expected value bit-exactly as bf16 (older ONNX test data stores "
        "bf16 so); off by default");
    po::variables_map vm;
    if (!parseCommandLine("tc-run",
                          "[options] [--input NAME=FILE ...] <model.tcx | model.tcbc | model.tcir>",
                          argc, argv, opts, common, vm, /*withOutput=*/false))
      return 0;
    if (!report.empty() && report != "json")
      fail("unknown --report '", report, "' (json)");
    if (cudaLibraries != "on" && cudaLibraries != "off")
      fail("unknown --cuda-libraries '", cudaLibraries, "' (on or off)");
    if (iterations < 0 || warmup < 0)
      fail("--iterations and --warmup must be >= 0");
    if (!(rtol >= 0) || !(atol >= 0))
      fail("--rtol and --atol must be non-negative");
    for (const std::string &s : inputFiles)
      src.files.push_back(splitAssignment(s, "input"));
    for (auto &[name, n] : parseDimFlags(dimFlags))
      src.dims[name] = n;
    auto buf = MemoryBuffer::open(common.input);
    bool artifact = isArtifact(buf->str());
    if (target.empty())
      target = artifact ? readArtifact(buf).target : "ref";
    if (target != "ref" && target != "cpu" && target != "cuda")
      fail("unknown target '", target, "' (ref, cpu or cuda)");
    if (target == "cuda") // the driver, opened now: "no CUDA device" without one
      cuda::driver();
    std::unique_ptr<CpuModel> cpu;
    std::unique_ptr<CudaModel> gpu;
    std::unique_ptr<Module> ir;
    if (artifact) {
      if (target == "cuda")
        gpu = CudaModel::load(buf, cudaLibraries == "on");
      else if (target == "ref") // the reference executor over the artifact's own IR, any target's
        ir = readBytecode(readArtifact(buf).share(kSectionModule));
      else
        cpu = CpuModel::load(buf, threads);
    } else {
      if (target != "ref")
        fail(common.input,
             ": IR runs on the reference executor (--target=ref); compile it with "
             "tc-codegen --target=",
             target, " first");
      ir = loadModule(buf);
    }
    const Module *m = ir ? ir.get() : gpu ? &gpu->module() : &cpu->module();
    const Function &f = m->main();
    std::vector<HostTensor> inputs = gatherInputs(f, src);
    // A CUDA run returns with the device synchronized and the outputs on the
    // host: its wall time is the latency, copies included.
    auto runOnce = [&] {
      return ir ? runReference(m, f, inputs) : gpu ? gpu->run(inputs) : cpu->run(inputs);
    };
    std::vector<HostTensor> outputs = runOnce();
    if (printSteps && (cpu || gpu) && (gpu || iterations <= 0))
      for (const std::string &line : gpu ? gpu->stepReport() : cpu->stepReport())
        std::cerr << "step " << line << "\n";
    if (printSteps && cpu)
      cpu->setProfiling(true); // the timed runs also time each step
    std::vector<double> ms;    // sorted latencies of the timed runs
    if (iterations > 0) {
      for (int i = 1; i < warmup; ++i)
        runOnce();
      for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        runOnce();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      std::sort(ms.begin(), ms.end());
      if (printSteps && cpu)
        for (const CpuModel::StepProfile &p : cpu->stepProfile())
          std::cerr << "step " << p.step << " [" << p.meanSeconds * 1e3 << " ms]\n";
    }
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * double(ms.size())))]; };
    bool compiled = cpu && !ir;
    if (!outputDir.empty())
      writeTestDataSet(outputDir, f, inputs, outputs);
    std::ostringstream results;
    bool ok = true;
    if (compareDir.empty())
      printOutputSummary(f, outputs, results);
    else
      ok = compareOutputs(f, outputs, compareDir, rtol, atol, results, src.bf16AsU16);
    if (report == "json") {
      // One JSON object on stdout, for scripts (utils/bench-cpu.py).
      std::ostringstream js;
      js << "{\"target\": \"" << target << "\", \"iterations\": " << iterations;
      if (!ms.empty())
        js << ", \"latency_ms\": {\"min\": " << ms.front() << ", \"median\": " << at(0.5)
           << ", \"p90\": " << at(0.9) << ", \"max\": " << ms.back() << "}";
      if (gpu)
        js << ", \"device\": \"" << gpu->device() << "\", \"arch\": \"" << gpu->arch()
           << "\", \"kernel_steps\": " << gpu->kernelSteps()
           << ", \"library_steps\": " << gpu->librarySteps()
           << ", \"fallback_steps\": " << gpu->hostSteps()
           << ", \"arena_bytes\": " << gpu->arenaBytes();
      if (compiled)
        js << ", \"threads\": " << cpu->threads() << ", \"kernel_steps\": " << cpu->kernelSteps()
           << ", \"library_steps\": " << cpu->librarySteps()
           << ", \"copy_steps\": " << cpu->moveSteps()
           << ", \"fallback_steps\": " << cpu->fallbackSteps()
           << ", \"arena_bytes\": " << cpu->arenaBytes();
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
                << (compiled ? ", " + std::to_string(cpu->threads()) + " threads" : std::string())
                << (gpu ? ", " + gpu->device() + ", host wall time incl. copies" : std::string())
                << "): min " << ms.front() << " ms, median " << at(0.5) << " ms, p90 " << at(0.9)
                << " ms\n";
    if (compiled)
      std::cerr << "steps: " << cpu->kernelSteps() << " generated kernels, " << cpu->librarySteps()
                << " library calls, " << cpu->moveSteps() << " copies, " << cpu->fallbackSteps()
                << " on the reference kernels; "
                << (cpu->arenaBytes()
                        ? "one arena of " + std::to_string(cpu->arenaBytes()) + " bytes"
                        : std::string("no arena (sizes known only at run time)"))
                << "\n";
    if (gpu)
      std::cerr << "steps: " << gpu->kernelSteps() << " generated kernels, " << gpu->librarySteps()
                << " library calls, " << gpu->hostSteps() << " on the host (reference kernels); "
                << (gpu->arenaBytes()
                        ? "one device arena of " + std::to_string(gpu->arenaBytes()) + " bytes"
                        : std::string("no arena (sizes known only at run time)"))
                << "\n";
    std::cout << results.str();
    return ok ? 0 : 1;
  });
}

} // namespace tc::tools
