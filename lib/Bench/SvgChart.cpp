#include "tc/Bench/SvgChart.h"
#include "tc/Bench/Html.h"
#include <algorithm>
#include <cmath>
#include <sstream>

namespace tc::bench::svg {

const char *color(size_t i) {
  static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[i % std::size(palette)];
}

namespace {
// The y range over every value, padded; a flat series gets a visible band.
std::pair<double, double> range(const std::vector<Series> &series) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series &s : series)
    for (const auto &v : s.values)
      if (v && std::isfinite(*v)) {
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
      }
  if (!std::isfinite(lo))
    return {0, 1};
  if (hi - lo < 1e-9 * std::max(1.0, std::abs(hi))) {
    double pad = std::max(std::abs(hi) * 0.1, 1e-3);
    return {lo - pad, hi + pad};
  }
  double pad = (hi - lo) * 0.08;
  // Ratios and times are never negative: the axis stops at 0.
  return {lo >= 0 ? std::max(0.0, lo - pad) : lo - pad, hi + pad};
}

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(v != 0 && std::abs(v) < 0.1 ? 2 : 3);
  o << v;
  return o.str();
}
} // namespace

std::string lineChart(const std::string &title, const std::vector<std::string> &xLabels,
                      const std::vector<Series> &series, const std::string &unit,
                      std::optional<std::pair<double, double>> yRange) {
  const double W = 460, H = 220, left = 50, right = 10, top = 24, bottom = 40;
  const double pw = W - left - right, ph = H - top - bottom;
  auto [lo, hi] = yRange ? *yRange : range(series);
  size_t n = xLabels.size();
  auto X = [&](size_t i) { return left + (n > 1 ? pw * double(i) / double(n - 1) : pw / 2); };
  auto Y = [&](double v) { return top + ph * (1 - (v - lo) / (hi - lo)); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\""
    << H + 16 * double((series.size() + 2) / 3) << "\" role=\"img\" class=\"chart\">";
  o << "<text x=\"" << left << "\" y=\"15\" font-size=\"13\" font-weight=\"600\">"
    << html::escape(title) << "</text>";
  // Axes and 4 horizontal grid lines with their values.
  for (int g = 0; g <= 4; ++g) {
    double v = lo + (hi - lo) * g / 4, y = Y(v);
    o << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"#e4e4e4\"/><text x=\"" << left - 4 << "\" y=\"" << y + 4
      << "\" font-size=\"10\" text-anchor=\"end\">" << fmt(v) << "</text>";
  }
  o << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << top + ph
    << "\" stroke=\"#888\"/>";
  // x labels: at most ~8, evenly picked, always the last.
  size_t step = std::max<size_t>(1, (n + 7) / 8);
  for (size_t i = 0; i < n; ++i)
    if (i % step == 0 || i + 1 == n)
      o << "<text x=\"" << X(i) << "\" y=\"" << top + ph + 14
        << "\" font-size=\"9\" text-anchor=\"middle\">" << html::escape(xLabels[i]) << "</text>";
  o << "<text x=\"4\" y=\"" << top + ph / 2 << "\" font-size=\"10\" transform=\"rotate(-90 8 "
    << top + ph / 2 << ")\" text-anchor=\"middle\">" << html::escape(unit) << "</text>";
  for (size_t s = 0; s < series.size(); ++s) {
    const char *c = color(s);
    std::ostringstream path;
    bool pen = false;
    for (size_t i = 0; i < series[s].values.size() && i < n; ++i) {
      const auto &v = series[s].values[i];
      if (!v || !std::isfinite(*v)) {
        pen = false;
        continue;
      }
      path << (pen ? " L" : " M") << X(i) << " " << Y(*v);
      pen = true;
      o << "<circle cx=\"" << X(i) << "\" cy=\"" << Y(*v) << "\" r=\"3\" fill=\"" << c
        << "\"><title>" << html::escape(series[s].name) << ", " << html::escape(xLabels[i]) << ": "
        << fmt(*v) << " " << html::escape(unit) << "</title></circle>";
    }
    if (!path.str().empty())
      o << "<path d=\"" << path.str() << "\" fill=\"none\" stroke=\"" << c
        << "\" stroke-width=\"1.5\"/>";
    double lx = left + double(s % 3) * 140, ly = H - 6 + 16 * double(s / 3);
    o << "<rect x=\"" << lx << "\" y=\"" << ly - 8 << "\" width=\"10\" height=\"10\" fill=\"" << c
      << "\"/><text x=\"" << lx + 14 << "\" y=\"" << ly + 1 << "\" font-size=\"11\">"
      << html::escape(series[s].name) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string sparkline(const std::vector<std::optional<double>> &values) {
  std::vector<std::pair<size_t, double>> pts;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] && std::isfinite(*values[i]))
      pts.push_back({i, *values[i]});
  if (pts.size() < 2)
    return "";
  double lo = pts[0].second, hi = lo;
  for (auto &p : pts) {
    lo = std::min(lo, p.second);
    hi = std::max(hi, p.second);
  }
  if (hi - lo < 1e-12)
    hi = lo + 1;
  const double W = 100, H = 20;
  auto X = [&](size_t i) { return 2 + (W - 4) * double(i) / double(values.size() - 1); };
  auto Y = [&](double v) { return H - 2 - (H - 4) * (v - lo) / (hi - lo); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" class=\"spark\"><polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.2\" "
       "points=\"";
  for (auto &p : pts)
    o << X(p.first) << "," << Y(p.second) << " ";
  o << "\"/><circle cx=\"" << X(pts.back().first) << "\" cy=\"" << Y(pts.back().second)
    << "\" r=\"2\" fill=\"#d62728\"/></svg>";
  return o.str();
}

} // namespace tc::bench::svg
