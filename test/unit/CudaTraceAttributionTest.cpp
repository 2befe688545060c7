#include "tc/Runtime/CudaTraceAttribution.h"
#include <gtest/gtest.h>

using namespace tc;
using Track = TraceEvent::Track;

namespace {

constexpr unsigned kThread = 4242; // the thread that runs the plan

TraceEvent host(int step, double start, double dur, const char *category = "kernel") {
  TraceEvent e;
  e.track = Track::Host;
  e.step = step;
  e.category = category;
  e.startUs = start;
  e.durUs = dur;
  return e;
}

TraceEvent api(uint64_t correlation, double start, unsigned thread = kThread) {
  TraceEvent e;
  e.track = Track::Api;
  e.lane = thread;
  e.name = "cuLaunchKernel";
  e.startUs = start;
  e.durUs = 2;
  e.correlation = correlation;
  return e;
}

TraceEvent device(uint64_t correlation, const char *name, double start) {
  TraceEvent e;
  e.track = Track::Device;
  e.lane = 13;
  e.name = name;
  e.startUs = start;
  e.durUs = 5;
  e.correlation = correlation;
  return e;
}

// A run of three steps enqueued one by one: a kernel, a library call (two
// kernels: the GEMM, launched by the library's own API call, and the
// epilogue), a kernel; the input upload before them.
std::vector<TraceEvent> stepByStepRun() {
  return {host(-1, 0, 10, "memcpy"),
          api(1, 4),
          device(1, "memcpy HtoD 64 B", 11),
          host(0, 10, 10),
          api(2, 14),
          device(2, "tc_a", 30),
          host(1, 20, 10, "library"),
          api(3, 21),
          api(4, 25),
          device(3, "sm90_gemm", 40),
          device(4, "tc_b__epilogue", 50),
          host(2, 30, 10),
          api(5, 33),
          device(5, "tc_c", 60)};
}

int stepOf(const std::vector<TraceEvent> &events, const char *name) {
  for (const TraceEvent &e : events)
    if (e.track == Track::Device && e.name == name)
      return e.step;
  return -2;
}

const TraceEvent &named(const std::vector<TraceEvent> &events, const char *name) {
  for (const TraceEvent &e : events)
    if (e.track == Track::Device && e.name == name)
      return e;
  throw std::runtime_error(name);
}

// The graph replay of the same plan: one launch, every kernel sharing its
// correlation, listed out of start order (records arrive from several
// flushes in any order).
std::vector<TraceEvent> graphRun(std::vector<const char *> names) {
  std::vector<TraceEvent> ev = {host(-1, 0, 10, "graph"), api(9, 3)};
  double start = 100;
  for (const char *n : names)
    ev.push_back(device(9, n, start += 10));
  std::swap(ev[2], ev.back());
  return ev;
}

} // namespace

TEST(CudaTraceAttribution, StepByStepCallsInsideAStepGiveItTheirWork) {
  std::vector<TraceEvent> ev = stepByStepRun();
  std::optional<StepWork> work = attributeDeviceEvents(ev, kThread, 3, nullptr);
  EXPECT_EQ(stepOf(ev, "tc_a"), 0);
  EXPECT_EQ(stepOf(ev, "sm90_gemm"), 1);
  EXPECT_EQ(stepOf(ev, "tc_b__epilogue"), 1);
  EXPECT_EQ(stepOf(ev, "tc_c"), 2);
  EXPECT_EQ(stepOf(ev, "memcpy HtoD 64 B"), -1); // the input upload: no step, no complaint
  EXPECT_EQ(named(ev, "memcpy HtoD 64 B").note, "");
  EXPECT_EQ(ev[4].step, 0); // the Api event too
  ASSERT_TRUE(work);
  EXPECT_EQ(*work, (StepWork{{"tc_a"}, {"sm90_gemm", "tc_b__epilogue"}, {"tc_c"}}));
}

TEST(CudaTraceAttribution, CallsOfAnotherThreadOrWithoutACallAreNotAttributed) {
  std::vector<TraceEvent> ev = {host(0, 10, 10), api(2, 14, kThread + 1), device(2, "other", 30),
                                device(77, "orphan", 31)};
  attributeDeviceEvents(ev, kThread, 1, nullptr);
  EXPECT_EQ(stepOf(ev, "other"), -1);
  EXPECT_EQ(named(ev, "other").note, "");
  EXPECT_EQ(stepOf(ev, "orphan"), -1);
  EXPECT_EQ(named(ev, "orphan").note, "no API call of this run launched it (correlation 77)");
}

TEST(CudaTraceAttribution, GraphKernelsFollowTheLearnedOrder) {
  std::vector<TraceEvent> first = stepByStepRun();
  StepWork learned = *attributeDeviceEvents(first, kThread, 3, nullptr);
  std::vector<TraceEvent> ev = graphRun({"tc_a", "sm90_gemm", "tc_b__epilogue", "tc_c"});
  EXPECT_FALSE(attributeDeviceEvents(ev, kThread, 3, &learned)); // learns nothing
  EXPECT_EQ(stepOf(ev, "tc_a"), 0);
  EXPECT_EQ(stepOf(ev, "sm90_gemm"), 1);
  EXPECT_EQ(stepOf(ev, "tc_b__epilogue"), 1);
  EXPECT_EQ(stepOf(ev, "tc_c"), 2);
  EXPECT_EQ(named(ev, "tc_c").note, "attributed by order within a CUDA graph");
  EXPECT_EQ(ev[1].step, -1); // cuGraphLaunch itself is no step
}

TEST(CudaTraceAttribution, AGraphThatDisagreesIsAlignedByName) {
  StepWork learned{{"tc_a"}, {"sm90_gemm", "tc_b__epilogue"}, {"tc_c"}};
  // Another GEMM kernel while captured: between steps 0 and 1, so no step.
  std::vector<TraceEvent> ev = graphRun({"tc_a", "sm80_gemm", "tc_b__epilogue", "tc_c"});
  attributeDeviceEvents(ev, kThread, 3, &learned);
  EXPECT_EQ(stepOf(ev, "tc_a"), 0);
  EXPECT_EQ(stepOf(ev, "tc_b__epilogue"), 1);
  EXPECT_EQ(stepOf(ev, "tc_c"), 2);
  EXPECT_EQ(stepOf(ev, "sm80_gemm"), -1);
  EXPECT_EQ(named(ev, "sm80_gemm").note, "CUDA graph replay, not attributed: the step-by-step "
                                         "run did not launch sm80_gemm here");
  // A kernel missing from the replay leaves the others in place.
  ev = graphRun({"tc_a", "tc_c"});
  attributeDeviceEvents(ev, kThread, 3, &learned);
  EXPECT_EQ(stepOf(ev, "tc_a"), 0);
  EXPECT_EQ(stepOf(ev, "tc_c"), 2);
  // An extra kernel inside one step's kernels belongs to that step.
  ev = graphRun({"tc_a", "sm90_gemm", "pad_kernel", "tc_b__epilogue", "tc_c"});
  attributeDeviceEvents(ev, kThread, 3, &learned);
  EXPECT_EQ(stepOf(ev, "pad_kernel"), 1);
  EXPECT_NE(named(ev, "pad_kernel").note.find("ran between this step's kernels"),
            std::string::npos);
}

TEST(CudaTraceAttribution, AGraphWithNothingLearnedSaysSo) {
  std::vector<TraceEvent> ev = graphRun({"tc_a"});
  attributeDeviceEvents(ev, kThread, 3, nullptr);
  EXPECT_EQ(stepOf(ev, "tc_a"), -1);
  EXPECT_EQ(named(ev, "tc_a").note, "CUDA graph replay, not attributed: no step-by-step run of "
                                    "this plan was traced to learn its kernels");
}
