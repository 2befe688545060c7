// tc-codegen --target=cuda --tune (CudaTuning.cpp).
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/LibraryTuning.h"
#include <string>
#include <vector>

namespace tc {

// Times `a`'s library calls on this machine's GPU (its static shape), the
// winners into `t` (and `cachePath`'s cache, read first: a hit is not
// timed, a malformed file a tc::Error). Without a GPU, or with symbolic
// input dims, nothing is timed: `summary.kept` and a note say why.
void tuneLibraryCalls(Artifact &a, const std::string &cachePath, LibraryTuning &t,
                      TuningSummary &summary, std::vector<std::string> &notes);

} // namespace tc
