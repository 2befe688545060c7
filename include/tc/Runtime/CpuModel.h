// A CPU artifact loaded for running: the optimized module, and its
// generated kernels dlopen'ed from the artifact's shared object (straight
// from memory, no temporary file; KernelLibrary.h). Groups the
// artifact marks for a library (Conv/MatMul/Gemm plus epilogue) run as oneDNN
// primitives where oneDNN takes them, else on their generated kernel;
// Gather/Concat/Split/Slice are copies over the arena (MoveStep.h). Steps
// with none of these run on the reference kernels and count as fallbacks.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/KernelKind.h"
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/ShapePlan.h"
#include "tc/Runtime/ThreadPool.h"
#include "tc/Runtime/Trace.h"
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tc {

class KernelLibrary;

class CpuModel {
public:
  // Checks a read artifact (target, CPU features of this machine) and links
  // its kernels. Throws tc::Error naming the file. `target`: the artifact
  // target this runtime runs (Targets.def's name, from the registry).
  // `threads` splits each kernel's rows (0: one per hardware thread).
  static std::unique_ptr<CpuModel> load(Artifact artifact, const char *target,
                                        unsigned threads = 0);
  ~CpuModel();

  const Module &module() const { return *module_; }
  const Artifact &artifact() const { return artifact_; }
  // Runs the entry function (inputs in argument order, checked like the
  // reference executor checks them). Per distinct input shape, the module is
  // specialized to those sizes and its memory plan computed once: every
  // intermediate then lives at its planned offset in ONE arena, views alias
  // their operand, weights are read in place from the artifact. A model whose
  // sizes are not all known after specialization (data-dependent ops,
  // control flow) runs step by step on freshly allocated tensors instead;
  // an If, Loop or Scan codegen compiled runs its callees' steps the same
  // way (ControlFlowRun.h), on the same kernels.
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs);
  // Bytes of the arena of the last run (0: it ran without one).
  uint64_t arenaBytes() const { return arenaBytes_; }
  bool plannedShape() const { return planned_; } // the last run made its shape's plan

  size_t kernelCount() const { return kernels_.size(); }
  // Steps of the last run: by a generated kernel, by a library call, and on
  // the reference kernels.
  size_t kernelSteps() const { return kernelSteps_; }
  size_t librarySteps() const { return librarySteps_; }
  size_t moveSteps() const { return moveSteps_; } // Gather/Concat/Split/Slice copies
  size_t fallbackSteps() const { return fallbackSteps_; }
  // One line per step of the last run when it ran planned (else empty): what
  // ran it ("%y = @fused_conv_relu_0: onednn conv jit:avx2 + 1 post-ops").
  std::vector<std::string> stepReport() const {
    return stepReport_ ? *stepReport_ : std::vector<std::string>();
  }
  unsigned threads() const { return pool_->size(); }

  // Per-step wall time of planned runs while profiling is on (off by
  // default: two clock reads per step).
  void setProfiling(bool on) { profile_ = on; }
  struct StepProfile {
    std::string step;   // as stepReport()
    double meanSeconds; // over the profiled runs at the last run's shape
  };
  std::vector<StepProfile> stepProfile() const;
  // Tracing (tc-prof): planned runs record one Host event per step and one
  // Worker event per thread's share of each kernel into `trace` (nullptr:
  // off), and set trace->steps to the plan's steps. Not owned.
  void setTrace(RunTrace *trace) { trace_ = trace; }

private:
  CpuModel() = default;
  using KernelFn = void (*)(void *const *, const int64_t *, int64_t, int64_t);
  Artifact artifact_;
  const char *target_ = "";
  std::unique_ptr<Module> module_;
  std::unique_ptr<KernelLibrary> library_; // the kernels' shared object
  int64_t *fault_ = nullptr;               // its tc_fault (tc/CodeGen/KernelFault.h)
  // A Fused callee's entry in the artifact's kernel table.
  struct GroupCode {
    KernelFn kernel = nullptr;      // the whole group; null: none generated
    std::optional<KernelKind> kind; // its family
    std::string library;            // "onednn" or empty
    KernelFn epilogue = nullptr;    // after a library call whose post-ops do not cover it
  };
  std::map<std::string, GroupCode> kernels_; // by Fused callee
  // The control-flow ops codegen compiled (ControlFlowSection.h): their
  // callees run through the kernels; any other runs on the reference.
  std::map<const Op *, std::string> controlFlow_;
  size_t kernelSteps_ = 0, librarySteps_ = 0, moveSteps_ = 0, fallbackSteps_ = 0;
  const std::vector<std::string> *stepReport_ = nullptr;
  bool profile_ = false;
  RunTrace *trace_ = nullptr;
  int traceStep_ = -1; // the step whose kernel runs now (traced runs)
  std::unique_ptr<ThreadPool> pool_;
  struct ShapePlan;
  ShapePlanCache<ShapePlan> plans_; // by input dims
  uint64_t arenaBytes_ = 0;
  const ShapePlan *lastPlan_ = nullptr;
  bool planned_ = false; // the last run made its shape's plan

  ShapePlan *planFor(const std::vector<HostTensor> &inputs);
  std::vector<HostTensor> runPlanned(ShapePlan &plan, const std::vector<HostTensor> &inputs);
  // After a kernel of Fused op `fused`: a fault it recorded fails the run
  // with the reference's line, naming the group's op that faulted (an
  // epilogue kernel's ops are not the callee's: then the Fused op).
  void checkFault(const Module &m, const Op &fused, bool epilogue = false);
  void launchMultiTensor(const ShapePlan &plan, size_t step); // a multi-tensor run
  void launch(KernelFn kernel, void *const *bufs, const int64_t *dims,
              const std::vector<int64_t> &domain);
  void buildSteps(ShapePlan &plan);
  void keepBlockedLayouts(ShapePlan &plan);
  // Whether a oneDNN step is too small to share with other threads (runs on
  // the calling thread alone; kSerialFlops and kSerialBytes in CpuModel.cpp).
  bool serialStep(const PlannedModule &pm, const Op &op) const;
  void traceSteps(ShapePlan &plan);

  std::optional<std::vector<HostTensor>> runKernel(const Op &op,
                                                   const std::vector<const HostTensor *> &ins);
  // An unplanned run's view (its operand's bytes copied, at the sizes its
  // shape rule gives for the run's values) or Gather/Concat/Split/Slice (the
  // planned run's row copies, MoveStep.h); nullopt for any other op.
  std::optional<std::vector<HostTensor>> runCopy(const Op &op,
                                                 const std::vector<const HostTensor *> &ins);
};

} // namespace tc
