// tc-prof's arithmetic on traces whose answers are known: per-step rows,
// roofline fractions, per-run totals, gaps and the verdict; GPU peaks from
// attributes; text tables.
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
