// What every compiled runtime (CPU, CUDA) does per distinct input shape,
// shared so the backends differ only in how a step runs: the module
// specialized to the inputs' sizes with its shape computations folded, the
// memory plan (one arena, views aliasing their operand), a small cache of
// such plans, and the reference-kernel path for a step no backend code runs.
#pragma once
#include "tc/Analysis/MemoryPlan.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tc {

// The cache key of `inputs` (every input's dims, -1 after each) and the
// sizes they give the entry's symbolic dims; nullopt when they do not fit
// its signature (the reference executor then says why).
struct ShapeKey {
  std::vector<int64_t> dims;
  std::map<std::string, int64_t> sizes;
};
std::optional<ShapeKey> shapeKeyOf(const Function &main, const std::vector<HostTensor> &inputs);
// The same for inputs known by dtype and dims alone (bytes on a device).
struct InputType {
  DType dtype;
  const std::vector<int64_t> *dims;
};
std::optional<ShapeKey> shapeKeyOfTypes(const Function &main, const std::vector<InputType> &inputs);

// Where a value of a planned module lives.
struct ValuePlace {
  enum class Kind { Argument, Constant, Arena } kind = Kind::Arena;
  size_t arg = 0;                  // Argument: its index
  const uint8_t *weight = nullptr; // Constant: its bytes (host memory)
  // Arena: the offset; Argument: bytes into the input (a Slice view of it).
  // Views: their base's place plus their offset into it.
  uint64_t offset = 0;
};

struct PlannedModule {
  std::unique_ptr<Module> module; // specialized, constants folded
  MemoryPlan memory;

  const Function &main() const { return module->main(); }
  ValuePlace placeOf(const Value *v) const;
  // A view op whose result aliases its operand: nothing to run.
  bool aliases(const Op &op) const;

  void index(); // after `memory` is set

private:
  std::unordered_map<const Value *, size_t> bufferOf_, argIndex_;
};

// Packs plan's blocks again without those every member of which `stored`
// says lives elsewhere (a runtime writing a result in place of an input):
// a smaller arena, every buffer's offset its block's new one.
void repackArena(MemoryPlan &plan, const std::function<bool(const Value *)> &stored);

// Plans a shape an artifact stores no plan for: nullptr when a size stays
// unknown. Set by enableRunTimePlanning (ShapePlanner.h, the tools); null
// in the deployed runtime.
using RunTimePlanner = std::unique_ptr<Module> (*)(const Artifact &,
                                                   const std::map<std::string, int64_t> &sizes,
                                                   MemoryPlan &memory);
extern RunTimePlanner runTimePlanner;

// Why `artifact` stores no shape plan ("" when it stores one), for a
// runtime to say at load. Throws tc::Error naming that value or dim when no
// run-time planner is installed (libtcrt: it never plans a shape itself, nor
// runs an unplanned one op by op on the host).
std::string unplannedShapes(const Artifact &artifact);

// The artifact's module at `sizes`, planned: the plan codegen stored
// (shape-plan section) evaluated at `sizes` — no pass, shape inference or
// planner —, or for an artifact without one, runTimePlanner's; nullptr when
// the planner cannot plan it either (data-dependent ops, control flow,
// strings): that shape then runs op by op, in the tools only (without a
// planner, unplannedShapes' error). With
// TC_CHECK_SHAPE_PLAN set and a planner, a stored plan is checked against
// the planner's (checkStoredPlan).
std::unique_ptr<PlannedModule> planShape(const Artifact &artifact,
                                         const std::map<std::string, int64_t> &sizes);

// Throws tc::Error naming the first difference: the same types, buffers,
// views, in-place writes, offsets and arena.
void checkStoredPlan(const PlannedModule &stored, const PlannedModule &runTime);

// Runs `op` (of module `m`) alone on the reference kernels: constant
// operands come from the IR, every other one from `operand`.
std::vector<HostTensor> runOpOnReference(const Module &m, const Op &op,
                                         const std::function<HostTensor(const Value *)> &operand);

// The most recently used few plans by input shape (each holds an arena, so
// a model fed ever new sizes, e.g. sequence lengths, does not grow without
// bound). A shape that cannot be planned is cached as nullptr.
template <typename Plan> class ShapePlanCache {
public:
  static constexpr size_t kCapacity = 8;

  Plan *get(const std::vector<int64_t> &key, const std::function<std::unique_ptr<Plan>()> &make) {
    if (auto it = plans_.find(key); it != plans_.end()) {
      it->second.lastUse = ++clock_;
      return it->second.plan.get();
    }
    if (plans_.size() >= kCapacity)
      plans_.erase(std::min_element(plans_.begin(), plans_.end(), [](const auto &a, const auto &b) {
        return a.second.lastUse < b.second.lastUse;
      }));
    std::unique_ptr<Plan> plan = make(); // may throw: then nothing is cached
    Entry &e = plans_[key];
    e.plan = std::move(plan);
    e.lastUse = ++clock_;
    return e.plan.get();
  }

private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    uint64_t lastUse = 0;
  };
  std::map<std::vector<int64_t>, Entry> plans_;
  uint64_t clock_ = 0;
};

} // namespace tc
