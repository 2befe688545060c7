// The kernel-family grid (utils/kernel-grid.py; docs/bench.md "Kernel-family
// grid") in the benchmark history: its JSON lines become rows of kind grid
// (tc-bench --import-grid; Result.h says which column holds what), and a
// run's points are held to issue 36's floor here, the one place that floor
// is written down for the dashboard.
#pragma once
#include "tc/Bench/Result.h"
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

inline constexpr const char *kGridSuite = "kernel-grid";

// A kernel-grid.py --out file: its target and device (the same on every
// line) and its points as grid rows.
struct GridFile {
  std::string target, device;
  std::vector<BenchResult> points;
};

// Reads one --out file. Every defect (a line that is not a JSON object, a
// point without name / family / dtype / status, lines of two targets) is a
// tc::Error "FILE:LINE: why". A file without a target or device field
// (written before kernel-grid.py recorded them) takes `target` and "" .
GridFile readGridJsonl(const std::string &path, const std::string &target = "");

// The floor: memory-bound points with at least kGridFloorBytes of traffic
// reach kGridGood of the bandwidth roofline at least kGridGoodShare of the
// time and never fall below kGridPoor; every point is at least as fast as
// torch.compile's own kernel for the same op and shape.
inline constexpr int64_t kGridFloorBytes = int64_t(16) << 20;
inline constexpr double kGridGood = 0.70, kGridPoor = 0.35, kGridGoodShare = 0.90;

// A family's points (or the whole run's: family "").
struct GridSummary {
  std::string family;
  size_t points = 0, failed = 0;
  std::optional<double> medianRoofline, worstRoofline;
  size_t floorPoints = 0, belowGood = 0, belowPoor = 0; // memory-bound, >= kGridFloorBytes
  size_t withCompile = 0, slowerThanCompile = 0;        // points timed beside torch.compile
  std::optional<double> medianVsEager, medianVsCompile;
  bool floorMet() const;
};

// Whether a passing point is one the bandwidth floor holds.
bool heldToFloor(const BenchResult &p);

// One summary per family in first-seen order, then the whole run's.
std::vector<GridSummary> summarizeGrid(const std::vector<const BenchResult *> &points);

} // namespace tc::bench
