// GradBuilder: the IR-building helpers every gradient rule uses.
#include "tc/IR/Gradient.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <numeric>

namespace tc {

GradBuilder::GradBuilder(Function &fn, const Op &fwdOp)
    : f(fn), fwd(fwdOp), phase(Phase::Backward),
      base_((fwdOp.results.empty() ? std::string("op") : fwdOp.result()->name) + "_grad") {}

GradBuilder::GradBuilder(Function &fn, const Op &fwdOp, std::string base)
    : f(fn), fwd(fwdOp), phase(fwdOp.loc.phase), base_(std::move(base)) {}

std::vector<Value *> GradBuilder::ops(OpKind k, std::vector<Value *> ins, size_t numResults,
                                      std::vector<std::pair<std::string, Attribute>> attrs) {
  std::vector<std::string> names;
  // uniqueName reserves nothing: give each result a base of its own.
  for (size_t i = 0; i < numResults; ++i)
    names.push_back(f.uniqueName(numResults == 1 ? base_ : base_ + "_r" + std::to_string(i)));
  Op *o = f.addOp(k, std::move(ins), names, std::vector<TensorType>(numResults), loc());
  for (auto &[n, a] : attrs)
    o->setAttr(n, std::move(a));
  std::vector<TensorType> types = inferResultTypes(*o);
  if (types.size() != numResults)
    fail(fwd.where(), ": internal: gradient op ", opInfo(k).name, " gives ", types.size(),
         " results, not ", numResults);
  for (size_t i = 0; i < numResults; ++i)
    o->results[i]->type = types[i];
  return o->results;
}

Value *GradBuilder::op(OpKind k, std::vector<Value *> ins,
                       std::vector<std::pair<std::string, Attribute>> attrs) {
  return ops(k, std::move(ins), 1, std::move(attrs))[0];
}

Value *GradBuilder::scalar(double v, const Value *like) {
  DType t = like->type.dtype;
  std::vector<uint8_t> bytes(dtypeSize(t));
  switch (t) {
  case DType::F32: {
    float x = float(v);
    std::memcpy(bytes.data(), &x, 4);
    break;
  }
  case DType::F64: std::memcpy(bytes.data(), &v, 8); break;
  case DType::F16: {
    uint16_t h = floatToHalf(float(v));
    std::memcpy(bytes.data(), &h, 2);
    break;
  }
  case DType::BF16: {
    uint16_t h = floatToBf16(float(v));
    std::memcpy(bytes.data(), &h, 2);
    break;
  }
  default: fail(fwd.where(), ": gradients flow through float tensors only, not ", like->type.str());
  }
  return f.addConstant(f.uniqueName(base_ + "_c"), TensorType{t, {}},
                       TensorData::fromVector(std::move(bytes)), loc());
}

Value *GradBuilder::ints(const std::vector<int64_t> &v) {
  return f.addConstant(f.uniqueName(base_ + "_i"),
                       TensorType{DType::I64, makeShape({int64_t(v.size())})},
                       TensorData::copyOf(v.data(), v.size() * sizeof(int64_t)), loc());
}

Value *GradBuilder::zerosLike(const Value *v) { return expandTo(scalar(0.0, v), dims(v)); }

Value *GradBuilder::castTo(Value *v, DType t) {
  return v->type.dtype == t ? v : op(OpKind::Cast, {v}, {{"to", Attribute(t)}});
}

std::vector<int64_t> GradBuilder::dims(const Value *v) const {
  if (!isStaticShape(v->type.shape))
    fail(fwd.where(), ": training needs static shapes, but %", v->name, " is ", v->type.str(),
         " (fix the sizes with tc-opt --dim NAME=SIZE)");
  return staticDims(v->type.shape);
}

Value *GradBuilder::reshape(Value *v, const std::vector<int64_t> &to) {
  if (dims(v) == to)
    return v;
  return op(OpKind::Reshape, {v, ints(to)});
}

Value *GradBuilder::padAxis(Value *v, size_t axis, int64_t before, int64_t after) {
  if (before == 0 && after == 0)
    return v;
  size_t r = v->type.rank();
  std::vector<int64_t> pads(2 * r, 0);
  pads[axis] = before;
  pads[r + axis] = after;
  return op(OpKind::Pad, {v}, {{"pads", Attribute(pads)}});
}

Value *GradBuilder::transpose(Value *v, const std::vector<int64_t> &perm) {
  std::vector<int64_t> id(perm.size());
  std::iota(id.begin(), id.end(), 0);
  if (perm == id)
    return v;
  return op(OpKind::Transpose, {v}, {{"perm", Attribute(perm)}});
}

Value *GradBuilder::swapLastTwo(Value *v) {
  std::vector<int64_t> perm(v->type.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(v, perm);
}

Value *GradBuilder::reduceSum(Value *v, const std::vector<int64_t> &axes, bool keepdims) {
  if (axes.empty())
    return v;
  return op(OpKind::ReduceSum, {v},
            {{"axes", Attribute(axes)}, {"keepdims", Attribute(int64_t(keepdims))}});
}

Value *GradBuilder::reduceMean(Value *v, const std::vector<int64_t> &axes, bool keepdims) {
  if (axes.empty())
    return v;
  return op(OpKind::ReduceMean, {v},
            {{"axes", Attribute(axes)}, {"keepdims", Attribute(int64_t(keepdims))}});
}

Value *GradBuilder::expandTo(Value *v, const std::vector<int64_t> &to) {
  if (dims(v) == to)
    return v;
  return op(OpKind::Expand, {v, ints(to)});
}

Value *GradBuilder::unbroadcast(Value *g, const std::vector<int64_t> &to) {
  std::vector<int64_t> from = dims(g);
  if (from == to)
    return g;
  size_t lead = from.size() - to.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (to[i - lead] == 1 && from[i] != 1))
      axes.push_back(int64_t(i));
  return reshape(reduceSum(g, axes, true), to);
}

} // namespace tc
