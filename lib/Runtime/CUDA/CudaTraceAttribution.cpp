#include "tc/Runtime/CudaTraceAttribution.h"
#include <algorithm>
#include <map>
#include <set>

namespace tc {

namespace {

// A graph replay's kernels against the learned sequence: the longest common
// subsequence of names (a library may launch a kernel only on a plan's first
// call, or pick another while captured), matched kernels take their step; a
// kernel between two matched ones of the same step takes that step too.
void alignReplay(const std::vector<TraceEvent *> &replayed,
                 const std::vector<std::pair<int, const std::string *>> &expected) {
  size_t n = replayed.size(), m = expected.size();
  std::vector<int> stepOf(n, -1);
  if (n * m <= (size_t(1) << 24)) { // 16M cells: a few thousand kernels each side
    std::vector<std::vector<uint16_t>> lcs(n + 1, std::vector<uint16_t>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        lcs[i][j] = replayed[i]->name == *expected[j].second
                        ? uint16_t(lcs[i + 1][j + 1] + 1)
                        : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    for (size_t i = 0, j = 0; i < n && j < m;) {
      if (replayed[i]->name == *expected[j].second)
        stepOf[i++] = expected[j++].first;
      else if (lcs[i + 1][j] >= lcs[i][j + 1])
        ++i;
      else
        ++j;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    TraceEvent &e = *replayed[i];
    if (stepOf[i] >= 0) {
      e.step = stepOf[i];
      e.note = "attributed by order within a CUDA graph";
      continue;
    }
    int before = -1, after = -1;
    for (size_t k = i; k-- > 0 && before < 0;)
      before = stepOf[k];
    for (size_t k = i + 1; k < n && after < 0; ++k)
      after = stepOf[k];
    if (before >= 0 && before == after) {
      e.step = before;
      e.note = "attributed by order within a CUDA graph (the step-by-step run did not launch "
               "it; it ran between this step's kernels)";
    } else {
      e.note = "CUDA graph replay, not attributed: the step-by-step run did not launch " + e.name +
               " here";
    }
  }
}

} // namespace

std::optional<StepWork> attributeDeviceEvents(std::vector<TraceEvent> &events, unsigned hostThread,
                                              size_t stepCount, const StepWork *learned) {
  using Track = TraceEvent::Track;
  std::vector<const TraceEvent *> stepSpans, graphSpans;
  for (const TraceEvent &e : events)
    if (e.track == Track::Host && e.step >= 0)
      stepSpans.push_back(&e);
    else if (e.track == Track::Host && e.category == "graph")
      graphSpans.push_back(&e);
  auto within = [](const std::vector<const TraceEvent *> &spans, const TraceEvent &call) {
    // The midpoint: CUPTI's clock is converted to the trace's by one
    // measured offset, so a call's ends may stick out of its span a little.
    double mid = call.startUs + call.durUs / 2;
    for (const TraceEvent *s : spans)
      if (mid >= s->startUs && mid <= s->startUs + s->durUs)
        return s;
    return static_cast<const TraceEvent *>(nullptr);
  };
  std::map<uint64_t, int> stepOf; // correlation -> step
  std::set<uint64_t> graphCalls, calls;
  for (TraceEvent &e : events) {
    if (e.track != Track::Api || !e.correlation)
      continue;
    calls.insert(e.correlation);
    if (e.lane != hostThread)
      continue;
    if (const TraceEvent *s = within(stepSpans, e))
      stepOf[e.correlation] = e.step = s->step;
    else if (within(graphSpans, e))
      graphCalls.insert(e.correlation);
  }

  std::vector<TraceEvent *> replayed; // the graph's work, to order
  for (TraceEvent &e : events) {
    if (e.track != Track::Device)
      continue;
    if (auto it = stepOf.find(e.correlation); it != stepOf.end())
      e.step = it->second;
    else if (graphCalls.count(e.correlation))
      replayed.push_back(&e);
    else if (!calls.count(e.correlation))
      e.note =
          "no API call of this run launched it (correlation " + std::to_string(e.correlation) + ")";
  }

  if (!replayed.empty()) {
    std::stable_sort(
        replayed.begin(), replayed.end(),
        [](const TraceEvent *a, const TraceEvent *b) { return a->startUs < b->startUs; });
    std::vector<std::pair<int, const std::string *>> expected; // (step, name) in order
    if (learned)
      for (size_t s = 0; s < learned->size(); ++s)
        for (const std::string &name : (*learned)[s])
          expected.push_back({int(s), &name});
    if (!learned) {
      for (TraceEvent *e : replayed)
        e->note = "CUDA graph replay, not attributed: no step-by-step run of this plan was "
                  "traced to learn its kernels";
    } else {
      alignReplay(replayed, expected);
    }
  }

  if (!graphSpans.empty())
    return std::nullopt;
  StepWork work(stepCount);
  std::vector<const TraceEvent *> done;
  for (const TraceEvent &e : events)
    if (e.track == Track::Device && e.step >= 0 && size_t(e.step) < stepCount)
      done.push_back(&e);
  std::stable_sort(done.begin(), done.end(), [](const TraceEvent *a, const TraceEvent *b) {
    return a->startUs < b->startUs;
  });
  for (const TraceEvent *e : done)
    work[size_t(e->step)].push_back(e->name);
  return work;
}

} // namespace tc
