// The sizes a compiled group's kernel runs at when no plan sized it (an
// unplanned shape, both compiled runtimes): its dims[] and its results'
// dims, from the operands it is called on.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include <functional>
#include <optional>
#include <vector>

namespace tc {

struct GroupDims {
  std::vector<int64_t> dims;                 // the kernel's dims[]: args', then results'
  std::vector<std::vector<int64_t>> results; // each result's
};

// Group `f` (the callee of Fused `op`) on operands `ins` (one per argument):
// f's symbols bound to the operands' dims (one symbol of two sizes is an
// error naming op), a result's `?` dim the compaction kernel's `count` when
// given (its pass 0 read it: the launch rule, tc/CodeGen/KernelEmitter.h),
// any other dim from the shape rule of f's lone op on the run's values
// (`values`, when given, is called first: it makes the operands' data
// current). nullopt: a size only the reference finds.
std::optional<GroupDims> groupDims(const Op &op, const Function &f,
                                   const std::vector<const HostTensor *> &ins,
                                   std::optional<int64_t> count = std::nullopt,
                                   const std::function<void()> &values = {});

} // namespace tc
