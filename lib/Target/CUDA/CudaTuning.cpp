// tc-codegen --target=cuda --tune: the compiled artifact loaded on this
// machine's GPU, its library calls' candidates timed (CudaModel::tune), the
// winners recorded in the artifact's "tuning" section and the cache file.
// Without a GPU the heuristics' choices stay, and it says so.
#include "CudaTuning.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/Runtime/CudaDriver.h"
#include "tc/Runtime/CudaModel.h"
#include "tc/Support/AtomicFile.h"
#include "tc/Support/Error.h"
#include "tc/Target/Executable.h"

namespace tc {

void tuneLibraryCalls(Artifact &a, const std::string &cachePath, LibraryTuning &t,
                      TuningSummary &summary, std::vector<std::string> &notes) {
  summary.requested = true;
  // A malformed cache is an error with or without a GPU.
  TuningCache cache = cachePath.empty() ? TuningCache{} : readTuningCache(cachePath);
  auto kept = [&](const std::string &why) {
    summary.kept = why;
    notes.push_back("--tune: " + why + "; heuristic algorithm choice kept");
  };
  try {
    if (!cuda::driver().hasEvents())
      return kept("the CUDA driver has no events to time with");
  } catch (const Error &) {
    return kept("no GPU");
  }
  std::unique_ptr<CudaModel> model;
  try {
    Artifact compiled = a; // notes name where a recorded choice came from
    compiled.file = cachePath.empty() ? "tc-codegen --tune" : "tuning cache " + cachePath;
    model = CudaModel::load(std::move(compiled), kCudaTarget);
  } catch (const Error &e) {
    return kept(std::string("the GPU does not load the artifact (") + e.what() + ")");
  }
  for (const Value *v : model->module().lookup("main")->args)
    for (const Dim &d : v->type.shape)
      if (!d.isStatic())
        return kept("symbolic input dims (give each a size with --dim NAME=N)");
  std::string env = model->tuningEnv().key();
  if (size_t others = cache.othersThan(env))
    notes.push_back("tuning cache " + cachePath + ": " + std::to_string(others) +
                    " entries for another GPU or library versions ignored (this machine: " + env +
                    ")");
  t.calls = model->tune(cache, summary);
  t.env = env;
  notes.insert(notes.end(), model->tuningNotes().begin(), model->tuningNotes().end());
  model.reset();
  // Whole or absent: a compile killed while writing it leaves the old cache.
  if (!cachePath.empty())
    writeFileAtomically(cachePath, writeTuningCache(cache), /*sync=*/false);
}

} // namespace tc
