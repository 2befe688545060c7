// Trend charts as inline SVG (no script, no network): a line chart with
// axes and a legend for the history of a metric over runs, and a sparkline
// for a table cell.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tc::bench::svg {

struct Series {
  std::string name;
  std::vector<std::optional<double>> values; // one per x; absent: a gap
};

// `xLabels` name the runs (oldest first); `title` heads the chart. Points
// carry <title> tooltips with their exact value. The y axis spans the
// values, or `yRange` when given (pass rates: 0..100).
std::string lineChart(const std::string &title, const std::vector<std::string> &xLabels,
                      const std::vector<Series> &series, const std::string &unit,
                      std::optional<std::pair<double, double>> yRange = std::nullopt);

// A 100x20 polyline of `values` (absent ones skipped); the last point is
// marked. Empty string when fewer than two values exist.
std::string sparkline(const std::vector<std::optional<double>> &values);

// The colour of series i.
const char *color(size_t i);

} // namespace tc::bench::svg
