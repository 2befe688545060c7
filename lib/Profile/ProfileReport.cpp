#include "tc/Profile/ProfileReport.h"
#include "tc/Support/Error.h"
#include "tc/Support/TextTable.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tc {

namespace {

double median(std::vector<double> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// 1.4826 x the median absolute deviation: a standard deviation that one
// preempted run does not blow up.
double robustSpread(const std::vector<double> &v) {
  double m = median(v);
  std::vector<double> dev;
  for (double x : v)
    dev.push_back(std::fabs(x - m));
  return 1.4826 * median(dev);
}

// Total length of the union of [start, end) intervals.
double unionLength(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, at = -1e300;
  for (auto [s, e] : iv) {
    s = std::max(s, at);
    if (e > s)
      total += e - s;
    at = std::max(at, e);
  }
  return total;
}

bool isStepEvent(const TraceEvent &e) { return e.track == TraceEvent::Track::Host && e.step >= 0; }

std::string percent(double f) { return fixed(100 * f, f < 0.1 ? 1 : 0) + "%"; }

} // namespace

ProfileReport summarizeTrace(const RunTrace &trace, const DevicePeaks &peaks) {
  ProfileReport r;
  r.backend = trace.backend;
  r.device = trace.device;
  r.deviceNote = trace.deviceNote;
  r.peaksNote = peaks.source;
  // A run's wall time, less what the tracer spent inside it collecting
  // (category "tracing": CUPTI's flush and the attribution).
  std::map<int, double> wall; // by run
  for (const TraceEvent &e : trace.events)
    if (e.track == TraceEvent::Track::Host && e.category == "run" && e.run >= 0)
      wall[e.run] += e.durUs;
  for (const TraceEvent &e : trace.events)
    if (e.track == TraceEvent::Track::Host && e.category == "tracing" && wall.count(e.run))
      wall[e.run] -= e.durUs;
  r.runs = int(wall.size());
  if (r.runs == 0)
    return r;
  std::vector<double> walls;
  for (auto &[run, us] : wall)
    walls.push_back(us / 1e3);
  r.wallMs = median(walls);
  r.asyncDevice = trace.asyncDevice;
  bool async = trace.asyncDevice;
  bool device = false;
  for (const TraceEvent &e : trace.events)
    device |= e.track == TraceEvent::Track::Device && e.run >= 0;
  r.timeSource = device ? "device events (" + trace.deviceNote + ")"
                        : "host time per step (" + trace.deviceNote + ")";

  // Rows: per step (or per unclaimed device kernel name), time per run.
  struct Acc {
    KernelRow row;
    std::map<int, double> us; // by run
    double events = 0;
  };
  std::map<std::string, Acc> acc;
  std::map<int, std::vector<std::pair<double, double>>> busy; // device intervals by run
  std::map<int, double> host;                                 // host issue time by run
  for (const TraceEvent &e : trace.events) {
    if (e.run < 0 || !wall.count(e.run))
      continue;
    // Host issue time: steps and graph launches (not copies, nor waiting
    // for the device to finish).
    if (e.track == TraceEvent::Track::Host && (e.step >= 0 || e.category == "graph"))
      host[e.run] += e.durUs;
    bool counts = device ? e.track == TraceEvent::Track::Device : isStepEvent(e);
    if (!counts)
      continue;
    busy[e.run].push_back({e.startUs, e.startUs + e.durUs});
    bool stepKnown = e.step >= 0 && size_t(e.step) < trace.steps.size();
    std::string key = stepKnown ? "s" + std::to_string(e.step) : "k" + e.category + e.name;
    Acc &a = acc[key];
    if (a.row.name.empty()) {
      if (stepKnown) {
        const StepInfo &s = trace.steps[size_t(e.step)];
        a.row.step = e.step;
        a.row.name = s.group;
        a.row.result = s.result;
        a.row.kind = s.kind;
        a.row.detail = s.detail;
        a.row.signature = s.signature;
        a.row.dtype = s.dtype;
        a.row.nodes = s.nodes;
        a.row.opTypes = s.opTypes;
        a.row.phase = s.phase;
        a.row.bytes = s.bytes;
        a.row.flops = s.flops;
      } else {
        a.row.name = e.name;
        a.row.kind = e.category == "memcpy" || e.category == "memset" ? e.category : "unattributed";
        a.row.detail = e.note;
      }
    }
    a.us[e.run] += e.durUs;
    a.events += 1;
  }
  double total = 0;
  for (auto &[key, a] : acc) {
    KernelRow &row = a.row;
    std::vector<double> perRun;
    for (auto &[run, us] : wall)
      perRun.push_back(a.us.count(run) ? a.us[run] : 0);
    row.usPerRun = median(perRun);
    row.spreadUs = robustSpread(perRun);
    row.calls = a.events / r.runs;
    total += row.usPerRun;
    double s = row.usPerRun * 1e-6;
    if (s > 0) {
      row.gbps = double(row.bytes) / s / 1e9;
      row.tflops = row.flops / s / 1e12;
      if (row.step >= 0) {
        const StepInfo &info = trace.steps[size_t(row.step)];
        double limit = peaks.limitSeconds(info);
        if (limit > 0) {
          row.roofline = limit / s;
          row.limit = peaks.limitOf(info);
        }
      }
    }
    r.rows.push_back(row);
  }
  for (KernelRow &row : r.rows)
    row.share = total > 0 ? row.usPerRun / total : 0;
  std::stable_sort(r.rows.begin(), r.rows.end(),
                   [](const KernelRow &a, const KernelRow &b) { return a.usPerRun > b.usPerRun; });

  // A train step's phases: each one's rows summed.
  bool train = std::any_of(trace.steps.begin(), trace.steps.end(),
                           [](const StepInfo &s) { return s.phase != "forward"; });
  if (train) {
    for (const char *p : {"forward", "backward", "optimizer", "other"}) {
      PhaseTotal t;
      t.phase = p;
      for (const KernelRow &row : r.rows)
        if (row.phase == p || (row.phase.empty() && t.phase == "other")) {
          ++t.kernels;
          t.calls += row.calls;
          t.usPerRun += row.usPerRun;
          t.share += row.share;
        }
      if (t.kernels || t.phase != "other")
        r.phases.push_back(t);
    }
  }

  // Per-run totals and the gaps between device work (or steps).
  std::vector<double> busyMs, spanMs, hostMs;
  std::vector<LaunchGap> gaps;
  for (auto &[run, us] : wall) {
    const auto &iv = busy[run];
    busyMs.push_back(unionLength(iv) / 1e3);
    double lo = 1e300, hi = -1e300;
    for (auto [s, e] : iv)
      lo = std::min(lo, s), hi = std::max(hi, e);
    spanMs.push_back(iv.empty() ? 0 : (hi - lo) / 1e3);
    hostMs.push_back(host[run] / 1e3);
  }
  // Gaps, from the events in start order.
  std::map<int, std::vector<const TraceEvent *>> ordered;
  for (const TraceEvent &e : trace.events)
    if (e.run >= 0 && wall.count(e.run) &&
        (device ? e.track == TraceEvent::Track::Device : isStepEvent(e)))
      ordered[e.run].push_back(&e);
  for (auto &[run, list] : ordered) {
    std::stable_sort(list.begin(), list.end(), [](const TraceEvent *a, const TraceEvent *b) {
      return a->startUs < b->startUs;
    });
    double end = -1;
    for (const TraceEvent *e : list) {
      if (end >= 0 && e->startUs > end) {
        std::string name = e->step >= 0 && size_t(e->step) < trace.steps.size()
                               ? trace.steps[size_t(e->step)].group
                               : e->name;
        gaps.push_back({e->startUs - end, run, name});
      }
      end = std::max(end, e->startUs + e->durUs);
    }
  }
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const LaunchGap &a, const LaunchGap &b) { return a.us > b.us; });
  if (gaps.size() > 5)
    gaps.resize(5);
  r.gaps = gaps;
  if (async) { // a GPU: the host issues work, the device runs it alongside
    r.hostMs = median(hostMs);
    r.deviceMs = device ? median(busyMs) : -1;
    r.spanMs = device ? median(spanMs) : -1;
  } else { // the host runs the kernels: they are the device's work, the rest of a run is overhead
    std::vector<double> overhead;
    size_t i = 0;
    for (auto &[run, us] : wall)
      overhead.push_back(std::max(0.0, us / 1e3 - busyMs[i++]));
    r.deviceMs = median(busyMs);
    r.hostMs = median(overhead);
    r.spanMs = r.wallMs;
  }
  if (r.spanMs > 0 && r.deviceMs >= 0)
    r.idleFraction = std::max(0.0, 1 - r.deviceMs / r.spanMs);
  for (const TraceEvent &e : trace.events)
    r.graph |= e.category == "graph" && e.run >= 0;

  // The verdict.
  std::ostringstream v;
  auto top = [&] {
    std::ostringstream t;
    int n = 0;
    for (const KernelRow &row : r.rows) {
      if (n == 3)
        break;
      t << (n++ ? "; " : "") << row.name << " " << percent(row.share);
      if (row.roofline >= 0)
        t << ", " << row.limit << "-limited at " << percent(row.roofline) << " of the roofline";
      else if (row.kind == "fallback" || row.kind == "unattributed")
        t << ", " << row.kind;
    }
    return t.str();
  };
  if (r.deviceMs < 0) {
    r.verdict = "unknown";
    v << "no device events were recorded (" << trace.deviceNote << "): host time "
      << fixed(r.hostMs, 3) << " ms per run";
  } else if (async && r.hostMs > r.deviceMs) {
    r.verdict = "launch-bound";
    v << "host time " << fixed(r.hostMs, 3) << " ms > device time " << fixed(r.deviceMs, 3)
      << " ms per run: the GPU waits for the host to issue work; "
      << (r.graph ? "even as a CUDA graph the launch and copies dominate: batch more work per run"
                  : "run with CUDA graphs (tc-run --cuda-graphs=on) or fuse more");
  } else if (!async && r.hostMs > r.deviceMs) {
    r.verdict = "overhead-bound";
    v << fixed(r.hostMs, 3) << " ms of a " << fixed(r.wallMs, 3)
      << " ms run is outside the kernels (dispatch, copies, input checks): the kernels take "
      << fixed(r.deviceMs, 3) << " ms";
  } else {
    r.verdict = "device-bound";
    v << "device time " << fixed(r.deviceMs, 3) << " ms >= host time " << fixed(r.hostMs, 3)
      << " ms per run";
    if (r.idleFraction >= 0)
      v << " (device idle " << percent(r.idleFraction) << " of the span)";
    v << "; top: " << top();
  }
  r.verdictText = v.str();
  return r;
}

std::string ProfileReport::text(size_t maxRows) const {
  std::ostringstream os;
  os << "profile of " << (model.empty() ? "the model" : model) << ": " << backend << " on "
     << device << ", " << runs << " runs" << (graph ? " (CUDA graph replays)" : "") << "\n";
  os << "rows timed by: " << timeSource << "\n";
  os << "roofline: " << peaksNote << "\n\n";
  // A train step's table: a phase column and the nodes (a backward row names
  // the forward nodes it differentiates), rows grouped by phase in step
  // order, at most maxRows of each.
  bool train = !phases.empty();
  std::vector<std::string> cols{"#",     "kernel", "kind",    "calls",    "us/run", "spread",
                                "share", "GB/s",   "TFLOP/s", "roofline", "limit",  "ops"};
  if (train) {
    cols.insert(cols.begin() + 1, "phase");
    cols.push_back("nodes");
  }
  TextTable t(cols);
  auto clip = [](const std::vector<std::string> &v, size_t width) {
    std::string s;
    for (const std::string &o : v)
      s += (s.empty() ? "" : ",") + o;
    return s.size() > width ? s.substr(0, width - 3) + "..." : s;
  };
  std::vector<std::string> groups{""};
  if (train) {
    groups.clear();
    for (const PhaseTotal &p : phases)
      groups.push_back(p.phase);
  }
  size_t hidden = 0, n = 0;
  for (const std::string &g : groups) {
    size_t inGroup = 0;
    for (const KernelRow &k : rows) {
      if (train && k.phase != g && !(g == "other" && k.phase.empty()))
        continue;
      if (inGroup++ >= maxRows) {
        ++hidden;
        continue;
      }
      ++n;
      std::vector<std::string> cells{std::to_string(n),
                                     k.name,
                                     k.kind,
                                     fixed(k.calls, k.calls == std::floor(k.calls) ? 0 : 1),
                                     fixed(k.usPerRun, 1),
                                     fixed(k.spreadUs, 1),
                                     percent(k.share),
                                     fixed(k.gbps, 1),
                                     fixed(k.tflops, 3),
                                     k.roofline < 0 ? "-" : percent(k.roofline),
                                     k.limit.empty() ? "-" : k.limit,
                                     clip(k.opTypes, 48)};
      if (train) {
        cells.insert(cells.begin() + 1, k.phase.empty() ? "other" : k.phase);
        cells.push_back(clip(k.nodes, 48));
      }
      t.add(cells);
    }
  }
  os << t.text("  ");
  if (hidden)
    os << "  ... " << hidden << " more rows"
       << (train ? " (at most " + std::to_string(maxRows) + " per phase)" : "")
       << " (--format=csv lists all)\n";
  if (train) {
    TextTable pt({"phase", "kernels", "calls", "us/run", "share"});
    for (const PhaseTotal &p : phases)
      pt.add({p.phase, std::to_string(p.kernels),
              fixed(p.calls, p.calls == std::floor(p.calls) ? 0 : 1), fixed(p.usPerRun, 1),
              percent(p.share)});
    os << "\nper phase (train step):\n" << pt.text("  ");
  }
  os << "\nper run: wall " << fixed(wallMs, 3) << " ms, host " << fixed(hostMs, 3) << " ms, device "
     << fixed(deviceMs, 3) << " ms";
  if (spanMs >= 0 && asyncDevice)
    os << ", device span " << fixed(spanMs, 3) << " ms";
  if (idleFraction >= 0)
    os << ", device idle " << percent(idleFraction);
  os << "\n";
  if (!gaps.empty()) {
    os << "largest gaps:";
    for (size_t i = 0; i < gaps.size(); ++i)
      os << (i ? "," : "") << " " << fixed(gaps[i].us, 1) << " us before " << gaps[i].before
         << " (run " << gaps[i].run << ")";
    os << "\n";
  }
  os << "verdict: " << verdict << ": " << verdictText << "\n";
  return os.str();
}

std::string ProfileReport::csv() const {
  TextTable t({"step",  "kernel",    "result",   "kind",  "calls",  "us_per_run", "spread_us",
               "share", "bytes",     "flops",    "gbps",  "tflops", "roofline",   "limit",
               "dtype", "signature", "op_types", "nodes", "detail", "phase"});
  auto join = [](const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v)
      s += (s.empty() ? "" : " ") + x;
    return s;
  };
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return std::string(buf);
  };
  for (const KernelRow &k : rows)
    t.add({std::to_string(k.step),
           k.name,
           k.result,
           k.kind,
           num(k.calls),
           num(k.usPerRun),
           num(k.spreadUs),
           num(k.share),
           std::to_string(k.bytes),
           num(k.flops),
           num(k.gbps),
           num(k.tflops),
           num(k.roofline),
           k.limit,
           k.dtype,
           k.signature,
           join(k.opTypes),
           join(k.nodes),
           k.detail,
           k.phase});
  return t.csv();
}

} // namespace tc
