// The family emitters, one file each in this folder, and what two or more
// of them share. A family emitter gets the group's context and its class
// (tc/CodeGen/KernelEmitter.h: classifyKernel) and returns the kernel, or
// nullopt with the context's `why` set when it does not handle the group.
#pragma once
#include "ElementAccess.h"
#include "OpExpressions.h"
#include <unordered_set>

namespace tc::kernels {

using FamilyEmitter = std::optional<EmittedKernel> (*)(const KernelContext &c,
                                                       const KernelClass &cls);

std::optional<EmittedKernel> emitPointwise(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitRowReduction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitReduction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitContraction(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitPool(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitTranspose(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitDataMovement(const KernelContext &c, const KernelClass &cls);
std::optional<EmittedKernel> emitAttention(const KernelContext &c, const KernelClass &cls);

// The classifier over a built context (classifyKernel's body).
std::optional<KernelClass> classify(const KernelContext &c);

// A reduction the Reduction family generates (CUDA): how each element
// enters the accumulator (`term` of x), how two accumulators combine (a
// functor of the prelude), the start value and how the result is finished
// (of acc and the reduced count L).
struct Reduction {
  const char *term, *combine, *init, *finish;
};
std::optional<Reduction> reduction(const Op &op);

// The CPU kernel every family with per-element code shares: rows
// [begin, end) of the domain, the last axis the inner (vectorized) loop
// running the prologue `pro` and the `body`. A family adds per-call
// `setup` (after the broadcast strides) and per-row code (after the row's
// broadcast bases, before the inner loop); with both it owns a malloc'ed
// `acc` the kernel frees. `prologue`: the results stored by the row code.
struct CpuRowParts {
  std::function<void(std::ostream &)> setup, row;
  std::unordered_set<const Value *> prologue;
};
std::optional<EmittedKernel> emitCpuRows(const KernelContext &c, const ElementAccess &access,
                                         const Expressions &ex, const std::string &pro,
                                         const std::string &body, const CpuRowParts &parts);

} // namespace tc::kernels
