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
    std::string target, outputDir, compareDir;
    int iterations = 0, warmup = 1;
    unsigned threads = 0;
    std::string report, cudaLibraries = "on", cudaGraphs = "on";
    bool printSteps = false;
    InputFlags inputFlags;
    double rtol = 1e-4, atol = 1e-5;
    po::options_description opts("tc-run options");
    opts.add_options()("target", po::value(&target)->value_name("ref|cpu|cuda"),
                       "ref: the reference executor over IR; cpu/cuda: a compiled artifact");
    addInputOptions(opts, inputFlags);
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
        "CPU and CUDA artifacts: print to stderr what ran each step (generated kernel, "
        "library call, reference kernels, view); CPU with --iterations: also its mean time")(
        "cuda-libraries", po::value(&cudaLibraries)->value_name("on|off"),
        "CUDA artifacts: off runs MatMul/Gemm/Conv groups on the host's reference kernels "
        "instead of cuBLASLt/cuDNN (to bisect numerics; no library needed)")(
        "cuda-graphs", po::value(&cudaGraphs)->value_name("on|off"),
        "CUDA artifacts: capture each input shape's plan into a CUDA graph at its second "
        "run and replay it (on); off launches step by step")(
        "threads", po::value(&threads)->value_name("N"),
        "CPU artifacts: threads that split each kernel (default: one per hardware thread)")(
        "bf16-as-u16", po::bool_switch(&inputFlags.src.bf16AsU16),
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
    if (cudaGraphs != "on" && cudaGraphs != "off")
      fail("unknown --cuda-graphs '", cudaGraphs, "' (on or off)");
    if (iterations < 0 || warmup < 0)
      fail("--iterations and --warmup must be >= 0");
    if (!(rtol >= 0) || !(atol >= 0))
      fail("--rtol and --atol must be non-negative");
    InputSources src = inputSources(inputFlags);
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
      if (gpu)
        gpu->setGraphs(cudaGraphs == "on");
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
    // A CUDA run also says when it records a graph for a new shape (or why not).
    auto runOnce = [&] {
      if (!gpu)
        return ir ? runReference(m, f, inputs) : cpu->run(inputs);
      std::vector<HostTensor> outs = gpu->run(inputs);
      if (!gpu->graphNote().empty() && report != "json")
        std::cerr << "tc-run: " << gpu->graphNote() << "\n";
      return outs;
    };
    std::vector<HostTensor> outputs = runOnce();
    if (printSteps && (cpu || gpu) && (gpu || iterations <= 0))
      for (const std::string &line : gpu ? gpu->stepReport() : cpu->stepReport())
        std::cerr << "step " << line << "\n";
    if (printSteps && cpu)
      cpu->setProfiling(true); // the timed runs also time each step
    if (printSteps && gpu)
      gpu->setProfiling(true);    // step by step, an event after each
    std::vector<double> ms;       // sorted latencies of the timed runs
    std::vector<double> deviceMs; // CUDA: their device times (CUDA events)
    if (gpu)
      cuda::resetDeviceBytesPeak(); // from here: what running takes
    if (iterations > 0) {
      // At least 2 untimed runs on CUDA: the second records the graph.
      for (int i = 1; i < std::max(warmup, gpu ? 2 : 0); ++i)
        runOnce();
      for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        runOnce();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        if (gpu && gpu->deviceMs() >= 0)
          deviceMs.push_back(gpu->deviceMs());
      }
      std::sort(ms.begin(), ms.end());
      std::sort(deviceMs.begin(), deviceMs.end());
      if (printSteps && cpu)
        for (const CpuModel::StepProfile &p : cpu->stepProfile())
          std::cerr << "step " << p.step << " [" << p.meanSeconds * 1e3 << " ms]\n";
      if (printSteps && gpu) { // every step, then the ten that take longest
        std::vector<CudaModel::StepProfile> steps = gpu->stepProfile();
        for (const CudaModel::StepProfile &p : steps)
          std::cerr << "step " << p.step << " [" << p.meanMs << " ms]\n";
        std::stable_sort(steps.begin(), steps.end(),
                         [](const auto &a, const auto &b) { return a.meanMs > b.meanMs; });
        double total = 0;
        for (const CudaModel::StepProfile &p : steps)
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
        js << ", \"latency_ms\": " << stats(ms);
      if (!deviceMs.empty())
        js << ", \"device_ms\": " << stats(deviceMs);
      if (gpu)
        js << ", \"device\": \"" << gpu->device() << "\", \"arch\": \"" << gpu->arch()
           << "\", \"kernel_steps\": " << gpu->kernelSteps()
           << ", \"library_steps\": " << gpu->librarySteps()
           << ", \"fallback_steps\": " << gpu->hostSteps()
           << ", \"arena_bytes\": " << gpu->arenaBytes()
           << ", \"cuda_graph\": " << (gpu->ranGraph() ? "true" : "false")
           << ", \"peak_device_bytes\": " << cuda::deviceBytesPeak()
           << ", \"planned_device_bytes\": " << gpu->plannedDeviceBytes();
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
                << "): min " << ms.front() << " ms, median " << at(ms, 0.5) << " ms, p90 "
                << at(ms, 0.9) << " ms\n";
    if (!deviceMs.empty())
      std::cerr << "device time over " << iterations << " runs (CUDA events, "
                << (gpu->ranGraph() ? "one CUDA graph" : "step by step") << "): min "
                << deviceMs.front() << " ms, median " << at(deviceMs, 0.5) << " ms, p90 "
                << at(deviceMs, 0.9) << " ms\n";
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
                << "\n"
                << "device memory: peak " << cuda::deviceBytesPeak() << " bytes held by tc, "
                << gpu->plannedDeviceBytes() << " planned (arena, inputs, weights, workspaces)\n";
    std::cout << results.str();
    return ok ? 0 : 1;
  });
}

} // namespace tc::tools
