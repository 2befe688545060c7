// The target registry (Targets.def): every backend as two typed interfaces
// the tools dispatch through, never by comparing target names.
//   CompileTarget  tc-codegen: its flags, what --emit writes, the codegen
//                  (the shared driver, Codegen.h, over the backend's hooks).
//   Executable     tc-run, tc-prof, tc-bench (through tc-run): a loaded
//                  artifact that runs, profiles and traces its steps.
// A backend lives in lib/Target/<Id>/ and defines the functions declared
// at the end of this file; Registry.cpp lists them from Targets.def.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/Profile/DevicePeaks.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/Trace.h"
#include "tc/Transforms/Pass.h"
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

// A flag a target adds to a tool (tc-codegen: --cpu, --arch; tc-run and
// tc-prof: --threads, --cuda-graphs).
struct TargetOption {
  std::string flag;                 // "arch"
  std::string valueName;            // "sm_90|sm_80,sm_90"
  std::string help;                 //
  std::vector<std::string> choices; // the values it takes ({}: any; the tool checks)
};
// The values given on the command line, by flag (absent: not given).
using TargetOptionValues = std::map<std::string, std::string>;

class CompileTarget {
public:
  virtual ~CompileTarget() = default;
  virtual std::vector<TargetOption> options() const = 0;
  // What --emit writes besides the artifact: "source" and an assembly.
  virtual std::vector<std::string> emitKinds() const = 0;
  // Reads the values of options() and the --emit kind; tc::Error for a bad
  // one ("unknown --arch 'sm_12' (...)").
  virtual void configure(const TargetOptionValues &values, const std::string &emit) = 0;
  // The shared driver over this backend; `withBinary` false stops after
  // the source (--emit other than artifact).
  virtual CodegenResult compile(const Module &m, bool withBinary) const = 0;
  // An --emit kind other than "source" (asm, ptx) of r's source.
  virtual std::string emitText(const CodegenResult &r, const std::string &kind) const = 0;
  virtual const char *sourceFile() const = 0; // the dump's name: "kernels.cpp"
  virtual const char *libraries() const = 0;  // what library groups call: "oneDNN"
  // Lines of its own --stats adds after the timeline (cubin sizes).
  virtual void printStats(const CodegenResult &, std::ostream &) const {}
};

// Steps of the last run, by what ran them.
struct StepCounts {
  size_t kernel = 0, library = 0, copy = 0, host = 0;
};
struct StepTime {
  std::string step; // as stepReport()'s line
  double meanMs;
};

class Executable {
public:
  virtual ~Executable() = default;
  virtual const Module &module() const = 0;
  // Inputs in argument order, outputs on the host (the device synchronized).
  virtual std::vector<HostTensor> run(const std::vector<HostTensor> &inputs) = 0;
  // Untimed runs before timed ones at least (CUDA records its graph at the
  // second).
  virtual int minWarmup() const { return 0; }
  // The last run: one line per step saying what ran it (empty: unplanned).
  virtual std::vector<std::string> stepReport() const = 0;
  virtual void setProfiling(bool on) = 0;
  virtual std::vector<StepTime> stepProfile() const = 0;
  // Tracing for tc-prof (RunTrace in tc/Runtime/Trace.h; nullptr: off).
  virtual void setTrace(RunTrace *trace) = 0;
  virtual StepCounts steps() const = 0;
  virtual uint64_t arenaBytes() const = 0; // 0: ran without one
  // A note on the last run worth a line ("a CUDA graph of 12 nodes ..."), or "".
  virtual std::string runNote() const { return ""; }
  // Before the timed runs (CUDA: peak device bytes count from here).
  virtual void startMeasuring() {}
  // The last run's device time, ms (< 0: none), and how it was measured.
  virtual double deviceMs() const { return -1; }
  virtual std::string deviceTimeNote() const { return ""; }
  // tc-run: the latency line's note (", 2 threads"), its --report=json
  // fields (", \"threads\": 2, ..."), and its summary lines ("steps: ...").
  virtual std::string latencyNote() const = 0;
  virtual void printJson(std::ostream &os) const = 0;
  virtual void printSummary(std::ostream &os) const = 0;
  // The roofline of the machine it runs on (tc-prof).
  virtual DevicePeaks peaks() const = 0;
};

// One registry entry (Targets.def's columns and the backend's factories).
struct Target {
  const char *name, *title, *summary, *levelFlag, *levels;
  // What tc-opt --target=NAME inserts before fusion (nullptr: nothing).
  Pipeline (*optPipeline)();
  const char *graphsFlag;
  bool gpu;
  std::unique_ptr<CompileTarget> (*makeCompiler)();
  // tc-run/tc-prof flags of its artifacts, and loading a read (and
  // verified: readArtifact) one with their values.
  std::vector<TargetOption> (*runOptions)();
  std::unique_ptr<Executable> (*load)(Artifact artifact, const TargetOptionValues &runOptions);
  std::string (*deviceName)(); // "NVIDIA H100 80GB HBM3", "" when unknown
  // Opens what running needs before anything else is read: a tc::Error
  // ("no CUDA device") on a machine that cannot run this target.
  void (*openDevice)();
};

const std::vector<Target> &targets();
const Target *findTarget(std::string_view name);
// The target named `name`, or a tc::Error "unknown <what> 'x' (cpu or cuda)".
const Target &requireTarget(std::string_view name, const std::string &what = "target");
// "cpu or cuda" / "cpu, cuda": the names, for messages.
std::string targetNames(const char *lastSeparator = " or ");

// Backends' factories (lib/Target/<Id>/), declared from Targets.def.
#define TC_TARGET(Id, ...)                                                                         \
  std::unique_ptr<CompileTarget> make##Id##CompileTarget();                                        \
  std::vector<TargetOption> Id##RunOptions();                                                      \
  std::unique_ptr<Executable> load##Id##Executable(Artifact artifact,                              \
                                                   const TargetOptionValues &runOptions);          \
  std::string Id##DeviceName();                                                                    \
  void Id##OpenDevice();
#include "tc/Target/Targets.def"

} // namespace tc
