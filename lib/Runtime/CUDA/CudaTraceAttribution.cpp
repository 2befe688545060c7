#include "tc/Runtime/CudaTraceAttribution.h"
#include <algorithm>
#include <map>
#include <set>

namespace tc {

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
    std::string why;
    if (!learned)
      why = "no step-by-step run of this plan was traced to learn its kernels";
    else if (expected.size() != replayed.size())
      why = "the graph ran " + std::to_string(replayed.size()) +
            " kernels/copies, the step-by-step run " + std::to_string(expected.size());
    else
      for (size_t i = 0; i < replayed.size() && why.empty(); ++i)
        if (replayed[i]->name != *expected[i].second)
          why = "graph kernel #" + std::to_string(i) + " is " + replayed[i]->name +
                ", the step-by-step run had " + *expected[i].second + " (step " +
                std::to_string(expected[i].first) + ")";
    // All or nothing: past one disagreement the order says nothing.
    for (size_t i = 0; i < replayed.size(); ++i) {
      if (why.empty()) {
        replayed[i]->step = expected[i].first;
        replayed[i]->note = "attributed by order within a CUDA graph";
      } else {
        replayed[i]->note = "CUDA graph replay, not attributed: " + why;
      }
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
