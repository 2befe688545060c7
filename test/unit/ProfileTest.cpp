// tc-prof's arithmetic on traces whose answers are known: per-step rows,
// roofline fractions, per-run totals, gaps and the verdict; GPU peaks from
// attributes; text tables.
#include "tc/Analysis/StepCost.h"
#include "tc/IR/Parser.h"
#include "tc/Profile/ChromeTrace.h"
#include "tc/Profile/DevicePeaks.h"
#include "tc/Profile/ProfileDiff.h"
#include "tc/Profile/ProfileReport.h"
#include "tc/Support/TextTable.h"
#include <gtest/gtest.h>

using namespace tc;

namespace {

TraceEvent event(TraceEvent::Track track, const std::string &cat, int step, int run, double start,
                 double dur, uint64_t corr = 0) {
  TraceEvent e;
  e.track = track;
  e.name = cat == "run" ? "run" : "k" + std::to_string(step);
  e.category = cat;
  e.step = step;
  e.run = run;
  e.startUs = start;
  e.durUs = dur;
  e.correlation = corr;
  return e;
}

// Two steps on a GPU: step 0 moves 1 MB (memory-bound), step 1 does 1 GFLOP
// in f16 on matrix units. Two runs; host issue time `hostUs` per step.
void twoStepGpuTrace(RunTrace &t, double hostUs) {
  t.backend = "cuda";
  t.asyncDevice = true; // a GPU: the host issues, the device runs alongside
  t.device = "test GPU";
  t.deviceNote = "synthetic";
  StepInfo a;
  a.group = "fused_add_0";
  a.kind = "kernel";
  a.dtype = "f16";
  a.bytes = 1000000;
  a.flops = 250000;
  StepInfo b = a;
  b.group = "fused_matmul_1";
  b.kind = "library";
  b.matrix = true;
  b.matrixDType = "f16";
  b.bytes = 2000000;
  b.flops = 1e9;
  t.steps = {a, b};
  using T = TraceEvent::Track;
  for (int run = 0; run < 2; ++run) {
    double at = run * 1000;
    t.events.push_back(event(T::Host, "run", -1, run, at, 200));
    t.events.push_back(event(T::Host, "kernel", 0, run, at, hostUs));
    t.events.push_back(event(T::Host, "library", 1, run, at + hostUs, hostUs));
    // Device: step 0 takes 10 us, a 5 us gap, step 1 takes 40 us as two kernels.
    t.events.push_back(event(T::Device, "kernel", 0, run, at + 20, 10));
    t.events.push_back(event(T::Device, "kernel", 1, run, at + 35, 30));
    t.events.push_back(event(T::Device, "kernel", 1, run, at + 65, 10));
  }
}

DevicePeaks testPeaks() {
  DevicePeaks p;
  p.bytesPerSecond = 1e12; // 1 TB/s: 1 MB takes 1 us
  p.matrixFlops = 1e14;    // 100 TFLOP/s: 1 GFLOP takes 10 us
  p.vectorFlops = 1e13;
  p.source = "test";
  return p;
}

} // namespace

TEST(ProfileReportTest, RowsRooflineAndTotals) {
  RunTrace t;
  twoStepGpuTrace(t, 2);
  ProfileReport r = summarizeTrace(t, testPeaks());
  ASSERT_EQ(r.runs, 2);
  ASSERT_EQ(r.rows.size(), 2u);
  const KernelRow &mm = r.rows[0], &add = r.rows[1]; // largest first
  EXPECT_EQ(mm.name, "fused_matmul_1");
  EXPECT_DOUBLE_EQ(mm.usPerRun, 40);
  EXPECT_DOUBLE_EQ(mm.calls, 2);
  EXPECT_DOUBLE_EQ(mm.share, 0.8);
  EXPECT_DOUBLE_EQ(mm.tflops, 1e9 / 40e-6 / 1e12); // 25 TFLOP/s
  EXPECT_DOUBLE_EQ(mm.roofline, 10.0 / 40);        // compute: 10 us of 40
  EXPECT_EQ(mm.limit, "compute");
  EXPECT_DOUBLE_EQ(add.usPerRun, 10);
  EXPECT_DOUBLE_EQ(add.gbps, 100); // 1 MB in 10 us
  EXPECT_DOUBLE_EQ(add.roofline, 0.1);
  EXPECT_EQ(add.limit, "memory");
  EXPECT_DOUBLE_EQ(r.wallMs, 0.2);
  EXPECT_DOUBLE_EQ(r.deviceMs, 0.05);
  EXPECT_DOUBLE_EQ(r.spanMs, 0.055);
  EXPECT_DOUBLE_EQ(r.hostMs, 0.004);
  EXPECT_NEAR(r.idleFraction, 5.0 / 55, 1e-12);
  ASSERT_FALSE(r.gaps.empty());
  EXPECT_DOUBLE_EQ(r.gaps[0].us, 5);
  EXPECT_EQ(r.gaps[0].before, "fused_matmul_1");
  EXPECT_EQ(r.verdict, "device-bound");
  EXPECT_NE(r.verdictText.find("fused_matmul_1 80%, compute-limited at 25% of the roofline"),
            std::string::npos)
      << r.verdictText;
}

TEST(ProfileReportTest, LaunchBoundWhenHostIssuesSlowerThanDeviceRuns) {
  RunTrace t;
  twoStepGpuTrace(t, 60);
  ProfileReport r = summarizeTrace(t, testPeaks());
  EXPECT_DOUBLE_EQ(r.hostMs, 0.12);
  EXPECT_EQ(r.verdict, "launch-bound");
  EXPECT_NE(r.verdictText.find("run with CUDA graphs"), std::string::npos) << r.verdictText;
}

TEST(ProfileReportTest, MedianIgnoresOnePreemptedRun) {
  RunTrace t;
  twoStepGpuTrace(t, 2);
  using T = TraceEvent::Track;
  for (int run = 2; run < 5; ++run) { // three more runs; the last one is slow
    double at = run * 1000, slow = run == 4 ? 100 : 1;
    t.events.push_back(event(T::Host, "run", -1, run, at, 200));
    t.events.push_back(event(T::Device, "kernel", 0, run, at + 20, 10 * slow));
  }
  ProfileReport r = summarizeTrace(t, testPeaks());
  const KernelRow *add = nullptr;
  for (const KernelRow &k : r.rows)
    add = k.name == "fused_add_0" ? &k : add;
  ASSERT_TRUE(add);
  EXPECT_DOUBLE_EQ(add->usPerRun, 10);
  EXPECT_DOUBLE_EQ(add->spreadUs, 0);
}

TEST(ProfileReportTest, JsonRoundTripAndDiff) {
  RunTrace t;
  twoStepGpuTrace(t, 2);
  ProfileReport r = summarizeTrace(t, testPeaks());
  r.model = "m.tcx";
  ProfileReport back = ProfileReport::fromJson(r.json(), "report");
  EXPECT_EQ(back.model, "m.tcx");
  ASSERT_EQ(back.rows.size(), r.rows.size());
  EXPECT_EQ(back.rows[0].name, r.rows[0].name);
  EXPECT_DOUBLE_EQ(back.rows[0].usPerRun, r.rows[0].usPerRun);
  EXPECT_EQ(back.verdict, r.verdict);
  std::string same = diffReports(r, back, "text");
  EXPECT_NE(same.find("0 of 2 kernels changed beyond noise"), std::string::npos) << same;
  EXPECT_THROW(ProfileReport::fromJson("{\"x\": 1}", "r"), std::exception);
}

namespace {

// A CPU train step: forward steps over nodes A (10 us) and B (20 us), a
// backward step differentiating both (30 us), an optimizer step (40 us);
// two runs.
void trainTrace(RunTrace &t) {
  t.backend = "cpu";
  t.device = "test CPU";
  t.deviceNote = "synthetic";
  auto step = [](const char *group, std::vector<std::string> nodes, const char *phase) {
    StepInfo s;
    s.group = group;
    s.kind = "kernel";
    s.nodes = std::move(nodes);
    s.phase = phase;
    return s;
  };
  t.steps = {step("fused_conv_0", {"A"}, "forward"), step("fused_relu_1", {"B"}, "forward"),
             step("fused_grad_2", {"B", "A"}, "backward"), step("fused_adam_3", {""}, "optimizer")};
  using T = TraceEvent::Track;
  for (int run = 0; run < 2; ++run) {
    double at = run * 1000;
    t.events.push_back(event(T::Host, "run", -1, run, at, 110));
    t.events.push_back(event(T::Host, "kernel", 0, run, at, 10));
    t.events.push_back(event(T::Host, "kernel", 1, run, at + 10, 20));
    t.events.push_back(event(T::Host, "kernel", 2, run, at + 30, 30));
    t.events.push_back(event(T::Host, "kernel", 3, run, at + 60, 40));
  }
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST(ProfileReportTest, TrainStepSplitsByPhase) {
  RunTrace t;
  trainTrace(t);
  ProfileReport r = summarizeTrace(t, testPeaks());
  ASSERT_EQ(r.rows.size(), 4u);
  ASSERT_EQ(r.phases.size(), 3u); // no "other": every row is a step
  EXPECT_EQ(r.phases[0].phase, "forward");
  EXPECT_EQ(r.phases[0].kernels, 2u);
  EXPECT_DOUBLE_EQ(r.phases[0].usPerRun, 30);
  EXPECT_DOUBLE_EQ(r.phases[0].share, 0.3);
  EXPECT_DOUBLE_EQ(r.phases[0].calls, 2);
  EXPECT_EQ(r.phases[1].phase, "backward");
  EXPECT_EQ(r.phases[1].kernels, 1u);
  EXPECT_DOUBLE_EQ(r.phases[1].share, 0.3);
  EXPECT_EQ(r.phases[2].phase, "optimizer");
  EXPECT_DOUBLE_EQ(r.phases[2].usPerRun, 40);
  EXPECT_EQ(r.rows[0].name, "fused_adam_3"); // rows stay largest first
  EXPECT_EQ(r.rows[0].phase, "optimizer");
  EXPECT_EQ(r.verdict, "device-bound"); // one verdict for the step
  // Text: a phase column, rows grouped by phase in step order, the totals.
  std::string text = r.text();
  EXPECT_NE(text.find("phase"), std::string::npos) << text;
  size_t fwd = text.find("fused_relu_1"), bwd = text.find("fused_grad_2"),
         opt = text.find("fused_adam_3");
  EXPECT_LT(fwd, bwd);
  EXPECT_LT(bwd, opt);
  EXPECT_NE(text.find("B,A"), std::string::npos) << text; // the backward row's nodes
  EXPECT_NE(text.find("per phase (train step):"), std::string::npos) << text;
  // JSON keeps the phases; an inference trace has none.
  ProfileReport back = ProfileReport::fromJson(r.json(), "report");
  ASSERT_EQ(back.phases.size(), 3u);
  EXPECT_EQ(back.phases[2].phase, "optimizer");
  EXPECT_DOUBLE_EQ(back.phases[1].usPerRun, 30);
  EXPECT_EQ(back.rows[0].phase, "optimizer");
  std::string diff = diffReports(r, back, "text");
  EXPECT_NE(diff.find("optimizer_ms: 0.040 -> 0.040"), std::string::npos) << diff;
  EXPECT_NE(r.csv().find(",optimizer\n"), std::string::npos) << r.csv();
  RunTrace inference;
  twoStepGpuTrace(inference, 2);
  EXPECT_TRUE(summarizeTrace(inference, testPeaks()).phases.empty());
  EXPECT_EQ(summarizeTrace(inference, testPeaks()).text().find("per phase"), std::string::npos);
}

TEST(ChromeTraceTest, TrainStepPhasesAndForwardBackwardFlows) {
  RunTrace t;
  trainTrace(t);
  ProfileReport r = summarizeTrace(t, testPeaks());
  std::string json = chromeTraceJson(t, {}, r);
  // Per run: one span per phase; fused_grad_2 names A and B: a flow from
  // each forward step, 2 per run (each flow is an "s" and an "f" event).
  EXPECT_EQ(count(json, "\"cat\":\"phase\""), 6u) << json;
  EXPECT_EQ(count(json, "\"name\":\"fwd-bwd\""), 8u) << json;
  EXPECT_EQ(count(json, "\"cat\":\"kernel,backward\""), 2u);
  EXPECT_EQ(count(json, "\"name\":\"optimizer\""), 2u); // a span per run
  // No phases in an inference trace.
  RunTrace inference;
  twoStepGpuTrace(inference, 2);
  std::string plain = chromeTraceJson(inference, {}, summarizeTrace(inference, testPeaks()));
  EXPECT_EQ(count(plain, "fwd-bwd"), 0u);
  EXPECT_EQ(count(plain, "\"cat\":\"phase\""), 0u);
  EXPECT_EQ(count(plain, "kernel,forward"), 0u);
}

TEST(StepCostTest, AFusedGroupTakesItsLatestPhase) {
  std::unique_ptr<Module> m = parseModule(R"(module @m {
  func @g(%x: f32[4]) -> (f32[4]) {
    %y = Neg(%x) : f32[4] loc("m.onnx":"n" backward)
    %z = Sqrt(%y) : f32[4] loc("":"" optimizer)
    return %z
  }
  func @h(%x: f32[4]) -> (f32[4]) {
    %y = Neg(%x) : f32[4] loc("m.onnx":"n")
    %z = Cos(%y) : f32[4] loc("m.onnx":"n" backward)
    return %z
  }
  func @main(%x: f32[4]) -> (f32[4]) {
    %a = Fused(%x) {callee = "g", kind = "pointwise"} : f32[4]
    %b = Fused(%a) {callee = "h", kind = "pointwise"} : f32[4]
    %c = Relu(%b) : f32[4] loc("m.onnx":"r")
    return %c
  }
})",
                                          "x.tcir");
  const auto &ops = m->main().ops;
  EXPECT_EQ(describeStep(*m, *ops[0]).phase, "optimizer");
  EXPECT_EQ(describeStep(*m, *ops[1]).phase, "backward");
  EXPECT_EQ(describeStep(*m, *ops[2]).phase, "forward");
  EXPECT_EQ(describeStep(*m, *ops[1]).nodes, std::vector<std::string>{"n"});
}

TEST(DevicePeaksTest, H100FromAttributes) {
  // H100 SXM: sm_90, 132 SMs, 1980 MHz, HBM3 5120-bit at 2619 MHz.
  DevicePeaks p = gpuPeaks(9, 0, 132, 1980000, 2619000, 5120);
  EXPECT_NEAR(p.bytesPerSecond / 1e12, 3.352, 0.001);
  EXPECT_NEAR(p.matrixFlops / 1e12, 1070.5, 0.1);
  EXPECT_NEAR(p.vectorFlops / 1e12, 66.9, 0.1);
  StepInfo s;
  s.matrix = true;
  s.matrixDType = "f16";
  s.dtype = "f32"; // an f16 GEMM whose epilogue casts to f32 still ran on tensor cores
  EXPECT_EQ(p.flopsFor(s), p.matrixFlops);
  s.matrixDType = "f32"; // f32 GEMMs do not get the 16-bit tensor-core rate
  EXPECT_EQ(p.flopsFor(s), p.vectorFlops);
}

TEST(TextTableTest, AlignsAndQuotes) {
  TextTable t({"name", "us"});
  t.add({"a,b", "1.5"});
  t.add({"long \"name\"", "10.25"});
  t.add({"x", "-"});
  EXPECT_EQ(t.text(),
            "name            us\na,b            1.5\nlong \"name\"  10.25\nx                -\n");
  EXPECT_EQ(t.csv(), "name,us\n\"a,b\",1.5\n\"long \"\"name\"\"\",10.25\nx,-\n");
  EXPECT_EQ(fixed(-1, 2), "-");
  EXPECT_EQ(fixed(2.345, 1), "2.3");
}
