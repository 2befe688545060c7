#include "ProfCommands.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/Profile/CompileReport.h"
#include "tc/Support/Error.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

// The compile-time breakdown of an artifact (its timeline section), or of
// IR (the timeline the tools so far left in its metadata).
int profCompileMain(int argc, char **argv) {
  return runTool("tc-prof", [&] {
    CommonOptions common;
    std::string format = "text";
    po::options_description opts("tc-prof compile options");
    opts.add_options()("format", po::value(&format)->value_name("text|json|csv"), "output format");
    po::variables_map vm;
    if (!parseCommandLine("tc-prof compile", "[options] <model.tcx | model.tcbc>", argc, argv, opts,
                          common, vm, /*withOutput=*/false))
      return 0;
    if (format != "text" && format != "json" && format != "csv")
      fail("unknown --format '", format, "' (text, json or csv)");
    auto buf = MemoryBuffer::open(common.input);
    std::vector<TimelineEntry> timeline;
    if (isArtifact(buf->str())) {
      Artifact a = readArtifact(buf);
      const MemoryBuffer *t = a.section(kSectionTimeline);
      if (!t)
        fail(common.input, ": the artifact has no compile timeline (made by an older tc-codegen)");
      timeline = parseTimelineJson(std::string(t->str()), common.input);
    } else {
      timeline = readTimeline(*loadModule(buf));
    }
    if (timeline.empty())
      fail(common.input, ": no compile timeline recorded");
    std::cout << compileReport(timeline, format);
    return 0;
  });
}

} // namespace tc::tools
