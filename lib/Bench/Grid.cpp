#include "tc/Bench/Grid.h"
#include "tc/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <fstream>

namespace tc::bench {

namespace {

std::optional<double> median(std::vector<double> v) {
  if (v.empty())
    return std::nullopt;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A number member, or absent (null, missing); any other type is a defect.
std::optional<double> number(const llvm::json::Object &o, llvm::StringRef key,
                             const std::string &where) {
  const llvm::json::Value *v = o.get(key);
  if (!v || v->kind() == llvm::json::Value::Null)
    return std::nullopt;
  if (std::optional<double> d = v->getAsNumber())
    return d;
  fail(where, ": '", key.str(), "' is not a number");
}

std::string text(const llvm::json::Object &o, llvm::StringRef key, const std::string &where,
                 bool required) {
  const llvm::json::Value *v = o.get(key);
  if (!v || v->kind() == llvm::json::Value::Null) {
    if (required)
      fail(where, ": no '", key.str(), "'");
    return "";
  }
  if (std::optional<llvm::StringRef> s = v->getAsString())
    return s->str();
  fail(where, ": '", key.str(), "' is not a string");
}

} // namespace

GridFile readGridJsonl(const std::string &path, const std::string &target) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot read the grid file");
  GridFile f;
  std::string line;
  size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = path + ":" + std::to_string(lineNo);
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(line);
    if (!v)
      fail(where, ": malformed line (", llvm::toString(v.takeError()), ")");
    const llvm::json::Object *o = v->getAsObject();
    if (!o)
      fail(where, ": not a JSON object");
    BenchResult p;
    p.kind = kGrid;
    p.model = text(*o, "name", where, true);
    p.group = text(*o, "family", where, true);
    p.precision = text(*o, "dtype", where, true);
    p.mode = "tc";
    std::string status = text(*o, "status", where, true);
    p.passed = status == "ok";
    p.reason = p.passed ? "" : status;
    p.error = text(*o, "error", where, false);
    if (std::optional<double> us = number(*o, "tc_us", where))
      p.latencyMs = *us / 1e3;
    if (std::optional<double> b = number(*o, "bytes", where))
      p.trafficBytes = int64_t(*b);
    p.flops = number(*o, "flops", where);
    p.roofline = number(*o, "roofline", where);
    p.bound = text(*o, "bound", where, false);
    p.vsTorchEager = number(*o, "speedup_eager", where);
    p.vsTorchCompile = number(*o, "speedup_compile", where);
    if (!p.passed && p.error.empty())
      p.error = text(*o, "torch_error", where, false);
    for (auto [key, field] : {std::pair{"target", &f.target}, std::pair{"device", &f.device}}) {
      std::string s = text(*o, key, where, false);
      if (s.empty())
        continue;
      if (!field->empty() && *field != s)
        fail(where, ": ", key, " '", s, "' where the lines before say '", *field,
             "' (one file is one run on one device)");
      *field = s;
    }
    f.points.push_back(std::move(p));
  }
  if (f.points.empty())
    fail(path, ": no grid points (kernel-grid.py --out writes one JSON object per line)");
  if (f.target.empty())
    f.target = target;
  if (f.target.empty())
    fail(path, ": its points name no target (written before kernel-grid.py recorded it): give "
               "--target");
  return f;
}

bool heldToFloor(const BenchResult &p) {
  return p.passed && p.roofline && p.bound == "memory" && p.trafficBytes &&
         *p.trafficBytes >= kGridFloorBytes;
}

bool GridSummary::floorMet() const {
  return failed == 0 && belowPoor == 0 && slowerThanCompile == 0 &&
         double(floorPoints - belowGood) >= kGridGoodShare * double(floorPoints);
}

std::vector<GridSummary> summarizeGrid(const std::vector<const BenchResult *> &points) {
  std::vector<std::string> families;
  for (const BenchResult *p : points)
    if (std::find(families.begin(), families.end(), p->group) == families.end())
      families.push_back(p->group);
  families.push_back("");
  std::vector<GridSummary> out;
  for (const std::string &fam : families) {
    GridSummary s;
    s.family = fam;
    std::vector<double> roof, eager, compile;
    for (const BenchResult *p : points) {
      if (!fam.empty() && p->group != fam)
        continue;
      ++s.points;
      if (!p->passed || !p->roofline) {
        s.failed += !p->passed;
        continue;
      }
      roof.push_back(*p->roofline);
      if (heldToFloor(*p)) {
        ++s.floorPoints;
        s.belowGood += *p->roofline < kGridGood;
        s.belowPoor += *p->roofline < kGridPoor;
      }
      if (p->vsTorchEager)
        eager.push_back(*p->vsTorchEager);
      if (p->vsTorchCompile) {
        compile.push_back(*p->vsTorchCompile);
        ++s.withCompile;
        s.slowerThanCompile += *p->vsTorchCompile < 1.0;
      }
    }
    s.medianRoofline = median(roof);
    if (!roof.empty())
      s.worstRoofline = *std::min_element(roof.begin(), roof.end());
    s.medianVsEager = median(eager);
    s.medianVsCompile = median(compile);
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace tc::bench
