// Groups anchored by a library op (their first op: Conv, MatMul, Gemm,
// Reduce*, pooling) can run
// as a call into a tuned library (oneDNN on CPU, cuBLASLt/cuDNN on CUDA)
// writing the anchor's result straight into the group's result buffer,
// followed by the group's pointwise epilogue, run in place over that buffer
// by a generated kernel (or folded into the library's post-ops where the
// library offers them). Both backends split groups the same way, here.
#pragma once
#include "tc/IR/IR.h"
#include <memory>

namespace tc {

// Ops a tuned library computes better than a generated loop nest.
bool isLibraryOp(const Op &op);

// True when `group` starts with a library op whose result has the
// group's one result's type, and every later op is pointwise: the shape a
// library call plus an in-place epilogue can compute. `anyDType`: the
// anchor's result may differ from the group's in dtype (a Cast in the
// epilogue, as mixed precision makes): the epilogue then reads the anchor's
// result from a buffer of its own (the CUDA runtime's), not in place.
bool isLibraryAnchored(const Function &group, bool anyDType = false);

// Moves a channels-last Conv anchor's own bias B ([K], broadcast over the
// result's last axis) into an Add right after it, so that the epilogue
// kernel, which makes a pass over the result anyway, adds it (instead of a
// library pass of its own); the Add's result keeps the Conv's value and
// uses. False (nothing changed) for another anchor.
bool moveConvBiasToEpilogue(Function &group);

// The ops after the anchor as a group of their own, named `<group>__epilogue`:
// arguments are the group's arguments followed by the anchor's result; its one
// result is the group's. nullptr when the anchor is the whole group (or the
// group is not library-anchored, of any dtype).
std::unique_ptr<Function> epilogueGroup(const Function &group);

} // namespace tc
