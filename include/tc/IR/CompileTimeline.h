// The compile timeline travels with the module from tool to tool (tc-import,
// tc-opt's passes, tc-codegen's stages) as module metadata, so the artifact
// carries the whole compile's time per stage and per pass for tc-prof. The
// bytecode keeps it; the text printer leaves it out (it changes every run).
#pragma once
#include "tc/IR/IR.h"
#include <string>
#include <vector>

namespace tc {

inline constexpr const char *kTimelineMetadata = "timeline";

struct TimelineEntry {
  std::string tool;  // "tc-import", "tc-opt", "tc-codegen"
  std::string stage; // "import", a pass name, "compile kernels", ...
  double seconds;
};

void appendTimeline(Module &m, const TimelineEntry &e);
std::vector<TimelineEntry> readTimeline(const Module &m);
// {"stages": [{"tool": .., "name": .., "seconds": ..}, ...]}
std::string timelineJson(const std::vector<TimelineEntry> &entries);

} // namespace tc
