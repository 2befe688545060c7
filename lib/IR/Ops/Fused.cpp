// Shape rule of the Fused op (the fuse pass makes them; see Fusion.cpp).
#include "OpInference.h"

namespace tc::infer {

// A Fused op's result types are its callee's result types, which only the
// module knows: the op keeps the types the fuse pass gave it, and
// verifyModule checks them against the callee's signature.
std::vector<TensorType> inferFused(const Op &op) {
  if (op.results.empty())
    fail("Fused ops are made by the fuse pass; they need declared result types");
  std::vector<TensorType> types;
  for (const Value *r : op.results)
    types.push_back(r->type);
  return types;
}

} // namespace tc::infer
