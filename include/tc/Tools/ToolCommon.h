// What every tc tool shares: option conventions (LLVM-style), reading IR in
// either spelling, writing it, debug dumps, and turning errors into one line.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Support/ByteSink.h"
#include "tc/Support/MemoryBuffer.h"
#include "tc/Target/Target.h"
#include <boost/program_options.hpp>
#include <functional>
#include <map>
#include <string>

namespace tc::tools {

namespace po = boost::program_options;

struct CommonOptions {
  std::string input = "-";
  std::string output = "-";
  bool text = false;
  std::string dumpDir;
};

// Runs a tool body: parses nothing itself, but catches tc::Error (and any
// other exception) and prints `<tool>: error: <message>`, returning 1.
int runTool(const char *tool, const std::function<int()> &body);

// Parses argv with `opts` plus the common flags (--help, --version, -o, -S,
// --dump-dir, and a positional input). Returns false when --help or
// --version was handled (exit 0).
bool parseCommandLine(const char *tool, const char *usage, int argc, char **argv,
                      po::options_description &opts, CommonOptions &common, po::variables_map &vm,
                      bool withOutput = true);

// Reads .tcbc or .tcir (sniffed by magic) from a file or "-".
std::unique_ptr<Module> loadModule(const std::string &path);
std::unique_ptr<Module> loadModule(std::shared_ptr<const MemoryBuffer> buf);

// --split-input-file (MLIR style): runs `body` on each chunk of the input
// between lines `// -----`, each padded so line numbers match the whole
// file. A failing chunk prints its error and the next one runs. Outputs are
// joined with `// -----` lines. Returns the exit code (1 if any failed).
int forEachChunk(const char *tool, const MemoryBuffer &input, const std::string &output,
                 const std::function<std::string(std::shared_ptr<const MemoryBuffer>)> &body);
// Writes binary (default) or text (-S); refuses binary to a terminal.
void writeModule(const Module &m, const CommonOptions &common);
// Writes raw bytes to -o (file or stdout).
void writeOutput(const std::string &path, std::string_view bytes);
// The same, the bytes handed over piece by piece (large outputs are not
// assembled in memory first).
void writeOutput(const std::string &path, const std::function<void(const ByteSink &)> &produce);

// The debug dump folder for this tool: --dump-dir, else $TC_DEBUG_DIR, with
// the tool name appended; empty when neither is set. Created on demand.
// "NAME=VALUE" -> {NAME, VALUE}; `flag` names the option in errors.
std::pair<std::string, std::string> splitAssignment(const std::string &s, const char *flag);
// --dim NAME=N flags -> sizes of symbolic dims.
std::map<std::string, int64_t> parseDimFlags(const std::vector<std::string> &flags);

// The flags that say where a run's inputs come from (--inputs, --input,
// --random-inputs, --seed, --dim), shared by tc-run and tc-prof: add them to
// `opts`, then after parsing turn them into InputSources.
struct InputFlags {
  InputSources src;
  std::vector<std::string> files, dims; // NAME=FILE, NAME=N as given
};
void addInputOptions(po::options_description &opts, InputFlags &flags);
InputSources inputSources(const InputFlags &flags);
// The inputs of one run of `m`'s main: gatherInputs', except that a train
// step (TrainSignature.h) takes only its given inputs (the model's, then
// the target) from `src`, its state from @init on the reference executor:
// tc-run runs a train step once so, and tc-prof profiles one.
std::vector<HostTensor> gatherRunInputs(const Module &m, const InputSources &src);

// --no-verify of the tools that load artifacts (readArtifact's check:
// None when given, else All).
void addVerifyOption(po::options_description &opts, bool &noVerify);
inline ArtifactCheck artifactCheck(bool noVerify) {
  return noVerify ? ArtifactCheck::None : ArtifactCheck::All;
}

// "a, b or c": the values a flag takes, for messages.
std::string alternatives(const std::vector<std::string> &values);

// A target's flags (Target.h) as string options of `opts`, and the values
// given, each checked against its choices ("unknown --cuda-graphs 'x' (on
// or off)").
void addTargetOptions(po::options_description &opts, const std::vector<TargetOption> &options);
TargetOptionValues targetOptionValues(const po::variables_map &vm,
                                      const std::vector<TargetOption> &options);
// Every target's tc-run/tc-prof flags (Target::runOptions), once each.
std::vector<TargetOption> allRunOptions();

std::string dumpDirFor(const char *tool, const CommonOptions &common);
void dumpFile(const std::string &dir, const std::string &name, std::string_view contents);

} // namespace tc::tools
