// Run-time attribute operands (see the Ops.def comment above the NN ops): an
// optional operand named like one of the op's attributes holds that
// attribute's value when the model computes it at run time. Shape inference
// and the reference executor bind such operands to attributes once their
// data is known and use the attribute form, so shape rules and kernels have
// one source of truth for what the value means.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// The attribute that operand `i` of `info` stands for, or nullptr.
const AttrSpec *runtimeAttrSpec(const OpInfo &info, size_t i);
// The present run-time attribute operand among `operands` that stands for
// attribute `attr`, or nullptr (it replaces a required attribute).
const Value *runtimeAttrOperand(const OpInfo &info, const std::vector<Value *> &operands,
                                std::string_view attr);
// True when one of the op's run-time attribute operands is present.
bool hasRuntimeAttrOperands(const Op &op);
// Throws when an attribute is given both ways.
void checkRuntimeAttrOperands(const Op &op);
// The attribute held by constant `v` given for `spec`: Int/Ints from an
// i32/i64 tensor of rank <= 1, Float/Floats from a tensor of rank <= 1 (Floats:
// of a float type); Int and Float take exactly one element. Throws tc::Error.
Attribute attributeFromConstant(const AttrSpec &spec, const Value &v);
// When every present run-time attribute operand of `op` is a constant: a
// copy of `op` appended to `scratch` with those operands bound to their
// attributes (absent, trailing ones dropped), the form the importer produces
// for constants; nullptr when one of them is computed at run time. The copy
// reads `op`'s other operand values and has results named like `op`'s.
Op *bindRuntimeAttrs(Function &scratch, const Op &op);

} // namespace tc
