// Hardmax becomes ops the kernel families compile (tc-opt before fusion;
// codegen's outlining runs it too, for IR that did not go through tc-opt
// -O1+): for X with a static extent L along `axis`,
//
//   a = ArgMax(X, axis, keepdims 1)           the first maximum (as Hardmax)
//   Y = Cast(Equal(iota, a), X's type)        iota: [1.., L, ..1] = 0 .. L-1
//
// The ArgMax is the Reduction family's index anchor (a kernel per row); the
// compare and the cast are one pointwise kernel. What stays Hardmax (then a
// host step, named by codegen): an extent known only at run time along the
// axis (the index is a constant).
#include "tc/IR/OpTable.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"

namespace tc {

namespace {

Value *addOp(Function &f, const Op &at, OpKind k, std::vector<Value *> ins,
             std::vector<std::pair<std::string, Attribute>> attrs = {}) {
  return addInferredOp(f, k, std::move(ins), std::move(attrs), at.result()->name, at.loc);
}

Value *lower(Function &f, const Op &h) {
  if (!hardmaxObstacle(h).empty())
    return nullptr;
  Value *x = h.operand(0);
  size_t r = x->type.rank();
  int64_t axis = h.getInt("axis");
  if (axis < 0)
    axis += int64_t(r);
  int64_t L = x->type.shape[size_t(axis)].size;
  Value *a = addOp(f, h, OpKind::ArgMax, {x},
                   {{"axis", Attribute(axis)},
                    {"keepdims", Attribute(int64_t(1))},
                    {"select_last_index", Attribute(int64_t(0))}});
  std::vector<int64_t> iotaShape(r, 1);
  iotaShape[size_t(axis)] = L;
  HostTensor iota(DType::I64, iotaShape);
  for (int64_t k = 0; k < L; ++k)
    iota.setInt(k, k);
  Value *idx = f.addConstant(f.uniqueName(h.result()->name + "_index"), iota.type(),
                             TensorData::copyOf(iota.bytes(), iota.byteSize()), h.loc);
  Value *hit = addOp(f, h, OpKind::Equal, {idx, a});
  return addOp(f, h, OpKind::Cast, {hit}, {{"to", Attribute(x->type.dtype)}});
}

} // namespace

std::string hardmaxObstacle(const Op &h) {
  const TensorType &xt = h.operand(0)->type;
  int64_t r = int64_t(xt.rank()), axis = h.getInt("axis");
  if (axis < -r || axis >= r || !isFloat(xt.dtype))
    return "an axis out of range or an input that is not float";
  if (!xt.shape[size_t(axis < 0 ? axis + r : axis)].isStatic())
    return "an extent along the axis known only at run time (the index is a constant)";
  return "";
}

bool runLowerHardmaxPass(Module &m, const PassOptions &) {
  bool changed = false;
  auto isHardmax = [](const auto &o) { return o->is(OpKind::Hardmax); };
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(), isHardmax))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      Value *y = isHardmax(o) ? lower(f, *o) : nullptr;
      if (!y) {
        f.ops.push_back(std::move(o));
        continue;
      }
      adoptValue(o->result(), y);
      changed = true;
    }
  }
  return changed;
}

} // namespace tc
