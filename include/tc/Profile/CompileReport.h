// tc-prof compile: where a compile's time went, from the artifact's timeline
// (torch._dynamo.utils.compile_times() for tc): per tool, per stage and pass,
// and the slowest kernels to emit.
#pragma once
#include "tc/IR/CompileTimeline.h"
#include <string>
#include <vector>

namespace tc {

// The artifact's "timeline" section ({"stages": [...]}, timelineJson) back
// into entries. Throws tc::Error naming `what` when it is not that.
std::vector<TimelineEntry> parseTimelineJson(const std::string &json, const std::string &what);

// format: "text", "json" or "csv".
std::string compileReport(const std::vector<TimelineEntry> &timeline, const std::string &format);

} // namespace tc
