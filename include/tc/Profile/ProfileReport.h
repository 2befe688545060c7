// tc-prof's tables and verdict, computed from a RunTrace: one row per step
// (or per device kernel no step claims) with its time, share, achieved
// bandwidth and FLOP rate and how close it came to the roofline; per-run
// totals (wall, host, device, idle); the largest gaps; and a verdict in
// plain words. Printed as text, JSON (the --format=json report that
// `tc-prof diff` reads back) or CSV.
#pragma once
#include "tc/Profile/DevicePeaks.h"
#include "tc/Runtime/Trace.h"
#include <string>
#include <vector>

namespace tc {

struct KernelRow {
  int step = -1;      // index into the trace's steps; -1: a kernel no step claims
  std::string name;   // the step's group, or the device's kernel name
  std::string result; // "%y"
  std::string kind;   // kernel, library, copy, fallback, memcpy, unattributed
  std::string detail; // what ran it
  std::string signature, dtype;
  std::vector<std::string> nodes, opTypes;
  // A train step's phase (StepInfo::phase: forward, backward, optimizer);
  // "" for a device kernel no step claims.
  std::string phase;
  double calls = 0; // events per run (a library call may launch several kernels)
  // Time per run: the median over the runs (a run the OS preempted does not
  // skew it), and its spread: 1.4826 x the median absolute deviation (the
  // standard deviation for normal noise, robust to outliers).
  double usPerRun = 0;
  double spreadUs = 0;
  double share = 0;            // of the summed time of all rows
  uint64_t bytes = 0;          // per run
  double flops = 0;            // per run
  double gbps = 0, tflops = 0; // achieved
  double roofline = -1;        // roofline time / actual time (-1: not known)
  std::string limit;           // "memory" or "compute"
};

// A train step's time per phase: the sums of its rows'.
struct PhaseTotal {
  std::string phase;  // forward, backward, optimizer; "other": rows of no step
  size_t kernels = 0; // rows
  double calls = 0;   // events per run
  double usPerRun = 0;
  double share = 0; // of the summed time of all rows
};

struct LaunchGap {
  double us = 0;
  int run = -1;
  std::string before; // the row that started after the gap
};

struct ProfileReport {
  std::string model, backend, device, deviceNote, peaksNote;
  std::string timeSource; // which events the rows are timed by
  int runs = 0;
  bool graph = false; // the runs replayed a CUDA graph
  // The host issued work a device ran alongside (RunTrace::asyncDevice):
  // host and device times overlap, and the device span means something.
  bool asyncDevice = false;
  // Per run, medians over the runs:
  double wallMs = -1;          // wall time of a run
  double hostMs = -1;          // CUDA: the host's time issuing work (steps, graph launches);
                               // CPU: the run's time outside kernels (overhead)
  double deviceMs = -1;        // time the device was busy (union of its events; CPU: kernels)
  double spanMs = -1;          // first device event's start to last one's end
  double idleFraction = -1;    // 1 - device / span
  std::vector<KernelRow> rows; // by time, largest first
  std::vector<LaunchGap> gaps; // largest first, at most 5
  std::string verdict;         // "launch-bound", "device-bound", "overhead-bound"
  std::string verdictText;     // the reasoning, in plain words
  // Per phase, in step order (forward, backward, optimizer, other), for a
  // train step (a trace with a backward or optimizer step); empty otherwise.
  std::vector<PhaseTotal> phases;

  std::string text(size_t maxRows = 25) const;
  std::string json() const;
  std::string csv() const;
  // Reads json() back, or a Chrome trace written by tc-prof (its report is in
  // "otherData"). Throws tc::Error naming `what`.
  static ProfileReport fromJson(const std::string &json, const std::string &what);
};

ProfileReport summarizeTrace(const RunTrace &trace, const DevicePeaks &peaks);

} // namespace tc
