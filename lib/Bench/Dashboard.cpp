#include "tc/Bench/Dashboard.h"
#include "GridDashboard.h"
#include "tc/Bench/Aggregate.h"
#include "tc/Bench/AmpRule.h"
#include "tc/Bench/Html.h"
#include "tc/Bench/LossRule.h"
#include "tc/Bench/Merge.h"
#include "tc/Bench/SvgChart.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace tc::bench {

using html::escape;
using html::number;

namespace {

std::string anchor(const GroupKey &k) { return html::slug(k.mode + "-" + k.precision); }

// The amp rule's numbers (AmpRule.h): "2.4e-02 <= 4.5e-02", red above the
// bound, PyTorch's AMP error in the title; a dash where not measured.
std::string errorCell(const BenchResult &r) {
  if (!r.relErr || !r.errBound)
    return "<td data-metric=\"err\">\u2013</td>";
  bool over = !(*r.relErr <= *r.errBound);
  return "<td data-metric=\"err\"" + std::string(over ? " class=\"red\"" : "") +
         (r.torchAmpErr ? " title=\"" + html::escape(torchAmpNote(*r.torchAmpErr)) + "\"" : "") +
         ">" + html::escape(ampComparison(*r.relErr, *r.errBound)) + "</td>";
}

// "2026-11-23T07:30:00Z" -> "11-23 07:30"
std::string shortDate(const std::string &iso) {
  if (iso.size() >= 16)
    return iso.substr(5, 5) + " " + iso.substr(11, 5);
  return iso;
}

std::string runLabel(const RunInfo &r) { return shortDate(r.date) + " " + r.commit; }

std::string passRate(const GroupSummary &s) {
  return std::to_string(s.passed) + "/" + std::to_string(s.total) + " (" +
         number(100.0 * s.passRate(), 0, "%") + ")";
}

size_t countRegressions(const std::vector<ModelChange> &changes) {
  return size_t(std::count_if(changes.begin(), changes.end(),
                              [](const ModelChange &c) { return c.regressed; }));
}

std::string landing(const std::vector<StoredResult> &rows, const std::vector<GroupHistory> &hs,
                    const std::string &source, const std::string &gridSection) {
  std::ostringstream o;
  std::set<std::string> runs;
  for (const StoredResult &r : rows)
    runs.insert(r.run.runId);
  o << html::pageStart("tc benchmark dashboard") << "<h1>tc benchmark dashboard</h1>\n"
    << "<p class=\"note\">" << rows.size() << " results from " << runs.size() << " runs in <code>"
    << escape(source) << "</code>. Speedup: eager latency / latency for the same model, "
    << "precision and batch (geometric mean over passing models); vs PyTorch: PyTorch "
    << "eager's or torch.compile(mode=\"reduce-overhead\")'s latency / latency, measured in "
    << "the same run. Compression: eager peak memory / peak memory (geometric mean); memory "
    << "vs PyTorch: PyTorch eager's peak (max_memory_allocated) / tc's peak. A regression is a "
       "change of more than "
    << number(kNoise * 100, 0, "%") << " since the previous commit's run that is also "
    << "outside both commits' p10..p90 spread (joined over every run of a commit: run a "
    << "commit twice to measure run-to-run noise), or a model that passed and now fails "
    << "(docs/bench.md).</p>\n";

  // The latest run of each suite x target.
  o << "<h2>Latest runs</h2>\n<table id=\"runs\"><tr><th class=\"l\">suite</th><th "
       "class=\"l\">target</th><th class=\"l\">date (UTC)</th><th class=\"l\">commit</th><th "
       "class=\"l\">machine</th><th class=\"l\">device</th><th>runs recorded</th></tr>\n";
  std::map<std::tuple<bool, std::string, std::string>, std::pair<RunInfo, std::set<std::string>>>
      last;
  for (const StoredResult &r : rows) {
    auto &e = last[{r.result.kind == kTrain, r.run.suite, r.run.target}];
    e.first = r.run; // rows are in history order: the last one wins
    e.second.insert(r.run.runId);
  }
  for (auto &[k, e] : last)
    o << "<tr><td class=\"l\"><a href=\""
      << suitePageFile(std::get<1>(k), std::get<2>(k), std::get<0>(k)) << "\">"
      << escape(std::get<1>(k)) << (std::get<0>(k) ? " (training)" : "")
      << "</a></td><td class=\"l\">" << escape(std::get<2>(k)) << "</td><td class=\"l\">"
      << escape(e.first.date) << "</td><td class=\"l\">" << escape(e.first.commit)
      << "</td><td class=\"l\">" << escape(e.first.machine) << "</td><td class=\"l\">"
      << escape(e.first.device) << "</td><td>" << e.second.size() << "</td></tr>\n";
  o << "</table>\n";

  std::vector<const GroupHistory *> sorted;
  for (const GroupHistory &h : hs)
    sorted.push_back(&h);
  std::sort(sorted.begin(), sorted.end(), [](const GroupHistory *a, const GroupHistory *b) {
    return displayLess(a->key, b->key);
  });

  std::ostringstream table, flagged;
  table << "<h2>Suites by mode and precision (latest run)</h2>\n<table id=\"summary\"><tr>"
           "<th class=\"l\">suite</th><th class=\"l\">target</th><th class=\"l\">mode</th><th "
           "class=\"l\">precision</th><th>pass rate</th><th>geomean speedup vs eager</th>"
           "<th>mean compile (s)</th><th>peak-memory compression</th><th>geomean speedup vs "
           "PyTorch eager</th><th>geomean speedup vs reduce-overhead</th><th>memory: PyTorch "
           "peak / tc peak</th><th>models below "
        << number(kSlowVsReduceOverhead, 1, "x")
        << " reduce-overhead</th><th>models with host steps</th><th>speedup trend</th>"
           "<th>regressions</th><th class=\"l\">latest run</th></tr>\n";
  std::ostringstream training;
  training << "<h2>Training: train steps beside PyTorch (tc-bench --train, each model's newest "
              "row)</h2>\n"
              "<p class=\"note\">tc's compiled train step (mode default) and PyTorch's eager "
              "and torch.compile() steps from the same initial weights on the same batches "
              "(AdamW, cross-entropy). A suite's numbers are over each model's newest row in any "
              "run (a sweep measures a few models; its ratios to PyTorch are its own run's); the "
              "trend and the regressions compare runs. Pass: the losses at the last step within "
           << number(kLossTolerance, 3) << " (relative) of PyTorch eager fp32's; amp: within max("
           << number(kLossTolerance, 3) << ", " << number(kTorchAmpLossFactor, 0, "x")
           << " PyTorch AMP's own distance from fp32). Speedups: PyTorch's ms per step / ms per "
              "step; memory: PyTorch eager's peak / the peak. A regression: the pass count fell, "
              "or the geomean speedup vs PyTorch eager fell by more than "
           << number(kNoise * 100, 0, "%")
           << ", or a model's ms per step rose as for inference.</p>\n"
              "<table id=\"training\"><tr><th class=\"l\">suite</th><th class=\"l\">target</th>"
              "<th class=\"l\">side</th><th class=\"l\">precision</th><th>pass rate</th>"
              "<th>geomean speedup vs PyTorch eager</th><th>geomean speedup vs "
              "torch.compile</th><th>mean compile (s)</th><th>memory: PyTorch peak / peak</th>"
              "<th>models with host steps</th><th>speedup trend</th><th>regressions</th>"
              "<th>runs</th><th class=\"l\">latest run</th></tr>\n";
  bool anyTraining = false, anyInference = false;
  for (const GroupHistory *h : sorted) {
    const GroupSummary &s = h->latest();
    size_t models =
        countRegressions(h->key.train() ? standingChanges(rows, *h) : modelChanges(rows, *h));
    bool group = groupRegressed(*h);
    std::vector<std::optional<double>> trend;
    for (const GroupSummary &r : h->runs)
      trend.push_back(headlineSpeedup(r));
    std::string link =
        suitePageFile(h->key.suite, h->key.target, h->key.train()) + "#" + anchor(h->key);
    if (group || models) {
      flagged << "<li><a href=\"" << link << "\">" << escape(h->key.str()) << "</a>: ";
      if (group) {
        const GroupSummary &p = *h->previous();
        flagged << "pass " << p.passed << "/" << p.total << " \u2192 " << s.passed << "/" << s.total
                << (h->key.train() ? ", geomean speedup vs PyTorch eager " : ", geomean speedup ")
                << number(headlineSpeedup(p), 2, "x") << " \u2192 "
                << number(headlineSpeedup(s), 2, "x") << "; ";
      }
      flagged << models << " model(s) regressed</li>\n";
    }
    if (h->key.train()) {
      anyTraining = true;
      const GroupSummary &t = h->standing; // every model's newest row
      training << "<tr data-key=\"" << escape(h->key.str()) << "\""
               << (group || models ? " class=\"regress\"" : "") << "><td class=\"l\"><a href=\""
               << link << "\">" << escape(h->key.suite) << "</a></td><td class=\"l\">"
               << escape(h->key.target) << "</td><td class=\"l\"><a href=\"" << link << "\">"
               << escape(h->key.mode == "default" ? "tc" : h->key.mode)
               << "</a></td><td class=\"l\">" << escape(h->key.precision)
               << "</td><td data-metric=\"pass_rate\" class=\""
               << (t.passed == t.total ? "ok" : "bad") << "\">" << passRate(t)
               << "</td><td data-metric=\"vs_torch_eager\">"
               << number(t.geomeanVsTorchEager, 2, "x")
               << "</td><td data-metric=\"vs_torch_compile\">"
               << number(t.geomeanVsTorchCompile, 2, "x") << "</td><td data-metric=\"compile_s\">"
               << number(t.meanCompileS, 2) << "</td><td data-metric=\"memory_vs_torch\">"
               << number(t.geomeanMemoryVsTorch, 2, "x") << "</td><td data-metric=\"host_steps\""
               << (t.withHostSteps ? " class=\"red\"" : "") << ">" << t.withHostSteps << "</td><td>"
               << svg::sparkline(trend) << "</td><td data-metric=\"regressions\">"
               << (group ? "group, " : "") << models << "</td><td data-metric=\"runs\">"
               << h->standingRuns << "</td><td class=\"l\">" << escape(runLabel(t.run))
               << "</td></tr>\n";
      continue;
    }
    anyInference = true;
    table << "<tr data-key=\"" << escape(h->key.str()) << "\""
          << (group || models ? " class=\"regress\"" : "") << "><td class=\"l\"><a href=\"" << link
          << "\">" << escape(h->key.suite) << "</a></td><td class=\"l\">" << escape(h->key.target)
          << "</td><td class=\"l\"><a href=\"" << link << "\">" << escape(h->key.mode)
          << "</a></td><td class=\"l\">" << escape(h->key.precision)
          << "</td><td data-metric=\"pass_rate\" class=\"" << (s.passed == s.total ? "ok" : "bad")
          << "\">" << passRate(s) << "</td><td data-metric=\"speedup\">"
          << number(s.geomeanSpeedup, 2, "x") << "</td><td data-metric=\"compile_s\">"
          << number(s.meanCompileS, 2) << "</td><td data-metric=\"compression\">"
          << number(s.geomeanCompression, 2, "x") << "</td><td data-metric=\"vs_torch_eager\">"
          << number(s.geomeanVsTorchEager, 2, "x") << "</td><td data-metric=\"vs_torch_ro\">"
          << number(s.geomeanVsTorchReduceOverhead, 2, "x")
          << "</td><td data-metric=\"memory_vs_torch\">" << number(s.geomeanMemoryVsTorch, 2, "x")
          << "</td><td data-metric=\"slow\"" << (s.slowVsReduceOverhead ? " class=\"red\"" : "")
          << ">" << s.slowVsReduceOverhead << "</td><td data-metric=\"host_steps\""
          << (s.withHostSteps ? " class=\"red\"" : "") << ">" << s.withHostSteps << "</td><td>"
          << svg::sparkline(trend) << "</td><td data-metric=\"regressions\">"
          << (group ? "group, " : "") << models << "</td><td class=\"l\">"
          << escape(runLabel(s.run)) << "</td></tr>\n";
  }
  table << "</table>\n";
  training << "</table>\n";
  if (!flagged.str().empty())
    o << "<h2 class=\"bad\">Regressions since the previous commit</h2>\n<ul id=\"regressions\">"
      << flagged.str() << "</ul>\n";
  o << (anyInference ? table.str() : "") << (anyTraining ? training.str() : "") << gridSection
    << html::pageEnd();
  return o.str();
}

// "2.32236 .. 2.36501": the first and last of a row's losses (every one in
// the cell's title).
std::string lossesShort(const std::string &losses) {
  size_t first = losses.find(','), last = losses.rfind(',');
  if (first == std::string::npos)
    return losses;
  return losses.substr(0, first) + " .. " + losses.substr(last + 1);
}

// A training group's models (suitePage): ms per step beside PyTorch's, and
// the losses' distance from PyTorch's with its bound.
void trainingModels(std::ostringstream &o, const std::vector<StoredResult> &rows,
                    const GroupHistory &h) {
  o << "<table class=\"models\"><tr><th class=\"l\">model</th><th>batch</th><th "
       "class=\"l\">status</th><th title=\"the losses' relative distance at the last step "
       "from PyTorch eager fp32's, and its bound (amp: max(1e-3, 4x PyTorch AMP's own "
       "distance))\">losses (bound)</th><th>steps</th><th>ms/step</th><th>p10..p90 "
       "(ms)</th><th>vs PyTorch eager</th><th>vs torch.compile</th><th>compile (s)</th><th>peak "
       "(MiB)</th><th>memory vs PyTorch</th><th title=\"groups tc-codegen left to the "
       "host\">host steps</th><th>ms/step vs previous commit</th><th>ms/step trend</th><th "
       "class=\"l\">losses</th><th class=\"l\">error</th></tr>\n";
  for (const ModelChange &c : standingChanges(rows, h)) {
    const BenchResult &r = c.now;
    std::optional<double> change;
    if (c.before && c.before->latencyMs && r.latencyMs && *c.before->latencyMs > 0)
      change = 100.0 * (*r.latencyMs / *c.before->latencyMs - 1);
    std::vector<std::optional<double>> trend;
    for (const GroupSummary &g : h.runs) {
      std::optional<double> v;
      for (const BenchResult &x : rowsOf(rows, h.key, g.run.runId))
        if (x.model == r.model && x.batch == r.batch)
          v = x.latencyMs;
      trend.push_back(v);
    }
    bool host = r.hostSteps.value_or(0) > 0;
    std::string losses = r.relErr && r.errBound ? ampComparison(*r.relErr, *r.errBound) : "\u2013";
    o << "<tr"
      << (c.regressed ? " class=\"regress\""
          : !r.passed ? " class=\"fail\""
                      : "")
      << " data-model=\"" << escape(r.model) << "\"><td class=\"l\">" << escape(r.model)
      << "</td><td>" << r.batch << "</td><td class=\"l " << (r.passed ? "ok" : "bad") << "\">"
      << (r.passed ? "pass" : "fail: " + escape(r.reason)) << "</td><td data-metric=\"losses\""
      << (r.relErr && r.errBound && !(*r.relErr <= *r.errBound) ? " class=\"red\"" : "")
      << (r.torchAmpErr ? " title=\"PyTorch AMP's own distance " + number(r.torchAmpErr, 7) + "\""
                        : "")
      << ">" << escape(losses) << "</td><td>"
      << (r.trainSteps ? std::to_string(*r.trainSteps) : "\u2013") << "</td><td>"
      << number(r.latencyMs, 3) << "</td><td>" << number(r.p10Ms, 3) << ".." << number(r.p90Ms, 3)
      << "</td><td data-metric=\"vs_torch_eager\">" << number(r.vsTorchEager, 2, "x")
      << "</td><td data-metric=\"vs_torch_compile\">" << number(r.vsTorchCompile, 2, "x")
      << "</td><td>" << number(r.compileS, 2) << "</td><td title=\"" << escape(r.memoryKind)
      << "\">" << html::mebibytes(r.peakBytes) << "</td><td>" << number(r.memoryVsTorch, 2, "x")
      << "</td><td data-metric=\"host_steps\"" << (host ? " class=\"red\"" : "") << ">"
      << (r.hostSteps ? std::to_string(*r.hostSteps) : "\u2013") << "</td><td"
      << (c.regressed ? " class=\"regress\"" : "") << ">"
      << (change ? (*change > 0 ? "+" : "") + number(change, 1, "%") : "\u2013")
      << (c.regressed ? " regression" : "") << "</td><td>" << svg::sparkline(trend)
      << "</td><td class=\"l\" title=\"" << escape(r.losses) << "\">"
      << escape(lossesShort(r.losses)) << "</td><td class=\"err\">" << escape(r.error)
      << "</td></tr>\n";
  }
  o << "</table>\n";
}

std::string suitePage(const std::vector<StoredResult> &rows,
                      const std::vector<const GroupHistory *> &hs, const std::string &suite,
                      const std::string &target) {
  bool train = hs.front()->key.train(); // a page holds one kind
  std::ostringstream o;
  o << html::pageStart("tc bench: " + suite + (train ? " (training)" : "") + " on " + target)
    << "<p><a href=\"index.html\">"
    << "\u2190 all suites</a></p>\n<h1>" << (train ? "Training suite " : "Suite ") << escape(suite)
    << " on " << escape(target) << "</h1>\n";
  // The runs of this suite x target, in history order: the charts' x axis.
  std::vector<RunInfo> runs;
  for (const StoredResult &r : rows)
    if (r.run.suite == suite && r.run.target == target && (r.result.kind == kTrain) == train &&
        (runs.empty() || runs.back().runId != r.run.runId))
      if (std::none_of(runs.begin(), runs.end(),
                       [&](const RunInfo &x) { return x.runId == r.run.runId; }))
        runs.push_back(r.run);
  std::vector<std::string> labels;
  for (const RunInfo &r : runs)
    labels.push_back(runLabel(r));
  auto seriesOf = [&](auto metric, bool tcModesOnly) {
    std::vector<svg::Series> out;
    for (const GroupHistory *h : hs) {
      if (tcModesOnly && h->key.mode.rfind("torch", 0) == 0)
        continue;
      svg::Series s{(h->key.train() && h->key.mode == "default" ? "tc" : h->key.mode) + " " +
                        h->key.precision,
                    {}};
      for (const RunInfo &run : runs) {
        auto it = std::find_if(h->runs.begin(), h->runs.end(),
                               [&](const GroupSummary &g) { return g.run.runId == run.runId; });
        s.values.push_back(it == h->runs.end() ? std::nullopt : metric(*it));
      }
      out.push_back(std::move(s));
    }
    return out;
  };
  o << "<h2>History</h2>\n<div class=\"charts\">"
    << svg::lineChart(
           train ? "Geomean speedup vs PyTorch eager" : "Geomean speedup vs eager", labels,
           seriesOf([](const GroupSummary &g) { return headlineSpeedup(g); }, false), "x")
    << svg::lineChart(
           "Pass rate", labels,
           seriesOf(
               [](const GroupSummary &g) -> std::optional<double> { return 100.0 * g.passRate(); },
               false),
           "%", std::pair(0.0, 100.0))
    << svg::lineChart("Mean compile time", labels,
                      seriesOf([](const GroupSummary &g) { return g.meanCompileS; }, true), "s")
    << "</div>\n";

  for (const GroupHistory *h : hs) {
    const GroupSummary &s = h->latest();
    if (train) {
      const GroupSummary &t = h->standing;
      o << "<h2 id=\"" << anchor(h->key) << "\">"
        << escape(h->key.mode == "default" ? "tc" : h->key.mode) << ", " << escape(h->key.precision)
        << "</h2>\n<p>Each model's newest row (" << h->standingRuns << " run(s), the latest "
        << escape(runLabel(t.run)) << " on " << escape(t.run.machine) << " ("
        << escape(t.run.device) << ")): pass " << passRate(t) << ", vs PyTorch eager "
        << number(t.geomeanVsTorchEager, 2, "x") << ", vs torch.compile "
        << number(t.geomeanVsTorchCompile, 2, "x") << ", mean compile "
        << number(t.meanCompileS, 2, " s") << ", memory vs PyTorch "
        << number(t.geomeanMemoryVsTorch, 2, "x") << ".</p>\n";
      trainingModels(o, rows, *h);
      continue;
    }
    o << "<h2 id=\"" << anchor(h->key) << "\">" << escape(h->key.mode) << ", "
      << escape(h->key.precision) << "</h2>\n<p>Latest run " << escape(runLabel(s.run)) << " on "
      << escape(s.run.machine) << " (" << escape(s.run.device) << "): pass " << passRate(s)
      << ", geomean speedup " << number(s.geomeanSpeedup, 2, "x") << ", vs PyTorch eager "
      << number(s.geomeanVsTorchEager, 2, "x") << ", vs reduce-overhead "
      << number(s.geomeanVsTorchReduceOverhead, 2, "x") << ", mean compile "
      << number(s.meanCompileS, 2, " s") << ", compression " << number(s.geomeanCompression, 2, "x")
      << ", memory vs PyTorch " << number(s.geomeanMemoryVsTorch, 2, "x") << ".</p>\n";
    o << "<table class=\"models\"><tr><th class=\"l\">model</th><th>batch</th><th "
         "class=\"l\">status</th><th title=\"amp: max|out - ref| / max|ref| and its bound, "
         "max(amp_err, 1.5x PyTorch AMP's own error)\">error (bound)</th><th>latency "
         "(ms)</th><th>p10..p90 (ms)</th><th>speedup vs "
         "eager</th><th>vs PyTorch eager</th><th>vs reduce-overhead</th><th>compile "
         "(s)</th><th>peak (MiB)</th><th>compression</th><th>memory vs PyTorch</th><th>tc-run "
         "RSS (MiB)</th><th title=\"groups tc-codegen left to the host (copies, no CUDA "
         "graph)\">host steps</th><th>CUDA graph</th><th title=\"plan steps on the reference "
         "kernels\">ref. steps</th><th>latency vs previous commit</th><th>latency "
         "trend</th><th class=\"l\">error</th></tr>\n";
    for (const ModelChange &c : modelChanges(rows, *h)) {
      const BenchResult &r = c.now;
      std::optional<double> change;
      if (c.before && c.before->latencyMs && r.latencyMs && *c.before->latencyMs > 0)
        change = 100.0 * (*r.latencyMs / *c.before->latencyMs - 1);
      std::vector<std::optional<double>> trend;
      for (const GroupSummary &g : h->runs) {
        std::optional<double> v;
        for (const BenchResult &x : rowsOf(rows, h->key, g.run.runId))
          if (x.model == r.model && x.batch == r.batch)
            v = x.latencyMs;
        trend.push_back(v);
      }
      bool slow = slowerThanReduceOverhead(r);
      const char *rowClass = c.regressed ? " class=\"regress\""
                             : !r.passed ? " class=\"fail\""
                             : slow      ? " class=\"slow\""
                                         : "";
      bool host = r.hostSteps.value_or(0) > 0;
      o << "<tr" << rowClass << " data-model=\"" << escape(r.model) << "\"><td class=\"l\">"
        << escape(r.model) << "</td><td>" << r.batch << "</td><td class=\"l "
        << (r.passed ? "ok" : "bad") << "\">" << (r.passed ? "pass" : "fail: " + escape(r.reason))
        << "</td>" << errorCell(r) << "<td>" << number(r.latencyMs, 3) << "</td><td>"
        << number(r.p10Ms, 3) << ".." << number(r.p90Ms, 3) << "</td><td>"
        << number(r.speedup, 2, "x") << "</td><td>" << number(r.vsTorchEager, 2, "x")
        << "</td><td data-metric=\"vs_torch_ro\""
        << (slow ? " class=\"red\" title=\"below " + number(kSlowVsReduceOverhead, 1, "x") +
                       " torch.compile(mode=reduce-overhead)\""
                 : "")
        << ">" << number(r.vsTorchReduceOverhead, 2, "x") << "</td><td>" << number(r.compileS, 2)
        << "</td><td title=\"" << escape(r.memoryKind) << "\">" << html::mebibytes(r.peakBytes)
        << "</td><td>" << number(r.compression, 2, "x") << "</td><td>"
        << number(r.memoryVsTorch, 2, "x") << "</td><td>" << html::mebibytes(r.rssBytes)
        << "</td><td data-metric=\"host_steps\"" << (host ? " class=\"red\"" : "") << ">"
        << (r.hostSteps ? std::to_string(*r.hostSteps) : "\u2013")
        << "</td><td data-metric=\"graph\">"
        << (r.graphCaptured ? *r.graphCaptured ? "yes" : "no" : "\u2013") << "</td><td>"
        << (r.fallbackSteps ? std::to_string(*r.fallbackSteps) : "\u2013") << "</td><td"
        << (c.regressed ? " class=\"regress\"" : "") << ">"
        << (change ? (*change > 0 ? "+" : "") + number(change, 1, "%") : "\u2013")
        << (c.regressed ? " regression" : "") << "</td><td>" << svg::sparkline(trend)
        << "</td><td class=\"err\">" << escape(r.error) << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  o << html::pageEnd();
  return o.str();
}

} // namespace

std::string suitePageFile(const std::string &suite, const std::string &target, bool train) {
  return (train ? "train-" : "suite-") + html::slug(suite) + "-" + html::slug(target) + ".html";
}

std::vector<DashboardPage> renderDashboard(const std::vector<StoredResult> &all,
                                           const std::string &source) {
  // A part run again repeats results: its newest rows count (Merge.h). The
  // kernel grid's points have their own section and pages (GridDashboard.h).
  std::vector<StoredResult> rows, grid;
  for (StoredResult &r : newestPerResult(all))
    (r.result.kind == kGrid ? grid : rows).push_back(std::move(r));
  std::vector<GroupHistory> hs = groupHistories(rows);
  std::vector<DashboardPage> pages{
      {"index.html", landing(rows, hs, source, gridLandingSection(grid))}};
  for (DashboardPage &p : gridPages(grid))
    pages.push_back(std::move(p));
  // One page per suite x target, and kind: training's pages are their own.
  std::map<std::tuple<bool, std::string, std::string>, std::vector<const GroupHistory *>> bySuite;
  for (const GroupHistory &h : hs)
    bySuite[{h.key.train(), h.key.suite, h.key.target}].push_back(&h);
  for (auto &[k, groups] : bySuite) {
    std::sort(groups.begin(), groups.end(), [](const GroupHistory *a, const GroupHistory *b) {
      return displayLess(a->key, b->key);
    });
    auto [train, suite, target] = k;
    pages.push_back({suitePageFile(suite, target, train), suitePage(rows, groups, suite, target)});
  }
  return pages;
}

std::vector<std::string> writeDashboard(const std::vector<StoredResult> &rows,
                                        const std::string &source, const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail(dir, ": cannot create the site folder: ", ec.message());
  std::vector<std::string> files;
  for (const DashboardPage &p : renderDashboard(rows, source)) {
    fs::path path = fs::path(dir) / p.file;
    writeFileAtomically(path.string(), p.html, /*sync=*/false);
    files.push_back(path.string());
  }
  return files;
}

} // namespace tc::bench
