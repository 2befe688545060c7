#include "tc/Bench/Aggregate.h"
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace tc::bench {

std::optional<double> geomean(const std::vector<double> &xs) {
  double logs = 0;
  size_t n = 0;
  for (double x : xs)
    if (x > 0 && std::isfinite(x)) {
      logs += std::log(x);
      ++n;
    }
  if (!n)
    return std::nullopt;
  return std::exp(logs / double(n));
}

std::optional<double> mean(const std::vector<double> &xs) {
  if (xs.empty())
    return std::nullopt;
  double sum = 0;
  for (double x : xs)
    sum += x;
  return sum / double(xs.size());
}

std::string GroupKey::str() const {
  return suite + "/" + target + "/" + mode + "/" + precision + (train() ? "/train" : "");
}

GroupKey keyOf(const StoredResult &r) {
  return {r.run.suite, r.run.target, r.result.mode, r.result.precision, r.result.kind};
}

bool slowerThanReduceOverhead(const BenchResult &r) {
  return r.passed && r.vsTorchReduceOverhead && *r.vsTorchReduceOverhead < kSlowVsReduceOverhead;
}

static int rank(const std::string &s) {
  static const char *order[] = {"eager",
                                "default",
                                "cudagraphs",
                                "dynamic",
                                "torch-eager",
                                "torch-compile",
                                "torch-reduce-overhead",
                                "fp32",
                                "amp"};
  for (size_t i = 0; i < std::size(order); ++i)
    if (s == order[i])
      return int(i);
  return int(std::size(order));
}

bool displayLess(const GroupKey &a, const GroupKey &b) {
  return std::tuple(a.train(), a.suite, a.target, rank(a.mode), a.mode, rank(a.precision),
                    a.precision) < std::tuple(b.train(), b.suite, b.target, rank(b.mode), b.mode,
                                              rank(b.precision), b.precision);
}

namespace {
GroupSummary summarizeGroup(const GroupKey &key, const RunInfo &run,
                            const std::vector<const BenchResult *> &rows) {
  GroupSummary s;
  s.key = key;
  s.run = run;
  std::vector<double> speedups, compiles, compressions, vsEager, vsReduceOverhead, vsCompile,
      memory;
  auto add = [](std::vector<double> &xs, const std::optional<double> &x) {
    if (x)
      xs.push_back(*x);
  };
  for (const BenchResult *r : rows) {
    ++s.total;
    s.withHostSteps += r->hostSteps.value_or(0) > 0;
    if (!r->passed)
      continue;
    ++s.passed;
    s.slowVsReduceOverhead += slowerThanReduceOverhead(*r);
    add(speedups, r->speedup);
    add(compiles, r->compileS);
    add(compressions, r->compression);
    add(vsEager, r->vsTorchEager);
    add(vsReduceOverhead, r->vsTorchReduceOverhead);
    add(vsCompile, r->vsTorchCompile);
    add(memory, r->memoryVsTorch);
  }
  s.geomeanSpeedup = geomean(speedups);
  s.meanCompileS = mean(compiles);
  s.geomeanCompression = geomean(compressions);
  s.geomeanVsTorchEager = geomean(vsEager);
  s.geomeanVsTorchReduceOverhead = geomean(vsReduceOverhead);
  s.geomeanMemoryVsTorch = geomean(memory);
  s.geomeanVsTorchCompile = geomean(vsCompile);
  return s;
}
} // namespace

std::vector<GroupHistory> groupHistories(const std::vector<StoredResult> &rows) {
  // key -> runs in first-seen (history) order -> rows
  std::map<GroupKey, std::vector<std::pair<RunInfo, std::vector<const BenchResult *>>>> byKey;
  for (const StoredResult &r : rows) {
    auto &runs = byKey[keyOf(r)];
    if (runs.empty() || runs.back().first.runId != r.run.runId)
      runs.push_back({r.run, {}});
    runs.back().second.push_back(&r.result);
  }
  std::vector<GroupHistory> out;
  for (auto &[key, runs] : byKey) {
    GroupHistory h;
    h.key = key;
    // Each model's newest row: later runs overwrite earlier ones.
    std::map<std::pair<std::string, int64_t>, std::pair<const BenchResult *, size_t>> newest;
    for (size_t i = 0; i < runs.size(); ++i) {
      h.runs.push_back(summarizeGroup(key, runs[i].first, runs[i].second));
      for (const BenchResult *r : runs[i].second)
        newest[{r->model, r->batch}] = {r, i};
    }
    std::vector<const BenchResult *> standing;
    std::set<size_t> from;
    for (const auto &[_, row] : newest) {
      standing.push_back(row.first);
      from.insert(row.second);
    }
    h.standing = summarizeGroup(key, runs.back().first, standing);
    h.standingRuns = int(from.size());
    out.push_back(std::move(h));
  }
  return out;
}

bool latencyRegressed(const BenchResult &before, const BenchResult &after, double noise) {
  if (!before.passed || !after.passed || !before.latencyMs || !after.latencyMs)
    return false;
  if (*after.latencyMs <= *before.latencyMs * (1 + noise))
    return false;
  if (after.p10Ms && before.p90Ms)
    return *after.p10Ms > *before.p90Ms;
  return true;
}

bool statusRegressed(const BenchResult &before, const BenchResult &after) {
  return before.passed && !after.passed;
}

std::optional<double> headlineSpeedup(const GroupSummary &s) {
  return s.key.train() ? s.geomeanVsTorchEager : s.geomeanSpeedup;
}

bool groupRegressed(const GroupSummary &before, const GroupSummary &after, double noise) {
  if (after.passed < before.passed)
    return true;
  std::optional<double> was = headlineSpeedup(before), now = headlineSpeedup(after);
  return was && now && *now < *was / (1 + noise);
}

const GroupSummary *GroupHistory::previous() const {
  for (size_t i = runs.size(); i-- > 0;)
    if (runs[i].run.commit != latest().run.commit)
      return &runs[i];
  return nullptr;
}

bool groupRegressed(const GroupHistory &h, double noise) {
  const GroupSummary *prev = h.previous();
  if (!prev)
    return false;
  GroupSummary before = *prev, after = h.latest();
  // The headline speedup: best of the latest commit's runs, worst of the
  // previous commit's.
  auto field = [&](GroupSummary &s) -> std::optional<double> & {
    return s.key.train() ? s.geomeanVsTorchEager : s.geomeanSpeedup;
  };
  for (GroupSummary g : h.runs) {
    std::optional<double> v = field(g);
    if (!v)
      continue;
    if (g.run.commit == after.run.commit && field(after))
      field(after) = std::max(*field(after), *v);
    if (g.run.commit == before.run.commit && field(before))
      field(before) = std::min(*field(before), *v);
  }
  return groupRegressed(before, after, noise);
}

BenchResult mergeRepeats(const std::vector<BenchResult> &repeats) {
  BenchResult m = repeats.back();
  for (const BenchResult &r : repeats) {
    if (!r.passed || !m.passed)
      continue;
    if (r.p10Ms && m.p10Ms)
      m.p10Ms = std::min(*m.p10Ms, *r.p10Ms);
    if (r.p90Ms && m.p90Ms)
      m.p90Ms = std::max(*m.p90Ms, *r.p90Ms);
  }
  return m;
}

std::vector<ModelChange> modelChanges(const std::vector<StoredResult> &rows, const GroupHistory &h,
                                      double noise) {
  const GroupSummary *prev = h.previous();
  const std::string &nowCommit = h.latest().run.commit;
  // The rows of `model` at `batch` in every run of `commit`, oldest first.
  auto repeats = [&](const std::string &commit, const BenchResult &r) {
    std::vector<BenchResult> out;
    for (const StoredResult &s : rows)
      if (s.run.commit == commit && keyOf(s) == h.key && s.result.model == r.model &&
          s.result.batch == r.batch)
        out.push_back(s.result);
    return out;
  };
  std::vector<ModelChange> out;
  std::vector<BenchResult> before =
      prev ? rowsOf(rows, h.key, prev->run.runId) : std::vector<BenchResult>{};
  for (const BenchResult &r : rowsOf(rows, h.key, h.latest().run.runId)) {
    ModelChange c{r, std::nullopt, false};
    for (const BenchResult &b : before)
      if (b.model == r.model && b.batch == r.batch)
        c.before = b;
    if (c.before)
      c.regressed = statusRegressed(*c.before, r) ||
                    latencyRegressed(mergeRepeats(repeats(prev->run.commit, r)),
                                     mergeRepeats(repeats(nowCommit, r)), noise);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ModelChange> standingChanges(const std::vector<StoredResult> &rows,
                                         const GroupHistory &h, double noise) {
  // Each model's rows in history order, with their commits.
  std::map<std::pair<std::string, int64_t>, std::vector<const StoredResult *>> byModel;
  for (const StoredResult &s : rows)
    if (keyOf(s) == h.key)
      byModel[{s.result.model, s.result.batch}].push_back(&s);
  std::vector<ModelChange> out;
  for (const auto &[_, rs] : byModel) {
    const StoredResult &now = *rs.back();
    ModelChange c{now.result, std::nullopt, false};
    for (auto it = rs.rbegin(); it != rs.rend() && !c.before; ++it)
      if ((*it)->run.commit != now.run.commit)
        c.before = (*it)->result;
    if (c.before)
      c.regressed =
          statusRegressed(*c.before, now.result) || latencyRegressed(*c.before, now.result, noise);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<BenchResult> rowsOf(const std::vector<StoredResult> &rows, const GroupKey &key,
                                const std::string &runId) {
  std::vector<BenchResult> out;
  for (const StoredResult &r : rows)
    if (r.run.runId == runId && keyOf(r) == key)
      out.push_back(r.result);
  return out;
}

} // namespace tc::bench
