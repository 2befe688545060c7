// Which step of a plan each Api and Device event of one traced CUDA run
// belongs to. Pure (plain TraceEvents in, no CUPTI types), so it is
// unit-tested with synthetic events (test/unit/CudaTraceAttributionTest.cpp).
//
// Step by step, the runtime's Host event of step i brackets the API calls
// that enqueued it; each such call's correlation id names the device work
// it launched. A CUDA graph replay is ONE call (cuGraphLaunch), so all its
// kernels share one correlation id: they are aligned, in start order and by
// name (longest common subsequence), to the device work a step-by-step run
// of the same plan launched; a kernel the alignment cannot place says why.
#pragma once
#include "tc/Runtime/Trace.h"
#include <optional>
#include <string>
#include <vector>

namespace tc {

// Per step, the names of the Device events it launched, in start order
// (kernel names as CUPTI reports them, "memset 64 B", ...).
using StepWork = std::vector<std::vector<std::string>>;

// `events`: everything of ONE run: the runtime's Host events (steps with
// step >= 0, the graph replay with category "graph") and CUPTI's Api
// (lane = OS thread id) and Device events. Only Api events on `hostThread`
// (the thread that ran the plan) are matched to Host events, by their
// midpoint. Sets `step` on the Api and Device events it attributes; a
// Device event it cannot attribute keeps step -1 and says why in `note`
// (work outside steps, such as input copies, keeps an empty note).
// `learned`: what the last step-by-step run of this plan launched (nullptr:
// nothing learned yet). Returns this run's StepWork when it ran step by
// step (no "graph" Host event), for the next graph replays.
std::optional<StepWork> attributeDeviceEvents(std::vector<TraceEvent> &events, unsigned hostThread,
                                              size_t stepCount, const StepWork *learned);

} // namespace tc
