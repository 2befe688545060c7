// A constant value's data as a host tensor: what the passes and the compiled
// runtimes share. Kept apart from constant evaluation (ConstantEval.h) so a
// runtime that reads a group's constants links no folding code
// (test/Runtime/tcrt-deps.test).
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"

namespace tc {

// The data of constant `v` as a tensor (a copy). Requires v->isConstant().
HostTensor constantTensor(const Value &v);

} // namespace tc
