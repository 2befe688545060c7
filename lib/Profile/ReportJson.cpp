// ProfileReport <-> JSON (llvm::json): the --format=json report, which
// `tc-prof diff` reads back, also from a trace's "otherData".
#include "ReportJson.h"
#include "tc/Profile/ProfileReport.h"
#include "tc/Support/Error.h"
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace tc {

namespace json = llvm::json;

namespace {

json::Array strings(const std::vector<std::string> &v) {
  json::Array a;
  for (const std::string &s : v)
    a.push_back(s);
  return a;
}

json::Object rowJson(const KernelRow &k) {
  return json::Object{{"step", k.step},
                      {"name", k.name},
                      {"result", k.result},
                      {"kind", k.kind},
                      {"detail", k.detail},
                      {"signature", k.signature},
                      {"dtype", k.dtype},
                      {"nodes", strings(k.nodes)},
                      {"op_types", strings(k.opTypes)},
                      {"phase", k.phase},
                      {"calls", k.calls},
                      {"us_per_run", k.usPerRun},
                      {"spread_us", k.spreadUs},
                      {"share", k.share},
                      {"bytes", int64_t(k.bytes)},
                      {"flops", k.flops},
                      {"gbps", k.gbps},
                      {"tflops", k.tflops},
                      {"roofline", k.roofline},
                      {"limit", k.limit}};
}

} // namespace

json::Value reportJsonValue(const ProfileReport &r) {
  json::Array rows, gaps;
  for (const KernelRow &k : r.rows)
    rows.push_back(rowJson(k));
  for (const LaunchGap &g : r.gaps)
    gaps.push_back(json::Object{{"us", g.us}, {"run", g.run}, {"before", g.before}});
  json::Array phases;
  for (const PhaseTotal &p : r.phases)
    phases.push_back(json::Object{{"phase", p.phase},
                                  {"kernels", int64_t(p.kernels)},
                                  {"calls", p.calls},
                                  {"us_per_run", p.usPerRun},
                                  {"share", p.share}});
  return json::Object{{"model", r.model},
                      {"backend", r.backend},
                      {"device", r.device},
                      {"device_note", r.deviceNote},
                      {"peaks", r.peaksNote},
                      {"time_source", r.timeSource},
                      {"runs", r.runs},
                      {"cuda_graph", r.graph},
                      {"async_device", r.asyncDevice},
                      {"wall_ms", r.wallMs},
                      {"host_ms", r.hostMs},
                      {"device_ms", r.deviceMs},
                      {"span_ms", r.spanMs},
                      {"idle_fraction", r.idleFraction},
                      {"verdict", r.verdict},
                      {"verdict_text", r.verdictText},
                      {"gaps", std::move(gaps)},
                      {"phases", std::move(phases)},
                      {"rows", std::move(rows)}};
}

std::string ProfileReport::json() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", reportJsonValue(*this)) << "\n";
  return os.str();
}

ProfileReport ProfileReport::fromJson(const std::string &text, const std::string &what) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    fail(what, ": not JSON: ", llvm::toString(parsed.takeError()));
  const json::Object *o = parsed->getAsObject();
  if (o && o->get("traceEvents")) { // a trace: the report rides in otherData
    const json::Object *other = o->getObject("otherData");
    o = other ? other->getObject("tc_report") : nullptr;
    if (!o)
      fail(what, ": a Chrome trace without a tc-prof report (otherData.tc_report)");
  }
  if (!o || !o->getArray("rows"))
    fail(what, ": not a tc-prof report (no \"rows\"): write one with tc-prof --summary "
               "--format=json or --trace");
  auto str = [](const json::Object &obj, const char *k) {
    auto v = obj.getString(k);
    return v ? v->str() : std::string();
  };
  auto num = [](const json::Object &obj, const char *k, double dflt = -1) {
    auto v = obj.getNumber(k);
    return v ? *v : dflt;
  };
  auto list = [](const json::Object &obj, const char *k) {
    std::vector<std::string> out;
    if (const json::Array *a = obj.getArray(k))
      for (const json::Value &v : *a)
        if (auto s = v.getAsString())
          out.push_back(s->str());
    return out;
  };
  ProfileReport r;
  r.model = str(*o, "model");
  r.backend = str(*o, "backend");
  r.device = str(*o, "device");
  r.deviceNote = str(*o, "device_note");
  r.peaksNote = str(*o, "peaks");
  r.timeSource = str(*o, "time_source");
  r.runs = int(num(*o, "runs", 0));
  r.graph = o->getBoolean("cuda_graph").value_or(false);
  r.asyncDevice = o->getBoolean("async_device").value_or(false);
  r.wallMs = num(*o, "wall_ms");
  r.hostMs = num(*o, "host_ms");
  r.deviceMs = num(*o, "device_ms");
  r.spanMs = num(*o, "span_ms");
  r.idleFraction = num(*o, "idle_fraction");
  r.verdict = str(*o, "verdict");
  r.verdictText = str(*o, "verdict_text");
  for (const json::Value &v : *o->getArray("rows")) {
    const json::Object *k = v.getAsObject();
    if (!k)
      fail(what, ": a row of \"rows\" is not an object");
    KernelRow row;
    row.step = int(num(*k, "step", -1));
    row.name = str(*k, "name");
    row.result = str(*k, "result");
    row.kind = str(*k, "kind");
    row.detail = str(*k, "detail");
    row.signature = str(*k, "signature");
    row.dtype = str(*k, "dtype");
    row.nodes = list(*k, "nodes");
    row.opTypes = list(*k, "op_types");
    row.phase = str(*k, "phase");
    row.calls = num(*k, "calls", 0);
    row.usPerRun = num(*k, "us_per_run", 0);
    row.spreadUs = num(*k, "spread_us", 0);
    row.share = num(*k, "share", 0);
    row.bytes = uint64_t(num(*k, "bytes", 0));
    row.flops = num(*k, "flops", 0);
    row.gbps = num(*k, "gbps", 0);
    row.tflops = num(*k, "tflops", 0);
    row.roofline = num(*k, "roofline");
    row.limit = str(*k, "limit");
    r.rows.push_back(std::move(row));
  }
  if (const json::Array *phases = o->getArray("phases"))
    for (const json::Value &v : *phases)
      if (const json::Object *p = v.getAsObject())
        r.phases.push_back({str(*p, "phase"), size_t(num(*p, "kernels", 0)), num(*p, "calls", 0),
                            num(*p, "us_per_run", 0), num(*p, "share", 0)});
  if (const json::Array *gaps = o->getArray("gaps"))
    for (const json::Value &v : *gaps)
      if (const json::Object *g = v.getAsObject())
        r.gaps.push_back({num(*g, "us", 0), int(num(*g, "run", -1)), str(*g, "before")});
  return r;
}

} // namespace tc
