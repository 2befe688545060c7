#include "tc/IR/OpTable.h"
#include "tc/IR/Printer.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include "tc/Transforms/Pass.h"
#include <iostream>
#include <sstream>

namespace tc::tools {

namespace {

void listPasses(std::ostream &os) {
  os << "Available passes:\n";
  for (const PassInfo &p : allPasses()) {
    os << "  " << p.name << "  - " << p.summary << "\n";
    for (const PassOptionSpec &o : p.options)
      os << "      " << o.name << "=" << o.defaultValue << "  " << o.doc << "\n";
  }
  os << "Pipelines: -O0 = " << pipelineForLevel(0) << "; -O1 = " << pipelineForLevel(1)
     << "; -O2/-O3 = " << pipelineForLevel(2) << "\n";
}

std::string escapePipes(const std::string &s) {
  std::string r;
  for (char c : s)
    r += c == '|' ? std::string("\\|") : std::string(1, c);
  return r;
}

void listOpsMarkdown(std::ostream &os) {
  os << "# tc IR reference\n\n"
     << "Generated from include/tc/IR/Ops.def by `tc-opt --list-ops --format=markdown`;\n"
     << "a lit test fails when this file is stale.\n\n"
     << "Operand `X?` is optional (`none` when absent); `X...` takes one or more.\n"
     << "Fusion categories: pointwise, reduction, library (matmul/conv), shape, opaque.\n\n"
     << "| op | category | operands | results | summary |\n|---|---|---|---|---|\n";
  for (const OpInfo &op : allOps()) {
    os << "| " << (op.attrs.empty() ? op.name : "[" + op.name + "](#" + op.name + ")") << " | "
       << fusionCategoryName(op.category) << " | ";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os << (i ? ", " : "") << op.operands[i].name << (op.operands[i].optional ? "?" : "")
         << (op.operands[i].variadic ? "..." : "");
    os << " | " << (op.numResults < 0 ? "1+" : std::to_string(op.numResults)) << " | "
       << escapePipes(op.summary) << " |\n";
  }
  for (const OpInfo &op : allOps()) {
    if (op.attrs.empty())
      continue;
    os << "\n## " << op.name << "\n\n"
       << op.summary << "\n\n| attribute | kind | default | meaning |\n"
       << "|---|---|---|---|\n";
    for (const AttrSpec &a : op.attrs)
      os << "| " << a.name << " | " << attrKindName(a.kind) << " | "
         << (a.defaultValue ? "`" + a.defaultValue->str() + "`" : std::string("required")) << " | "
         << escapePipes(a.doc) << " |\n";
  }
}

void listOps(std::ostream &os) {
  for (const OpInfo &op : allOps()) {
    os << op.name << "  [" << fusionCategoryName(op.category) << "]  (";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os << (i ? ", " : "") << op.operands[i].name << (op.operands[i].optional ? "?" : "")
         << (op.operands[i].variadic ? "..." : "");
    os << ") -> " << (op.numResults < 0 ? "1+" : std::to_string(op.numResults)) << "  "
       << op.summary << "\n";
    for (const AttrSpec &a : op.attrs)
      os << "    " << a.name << ": " << attrKindName(a.kind)
         << (a.defaultValue ? " = " + a.defaultValue->str() : std::string(" (required)")) << "  "
         << a.doc << "\n";
  }
}

} // namespace

int tcOptMain(int argc, char **argv) {
  return runTool("tc-opt", [&] {
    CommonOptions common;
    std::string passes;
    int level = -1;
    PassManagerOptions pm;
    bool list = false, ops = false, split = false;
    std::string format = "text";
    po::options_description opts("tc-opt options");
    opts.add_options()("passes", po::value(&passes)->value_name("P1,P2{k=v}"),
                       "run these passes in order")(",O", po::value(&level)->value_name("N"),
                                                    "run the -O0..-O3 pipeline")(
        "list-passes", po::bool_switch(&list), "list the registered passes and exit")(
        "list-ops", po::bool_switch(&ops), "list the ops of the IR and exit")(
        "format", po::value(&format)->value_name("text|markdown"),
        "format of --list-ops")("print-ir-after-all", po::bool_switch(&pm.printAfterAll),
                                "print the IR after every pass to stderr")(
        "print-ir-after", po::value(&pm.printAfter)->composing()->value_name("PASS"),
        "print the IR after each run of PASS to stderr")(
        "time-passes", po::bool_switch(&pm.timePasses),
        "print time per pass to stderr")("verify-each", po::bool_switch(&pm.verifyEach),
                                         "verify the IR after every pass that changed it")(
        "split-input-file", po::bool_switch(&split),
        "process each `// -----`-separated chunk of the input on its own; text output");
    po::variables_map vm;
    if (!parseCommandLine("tc-opt", "[options] <input.tcbc | input.tcir | ->", argc, argv, opts,
                          common, vm))
      return 0;
    if (list || ops) {
      if (format != "text" && format != "markdown")
        fail("unknown --format '", format, "' (text or markdown)");
      if (list)
        listPasses(std::cout);
      else
        format == "markdown" ? listOpsMarkdown(std::cout) : listOps(std::cout);
      return 0;
    }
    if (!passes.empty() && level >= 0)
      fail("give either --passes or -O, not both");
    if (level > 3)
      fail("-O", level, " does not exist (use -O0 to -O3)");
    for (const std::string &p : pm.printAfter)
      if (!lookupPass(p))
        fail("--print-ir-after: unknown pass '", p, "'");
    std::string pipeline = passes.empty() ? pipelineForLevel(level < 0 ? 2 : level) : passes;
    auto invocations = parsePipeline(pipeline);
    pm.dumpDir = dumpDirFor("tc-opt", common);
    auto optimize = [&](std::shared_ptr<const MemoryBuffer> buf) {
      auto m = loadModule(std::move(buf));
      PassManager mgr(pm);
      for (auto &inv : invocations)
        mgr.add(inv);
      mgr.run(*m, std::cerr);
      if (pm.timePasses)
        mgr.printTimings(std::cerr);
      verifyModule(*m); // never hand on IR that does not verify
      return m;
    };
    if (split)
      return forEachChunk("tc-opt", *MemoryBuffer::open(common.input), common.output,
                          [&](auto buf) { return printModuleToString(*optimize(buf)); });
    writeModule(*optimize(MemoryBuffer::open(common.input)), common);
    return 0;
  });
}

} // namespace tc::tools
