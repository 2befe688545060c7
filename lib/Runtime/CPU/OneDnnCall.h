// A library-anchored group (Conv, MatMul, Gemm, Reduce*, pooling, then a
// pointwise epilogue; see tc/CodeGen/LibraryCall.h) at fixed sizes as ONE
// oneDNN primitive: the anchor, its bias, and the epilogue where it maps onto
// oneDNN post-ops (a per-channel Add as the bias, then eltwise relu/leaky
// relu/sigmoid/tanh/gelu/elu/clip/hardswish, and swish for x * sigmoid(x)).
// Whatever does not map is left to the group's generated epilogue kernel,
// run in place after the call.
#pragma once
#include "tc/IR/IR.h"
#include <memory>
#include <string>

namespace tc {

class OneDnnCall {
public:
  // `group` is the Fused op's callee, library-anchored (codegen decided the
  // call; CpuModel::load rejects a table that says otherwise); `fused` the op
  // itself, with static operand and result types. nullptr with `why` set when oneDNN does not
  // take this group (dtype, layout, an attribute it lacks): the caller then
  // runs the generated kernel. Constant weights are reordered here, once.
  // `serial`: the primitive is made and run for one thread, the caller's
  // (no OpenMP region; CpuModel::serialStep decides which steps).
  static std::unique_ptr<OneDnnCall> create(const Function &group, const Op &fused,
                                            std::string &why, bool serial = false);
  ~OneDnnCall();

  // Runs the primitive: `args` are the Fused op's operands, `result` its result.
  void run(void *const *args, void *result);
  // True when the epilogue did not fold into post-ops (run its kernel after).
  bool epilogueLeft() const { return epilogueLeft_; }
  // "conv jit:avx2 + 2 post-ops", for tc-run's step report.
  const std::string &describe() const { return describe_; }

  // Conv: the blocked layout its src / dst activations are in inside the
  // primitive ("nChw8c", see layoutName), "" when plain (or a padded layout
  // a plain-sized buffer cannot hold). By default run() reorders them from
  // and to the plain buffers.
  const std::string &srcLayout() const { return srcLayout_; }
  const std::string &dstLayout() const { return dstLayout_; }
  // The plan keeps the src / dst buffer in that layout (BlockedLayout.h):
  // the reorder in / out is dropped.
  void keepLayouts(bool src, bool dst);
  // Conv whose src the plan keeps plain but whose producer, a conv, computes
  // it in the same layout (no epilogue kernel after it) and reorders it out:
  // read the producer's own buffer instead of reordering the plain copy back
  // in. False (nothing changed) where that does not hold.
  bool shareSrcOf(const OneDnnCall &producer);
  // A reduction over every spatial axis (global pooling) reads its src in
  // the layout `producer`, a conv, keeps its dst in: rebuilt for it. False
  // (nothing changed) for another call, or where oneDNN has only its
  // reference loop for that layout. `apply` false: only whether it can.
  bool readsAnyLayout() const { return anyLayoutSrc_; }
  bool readSrcLike(const OneDnnCall &producer, bool apply = true);
  // A lone MaxPool/AveragePool group (a generated kernel's) as oneDNN
  // pooling reading `producer`'s dst in its layout (no reorder in; the plan
  // must keep that value so), its dst in the layout oneDNN picks (reordered
  // out unless kept, keepLayouts). nullptr where oneDNN has only its
  // reference loop for that layout or takes no such pooling.
  static std::unique_ptr<OneDnnCall> poolReading(const Function &group, const Op &fused,
                                                 const OneDnnCall &producer, bool serial = false);

  // oneDNN's worker threads (OpenMP) for every call: the run's --threads.
  static void setThreads(unsigned n);

private:
  OneDnnCall() = default;
  static std::unique_ptr<OneDnnCall> build(const Function &group, const Op &fused, bool fold,
                                           bool serial, std::string &why,
                                           const OneDnnCall *srcFrom = nullptr);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool epilogueLeft_ = false, anyLayoutSrc_ = false, serial_ = false;
  std::string describe_, srcLayout_, dstLayout_;
};

} // namespace tc
