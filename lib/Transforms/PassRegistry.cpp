#include "tc/IR/Printer.h"
#include "tc/IR/TextLexer.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>

namespace tc {

static std::deque<PassInfo> &registry() {
#define OPTION(n, K, d, doc)                                                                       \
  PassOptionSpec { n, PassOptionKind::K, d, doc }
#define OPTIONS(...)                                                                               \
  std::vector<PassOptionSpec> { __VA_ARGS__ }
#define TC_PASS(NAME, ID, FN, SUMMARY, OPTS) PassInfo{#NAME, FN, SUMMARY, OPTS, PassId::ID},
  static std::deque<PassInfo> passes = {
#include "tc/Transforms/Passes.def"
  };
#undef TC_PASS
#undef OPTIONS
#undef OPTION
  return passes;
}

const std::deque<PassInfo> &allPasses() { return registry(); }

void registerExtraPass(PassInfo p) {
  if (lookupPass(p.name))
    fail("pass '", p.name, "' is already registered");
  p.id = std::nullopt;
  registry().push_back(std::move(p));
}

const PassInfo *lookupPass(std::string_view name) {
  for (const PassInfo &p : allPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

const PassInfo &passInfo(PassId id) { return allPasses()[size_t(id)]; }

const PassOptionValue &PassOptions::value(std::string_view name) const {
  auto it = values.find(name);
  if (it == values.end())
    fail("pass option '", name, "' is not set");
  return it->second;
}

// PassInvocation::set keeps every value of its option's kind, so a getter
// of the wrong kind is a bug in the pass, not in the user's input.
template <typename T> static const T &typed(const PassOptionValue &v, std::string_view name) {
  if (const T *p = std::get_if<T>(&v))
    return *p;
  fail("pass option '", name, "' is read as the wrong kind");
}

int64_t PassOptions::getInt(std::string_view name) const {
  return typed<int64_t>(value(name), name);
}

bool PassOptions::getBool(std::string_view name) const { return typed<bool>(value(name), name); }

const std::string &PassOptions::get(std::string_view name) const {
  return typed<std::string>(value(name), name);
}

double PassOptions::getNumber(std::string_view pass, std::string_view name) const {
  const std::string &s = get(name);
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v))
      return v;
  } catch (const std::exception &) {
  }
  fail(pass, ": ", name, " must be a number, not '", s, "'");
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
