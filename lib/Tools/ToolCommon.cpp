#include "tc/Tools/ToolCommon.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/ShapePlanner.h"
#include "tc/Runtime/TrainCheckpoint.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include "tc/Support/MemoryBuffer.h"
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace tc::tools {

int runTool(const char *tool, const std::function<int()> &body) {
  // The tools plan the shapes an artifact stores no plan for (ShapePlanner.h).
  enableRunTimePlanning();
  try {
    return body();
  } catch (const Error &e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
  } catch (const po::error &e) {
    std::cerr << tool << ": error: " << e.what() << " (see --help)\n";
  } catch (const std::bad_alloc &) {
    std::cerr << tool << ": error: out of memory\n";
  } catch (const std::exception &e) {
    std::cerr << tool << ": error: internal: " << e.what() << "\n";
  }
  return 1;
}

bool parseCommandLine(const char *tool, const char *usage, int argc, char **argv,
                      po::options_description &opts, CommonOptions &common, po::variables_map &vm,
                      bool withOutput) {
  po::options_description general("General options");
  general.add_options()("help,h", "print this help and exit")("version",
                                                              "print the version and exit")(
      "dump-dir", po::value(&common.dumpDir)->value_name("DIR"),
      "write what the tool did (IR after each stage, logs) to DIR; also $TC_DEBUG_DIR");
  if (withOutput)
    general.add_options()("output,o", po::value(&common.output)->value_name("FILE"),
                          "output file ('-' for stdout, the default)")(
        ",S", po::bool_switch(&common.text), "write the text form (.tcir) instead of bytecode");
  po::options_description hidden;
  hidden.add_options()("input-file", po::value(&common.input), "input file");
  po::positional_options_description pos;
  pos.add("input-file", 1);
  po::options_description all;
  all.add(opts).add(general).add(hidden);
  po::store(po::command_line_parser(argc, argv)
                .options(all)
                .positional(pos)
                // No guessing of abbreviated options: "-o" is --output
                // even beside another option starting with o (--optimizer).
                .style((po::command_line_style::default_style |
                        po::command_line_style::allow_long_disguise) &
                       ~po::command_line_style::allow_guessing)
                .run(),
            vm);
  if (vm.count("help")) {
    std::cout << "USAGE: " << tool << " " << usage << "\n\n" << opts << "\n" << general;
    return false;
  }
  if (vm.count("version")) {
    std::cout << tool << " (tc) " << TC_VERSION << ", built with LLVM " << TC_LLVM_VERSION << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

std::unique_ptr<Module> loadModule(const std::string &path) {
  return loadModule(MemoryBuffer::open(path));
}

std::unique_ptr<Module> loadModule(std::shared_ptr<const MemoryBuffer> buf) {
  if (isBytecode(buf->str()))
    return readBytecode(buf);
  if (buf->str().find('\0') != std::string_view::npos)
    fail(buf->name(), ": not a tc IR file (binary data without the TCBC magic)");
  return parseModule(buf->str(), buf->name());
}

int forEachChunk(const char *tool, const MemoryBuffer &input, const std::string &output,
                 const std::function<std::string(std::shared_ptr<const MemoryBuffer>)> &body) {
  std::string_view text = input.str();
  std::string out, padding;
  bool failed = false;
  size_t start = 0, chunkIndex = 0;
  while (start <= text.size()) {
    // A separator is a line that starts with "// -----".
    size_t sep = start;
    size_t end = std::string_view::npos;
    while (sep < text.size()) {
      if (text.substr(sep).starts_with("// -----")) {
        end = sep;
        break;
      }
      size_t nl = text.find('\n', sep);
      if (nl == std::string_view::npos)
        break;
      sep = nl + 1;
    }
    std::string_view chunk =
        text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    auto buf = MemoryBuffer::copy(padding + std::string(chunk), input.name());
    if (chunkIndex++)
      out += "// -----\n";
    try {
      out += body(buf);
    } catch (const Error &e) {
      std::cerr << tool << ": error: " << e.what() << "\n";
      failed = true;
    }
    if (end == std::string_view::npos)
      break;
    padding.append(size_t(std::count(chunk.begin(), chunk.end(), '\n')), '\n');
    size_t nl = text.find('\n', end);
    if (nl == std::string_view::npos)
      break;
    padding += '\n';
    start = nl + 1;
  }
  writeOutput(output, out);
  return failed ? 1 : 0;
}

void writeOutput(const std::string &path, std::string_view bytes) {
  writeOutput(path, [&](const ByteSink &sink) { sink(bytes); });
}

void writeOutput(const std::string &path, const std::function<void(const ByteSink &)> &produce) {
  if (path == "-") {
    produce([](std::string_view b) { std::cout.write(b.data(), std::streamsize(b.size())); });
    std::cout.flush();
    if (!std::cout)
      fail("<stdout>: write failed");
    return;
  }
  // Whole or absent: a tool that fails or is killed mid-write leaves the old
  // file (no fsync: a pipeline's intermediate, not a checkpoint).
  writeFileAtomically(path, produce, /*sync=*/false);
}

void writeModule(const Module &m, const CommonOptions &common) {
  if (common.text) {
    writeOutput(common.output, printModuleToString(m));
    return;
  }
  if (common.output == "-" && ::isatty(1))
    fail("refusing to write bytecode to a terminal; use -S for text or -o FILE");
  writeOutput(common.output, [&](const ByteSink &sink) { writeBytecode(m, sink); });
}

void addVerifyOption(po::options_description &opts, bool &noVerify) {
  opts.add_options()("no-verify", po::bool_switch(&noVerify),
                     "artifacts: skip the checksums of the section table and the sections "
                     "(verified once at load by default; bounds are still checked)");
}

void addInputOptions(po::options_description &opts, InputFlags &flags) {
  opts.add_options()("inputs", po::value(&flags.src.dir)->value_name("DIR"),
                     "inputs from a test_data_set folder: input_N.pb for input N, or NAME.npy; "
                     "--input wins where both give an input")(
      "input", po::value(&flags.files)->composing()->value_name("NAME=FILE"),
      "read input NAME from a .pb or .npy file (repeatable)")(
      "random-inputs", po::bool_switch(&flags.src.random),
      "uniform random data for inputs given no other way (floats in [-1,1) without 0, "
      "integers in [1,9])")("seed", po::value(&flags.src.seed)->value_name("S"),
                            "random seed (default 0)")(
      "dim", po::value(&flags.dims)->composing()->value_name("NAME=N"),
      "size of symbolic dim NAME for random inputs (repeatable)");
}

std::vector<HostTensor> gatherRunInputs(const Module &m, const InputSources &src) {
  const Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig)
    return gatherInputs(f, src);
  Function given;
  given.args.assign(f.args.begin(), f.args.end() - std::ptrdiff_t(sig->state));
  std::vector<HostTensor> inputs = gatherInputs(given, src);
  for (HostTensor &t : initialTrainState(m, trainStateLayout(m, *sig)))
    inputs.push_back(std::move(t));
  return inputs;
}

InputSources inputSources(const InputFlags &flags) {
  InputSources src = flags.src;
  for (const std::string &s : flags.files)
    src.files.push_back(splitAssignment(s, "input"));
  for (auto &[name, n] : parseDimFlags(flags.dims))
    src.dims[name] = n;
  return src;
}

std::string dumpDirFor(const char *tool, const CommonOptions &common) {
  std::string base = common.dumpDir;
  if (base.empty())
    if (const char *env = std::getenv("TC_DEBUG_DIR"))
      base = env;
  if (base.empty())
    return "";
  std::filesystem::path dir = std::filesystem::path(base) / tool;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    fail(dir.string(), ": cannot create dump folder: ", ec.message());
  return dir.string();
}

void dumpFile(const std::string &dir, const std::string &name, std::string_view contents) {
  if (dir.empty())
    return;
  writeOutput((std::filesystem::path(dir) / name).string(), contents);
}

// "NAME=VALUE" -> {NAME, VALUE}; `flag` names the option in errors.
std::pair<std::string, std::string> splitAssignment(const std::string &s, const char *flag) {
  size_t eq = s.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == s.size())
    fail("--", flag, " expects NAME=VALUE, got '", s, "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

static int64_t parseDimSize(const std::string &name, const std::string &v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 0)
    fail("--dim ", name, "=", v, ": the size must be a non-negative integer");
  return n;
}

std::map<std::string, int64_t> parseDimFlags(const std::vector<std::string> &flags) {
  std::map<std::string, int64_t> dims;
  for (const std::string &s : flags) {
    auto [name, value] = splitAssignment(s, "dim");
    dims[name] = parseDimSize(name, value);
  }
  return dims;
}

std::string alternatives(const std::vector<std::string> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  return s;
}

void addTargetOptions(po::options_description &opts, const std::vector<TargetOption> &options) {
  for (const TargetOption &o : options) {
    auto *value = po::value<std::string>()->value_name(o.valueName);
    if (!o.implicitValue.empty()) // a switch: takes no value (none to mistake the input for)
      value->implicit_value(o.implicitValue)->zero_tokens();
    opts.add_options()(o.flag.c_str(), value, o.help.c_str());
  }
}

TargetOptionValues targetOptionValues(const po::variables_map &vm,
                                      const std::vector<TargetOption> &options) {
  TargetOptionValues values;
  for (const TargetOption &o : options) {
    if (!vm.count(o.flag))
      continue;
    const std::string &v = vm[o.flag].as<std::string>();
    if (!o.choices.empty() && std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end()) {
      std::string choices;
      for (size_t i = 0; i < o.choices.size(); ++i)
        choices += (i == 0 ? "" : i + 1 == o.choices.size() ? " or " : ", ") + o.choices[i];
      fail("unknown --", o.flag, " '", v, "' (", choices, ")");
    }
    values[o.flag] = v;
  }
  return values;
}

std::vector<TargetOption> allRunOptions() {
  std::vector<TargetOption> all;
  for (const Target &t : targets())
    for (const TargetOption &o : t.runOptions())
      all.push_back(o);
  return all;
}

} // namespace tc::tools
