// tc-prof MODEL: runs an artifact under tracing and prints the per-kernel
// summary and verdict (--summary, the default) and/or writes a Chrome trace
// (--trace). On IR, --summary is the model summary (op counts, weights).
#include "ProfCommands.h"
#include "tc/Analysis/ModelSummary.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/Profile/ChromeTrace.h"
#include "tc/Profile/CompileReport.h"
#include "tc/Profile/DevicePeaks.h"
#include "tc/Profile/ProfileReport.h"
#include "tc/Runtime/CpuModel.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Support/Error.h"
#include "tc/Tools/ToolCommon.h"
#include <fstream>
#include <iostream>

namespace tc::tools {

namespace {

// The first GPU's roofline from its attributes (CudaModel runs on it).
DevicePeaks firstGpuPeaks() {
  const cuda::Driver &d = cuda::driver();
  cuda::CUdevice dev = 0;
  d.deviceGet(&dev, 0);
  auto attr = [&](int which) {
    int v = 0;
    return d.deviceGetAttribute(&v, which, dev) == 0 ? v : 0;
  };
  // CU_DEVICE_ATTRIBUTE_*: COMPUTE_CAPABILITY_MAJOR/MINOR 75/76,
  // MULTIPROCESSOR_COUNT 16, CLOCK_RATE 13, MEMORY_CLOCK_RATE 36,
  // GLOBAL_MEMORY_BUS_WIDTH 37 (kHz, kHz, bits).
  return gpuPeaks(attr(75), attr(76), attr(16), attr(13), attr(36), attr(37));
}

} // namespace

int profRunMain(int argc, char **argv) {
  return runTool("tc-prof", [&] {
    CommonOptions common;
    bool summary = false;
    std::string format = "text", report, tracePath, cudaGraphs = "on", cudaLibraries = "on";
    int iterations = 10, warmup = 2;
    unsigned threads = 0;
    double peakGBps = 0, peakTFlops = 0;
    InputFlags inputFlags;
    po::options_description opts("tc-prof options");
    opts.add_options()("summary", po::bool_switch(&summary),
                       "artifacts: per-kernel table, totals and a verdict (the default); IR: op "
                       "counts by kind and fusion category, parameters, weight bytes")(
        "trace", po::value(&tracePath)->value_name("FILE"),
        "write a Chrome trace (chrome://tracing, Perfetto) of the compile and the traced runs")(
        "format", po::value(&format)->value_name("text|json|csv"), "summary format")(
        "report", po::value(&report)->value_name("json"), "same as --format=json")(
        "iterations", po::value(&iterations)->value_name("N"),
        "traced runs (10)")("warmup", po::value(&warmup)->value_name("W"),
                            "untraced runs first (2; CUDA records its graph at the second)")(
        "threads", po::value(&threads)->value_name("N"), "CPU artifacts: threads (all)")(
        "cuda-graphs", po::value(&cudaGraphs)->value_name("on|off"),
        "CUDA artifacts: replay each shape's plan as a CUDA graph (on)")(
        "cuda-libraries", po::value(&cudaLibraries)->value_name("on|off"),
        "CUDA artifacts: cuBLASLt/cuDNN for MatMul/Gemm/Conv groups (on)")(
        "peak-gbps", po::value(&peakGBps)->value_name("G"),
        "the device's memory bandwidth for the roofline, GB/s (default: measured or from "
        "the device's attributes)")("peak-tflops", po::value(&peakTFlops)->value_name("T"),
                                    "the device's FLOP rate for the roofline, TFLOP/s (all "
                                    "kernels; default: estimated per kind)");
    addInputOptions(opts, inputFlags);
    po::variables_map vm;
    if (!parseCommandLine("tc-prof",
                          "[compile|diff] ... | [options] <model.tcx | model.tcbc | model.tcir>",
                          argc, argv, opts, common, vm, /*withOutput=*/false))
      return 0;
    if (report == "json")
      format = "json";
    else if (!report.empty())
      fail("unknown --report '", report, "' (json)");
    if (format != "text" && format != "json" && format != "csv")
      fail("unknown --format '", format, "' (text, json or csv)");
    if (cudaGraphs != "on" && cudaGraphs != "off")
      fail("unknown --cuda-graphs '", cudaGraphs, "' (on or off)");
    if (cudaLibraries != "on" && cudaLibraries != "off")
      fail("unknown --cuda-libraries '", cudaLibraries, "' (on or off)");
    if (iterations < 1 || warmup < 0)
      fail("--iterations must be >= 1 and --warmup >= 0");
    auto buf = MemoryBuffer::open(common.input);
    if (!isArtifact(buf->str())) {
      if (!tracePath.empty() || format == "csv")
        fail(common.input, ": traces and kernel tables need a compiled artifact "
                           "(tc-codegen --target=cpu|cuda); IR gives --summary only");
      ModelSummary s = summarize(*loadModule(buf));
      std::cout << (format == "json" ? s.json() : s.text());
      return 0;
    }
    InputSources src = inputSources(inputFlags);

    Artifact artifact = readArtifact(buf);
    std::unique_ptr<CpuModel> cpu;
    std::unique_ptr<CudaModel> gpu;
    if (artifact.target == "cuda") {
      cuda::driver(); // "no CUDA device" here, before anything else
      gpu = CudaModel::load(buf, cudaLibraries == "on");
      gpu->setGraphs(cudaGraphs == "on");
    } else {
      cpu = CpuModel::load(buf, threads);
    }
    const Function &f = gpu ? gpu->module().main() : cpu->module().main();
    std::vector<HostTensor> inputs = gatherInputs(f, src);
    auto runOnce = [&] { return gpu ? gpu->run(inputs) : cpu->run(inputs); };
    for (int i = 0; i < std::max(warmup, gpu ? 2 : 0); ++i)
      runOnce();

    RunTrace trace;
    if (gpu)
      gpu->setTrace(&trace);
    else
      cpu->setTrace(&trace);
    for (int i = 0; i < iterations; ++i) {
      trace.currentRun = i;
      TraceEvent run;
      run.category = "run";
      run.run = i;
      run.startUs = trace.nowUs();
      runOnce();
      run.durUs = trace.nowUs() - run.startUs;
      trace.add(run);
    }
    if (gpu)
      gpu->setTrace(nullptr);
    else
      cpu->setTrace(nullptr);
    if (trace.steps.empty())
      fail(common.input, ": these inputs' sizes could not be planned, so nothing was traced "
                         "step by step (tc-run --print-steps says why)");

    DevicePeaks peaks = gpu ? firstGpuPeaks() : cpuPeaks(cpu->threads());
    if (peakGBps > 0)
      peaks.bytesPerSecond = peakGBps * 1e9, peaks.source += "; bandwidth set by --peak-gbps";
    if (peakTFlops > 0)
      peaks.matrixFlops = peaks.vectorFlops = peakTFlops * 1e12,
      peaks.source += "; FLOP rate set by --peak-tflops";
    ProfileReport r = summarizeTrace(trace, peaks);
    r.model = common.input;

    if (!tracePath.empty()) {
      std::vector<TimelineEntry> timeline;
      if (const MemoryBuffer *t = artifact.section(kSectionTimeline))
        timeline = parseTimelineJson(std::string(t->str()), common.input);
      std::ofstream out(tracePath, std::ios::binary);
      out << chromeTraceJson(trace, timeline, r);
      if (!out.flush())
        fail(tracePath, ": cannot write the trace");
      std::cerr << "tc-prof: wrote " << tracePath << ": " << trace.events.size() << " events over "
                << iterations << " runs and " << timeline.size()
                << " compile stages (open in chrome://tracing or ui.perfetto.dev)\n";
    }
    if (summary || tracePath.empty())
      std::cout << (format == "json" ? r.json() : format == "csv" ? r.csv() : r.text());
    return 0;
  });
}

} // namespace tc::tools
