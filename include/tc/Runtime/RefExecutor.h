// The reference executor: naive, obviously-correct C++ for every op of the
// op table. It is the oracle every backend and pass is checked against.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include <functional>
#include <optional>
#include <vector>

namespace tc {

// Runs `f` on `inputs` (one per argument, in order). Checks each input's
// dtype and dims against the signature (a symbolic dim binds to one size for
// the whole call) and throws tc::Error naming the input and the expected type
// on mismatch. Output shapes come from the op table's shape rules applied to
// the concrete operand shapes, so kernels never compute shapes themselves
// (except the data-dependent ones, see refKernelSetsOutputDims).
std::vector<HostTensor> runReference(const Function &f, const std::vector<HostTensor> &inputs);
// Sees every op result of the function run, in execution order, while it
// is alive (numerics bisection compares intermediates of two IRs by name).
using ValueObserver = std::function<void(const Value &, const HostTensor &)>;
// Runs an op another way (a compiled kernel of a backend) and returns its
// results, or nullopt to let the reference kernels run it. Results are
// checked against the op's declared types like a Fused op's.
using OpOverride = std::function<std::optional<std::vector<HostTensor>>(
    const Op &, const std::vector<const HostTensor *> &)>;

// The same for a function of `m` (null: none), whose Fused ops run their
// callees; and for m's entry function. `observe`, when given, sees f's own
// op results (a Fused op's results, not its callee's intermediates).
std::vector<HostTensor> runReference(const Module *m, const Function &f,
                                     const std::vector<HostTensor> &inputs,
                                     const ValueObserver *observe = nullptr,
                                     const OpOverride *override = nullptr);
std::vector<HostTensor> runReference(const Module &m, const std::vector<HostTensor> &inputs);

// Runs control-flow op `op` (If, Loop, Scan) of `m` on host tensors, each
// callee through runReference with `bodies` (null: the reference kernels;
// the CPU runtime passes its kernels). ControlFlowRun.h is the protocol.
std::vector<HostTensor> runControlFlow(const Module &m, const Op &op,
                                       const std::vector<const HostTensor *> &ins,
                                       const OpOverride *bodies);

// A kernel computes an op's results into preallocated `outs` (right dtype
// and shape already) from `ins` (nullptr for absent optional operands).
using RefKernel = void (*)(const Op &op, const std::vector<const HostTensor *> &ins,
                           std::vector<HostTensor> &outs);

// The kernel of an op kind, or nullptr. Kernel files register into one table
// (lib/Runtime/Ref/Kernels.h); a unit test checks every op has a kernel.
RefKernel lookupRefKernel(OpKind k);
// True for the ops whose output sizes depend on operand values (NonZero,
// Unique, ...): their shape rule gives `?` for those dims, and their kernel,
// handed outputs whose `?` dims are 0, replaces them with the final shape
// (runReference checks it against the rule). Every other kernel gets its
// outputs with the final shape and keeps it.
bool refKernelSetsOutputDims(OpKind k);

// The result types of `op` on these concrete operands, by its shape rule
// with small integer operands read as constants (a Reshape's shape, a
// Tile's repeats computed at run time), as the reference executor sizes its
// outputs; nullopt where a dim stays unknown (a data-dependent op) or the
// rule fails on them.
std::optional<std::vector<TensorType>>
runTimeResultTypes(const Op &op, const std::vector<const HostTensor *> &ins);

} // namespace tc
