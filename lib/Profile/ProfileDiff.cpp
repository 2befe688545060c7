#include "tc/Profile/ProfileDiff.h"
#include "tc/Support/TextTable.h"
#include <algorithm>
#include <cmath>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <sstream>

namespace tc {

namespace {

struct Delta {
  std::string name;
  double a = -1, b = -1; // us per run; -1: absent on that side
  double sdA = 0, sdB = 0;
  std::string flag; // "slower", "faster", "new", "gone", or "" (within noise)
};

void classify(Delta &d, double minPercent) {
  if (d.a < 0 || d.b < 0) {
    d.flag = d.a < 0 ? "new" : "gone";
    return;
  }
  double delta = d.b - d.a;
  double noise = std::max({minPercent / 100 * d.a, 2 * std::max(d.sdA, d.sdB), 0.5});
  if (std::fabs(delta) > noise)
    d.flag = delta > 0 ? "slower" : "faster";
}

std::string signedFixed(double v, int digits) {
  return (v >= 0 ? "+" : "-") + fixed(std::fabs(v), digits);
}

} // namespace

std::string diffReports(const ProfileReport &a, const ProfileReport &b, const std::string &format,
                        double minPercent) {
  // Rows by name; a name that repeats on one side gets "#2", "#3" (in order).
  auto keyed = [](const ProfileReport &r) {
    std::map<std::string, const KernelRow *> m;
    std::vector<std::string> order;
    for (const KernelRow &k : r.rows) {
      std::string key = k.name;
      for (int n = 2; m.count(key); ++n)
        key = k.name + "#" + std::to_string(n);
      m[key] = &k;
      order.push_back(key);
    }
    return std::make_pair(m, order);
  };
  auto [ma, orderA] = keyed(a);
  auto [mb, orderB] = keyed(b);
  std::vector<Delta> rows;
  for (const std::string &k : orderA) {
    Delta d{k, ma[k]->usPerRun, -1, ma[k]->spreadUs, 0, ""};
    if (auto it = mb.find(k); it != mb.end())
      d.b = it->second->usPerRun, d.sdB = it->second->spreadUs;
    rows.push_back(d);
  }
  for (const std::string &k : orderB)
    if (!ma.count(k))
      rows.push_back({k, -1, mb[k]->usPerRun, 0, mb[k]->spreadUs, ""});
  for (Delta &d : rows)
    classify(d, minPercent);
  auto magnitude = [](const Delta &d) {
    return std::fabs(std::max(d.b, 0.0) - std::max(d.a, 0.0));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Delta &x, const Delta &y) { return magnitude(x) > magnitude(y); });

  struct Total {
    std::string name;
    double a, b;
  };
  std::vector<Total> totals = {{"wall_ms", a.wallMs, b.wallMs},
                               {"host_ms", a.hostMs, b.hostMs},
                               {"device_ms", a.deviceMs, b.deviceMs}};
  // Two train steps: each phase's time too (forward_ms, backward_ms, ...).
  for (const PhaseTotal &pa : a.phases)
    for (const PhaseTotal &pb : b.phases)
      if (pa.phase == pb.phase)
        totals.push_back({pa.phase + "_ms", pa.usPerRun / 1e3, pb.usPerRun / 1e3});
  auto pctOf = [](double x, double y) { return x > 0 ? 100 * (y - x) / x : 0.0; };
  if (format == "json") {
    llvm::json::Array tj, rj;
    for (const Total &t : totals)
      tj.push_back(llvm::json::Object{{"name", t.name},
                                      {"a", t.a},
                                      {"b", t.b},
                                      {"delta", t.b - t.a},
                                      {"percent", pctOf(t.a, t.b)}});
    for (const Delta &d : rows)
      rj.push_back(llvm::json::Object{{"name", d.name},
                                      {"a_us", d.a},
                                      {"b_us", d.b},
                                      {"delta_us", d.b - d.a},
                                      {"percent", pctOf(d.a, d.b)},
                                      {"flag", d.flag}});
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{{"totals", std::move(tj)},
                                                                      {"rows", std::move(rj)}}))
       << "\n";
    return os.str();
  }
  TextTable t({"kernel", "A us", "B us", "delta us", "delta", "change"});
  for (const Delta &d : rows)
    t.add({d.name, fixed(d.a, 1), fixed(d.b, 1),
           d.a < 0 || d.b < 0 ? "-" : signedFixed(d.b - d.a, 1),
           d.a <= 0 || d.b < 0 ? "-" : signedFixed(pctOf(d.a, d.b), 1) + "%", d.flag});
  if (format == "csv")
    return t.csv();
  std::ostringstream os;
  os << "A: " << a.model << " (" << a.backend << ", " << a.device << ", " << a.runs
     << " runs)\nB: " << b.model << " (" << b.backend << ", " << b.device << ", " << b.runs
     << " runs)\n";
  for (const Total &tot : totals)
    if (tot.a >= 0 && tot.b >= 0)
      os << tot.name << ": " << fixed(tot.a, 3) << " -> " << fixed(tot.b, 3) << " ("
         << signedFixed(pctOf(tot.a, tot.b), 1) << "%)\n";
  size_t flagged = 0;
  for (const Delta &d : rows)
    flagged += !d.flag.empty();
  os << flagged << " of " << rows.size() << " kernels changed beyond noise (>" << minPercent
     << "% and > 2 x the larger spread)\n\n"
     << t.text("  ");
  return os.str();
}

} // namespace tc
