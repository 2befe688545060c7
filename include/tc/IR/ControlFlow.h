// Control-flow ops (If, Loop, Scan; Ops.def) call module functions named by
// String attributes. Their result types follow from the callees, which only
// the module knows: the importer computes them with controlFlowResultTypes,
// verifyModule checks the declared ones against them.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

bool isControlFlowOp(const Op &op);
// The attribute names holding the op's callees: If: then_branch,
// else_branch; Loop, Scan: body.
std::vector<std::string> calleeAttrs(const Op &op);
// The result types the op gets from its callees (one per calleeAttrs entry,
// in order). Throws tc::Error (without the op's location) when a callee's
// signature does not fit the op's operands.
std::vector<TensorType> controlFlowResultTypes(const Op &op,
                                               const std::vector<const Function *> &callees);
// The least specific of two types of one dtype and rank: dims that differ
// become unknown. Throws when dtype or rank differ.
TensorType mergeTypes(const TensorType &a, const TensorType &b, const std::string &what);
// True when `general` describes every value of type `specific`: same dtype
// and rank, each dim unknown or equal.
bool describesType(const TensorType &general, const TensorType &specific);
// Resolves the callees in `m` and checks signatures and declared result types.
void verifyControlFlowCall(const Module &m, const Function &caller, const Op &op);
// The functions a run of m's entry walks op by op: main, then the callees
// of its control-flow ops and theirs, each once, callers before callees
// (what codegen compiles: their groups get kernels). No Fused callee and no
// function nothing calls.
std::vector<Function *> walkedFunctions(const Module &m);

} // namespace tc
