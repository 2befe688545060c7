// Evaluating an op at compile time with the reference kernels: what the
// importer's shape folding and tc-opt's fold-constants pass share.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/ConstantTensor.h"
#include "tc/Runtime/HostTensor.h"
#include <optional>
#include <vector>

namespace tc {

// The results of `op` when they can be known now: every operand is a
// constant (or, for Shape and Size, the operand's dims are static), the op
// has a reference kernel, the results together take at most `maxResultBytes`,
// and the kernel accepts the operands. nullopt otherwise: an op that fails on
// its constants fails the same way at run time, where it is reported.
std::optional<std::vector<HostTensor>> evaluateConstantOp(const Op &op, size_t maxResultBytes);

// Turns op's results into constants holding `values` and erases `op` from
// `f`: uses and names stay as they are. The constants carry op's location.
void replaceOpByConstants(Function &f, Op *op, std::vector<HostTensor> values);

} // namespace tc
