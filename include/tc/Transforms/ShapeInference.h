// Whole-module shape inference and specialization of symbolic dims.
#pragma once
#include "tc/IR/IR.h"
#include <map>
#include <string>

namespace tc {

// Refines result types in order: `?` dims become what the op table's rules,
// or the tracked contents of shape tensors (Shape -> Concat -> Reshape),
// prove. Fused callees follow their operands. Returns whether anything changed.
bool inferShapes(Module &m);

// Replaces symbolic dims by sizes (`--dim N=32`) everywhere, re-infers and
// verifies. Throws tc::Error for a symbol the signature does not have.
void specializeDims(Module &m, const std::map<std::string, int64_t> &dims);

} // namespace tc
