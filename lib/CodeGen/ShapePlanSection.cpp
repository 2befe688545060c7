#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/Support/Error.h"
#include "tc/Support/TabFields.h"
#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace tc {

namespace {

// Version 2 only where the plan holds guards (ShapePlanSection.h).
constexpr const char *kMagic = "tc-shape-plan 1";
constexpr const char *kMagicGuarded = "tc-shape-plan 2";

// One field: an origin or a reason may name a value holding a tab.
std::string oneField(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n'; }, ' ');
  return s;
}

std::string orDash(const std::string &s) { return s.empty() ? "-" : s; }

} // namespace

std::string writeShapePlan(const StoredShapePlan &plan) {
  std::string s = std::string(plan.guards.empty() ? kMagic : kMagicGuarded) + "\n";
  if (!plan.unplanned.empty())
    return s + "unplanned\t" + oneField(plan.unplanned) + "\n";
  for (const StoredGuard &g : plan.guards)
    s += "guard\t" + g.bound.str() + "\t" + oneField(g.origin) + "\n";
  for (const StoredFold &f : plan.folds) {
    s += (f.range ? "range\t" : "fold\t") + f.value;
    for (const DimExpr &e : f.elements)
      s += "\t" + e.str();
    s += "\n";
  }
  for (const StoredBlock &b : plan.blocks)
    s += "block\t" + b.bytes.str() + "\t" + std::to_string(b.start) + "\t" + std::to_string(b.end) +
         "\n";
  for (const StoredBuffer &b : plan.buffers)
    s += "buffer\t" + b.value + "\t" + b.bytes.str() + "\t" +
         (b.block == StoredBuffer::kNoBlock ? "-" : std::to_string(b.block)) + "\t" +
         orDash(b.base) + "\t" + b.viewOffset.str() + "\t" + orDash(b.inPlaceOf) + "\n";
  return s;
}

void applyFolds(Function &f, const std::vector<StoredFold> &folds,
                const std::map<std::string, int64_t> &sizes) {
  std::unordered_map<std::string, Value *> results;
  for (const auto &op : f.ops)
    for (Value *r : op->results)
      results[r->name] = r;
  std::vector<const Op *> dead;
  for (const StoredFold &fold : folds) {
    auto it = results.find(fold.value);
    Value *r = it == results.end() ? nullptr : it->second;
    TensorType t = r ? r->type : TensorType{}; // at the sizes (codegen plans it symbolic)
    for (Dim &d : t.shape)
      d = substituteDim(d, sizes);
    std::optional<int64_t> n = staticNumElements(t.shape);
    if (!r || r->type.dtype != DType::I64 || r->def->results.size() != 1 || !n ||
        (fold.range ? fold.elements.size() != 2 : *n != int64_t(fold.elements.size())))
      fail("shape plan: no i64 value %", fold.value, " of ",
           fold.range ? "static size" : std::to_string(fold.elements.size()) + " elements",
           " to fold");
    std::vector<int64_t> data;
    for (const DimExpr &e : fold.elements)
      data.push_back(e.eval(sizes));
    if (fold.range) { // start, start + step, ...
      int64_t start = data[0], step = data[1];
      data.clear();
      for (int64_t i = 0; i < *n; ++i)
        data.push_back(start + i * step);
    }
    Value *c =
        f.addConstant(f.uniqueName(r->name), t,
                      TensorData::copyOf(data.data(), data.size() * sizeof(int64_t)), r->def->loc);
    f.replaceAllUsesWith(r, c);
    dead.push_back(r->def);
  }
  f.eraseOps(dead);
}

void checkGuards(const std::vector<StoredGuard> &guards,
                 const std::map<std::string, int64_t> &sizes, const std::string &file) {
  for (const StoredGuard &g : guards)
    if (std::string why = g.bound.violation(sizes); !why.empty())
      fail(file, ": ", why, " (", g.origin, ")");
}

StoredShapePlan readShapePlan(std::string_view text, const std::string &file) {
  StoredShapePlan plan;
  size_t lineNo = 0;
  bool guarded = false; // version 2
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineNo;
    auto bad = [&](const std::string &why) {
      fail(file, ": section ", kSectionShapePlan, " line ", lineNo, ": ", why);
    };
    if (lineNo == 1) {
      guarded = line == kMagicGuarded;
      if (line != kMagic && !guarded)
        bad("expected '" + std::string(kMagic) + "' or '" + kMagicGuarded + "'");
      continue;
    }
    std::vector<std::string_view> f = tabFields(line);
    auto name = [](std::string_view v) { return v == "-" ? std::string() : std::string(v); };
    auto expr = [&](std::string_view v) {
      try {
        return DimExpr::parse(v);
      } catch (const Error &e) {
        bad(e.what());
        throw;
      }
    };
    // A step (SIZE_MAX: a function result's last) or a block's index.
    auto number = [&](std::string_view v) {
      size_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size())
        bad("expected a number, got '" + std::string(v) + "'");
      return n;
    };
    if (f[0] == "unplanned" && f.size() == 2 && !f[1].empty()) {
      if (lineNo != 2 || !text.empty())
        bad("an unplanned record is the section's only one");
      plan.unplanned = std::string(f[1]);
    } else if (f[0] == "guard" && f.size() == 3 && guarded) {
      try {
        plan.guards.push_back({DimGuard::parse(f[1]), std::string(f[2])});
      } catch (const Error &e) {
        bad(e.what());
      }
    } else if ((f[0] == "fold" && f.size() >= 2 && !f[1].empty()) ||
               (f[0] == "range" && f.size() == 4 && !f[1].empty())) {
      plan.folds.push_back({std::string(f[1]), {}, f[0] == "range"});
      for (size_t i = 2; i < f.size(); ++i)
        plan.folds.back().elements.push_back(expr(f[i]));
      if (plan.folds.back().range && !plan.folds.back().elements[1].isConstant())
        bad("a range's step is a number");
    } else if (f[0] == "block" && f.size() == 4) {
      plan.blocks.push_back({expr(f[1]), number(f[2]), number(f[3])});
      if (plan.blocks.back().start > plan.blocks.back().end)
        bad("a block that ends before it starts");
    } else if (f[0] == "buffer" && f.size() == 7) {
      size_t block = f[3] == "-" ? StoredBuffer::kNoBlock : number(f[3]);
      if (block != StoredBuffer::kNoBlock && block >= plan.blocks.size())
        bad("no block " + std::string(f[3]));
      plan.buffers.push_back(
          {std::string(f[1]), expr(f[2]), block, name(f[4]), expr(f[5]), name(f[6])});
    } else {
      bad("expected " + std::string(guarded ? "guard, " : "") +
          "fold, range, block, buffer or unplanned with their fields");
    }
  }
  if (lineNo == 0)
    fail(file, ": section ", kSectionShapePlan, " is empty");
  return plan;
}

} // namespace tc
