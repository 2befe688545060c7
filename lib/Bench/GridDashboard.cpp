#include "GridDashboard.h"
#include "tc/Bench/Grid.h"
#include "tc/Bench/Html.h"
#include "tc/Bench/SvgChart.h"
#include <algorithm>
#include <map>
#include <sstream>

namespace tc::bench {

using html::escape;
using html::number;

namespace {

constexpr size_t kWorstShown = 25;

// One grid run's points (rows are in history order: runs stay together).
struct GridRun {
  RunInfo run;
  std::vector<const BenchResult *> points;
};

// Per target, its runs oldest first.
std::map<std::string, std::vector<GridRun>> runsByTarget(const std::vector<StoredResult> &grid) {
  std::map<std::string, std::vector<GridRun>> out;
  for (const StoredResult &r : grid) {
    std::vector<GridRun> &runs = out[r.run.target];
    if (runs.empty() || runs.back().run.runId != r.run.runId)
      runs.push_back({r.run, {}});
    runs.back().points.push_back(&r.result);
  }
  return out;
}

std::string percent(size_t part, size_t whole) {
  return whole ? number(100.0 * double(part) / double(whole), 0, "%") : "\u2013";
}

// "41/44 (93%) at >= 70%" with the cell red when the floor's share is missed.
std::string floorCells(const GridSummary &s) {
  size_t good = s.floorPoints - s.belowGood;
  bool shareMet = double(good) >= kGridGoodShare * double(s.floorPoints);
  std::ostringstream o;
  o << "<td data-metric=\"floor_share\"" << (shareMet ? "" : " class=\"red\"") << ">" << good << "/"
    << s.floorPoints << " (" << percent(good, s.floorPoints) << ")</td>"
    << "<td data-metric=\"below_poor\"" << (s.belowPoor ? " class=\"red\"" : "") << ">"
    << s.belowPoor << "</td><td data-metric=\"slower_than_compile\""
    << (s.slowerThanCompile ? " class=\"red\"" : "") << ">" << s.slowerThanCompile << "/"
    << s.withCompile << "</td>";
  return o.str();
}

const char *kFloorHeads = "<th>memory-bound &ge; 16 MiB at &ge; 70% of the roofline (floor: "
                          "&ge; 90%)</th><th>below 35% (floor: none)</th><th>slower than "
                          "torch.compile (floor: none)</th>";

// A roofline fraction as a percentage: one decimal, three where it is under
// 1% (CPU points against the H200's default peaks).
std::string fraction(double f) { return number(f * 100, f < 0.01 ? 3 : 1, "%"); }

std::string roofCell(const std::optional<double> &f) {
  bool bad = f && *f < kGridPoor;
  return std::string("<td data-metric=\"roofline\"") + (bad ? " class=\"red\"" : "") + ">" +
         (f ? fraction(*f) : "\u2013") + "</td>";
}

std::string ratioCell(const char *metric, const std::optional<double> &v) {
  return std::string("<td data-metric=\"") + metric + "\"" +
         (v && *v < 1.0 ? " class=\"red\"" : "") + ">" + number(v, 2, "x") + "</td>";
}

void pointTable(std::ostringstream &o, const char *id,
                const std::vector<const BenchResult *> &points,
                const std::map<std::string, double> &before) {
  o << "<table id=\"" << id
    << "\"><tr><th class=\"l\">point</th><th class=\"l\">family</th><th "
       "class=\"l\">dtype</th><th>traffic (MiB)</th><th>GFLOP</th><th class=\"l\">bound</th>"
       "<th>tc (us)</th><th>roofline</th><th>previous run</th><th>vs PyTorch eager</th><th>vs "
       "torch.compile</th></tr>\n";
  for (const BenchResult *p : points) {
    auto prev = before.find(p->model);
    o << "<tr><td class=\"l\">" << escape(p->model) << "</td><td class=\"l\">" << escape(p->group)
      << "</td><td class=\"l\">" << escape(p->precision) << "</td><td>"
      << html::mebibytes(p->trafficBytes) << "</td><td>"
      << number(p->flops ? std::optional<double>(*p->flops / 1e9) : std::nullopt, 3)
      << "</td><td class=\"l\">" << escape(p->bound) << "</td><td>"
      << number(p->latencyMs ? std::optional<double>(*p->latencyMs * 1e3) : std::nullopt, 1)
      << "</td>" << roofCell(p->roofline) << "<td>"
      << (prev == before.end() ? "\u2013" : fraction(prev->second)) << "</td>"
      << ratioCell("vs_torch_eager", p->vsTorchEager)
      << ratioCell("vs_torch_compile", p->vsTorchCompile) << "</tr>\n";
  }
  o << "</table>\n";
}

std::string gridPage(const std::string &target, const std::vector<GridRun> &runs) {
  const GridRun &last = runs.back();
  std::vector<GridSummary> sums = summarizeGrid(last.points);
  std::ostringstream o;
  o << html::pageStart("tc kernel grid: " + target) << "<h1>Kernel-family grid on "
    << escape(target)
    << "</h1>\n<p><a href=\"index.html\">all suites</a></p>\n<p class=\"note\">Each point is "
    << "one generated-kernel family at one shape and dtype (utils/kernel-grid.py), checked "
    << "against the reference executor and timed; roofline: max(traffic / bandwidth, FLOPs / "
    << "peak) / time, traffic counting every input read and output written once. Latest run: "
    << escape(last.run.date) << ", commit " << escape(last.run.commit) << ", "
    << escape(last.run.device) << ".</p>\n";

  // The floor over time.
  o << "<h2>Runs</h2>\n<table id=\"grid-runs\"><tr><th class=\"l\">date (UTC)</th><th "
       "class=\"l\">commit</th><th class=\"l\">device</th><th>points</th><th>failed</th><th>"
       "median roofline</th>"
    << kFloorHeads << "</tr>\n";
  std::vector<std::optional<double>> share;
  for (const GridRun &r : runs) {
    GridSummary all = summarizeGrid(r.points).back();
    share.push_back(all.floorPoints
                        ? std::optional<double>(double(all.floorPoints - all.belowGood) /
                                                double(all.floorPoints))
                        : std::nullopt);
    o << "<tr><td class=\"l\">" << escape(r.run.date) << "</td><td class=\"l\">"
      << escape(r.run.commit) << "</td><td class=\"l\">" << escape(r.run.device) << "</td><td>"
      << all.points << "</td><td" << (all.failed ? " class=\"red\"" : "") << ">" << all.failed
      << "</td>" << roofCell(all.medianRoofline) << floorCells(all) << "</tr>\n";
  }
  o << "</table>\n<p>share at &ge; 70% over the runs: " << svg::sparkline(share) << "</p>\n";

  o << "<h2>Families (latest run)</h2>\n<table id=\"grid-families\"><tr><th "
       "class=\"l\">family</th><th>points</th><th>failed</th><th>median roofline</th><th>worst "
       "roofline</th>"
    << kFloorHeads << "<th>median vs PyTorch eager</th><th>median vs torch.compile</th></tr>\n";
  for (const GridSummary &s : sums)
    o << "<tr" << (s.floorMet() ? "" : " class=\"slow\"") << "><td class=\"l\">"
      << (s.family.empty() ? "<b>all</b>" : escape(s.family)) << "</td><td>" << s.points
      << "</td><td" << (s.failed ? " class=\"red\"" : "") << ">" << s.failed << "</td>"
      << roofCell(s.medianRoofline) << roofCell(s.worstRoofline) << floorCells(s)
      << ratioCell("vs_torch_eager", s.medianVsEager)
      << ratioCell("vs_torch_compile", s.medianVsCompile) << "</tr>\n";
  o << "</table>\n";

  // The previous run's fraction of each point (names hold the dtype), to see
  // what a commit moved.
  std::map<std::string, double> before;
  if (runs.size() > 1)
    for (const BenchResult *p : runs[runs.size() - 2].points)
      if (p->passed && p->roofline)
        before[p->model] = *p->roofline;

  std::vector<const BenchResult *> ok;
  for (const BenchResult *p : last.points)
    if (p->passed && p->roofline)
      ok.push_back(p);
  std::vector<const BenchResult *> worst = ok;
  std::stable_sort(worst.begin(), worst.end(), [](const BenchResult *a, const BenchResult *b) {
    return *a->roofline < *b->roofline;
  });
  worst.resize(std::min(worst.size(), kWorstShown));
  o << "<h2>Worst points by roofline fraction</h2>\n";
  pointTable(o, "grid-worst", worst, before);

  std::vector<const BenchResult *> slow;
  for (const BenchResult *p : ok)
    if (p->vsTorchCompile && *p->vsTorchCompile < 1.0)
      slow.push_back(p);
  std::stable_sort(slow.begin(), slow.end(), [](const BenchResult *a, const BenchResult *b) {
    return *a->vsTorchCompile < *b->vsTorchCompile;
  });
  slow.resize(std::min(slow.size(), kWorstShown));
  o << "<h2>Points slower than torch.compile</h2>\n";
  if (slow.empty())
    o << "<p>none</p>\n";
  else
    pointTable(o, "grid-slow", slow, before);

  o << "<h2>Failures</h2>\n";
  std::vector<const BenchResult *> failed;
  for (const BenchResult *p : last.points)
    if (!p->passed)
      failed.push_back(p);
  if (failed.empty())
    o << "<p>none</p>\n";
  else {
    o << "<table id=\"grid-failures\"><tr><th class=\"l\">point</th><th class=\"l\">step</th><th "
         "class=\"l\">error</th></tr>\n";
    for (const BenchResult *p : failed)
      o << "<tr class=\"fail\"><td class=\"l\">" << escape(p->model) << "</td><td class=\"l\">"
        << escape(p->reason) << "</td><td class=\"err\">" << escape(p->error) << "</td></tr>\n";
    o << "</table>\n";
  }
  o << html::pageEnd();
  return o.str();
}

} // namespace

std::string gridPageFile(const std::string &target) {
  return "grid-" + html::slug(target) + ".html";
}

std::string gridLandingSection(const std::vector<StoredResult> &grid) {
  if (grid.empty())
    return "";
  std::ostringstream o;
  o << "<h2 id=\"kernel-grid\">Kernel-family grid (latest run)</h2>\n<p class=\"note\">Generated "
       "kernels family by family over generated shapes and dtypes (utils/kernel-grid.py, "
       "tc-bench --import-grid). The floor: memory-bound points with at least 16 MiB of "
       "traffic at &ge; 70% of the bandwidth roofline on &ge; 90% of them and none below 35%; "
       "every point at least as fast as torch.compile's kernel.</p>\n<table "
       "id=\"grid-summary\"><tr><th class=\"l\">target</th><th class=\"l\">device</th><th "
       "class=\"l\">latest run</th><th>points</th><th>failed</th><th>median roofline</th>"
    << kFloorHeads << "<th class=\"l\">worst point</th><th>floor</th></tr>\n";
  for (const auto &[target, runs] : runsByTarget(grid)) {
    const GridRun &last = runs.back();
    GridSummary all = summarizeGrid(last.points).back();
    const BenchResult *worst = nullptr;
    for (const BenchResult *p : last.points)
      if (p->passed && p->roofline && (!worst || *p->roofline < *worst->roofline))
        worst = p;
    o << "<tr data-key=\"" << escape(target) << "\"><td class=\"l\"><a href=\""
      << gridPageFile(target) << "\">" << escape(target) << "</a></td><td class=\"l\">"
      << escape(last.run.device) << "</td><td class=\"l\">" << escape(last.run.date) << " "
      << escape(last.run.commit) << "</td><td>" << all.points << "</td><td"
      << (all.failed ? " class=\"red\"" : "") << ">" << all.failed << "</td>"
      << roofCell(all.medianRoofline) << floorCells(all) << "<td class=\"l\">"
      << (worst ? escape(worst->model) + " (" + fraction(*worst->roofline) + ")" : "\u2013")
      << "</td><td data-metric=\"floor\" class=\""
      << (all.floorMet() ? "ok\">met" : "bad\">not met") << "</td></tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

std::vector<DashboardPage> gridPages(const std::vector<StoredResult> &grid) {
  std::vector<DashboardPage> pages;
  for (const auto &[target, runs] : runsByTarget(grid))
    pages.push_back({gridPageFile(target), gridPage(target, runs)});
  return pages;
}

} // namespace tc::bench
