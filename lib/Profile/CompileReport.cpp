#include "tc/Profile/CompileReport.h"
#include "tc/Support/Error.h"
#include "tc/Support/TextTable.h"
#include <algorithm>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <sstream>

namespace tc {

namespace json = llvm::json;

std::vector<TimelineEntry> parseTimelineJson(const std::string &text, const std::string &what) {
  llvm::Expected<json::Value> v = json::parse(text);
  if (!v)
    fail(what, ": the compile timeline is not JSON: ", llvm::toString(v.takeError()));
  const json::Object *o = v->getAsObject();
  const json::Array *stages = o ? o->getArray("stages") : nullptr;
  if (!stages)
    fail(what, ": the compile timeline has no \"stages\"");
  std::vector<TimelineEntry> out;
  for (const json::Value &s : *stages) {
    const json::Object *e = s.getAsObject();
    if (!e)
      continue;
    auto tool = e->getString("tool"), name = e->getString("name");
    out.push_back(
        {tool ? tool->str() : "", name ? name->str() : "", e->getNumber("seconds").value_or(0)});
  }
  return out;
}

std::string compileReport(const std::vector<TimelineEntry> &timeline, const std::string &format) {
  // Top-level stages count toward totals; "parent/child" ones are parts.
  double total = 0;
  std::vector<std::string> toolOrder;
  std::map<std::string, double> byTool;
  std::vector<const TimelineEntry *> stages, parts;
  for (const TimelineEntry &e : timeline) {
    if (e.stage.find('/') != std::string::npos) {
      parts.push_back(&e);
      continue;
    }
    stages.push_back(&e);
    total += e.seconds;
    if (!byTool.count(e.tool))
      toolOrder.push_back(e.tool);
    byTool[e.tool] += e.seconds;
  }
  std::stable_sort(parts.begin(), parts.end(), [](const TimelineEntry *a, const TimelineEntry *b) {
    return a->seconds > b->seconds;
  });
  auto share = [&](double s) { return total > 0 ? s / total : 0.0; };
  auto pct = [&](double s) { return fixed(100 * share(s), 1) + "%"; };
  if (format == "json") {
    json::Array tools, st, ps;
    for (const std::string &t : toolOrder)
      tools.push_back(
          json::Object{{"tool", t}, {"seconds", byTool[t]}, {"share", share(byTool[t])}});
    for (const TimelineEntry *e : stages)
      st.push_back(json::Object{{"tool", e->tool},
                                {"stage", e->stage},
                                {"seconds", e->seconds},
                                {"share", share(e->seconds)}});
    for (const TimelineEntry *e : parts)
      ps.push_back(json::Object{{"tool", e->tool}, {"stage", e->stage}, {"seconds", e->seconds}});
    json::Value v = json::Object{{"total_seconds", total},
                                 {"tools", std::move(tools)},
                                 {"stages", std::move(st)},
                                 {"parts", std::move(ps)}};
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::formatv("{0:2}", v) << "\n";
    return os.str();
  }
  TextTable t({"tool", "stage", "seconds", "share"});
  for (const TimelineEntry *e : stages)
    t.add({e->tool, e->stage, fixed(e->seconds, 4), pct(e->seconds)});
  if (format == "csv") {
    for (const TimelineEntry *e : parts)
      t.add({e->tool, e->stage, fixed(e->seconds, 6), ""});
    return t.csv();
  }
  std::ostringstream os;
  os << "compile time " << fixed(total, 3) << " s:";
  for (const std::string &tool : toolOrder)
    os << " " << tool << " " << fixed(byTool[tool], 3) << " s (" << pct(byTool[tool]) << ")";
  os << "\n\n" << t.text("  ");
  if (!parts.empty()) {
    double sum = 0;
    for (const TimelineEntry *e : parts)
      sum += e->seconds;
    os << "\n" << parts.size() << " kernels emitted in " << fixed(sum, 4) << " s; slowest:\n";
    TextTable k({"kernel", "seconds"});
    for (size_t i = 0; i < parts.size() && i < 10; ++i)
      k.add({parts[i]->stage.substr(parts[i]->stage.find('/') + 1), fixed(parts[i]->seconds, 5)});
    os << k.text("  ");
  }
  return os.str();
}

} // namespace tc
