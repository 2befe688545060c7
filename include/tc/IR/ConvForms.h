// Which form a Conv takes, read from its weight's type: the passes that
// prepare convs for a backend and the backend's kernel choice must agree
// (a Pad split off for cuDNN is wasted on a conv the generated kernel takes).
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// Depthwise: one input channel per group (group == C_in > 1, any channel
// multiplier). W is [M, C/G, k...], or OHWI [M, k..., C/G] when channels_last.
inline bool isDepthwiseConv(const Op &conv) {
  if (!conv.is(OpKind::Conv) || conv.getInt("group") <= 1)
    return false;
  const TensorType &w = conv.operand(1)->type;
  return w.shape[conv.getInt("channels_last") ? w.rank() - 1 : 1] == Dim::fixed(1);
}

// A depthwise conv the generated kernel takes whatever its padding
// (lib/CodeGen/Kernels/DepthwiseConv.cpp): 1-D or 2-D, static weights.
inline bool isKernelDepthwiseConv(const Op &conv) {
  size_t rank = conv.operand(0)->type.rank();
  return isDepthwiseConv(conv) && rank >= 3 && rank <= 4 &&
         isStaticShape(conv.operand(1)->type.shape);
}

} // namespace tc
