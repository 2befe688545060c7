// Structural and type checks. Every error names the op: "file:node (Op): what".
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// Runs the op table's shape/dtype rule for `op`; errors carry op.where().
std::vector<TensorType> inferResultTypes(const Op &op);
// Arity, attribute names and kinds, operand presence, inferred vs declared types.
void verifyOp(const Op &op);
// verifyOp on every op plus SSA order, unique names and defined results.
void verifyFunction(const Function &f);
void verifyModule(const Module &m);

} // namespace tc
