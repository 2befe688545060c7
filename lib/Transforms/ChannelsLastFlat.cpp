// GroupNorm with one group as exporters emit it (PoolFormer, ConvNeXt-V1):
// Reshape(x, [0, 1, -1]) -> InstanceNormalization (one-element scale and
// bias) -> Reshape back to x's shape. The statistics cover a whole sample,
// so the element order inside it does not matter: on x's twin the same ops
// normalize the NHWC elements, and the Reshape back gives the result's twin.
// A flattened value read by anything else is put back in NCHW order.
#include "ChannelsLast.h"
#include "tc/IR/Layout.h"
#include "tc/Transforms/Rewrite.h"

namespace tc::channels_last {

namespace {

// [N, 1, L] from a rank >= 3 tensor with the same batch.
bool flattensSamples(const Value *x, const Value *y) {
  const Shape &in = x->type.shape, &out = y->type.shape;
  return in.size() >= 3 && out.size() == 3 && out[0] == in[0] && out[1] == Dim::fixed(1);
}

// NHWC dims for a Reshape: static, 0 ("copy") for the batch.
std::optional<std::vector<int64_t>> twinDims(const Shape &twin) {
  std::vector<int64_t> dims{0};
  for (size_t i = 1; i < twin.size(); ++i) {
    if (!twin[i].isStatic() || twin[i].size == 0)
      return std::nullopt;
    dims.push_back(twin[i].size);
  }
  return dims;
}

} // namespace

bool Walk::followFlat(Op &op) {
  Value *x = op.operand(0);
  if (x && op.is(OpKind::Reshape) && isTwin(x) && flattensSamples(x, op.result()) &&
      twinDims(x->type.shape)) {
    flat_[op.result()] = permuteShape(x->type.shape, toChannelsFirstPerm(x->type.rank()));
    return true;
  }
  if (x && flat_.count(x)) {
    Shape first = flat_.at(x);
    if (op.is(OpKind::InstanceNormalization) && hasOneElement(op.operand(1)) &&
        hasOneElement(op.operand(2))) {
      flat_[op.result()] = first;
      return true;
    }
    Shape twin = permuteShape(first, toChannelsLastPerm(first.size()));
    std::optional<std::vector<int64_t>> dims = twinDims(twin);
    if (op.is(OpKind::Reshape) && op.result()->type.shape == first && dims) {
      op.operands[1] = ints(op.result()->name + "_shape", *dims, op.loc);
      op.setAttr("allowzero", Attribute(int64_t(0)));
      op.result()->type.shape = twin;
      isTwinValue_[op.result()] = true;
      changed_ = true;
      return true;
    }
  }
  for (Value *&v : op.operands)
    if (v && flat_.count(v))
      v = restoreFlat(v);
  return false;
}

// The flattened NHWC elements back in NCHW order: unflattened to the twin's
// shape, moved to NCHW and flattened again.
Value *Walk::restoreFlat(Value *v) {
  if (auto it = restored_.find(v); it != restored_.end())
    return it->second;
  const Shape &first = flat_.at(v);
  Shape twin = permuteShape(first, toChannelsLastPerm(first.size()));
  Value *shaped = reshape(v, *twinDims(twin), twin, "_nhwc"); // static: see followFlat
  isTwinValue_[shaped] = true;
  Value *back = reshape(toFirst(shaped), {0, 1, -1}, v->type.shape, "_nchw");
  return restored_[v] = back;
}

} // namespace tc::channels_last
