#include "tc/Profile/ChromeTrace.h"
#include "ReportJson.h"
#include <algorithm>
#include <functional>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <set>

namespace tc {

namespace {

enum Pid { CompilePid = 1, HostPid = 2, GpuPid = 3 };
enum HostTid { PlanTid = 1, ApiTid = 2, WorkerTid0 = 100 };
// A train step's phase spans: a lane of the process whose events time the
// rows (host: CPU; GPU: device-timed CUDA), clear of worker and stream ids.
constexpr int PhaseTid = 99999;

// Where an event goes: (pid, tid).
std::pair<int, int> placeOf(const TraceEvent &e) {
  switch (e.track) {
  case TraceEvent::Track::Host: return {HostPid, PlanTid};
  case TraceEvent::Track::Worker: return {HostPid, WorkerTid0 + int(e.lane)};
  case TraceEvent::Track::Api: return {HostPid, ApiTid};
  case TraceEvent::Track::Device: return {GpuPid, int(e.lane)};
  }
  return {HostPid, PlanTid};
}

// A train step's phases and its forward-to-backward links, per run, from the
// events that time the rows (their first event per step):
// - on the PhaseTid lane, one span per stretch of consecutive steps of one
//   phase ("forward", "backward", "optimizer"; a stretch ends where the next
//   begins, so spans follow each other);
// - a flow arrow (cat "fwd_bwd", as PyTorch's profiler links a forward op to
//   its backward) from each forward step to each backward step that names
//   one of its ONNX nodes (a gradient op carries the location of the op it
//   differentiates) and ran before it.
void emitPhases(llvm::json::OStream &j, const RunTrace &trace, TraceEvent::Track timedTrack,
                int timedPid, double shift, int &flow) {
  std::map<int, std::vector<const TraceEvent *>> byRun;
  {
    std::set<std::pair<int, int>> seen; // (run, step)
    for (const TraceEvent &e : trace.events)
      if (e.track == timedTrack && e.run >= 0 && e.step >= 0 &&
          size_t(e.step) < trace.steps.size() && seen.insert({e.run, e.step}).second)
        byRun[e.run].push_back(&e);
  }
  auto stepOf = [&](const TraceEvent *e) -> const StepInfo & {
    return trace.steps[size_t(e->step)];
  };
  for (auto &entry : byRun) {
    int run = entry.first;
    std::vector<const TraceEvent *> &list = entry.second;
    std::stable_sort(list.begin(), list.end(), [](const TraceEvent *a, const TraceEvent *b) {
      return a->startUs < b->startUs;
    });
    // The spans.
    struct Span {
      std::string phase;
      double start, end;
      int steps;
    };
    std::vector<Span> spans;
    for (const TraceEvent *e : list) {
      const std::string &p = stepOf(e).phase;
      if (spans.empty() || spans.back().phase != p)
        spans.push_back({p, e->startUs, e->startUs + e->durUs, 0});
      spans.back().end = std::max(spans.back().end, e->startUs + e->durUs);
      ++spans.back().steps;
    }
    for (size_t i = 0; i < spans.size(); ++i) {
      const Span &sp = spans[i];
      double end = i + 1 < spans.size() ? std::min(sp.end, spans[i + 1].start) : sp.end;
      j.object([&] {
        j.attribute("ph", "X");
        j.attribute("name", sp.phase);
        j.attribute("cat", "phase");
        j.attribute("pid", timedPid);
        j.attribute("tid", PhaseTid);
        j.attribute("ts", sp.start + shift);
        j.attribute("dur", std::max(end - sp.start, 0.0));
        j.attributeObject("args", [&] {
          j.attribute("run", run);
          j.attribute("phase", sp.phase);
          j.attribute("steps", sp.steps);
        });
      });
    }
    // The links: forward step events by node, then each backward one.
    std::map<std::string, std::vector<const TraceEvent *>> forwardOf;
    for (const TraceEvent *e : list)
      if (stepOf(e).phase == "forward")
        for (const std::string &n : stepOf(e).nodes)
          if (!n.empty())
            forwardOf[n].push_back(e);
    for (const TraceEvent *b : list) {
      if (stepOf(b).phase != "backward")
        continue;
      std::set<const TraceEvent *> linked;
      for (const std::string &n : stepOf(b).nodes) {
        auto it = forwardOf.find(n);
        if (it == forwardOf.end())
          continue;
        for (const TraceEvent *f : it->second) {
          // A forward step the plan runs after this one (the loss's value,
          // which no gradient reads) is no arrow back in time.
          if (f->startUs > b->startUs || !linked.insert(f).second)
            continue;
          ++flow;
          std::pair<int, int> from = placeOf(*f), to = placeOf(*b);
          for (int end = 0; end < 2; ++end)
            j.object([&] {
              j.attribute("ph", end ? "f" : "s");
              j.attribute("name", "fwd-bwd");
              j.attribute("cat", "fwd_bwd");
              j.attribute("id", flow);
              j.attribute("pid", end ? to.first : from.first);
              j.attribute("tid", end ? to.second : from.second);
              // A quarter into each step: inside it, clear of a neighbour
              // that ends where it starts (viewers bind the arrow there).
              const TraceEvent *at = end ? b : f;
              j.attribute("ts", at->startUs + at->durUs / 4 + shift);
              j.attribute("bp", "e");
              if (!end)
                j.attributeObject("args", [&] {
                  j.attribute("node", n);
                  j.attribute("forward", stepOf(f).group);
                  j.attribute("backward", stepOf(b).group);
                });
            });
        }
      }
    }
  }
}

} // namespace

std::string chromeTraceJson(const RunTrace &trace, const std::vector<TimelineEntry> &compile,
                            const ProfileReport &report) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os);
  std::map<int, const KernelRow *> rowOfStep;
  for (const KernelRow &r : report.rows)
    if (r.step >= 0)
      rowOfStep[r.step] = &r;
  // A train step (some step not forward): events say their phase.
  bool train = std::any_of(trace.steps.begin(), trace.steps.end(),
                           [](const StepInfo &s) { return s.phase != "forward"; });
  bool deviceTimed = report.timeSource.rfind("device", 0) == 0;
  TraceEvent::Track timedTrack = deviceTimed ? TraceEvent::Track::Device : TraceEvent::Track::Host;
  int timedPid = deviceTimed ? GpuPid : HostPid;

  auto meta = [&](const char *what, int pid, int tid, const std::string &name) {
    j.object([&] {
      j.attribute("ph", "M");
      j.attribute("name", what);
      j.attribute("pid", pid);
      if (tid >= 0)
        j.attribute("tid", tid);
      j.attributeObject("args", [&] {
        if (std::string(what).find("sort_index") != std::string::npos)
          j.attribute("sort_index", std::stoi(name));
        else
          j.attribute("name", name);
      });
    });
  };
  auto complete = [&](int pid, int tid, const std::string &name, const std::string &cat, double ts,
                      double dur, const std::function<void()> &args) {
    j.object([&] {
      j.attribute("ph", "X");
      j.attribute("name", name);
      j.attribute("cat", cat.empty() ? "tc" : cat);
      j.attribute("pid", pid);
      j.attribute("tid", tid);
      j.attribute("ts", ts);
      j.attribute("dur", std::max(dur, 0.0));
      if (args)
        j.attributeObject("args", args);
    });
  };

  j.objectBegin();
  j.attribute("displayTimeUnit", "ms");
  j.attributeBegin("traceEvents");
  j.arrayBegin();
  meta("process_name", CompilePid, -1, "compile (tc-import, tc-opt, tc-codegen)");
  meta("process_name", HostPid, -1, "host: " + trace.backend + " runtime");
  meta("process_sort_index", CompilePid, -1, "1");
  meta("process_sort_index", HostPid, -1, "2");
  meta("thread_name", CompilePid, 1, "stages and passes");
  meta("thread_name", HostPid, PlanTid, "plan: runs and steps");
  bool api = false, gpu = false;
  std::map<unsigned, bool> workers, streams;
  for (const TraceEvent &e : trace.events) {
    api |= e.track == TraceEvent::Track::Api;
    if (e.track == TraceEvent::Track::Worker)
      workers[e.lane] = true;
    if (e.track == TraceEvent::Track::Device)
      streams[e.lane] = gpu = true;
  }
  if (api)
    meta("thread_name", HostPid, ApiTid, "CUDA API (CUPTI)");
  for (auto &[lane, _] : workers)
    meta("thread_name", HostPid, WorkerTid0 + int(lane), "worker " + std::to_string(lane));
  if (gpu) {
    meta("process_name", GpuPid, -1, "GPU: " + trace.device);
    meta("process_sort_index", GpuPid, -1, "3");
    for (auto &[lane, _] : streams)
      meta("thread_name", GpuPid, int(lane), "stream " + std::to_string(lane));
  }
  if (train) {
    meta("thread_name", timedPid, PhaseTid, "train step: forward, backward, optimizer");
    meta("thread_sort_index", timedPid, PhaseTid, "0");
  }

  // The compile: stages one after another from 0; "parent/child" stages
  // nested inside their parent (the last stage of that name).
  double at = 0;
  std::map<std::string, std::pair<double, double>> parents; // stage -> (start, next child start)
  for (const TimelineEntry &e : compile) {
    double dur = e.seconds * 1e6;
    size_t slash = e.stage.find('/');
    auto args = [&] { j.attribute("tool", e.tool); };
    if (slash != std::string::npos) {
      auto p = parents.find(e.stage.substr(0, slash));
      if (p == parents.end())
        continue;
      complete(CompilePid, 1, e.stage.substr(slash + 1), "compile", p->second.second, dur, args);
      p->second.second += dur;
      continue;
    }
    complete(CompilePid, 1, e.tool + ": " + e.stage, "compile", at, dur, args);
    parents[e.stage] = {at, at};
    at += dur;
  }

  // The run, shifted to start 1 ms after the compile ends.
  double first = 1e300;
  for (const TraceEvent &e : trace.events)
    first = std::min(first, e.startUs);
  double shift = trace.events.empty() ? 0 : at + 1000 - first;
  std::map<uint64_t, const TraceEvent *> apiOf; // correlation -> API call
  for (const TraceEvent &e : trace.events)
    if (e.track == TraceEvent::Track::Api && e.correlation)
      apiOf[e.correlation] = &e;
  // Work on one stream runs in order, but converted device timestamps can
  // overlap by nanoseconds, and viewers drop a slice that overlaps its
  // predecessor without nesting: end each at the next one's start.
  std::map<const TraceEvent *, double> clippedDur;
  {
    std::map<unsigned, std::vector<const TraceEvent *>> lanes;
    for (const TraceEvent &e : trace.events)
      if (e.track == TraceEvent::Track::Device)
        lanes[e.lane].push_back(&e);
    for (auto &[lane, list] : lanes) {
      std::stable_sort(list.begin(), list.end(), [](const TraceEvent *a, const TraceEvent *b) {
        return a->startUs < b->startUs;
      });
      for (size_t i = 0; i + 1 < list.size(); ++i)
        if (list[i]->startUs + list[i]->durUs > list[i + 1]->startUs)
          clippedDur[list[i]] = list[i + 1]->startUs - list[i]->startUs;
    }
  }
  int flow = 0;
  for (const TraceEvent &e : trace.events) {
    auto [pid, tid] = placeOf(e);
    const StepInfo *s =
        e.step >= 0 && size_t(e.step) < trace.steps.size() ? &trace.steps[size_t(e.step)] : nullptr;
    std::string name = e.name;
    if (s && s->kind != "kernel" && s->kind != "copy" && e.track != TraceEvent::Track::Worker &&
        name.rfind("tc_", 0) != 0) // our own epilogue kernels are generated ones
      name = "[" + s->kind + "] " + name;
    if (e.category == "run")
      name = "run " + std::to_string(e.run);
    const KernelRow *row = s ? rowOfStep[e.step] : nullptr;
    bool timed = e.track == timedTrack;
    auto clipped = clippedDur.find(&e);
    double dur = clipped == clippedDur.end() ? e.durUs : clipped->second;
    std::string cat = e.category.empty() ? "tc" : e.category;
    if (train && s)
      cat += "," + s->phase; // e.g. "kernel,backward": viewers filter by either
    complete(pid, tid, name, cat, e.startUs + shift, dur, [&] {
      if (e.run >= 0)
        j.attribute("run", e.run);
      if (!e.note.empty())
        j.attribute("note", e.note);
      if (e.correlation)
        j.attribute("correlation", int64_t(e.correlation));
      if (!s)
        return;
      j.attribute("step", e.step);
      j.attribute("group", s->group);
      j.attribute("result", s->result);
      j.attribute("kind", s->kind);
      j.attribute("ran_by", s->detail);
      if (train)
        j.attribute("phase", s->phase);
      j.attributeArray("onnx_nodes", [&] {
        for (const std::string &n : s->nodes)
          j.value(n);
      });
      j.attributeArray("op_types", [&] {
        for (const std::string &n : s->opTypes)
          j.value(n);
      });
      j.attribute("signature", s->signature);
      j.attribute("dtype", s->dtype);
      j.attribute("bytes", int64_t(s->bytes));
      j.attribute("flops", s->flops);
      // Achieved rates where this event is the step's whole time in its run.
      if (timed && row && row->calls == 1 && e.durUs > 0) {
        j.attribute("achieved_gbps", double(s->bytes) / e.durUs / 1e3);
        j.attribute("achieved_tflops", s->flops / e.durUs / 1e6);
      }
    });
    if (e.track == TraceEvent::Track::Device && e.correlation && apiOf.count(e.correlation)) {
      const TraceEvent &from = *apiOf[e.correlation];
      ++flow;
      for (int end = 0; end < 2; ++end)
        j.object([&] {
          j.attribute("ph", end ? "f" : "s");
          j.attribute("name", "launch");
          j.attribute("cat", "flow");
          j.attribute("id", flow);
          j.attribute("pid", int(end ? GpuPid : HostPid));
          j.attribute("tid", end ? int(e.lane) : int(ApiTid));
          j.attribute("ts", (end ? e.startUs : from.startUs) + shift);
          if (end)
            j.attribute("bp", "e");
        });
    }
  }
  if (train)
    emitPhases(j, trace, timedTrack, timedPid, shift, flow);
  j.arrayEnd();
  j.attributeEnd();
  j.attributeBegin("otherData");
  j.objectBegin();
  j.attribute("tool", "tc-prof");
  j.attribute("device", trace.device);
  j.attribute("device_note", trace.deviceNote);
  j.attribute("tc_report", reportJsonValue(report));
  j.objectEnd();
  j.attributeEnd();
  j.objectEnd();
  os.flush();
  return out + "\n";
}

} // namespace tc
