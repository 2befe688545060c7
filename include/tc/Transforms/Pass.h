// Passes, pipelines and the pass manager. A pass is a function over a
// Module with typed options declared in Passes.def. A pipeline is a list of
// passes with option values, built in code (named pipelines below) or
// parsed from --passes= text; both give the same structures.
#pragma once
#include "tc/IR/IR.h"
#include <chrono>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tc {

enum class PassOptionKind : uint8_t {
  Int,
  Bool, // spelled 0 or 1 (true/false accepted)
  String
};

struct PassOptionSpec {
  std::string name;
  PassOptionKind kind;
  std::string defaultValue; // as spelled in --passes=
  std::string doc;
};

// Alternatives in PassOptionKind's order: index() is the value's kind.
using PassOptionValue = std::variant<int64_t, bool, std::string>;

// Every declared option of one pass, defaults filled in; values always have
// their option's kind (PassInvocation::set checks).
class PassOptions {
public:
  std::map<std::string, PassOptionValue, std::less<>> values;
  int64_t getInt(std::string_view name) const;
  bool getBool(std::string_view name) const;
  const std::string &get(std::string_view name) const; // a String option
  // A String option that holds a finite number (a learning rate: Passes.def
  // has no float kind); a tc::Error naming the pass's option otherwise.
  double getNumber(std::string_view pass, std::string_view name) const;

private:
  const PassOptionValue &value(std::string_view name) const;
};

// A pass reports whether it changed the module (used for fixpoints and to
// skip re-verification).
using PassFn = bool (*)(Module &, const PassOptions &);

// Names the passes of Passes.def in code.
enum class PassId : uint8_t {
#define TC_PASS(NAME, ID, ...) ID,
#include "tc/Transforms/Passes.def"
#undef TC_PASS
};

struct PassInfo {
  std::string name;
  PassFn run;
  std::string summary;
  std::vector<PassOptionSpec> options;
  std::optional<PassId> id = std::nullopt; // none for passes added by registerExtraPass
};

// Registry order (a deque: entries stay where they are when one is added).
const std::deque<PassInfo> &allPasses();
// Adds a pass outside Passes.def: only test tools do (a deliberately wrong
// pass that the numerics bisection must catch).
void registerExtraPass(PassInfo p);
const PassInfo *lookupPass(std::string_view name);
const PassInfo &passInfo(PassId id);

// A pass with its options, as written in --passes=name{k=v,k2=v2}.
struct PassInvocation {
  explicit PassInvocation(const PassInfo &p); // every option at its default
  explicit PassInvocation(PassId id) : PassInvocation(passInfo(id)) {}
  // Sets an option; throws tc::Error naming the pass when it has no such
  // option or `v` is not of its kind.
  PassInvocation &set(std::string_view option, PassOptionValue v);
  // Sets an option from its text spelling (parsed by its kind).
  PassInvocation &setText(std::string_view option, std::string_view text);
  bool is(PassId id) const { return pass->id == id; }
  // name{k=v,...} with the options that differ from their defaults;
  // parsePipeline reads it back.
  std::string spelling() const;

  const PassInfo *pass;
  PassOptions options;
};

class Pipeline {
public:
  Pipeline() = default;
  Pipeline(std::initializer_list<PassId> ids);
  Pipeline &add(PassInvocation p);
  Pipeline &add(PassId id) { return add(PassInvocation(id)); }
  Pipeline &append(const Pipeline &more);
  // Inserts `passes` before the first pass `anchor` (any options), or
  // appends them when the pipeline has none.
  Pipeline &insertBefore(PassId anchor, const Pipeline &passes);
  // Where the target's and mixed-precision's passes go: before
  // lower-quantize when the pipeline runs it (its exact arithmetic must not
  // become half types, Pipeline.cpp), else before fuse.
  PassId preFusionAnchor() const;
  // Sets `option` of every run of pass `id` from its text spelling (a tool's
  // flag reaching a pass inside a named pipeline: tc-opt --conv-gemm);
  // returns how many runs there were.
  size_t setOption(PassId id, std::string_view option, std::string_view text);
  // "a,b{k=v},c": parsePipeline(p.spelling()) gives p back.
  std::string spelling() const;

  size_t size() const { return passes_.size(); }
  bool empty() const { return passes_.empty(); }
  const PassInvocation &operator[](size_t i) const { return passes_[i]; }
  const PassInvocation &front() const { return passes_.front(); }
  std::vector<PassInvocation>::const_iterator begin() const { return passes_.begin(); }
  std::vector<PassInvocation>::const_iterator end() const { return passes_.end(); }

private:
  std::vector<PassInvocation> passes_;
};

// Parses "a,b{k=v},c"; throws tc::Error naming an unknown pass or option,
// or a value that is not of its option's kind.
Pipeline parsePipeline(std::string_view text);

// Named pipelines.
// Whether -O2 runs attention-fusion: THE rule (docs/optimizer.md). On for
// the GPU target (Targets.def's gpu column: CUDA) at fp16/bf16, where the tensor-core kernel
// measured faster than -O2's GEMMs + softmax on every model tried (H100: whisper 3.3x,
// vit_b_16 1.4x, bert 1.2x); off for f32 and the CPU (their kernels were not measured faster).
// tc-opt --attention-fusion=0|1 overrides it for one run (A/B).
inline bool attentionFusionAtO2(bool gpuTarget, const std::string &precision) {
  return gpuTarget && (precision == "fp16" || precision == "bf16");
}
// -O0..-O3. -O2 and -O3 run attention-fusion when `attention` says so, by
// default -O3 always and -O2 never (tc-opt asks attentionFusionAtO2).
Pipeline pipelineForLevel(int level, std::optional<bool> attention = std::nullopt);
// tc-opt --target=cuda, inserted before fuse: convolution chains in NHWC,
// GEMM views, f32 attention gradients as GEMMs.
Pipeline channelsLastPipeline();
// tc-opt --precision=fp16|bf16 (`type` f16 or bf16), inserted before fuse;
// `lowIO` (tc-opt --low-precision-io): float inputs and outputs in the low type.
Pipeline mixedPrecisionPipeline(const std::string &type, bool lowIO = false);
// tc-opt --train: train-state, append-loss, autodiff, append-optimizer.
// `loss` and `optimizer` are specs "kind[:option=value,...]" (e.g.
// "cross-entropy:label-smoothing=0.1", "adamw:lr=3e-4,weight-decay=0.01"),
// the options those passes declare; "" leaves out the optimizer (the
// module then returns the loss and the gradients). `lowType` "f16" / "bf16":
// mixed precision over forward and backward (mixedPrecisionPipeline) before
// the optimizer, which updates f32 master weights; `lossScale` is autodiff's
// (fp16: "dynamic").
Pipeline trainingPipeline(const std::string &loss, const std::string &optimizer,
                          const std::string &trainable, const std::string &freeze,
                          const std::string &lowType = "", const std::string &lossScale = "none");
// tc-opt --eval: train-state{eval}, append-loss: the model's loss (and, for
// cross-entropy, its top-1 hits) on the state a train step of the same
// `trainable` / `freeze` trains, batch norms on their running statistics.
Pipeline evalPipeline(const std::string &loss, const std::string &trainable,
                      const std::string &freeze, const std::string &lowType = "");
// tc-codegen's first stage: every lone op becomes a group of one so each
// kernel is a Fused op; `moves`: data movement too (CUDA generates it).
Pipeline outlineLoneOpsPipeline(bool moves);

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
  void add(const Pipeline &p) { pipeline_.insert(pipeline_.end(), p.begin(), p.end()); }
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

#define TC_PASS(NAME, ID, FN, ...) bool FN(Module &, const PassOptions &);
#include "tc/Transforms/Passes.def"
#undef TC_PASS

} // namespace tc
