// A MatMul may read an operand with its last two axes swapped (transA,
// transB) and scale its product (alpha): tc's attributes, which the
// gemm-views pass sets (tc-opt --target=cuda) so that cuBLASLt reads a
// transposed or scaled operand in place instead of a copy kernel making it.
// An imported MatMul has neither. Passes that match a MatMul by its
// operands' layout (attention-fusion, align-gemms, the layer-scale fold)
// take only a plain one.
#pragma once
#include "tc/IR/OpAttrs.h"

namespace tc {

inline bool isPlainMatMul(const Op &op) {
  return op.is(OpKind::MatMul) && !attr<OpKind::MatMul, "transA">(op) &&
         !attr<OpKind::MatMul, "transB">(op) && attr<OpKind::MatMul, "alpha">(op) == 1.0;
}

} // namespace tc
