// The target registry (Targets.def): every backend as two typed interfaces
// the tools dispatch through, never by comparing target names.
//   CompileTarget  tc-codegen: its flags, what --emit writes, the codegen
//                  (the shared driver, Codegen.h, over the backend's hooks).
//   Executable     tc-run, tc-prof, tc-bench (through tc-run), the C API: a
//                  loaded artifact that runs, profiles and traces its steps
//                  (Executable.h, the runtime half, no compiler library).
// A backend lives in lib/Target/<Id>/ and defines the functions declared
// at the end of this file and of Executable.h; Registry.cpp lists them
// from Targets.def.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/Target/Executable.h"
#include "tc/Transforms/Pass.h"
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class CompileTarget {
public:
  virtual ~CompileTarget() = default;
  virtual std::vector<TargetOption> options() const = 0;
  // What --emit writes besides the artifact: "source" and an assembly.
  virtual std::vector<std::string> emitKinds() const = 0;
  // Reads the values of options() and the --emit kind; tc::Error for a bad
  // one ("unknown --arch 'sm_12' (...)").
  virtual void configure(const TargetOptionValues &values, const std::string &emit) = 0;
  // The shared driver over this backend with `driverOptions`; `withBinary`
  // false stops after the source (--emit other than artifact).
  virtual CodegenResult compile(const Module &m, bool withBinary) const = 0;
  DriverOptions driverOptions; // tc-codegen's flags for every target
  // An --emit kind other than "source" (asm, ptx) of r's source.
  virtual std::string emitText(const CodegenResult &r, const std::string &kind) const = 0;
  virtual const char *sourceFile() const = 0; // the dump's name: "kernels.cpp"
  virtual const char *libraries() const = 0;  // what library groups call: "oneDNN"
  // Lines of its own --stats adds after the timeline (cubin sizes).
  virtual void printStats(const CodegenResult &, std::ostream &) const {}
};

// One registry entry: the runtime half (Executable.h: name, title, gpu,
// loader) and Targets.def's other columns with the backend's compiler.
struct Target : RuntimeTarget {
  const char *summary, *levelFlag, *levels;
  // What tc-opt --target=NAME inserts before fusion (nullptr: nothing).
  Pipeline (*optPipeline)();
  const char *graphsFlag;
  std::unique_ptr<CompileTarget> (*makeCompiler)();
};

const std::vector<Target> &targets();
const Target *findTarget(std::string_view name);
// The target named `name`, or a tc::Error "unknown <what> 'x' (cpu or cuda)".
const Target &requireTarget(std::string_view name, const std::string &what = "target");
// "cpu or cuda" / "cpu, cuda": the names, for messages.
std::string targetNames(const char *lastSeparator = " or ");

// Backends' factories (lib/Target/<Id>/), declared from Targets.def.
#define TC_TARGET(Id, ...) std::unique_ptr<CompileTarget> make##Id##CompileTarget();
#include "tc/Target/Targets.def"

} // namespace tc
