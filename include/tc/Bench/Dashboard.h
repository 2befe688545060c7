// The benchmark dashboard: a static HTML site from the stored results
// (ResultStore.h), readable from file:// with no network (inline CSS and
// SVG, no script).
//
//   index.html                 per suite x target x mode x precision (latest
//                              run): pass rate, geomean speedup vs eager, mean
//                              compile time, geomean peak-memory compression,
//                              a speedup sparkline over the history, and the
//                              regressions since the previous run
//   suite-<suite>-<target>.html trend charts over the runs, and per mode and
//                              precision every model's numbers (latest run)
//                              with its change since the previous run
//   train-<suite>-<target>.html the same for training rows (tc-bench --train):
//                              ms per step, losses vs PyTorch's; the landing
//                              page's table id="training" summarizes them
//   grid-<target>.html         the kernel-family grid's runs (rows of kind
//                              grid, Grid.h): the floor over time, families,
//                              worst points, failures; the landing page's
//                              table id="grid-summary" has each target's latest
//
// Cells of the landing table carry data-key="suite/target/mode/precision"
// (on the row) and data-metric="pass_rate|speedup|compile_s|compression" so
// tests can find them.
#pragma once
#include "tc/Bench/Result.h"
#include <string>
#include <vector>

namespace tc::bench {

struct DashboardPage {
  std::string file; // relative to the site folder
  std::string html;
};

// The pages for `rows` (ResultStore::all order); `source` names the
// database on the pages.
std::vector<DashboardPage> renderDashboard(const std::vector<StoredResult> &rows,
                                           const std::string &source);

// Renders and writes the pages into `dir` (created); returns the files.
std::vector<std::string> writeDashboard(const std::vector<StoredResult> &rows,
                                        const std::string &source, const std::string &dir);

// The page of a suite on a target: suite-<suite>-<target>.html, or for its
// training rows (tc-bench --train) train-<suite>-<target>.html.
std::string suitePageFile(const std::string &suite, const std::string &target, bool train = false);

} // namespace tc::bench
