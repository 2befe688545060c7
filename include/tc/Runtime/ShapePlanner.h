// The run-time planner: for an artifact that stores no shape plan (tc-codegen
// --stats says why: a size only shape inference at the given sizes knows, a
// shape computation to fold), the module specialized to the input sizes,
// its shape computations folded and its memory planned, per input shape.
// It runs passes (tcTransforms), so it is no part of the deployed runtime
// (libtcrt); the tools install it. Without it such a shape runs unplanned,
// op by op, as a data-dependent one does.
#pragma once

namespace tc {

struct Artifact;

// Installs the planner for every runtime in this process (ShapePlan.h's
// runTimePlanner); idempotent.
void enableRunTimePlanning();

// A tool about to load `artifact`: one note line on stderr when it stores no
// shape plan (which value or dim), as the tools then plan each new input
// shape at run time where libtcrt refuses the artifact.
void noteRunTimePlanning(const char *tool, const Artifact &artifact);

} // namespace tc
