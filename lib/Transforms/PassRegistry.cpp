#include "tc/IR/Printer.h"
#include "tc/IR/TextLexer.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>

namespace tc {

static std::vector<PassInfo> &registry() {
#define OPTION(n, d, doc)                                                                          \
  PassOptionSpec { n, d, doc }
#define OPTIONS(...)                                                                               \
  std::vector<PassOptionSpec> { __VA_ARGS__ }
#define TC_PASS(NAME, FN, SUMMARY, OPTS) PassInfo{#NAME, FN, SUMMARY, OPTS},
  static std::vector<PassInfo> passes = {
#include "tc/Transforms/Passes.def"
  };
#undef TC_PASS
#undef OPTIONS
#undef OPTION
  return passes;
}

const std::vector<PassInfo> &allPasses() { return registry(); }

void registerExtraPass(PassInfo p) {
  if (lookupPass(p.name))
    fail("pass '", p.name, "' is already registered");
  registry().push_back(std::move(p));
}

const PassInfo *lookupPass(std::string_view name) {
  for (const PassInfo &p : allPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

const std::string &PassOptions::get(const std::string &name) const {
  auto it = values.find(name);
  if (it == values.end())
    fail("pass option '", name, "' is not set");
  return it->second;
}

int64_t PassOptions::getInt(const std::string &name) const {
  const std::string &v = get(name);
  try {
    size_t used = 0;
    int64_t x = std::stoll(v, &used);
    if (used == v.size())
      return x;
  } catch (const std::exception &) {
  }
  fail("pass option '", name, "' must be an integer, got '", v, "'");
}

std::string PassInvocation::spelling() const {
  std::string s = pass->name;
  bool first = true;
  for (const PassOptionSpec &o : pass->options) {
    const std::string &v = options.values.at(o.name);
    if (v == o.defaultValue)
      continue;
    s += (first ? "{" : ",") + o.name + "=" + v;
    first = false;
  }
  return first ? s : s + "}";
}

std::vector<PassInvocation> parsePipeline(std::string_view text) {
  std::vector<PassInvocation> out;
  size_t i = 0;
  auto isNameChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  };
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && isNameChar(text[i]))
      ++i;
    std::string name(text.substr(start, i - start));
    const PassInfo *p = lookupPass(name);
    if (!p)
      fail("unknown pass '", name, "' (see --list-passes)");
    PassInvocation inv{p, {}};
    for (const PassOptionSpec &o : p->options)
      inv.options.values[o.name] = o.defaultValue;
    if (i < text.size() && text[i] == '{') {
      size_t close = text.find('}', i);
      if (close == std::string_view::npos)
        fail("pass '", name, "': missing '}' in options");
      std::string_view body = text.substr(i + 1, close - i - 1);
      while (!body.empty()) {
        size_t comma = body.find(',');
        std::string_view kv = body.substr(0, comma);
        size_t eq = kv.find('=');
        if (eq == std::string_view::npos)
          fail("pass '", name, "': option '", kv, "' needs a value (k=v)");
        std::string k(kv.substr(0, eq));
        if (!inv.options.values.count(k))
          fail("pass '", name, "' has no option '", k, "'");
        inv.options.values[k] = std::string(kv.substr(eq + 1));
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
      }
      i = close + 1;
    }
    out.push_back(std::move(inv));
    if (i < text.size()) {
      if (text[i] != ',')
        fail("bad pass list near '", text.substr(i), "'");
      ++i;
    }
  }
  return out;
}

std::string pipelineForLevel(int level) {
  switch (level) {
  // -O0 runs op by op: the eager baseline.
  case 0: return "verify";
  case 1: return "infer-shapes,fold-constants,canonicalize,cse,dce";
  default: return "infer-shapes,fold-constants,canonicalize,cse,dce,fuse";
  }
}

void PassManager::run(Module &m, std::ostream &irOut) {
  namespace fs = std::filesystem;
  if (!opts_.dumpDir.empty()) {
    fs::create_directories(opts_.dumpDir);
    std::ofstream(fs::path(opts_.dumpDir) / "00-input.tcir") << printModuleToString(m);
  }
  int index = 0;
  for (const PassInvocation &inv : pipeline_) {
    ++index;
    auto t0 = std::chrono::steady_clock::now();
    bool changed = inv.pass->run(m, inv.options);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timings_.push_back({inv.pass->name, secs, changed});
    if (opts_.verifyEach && changed) {
      try {
        verifyModule(m);
      } catch (const Error &e) {
        fail("after pass '", inv.pass->name, "': ", e.what());
      }
    }
    if (opts_.afterPass)
      opts_.afterPass(inv, size_t(index), m, changed);
    bool print = opts_.printAfterAll;
    for (const std::string &n : opts_.printAfter)
      print |= n == inv.pass->name;
    if (print) {
      irOut << "// ----- IR after " << inv.spelling() << " -----\n";
      printModule(m, irOut);
    }
    if (!opts_.dumpDir.empty()) {
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%02d", index);
      std::ofstream(fs::path(opts_.dumpDir) /
                    (std::string(prefix) + "-after-" + inv.pass->name + ".tcir"))
          << printModuleToString(m);
    }
  }
}

void PassManager::printTimings(std::ostream &os) const {
  double total = 0;
  for (const PassTiming &t : timings_)
    total += t.seconds;
  os << "===-------------------------------------------------------------===\n"
     << "                      ... Pass execution timing report ...\n"
     << "===-------------------------------------------------------------===\n"
     << "  Total Execution Time: " << std::fixed << std::setprecision(4) << total << " seconds\n\n"
     << "   Wall Time      %   Changed  Name\n";
  for (const PassTiming &t : timings_)
    os << "  " << std::setw(9) << t.seconds << "  " << std::setw(5) << std::setprecision(1)
       << (total > 0 ? 100 * t.seconds / total : 0) << "%  " << std::setw(7)
       << (t.changed ? "yes" : "no") << "  " << t.pass << "\n"
       << std::setprecision(4);
  os << "  " << std::setw(9) << total << "  100.0%           Total\n";
}

bool runVerifyPass(Module &m, const PassOptions &) {
  verifyModule(m);
  return false;
}

} // namespace tc
