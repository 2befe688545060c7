// Passes and the pass manager. A pass is a function over a Module with
// string options declared in Passes.def.
#pragma once
#include "tc/IR/IR.h"
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tc {

struct PassOptionSpec {
  std::string name, defaultValue, doc;
};

class PassOptions {
public:
  std::map<std::string, std::string> values;
  int64_t getInt(const std::string &name) const;
  const std::string &get(const std::string &name) const;
};

// A pass reports whether it changed the module (used for fixpoints and to
// skip re-verification).
using PassFn = bool (*)(Module &, const PassOptions &);

struct PassInfo {
  std::string name;
  PassFn run;
  std::string summary;
  std::vector<PassOptionSpec> options;
};

const std::vector<PassInfo> &allPasses();
// Adds a pass outside Passes.def: only test tools do (a deliberately wrong
// pass that the numerics bisection must catch). Call before any lookup.
void registerExtraPass(PassInfo p);
const PassInfo *lookupPass(std::string_view name);

// A pass with its options, as written in --passes=name{k=v,k2=v2}.
struct PassInvocation {
  const PassInfo *pass;
  PassOptions options;
  std::string spelling() const;
};

// Parses "a,b{k=v},c"; throws tc::Error naming an unknown pass or option.
std::vector<PassInvocation> parsePipeline(std::string_view text);
// Named pipelines: O0..O3.
std::string pipelineForLevel(int level);

struct PassManagerOptions {
  bool verifyEach = false;
  bool printAfterAll = false;
  std::vector<std::string> printAfter; // pass names
  bool timePasses = false;
  std::string dumpDir; // writes NN-after-<pass>.tcir there when set
  // Called after every pass with its 1-based index and whether it changed
  // the module (tc-opt --verify-numerics); may throw tc::Error to stop.
  std::function<void(const PassInvocation &, size_t, const Module &, bool)> afterPass;
};

struct PassTiming {
  std::string pass;
  double seconds;
  bool changed;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(std::move(opts)) {}
  void add(PassInvocation p) { pipeline_.push_back(std::move(p)); }
  // Runs the pipeline; IR printed after passes goes to `irOut` (stderr in
  // the tools, like LLVM's -print-after-all).
  void run(Module &m, std::ostream &irOut);
  const std::vector<PassTiming> &timings() const { return timings_; }
  void printTimings(std::ostream &os) const;

private:
  PassManagerOptions opts_;
  std::vector<PassInvocation> pipeline_;
  std::vector<PassTiming> timings_;
};

#define TC_PASS(NAME, FN, ...) bool FN(Module &, const PassOptions &);
#include "tc/Transforms/Passes.def"
#undef TC_PASS

} // namespace tc
