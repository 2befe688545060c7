#include "tc/Runtime/ShapePlanner.h"
#include "tc/Analysis/MemoryPlan.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/ShapePlan.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeInference.h"
#include <iostream>

namespace tc {

namespace {

// The run-time fallback: the module specialized to `sizes`, its shape
// computations folded, then planned; nullptr when a size stays unknown.
std::unique_ptr<Module> planAtRunTime(const Artifact &artifact,
                                      const std::map<std::string, int64_t> &sizes,
                                      MemoryPlan &memory) {
  try {
    std::unique_ptr<Module> m = readBytecode(artifact.share(kSectionModule));
    specializeDims(*m, sizes);
    // With the sizes known, shape computations (Shape -> Gather -> Concat ->
    // Reshape) fold, and the sizes they decide become known too.
    runFoldConstantsPass(*m, PassInvocation(PassId::FoldConstants).options);
    const Function &sf = m->main();
    // Every value must have a size now, and a fixed one (not strings).
    for (const auto *values : {&sf.args, &sf.results})
      for (const Value *v : *values)
        if (!byteSize(v->type))
          throw Error("no fixed size");
    for (const auto &op : sf.ops) {
      if (refKernelSetsOutputDims(op->kind) || isControlFlowOp(*op))
        throw Error("data-dependent");
      for (const Value *r : op->results)
        if (!isStaticShape(r->type.shape) || !byteSize(r->type))
          throw Error("unknown size");
    }
    memory = planMemory(sf, {});
    return m;
  } catch (const Error &) {
    return nullptr;
  }
}

} // namespace

void enableRunTimePlanning() { runTimePlanner = planAtRunTime; }

void noteRunTimePlanning(const char *tool, const Artifact &artifact) {
  std::string why = unplannedShapes(artifact);
  if (!why.empty())
    std::cerr << tool << ": note: " << artifact.file << " stores no shape plan (" << why
              << "): each new input shape is planned at run time (libtcrt refuses it)\n";
}

} // namespace tc
