// tc-prof MODEL: runs an artifact under tracing and prints the per-kernel
// summary and verdict (--summary, the default) and/or writes a Chrome trace
// (--trace). On IR, --summary is the model summary (op counts, weights).
#include "ProfCommands.h"
#include "tc/Analysis/ModelSummary.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Profile/ChromeTrace.h"
#include "tc/Profile/CompileReport.h"
#include "tc/Profile/DevicePeaks.h"
#include "tc/Profile/ProfileReport.h"
#include "tc/Runtime/RunBuffers.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Runtime/ShapePlanner.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

int profRunMain(int argc, char **argv) {
  return runTool("tc-prof", [&] {
    CommonOptions common;
    bool summary = false;
    std::string format = "text", report, tracePath;
    int iterations = 10, warmup = 2;
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
        "peak-gbps", po::value(&peakGBps)->value_name("G"),
        "the device's memory bandwidth for the roofline, GB/s (default: measured or from "
        "the device's attributes)")("peak-tflops", po::value(&peakTFlops)->value_name("T"),
                                    "the device's FLOP rate for the roofline, TFLOP/s (all "
                                    "kernels; default: estimated per kind)");
    addInputOptions(opts, inputFlags);
    bool noVerify = false;
    addVerifyOption(opts, noVerify);
    std::vector<TargetOption> runOptions = allRunOptions();
    addTargetOptions(opts, runOptions);
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
    TargetOptionValues runValues = targetOptionValues(vm, runOptions);
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

    Artifact artifact = readArtifact(buf, artifactCheck(noVerify));
    // The compile timeline, for --trace: the executable takes the artifact.
    std::shared_ptr<const MemoryBuffer> timelineSection;
    if (artifact.section(kSectionTimeline))
      timelineSection = artifact.share(kSectionTimeline);
    const Target &target = requireTarget(artifact.target);
    noteRunTimePlanning("tc-prof", artifact);
    std::unique_ptr<Executable> exe = target.load(std::move(artifact), runValues, 0);
    // A train step runs on its inputs and @init's state. On a GPU the state
    // stays on the device from run to run, each run's updated state the
    // next one's, as in `tc-run --train`: the trace shows train steps, not
    // the state's upload and download around every one. The batch goes to
    // the device once too (tc-run --train keeps its batches there).
    std::vector<HostTensor> inputs = gatherRunInputs(exe->module(), src);
    std::optional<TrainSignature> sig = trainSignature(exe->module());
    const size_t stateCount = sig && target.gpu ? sig->state : 0;
    const Function &main = exe->module().main();
    std::vector<RunInput> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      in[i].host = &inputs[i];
      if (stateCount && i < inputs.size() - stateCount)
        if (DeviceAddress at = exe->keepOnDevice(inputs[i]))
          in[i] = RunInput{nullptr, inputs[i].dtype(), inputs[i].shape(), at, inputs[i].byteSize()};
    }
    auto runOnce = [&] {
      if (!stateCount) {
        exe->run(inputs);
        return;
      }
      std::vector<RunOutput> outs(main.results.size());
      for (RunOutput &o : outs)
        o.to = RunOutput::To::ModelDevice;
      exe->runOn(nullptr, in, outs);
      for (size_t j = 0; j < stateCount; ++j) {
        const RunOutput &o = outs[outs.size() - stateCount + j];
        size_t a = in.size() - stateCount + j;
        in[a] = nextRunInput(o, main.args[a]->type.dtype);
      }
    };
    if (stateCount)
      std::cerr << "tc-prof: a train step: its state (" << stateCount
                << " tensors) and its batch stay on the device, each run one step further\n";
    for (int i = 0; i < std::max(warmup, exe->minWarmup()); ++i)
      runOnce();

    RunTrace trace;
    exe->setTrace(&trace);
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
    exe->setTrace(nullptr);
    if (trace.steps.empty())
      fail(common.input, ": these inputs' sizes could not be planned, so nothing was traced "
                         "step by step (tc-run --print-steps says why)");

    DevicePeaks peaks = exe->peaks();
    if (peakGBps > 0)
      peaks.bytesPerSecond = peakGBps * 1e9, peaks.source += "; bandwidth set by --peak-gbps";
    if (peakTFlops > 0)
      peaks.matrixFlops = peaks.vectorFlops = peakTFlops * 1e12,
      peaks.source += "; FLOP rate set by --peak-tflops";
    ProfileReport r = summarizeTrace(trace, peaks);
    r.model = common.input;

    if (!tracePath.empty()) {
      std::vector<TimelineEntry> timeline;
      if (timelineSection)
        timeline = parseTimelineJson(std::string(timelineSection->str()), common.input);
      writeFileAtomically(tracePath, chromeTraceJson(trace, timeline, r), /*sync=*/false);
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
