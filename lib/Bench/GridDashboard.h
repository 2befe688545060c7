// The dashboard's kernel-grid parts (Dashboard.cpp calls them with the rows
// of kind grid): a section of the landing page and one page per target.
#pragma once
#include "tc/Bench/Dashboard.h"
#include <string>
#include <vector>

namespace tc::bench {

// grid-<target>.html
std::string gridPageFile(const std::string &target);

// The landing page's section (id="kernel-grid"): per target, its latest grid
// run against the floor and its worst point; "" without grid rows.
std::string gridLandingSection(const std::vector<StoredResult> &grid);

// Per target: the runs' floor numbers over time, the latest run per family,
// its worst points by roofline fraction and against torch.compile, and its
// failures.
std::vector<DashboardPage> gridPages(const std::vector<StoredResult> &grid);

} // namespace tc::bench
