// A traced run as a Chrome trace (JSON object format: chrome://tracing and
// Perfetto load it). Processes: "compile" (the artifact's timeline: every
// stage and pass, and each kernel's emit under "emit kernels"), "host" (the
// thread that runs the plan: runs, steps, graph replays, copies; CUDA API
// calls; CPU worker threads), and "GPU" (kernels and memcpys per stream),
// with flow arrows from each API call to the device work it launched. The
// run starts where the compile ends, so the two read side by side. Every
// step event carries its group, ONNX nodes and op types, signature, dtype,
// bytes, FLOPs and achieved GB/s and TFLOP/s; library calls and fallbacks
// say so in their name. The report rides along in "otherData.tc_report"
// (tc-prof diff reads it).
#pragma once
#include "tc/IR/CompileTimeline.h"
#include "tc/Profile/ProfileReport.h"
#include "tc/Runtime/Trace.h"
#include <string>
#include <vector>

namespace tc {

std::string chromeTraceJson(const RunTrace &trace, const std::vector<TimelineEntry> &compile,
                            const ProfileReport &report);

} // namespace tc
