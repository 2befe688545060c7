// Gradient rules of data movement: each op's cotangent moved back to where
// its operand's elements came from (the inverse reshape or permutation, the
// parts of a Concat, the zero border of a Slice, a scatter-add for Gather).
#include "GradRules.h"
#include <algorithm>
#include <array>
#include <numeric>

namespace tc::grad {

namespace {
Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }
int64_t normAxis(int64_t a, size_t rank) { return a < 0 ? a + int64_t(rank) : a; }
} // namespace

// Reshape, Flatten, Squeeze, Unsqueeze: the cotangent in the operand's dims.
void reshapeLike(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.reshape(rg[0], b.dims(in(b, 0)));
}

void transpose(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> perm = b.fwd.getInts("perm");
  size_t r = in(b, 0)->type.rank();
  if (perm.empty())
    for (size_t i = 0; i < r; ++i)
      perm.push_back(int64_t(r - 1 - i));
  std::vector<int64_t> inv(r);
  for (size_t i = 0; i < r; ++i)
    inv[size_t(perm[i])] = int64_t(i);
  og[0] = b.transpose(rg[0], inv);
}

void expand(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.unbroadcast(rg[0], b.dims(in(b, 0)));
}

void concat(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  size_t r = in(b, 0)->type.rank();
  int64_t axis = normAxis(b.fwd.getInt("axis"), r);
  std::vector<int64_t> sizes;
  for (Value *v : b.fwd.operands)
    sizes.push_back(b.dims(v)[size_t(axis)]);
  std::vector<Value *> parts = b.ops(OpKind::Split, {rg[0]}, sizes.size(),
                                     {{"axis", Attribute(axis)}, {"split", Attribute(sizes)}});
  for (size_t i = 0; i < og.size(); ++i)
    if (w[i])
      og[i] = parts[i];
}

void split(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<Value *> parts;
  for (size_t i = 0; i < rg.size(); ++i)
    parts.push_back(rg[i] ? rg[i] : b.zerosLike(b.fwd.result(i)));
  int64_t axis = normAxis(b.fwd.getInt("axis"), in(b, 0)->type.rank());
  og[0] = parts.size() == 1 ? parts[0] : b.op(OpKind::Concat, parts, {{"axis", Attribute(axis)}});
}

// Slice with constant starts/ends/axes/steps of step 1: the cotangent padded
// back with zeros; other steps scatter through a flat index (not yet).
void slice(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> inDims = b.dims(in(b, 0)), outDims = b.dims(b.fwd.result());
  auto constInts = [&](size_t i) -> std::optional<std::vector<int64_t>> {
    Value *v = in(b, i);
    if (!v)
      return std::vector<int64_t>{};
    if (!v->isConstant())
      return std::nullopt;
    std::vector<int64_t> out;
    size_t n = size_t(staticNumElements(v->type.shape).value_or(0));
    for (size_t k = 0; k < n; ++k)
      out.push_back(v->type.dtype == DType::I32 ? int64_t(v->data->as<int32_t>()[k])
                                                : v->data->as<int64_t>()[k]);
    return out;
  };
  auto starts = constInts(1), axes = constInts(3), steps = constInts(4);
  if (!starts || !axes || !steps)
    fail(b.fwd.where(), ": the gradient of a Slice needs constant starts, axes and steps");
  size_t r = inDims.size();
  std::vector<int64_t> pads(2 * r, 0);
  for (size_t k = 0; k < starts->size(); ++k) {
    size_t axis = size_t(axes->empty() ? int64_t(k) : normAxis((*axes)[k], r));
    int64_t step = steps->empty() ? 1 : (*steps)[k];
    if (step != 1)
      fail(b.fwd.where(), ": the gradient of a Slice with step ", step,
           " is not supported yet (step 1 only)");
    int64_t s = (*starts)[k];
    if (s < 0)
      s += inDims[axis];
    s = std::clamp<int64_t>(s, 0, inDims[axis]);
    pads[axis] = s;
  }
  for (size_t a = 0; a < r; ++a)
    pads[r + a] = inDims[a] - outDims[a] - pads[a];
  og[0] = b.op(OpKind::Pad, {rg[0]}, {{"pads", Attribute(pads)}});
}

// Pad (constant mode): the cotangent sliced back out of the border.
void pad(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (b.fwd.getString("mode") != "constant")
    fail(b.fwd.where(), ": the gradient of a Pad in mode '", b.fwd.getString("mode"),
         "' is not supported yet (constant only)");
  if (!w[0])
    return;
  std::vector<int64_t> pads = b.fwd.getInts("pads");
  for (int64_t &p : pads)
    p = -p;
  og[0] = b.op(OpKind::Pad, {rg[0]}, {{"pads", Attribute(pads)}});
}

// Tile: sum the repeats, seen as extra axes [r0, d0, r1, d1, ...].
void tile(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> inDims = b.dims(in(b, 0)), outDims = b.dims(b.fwd.result());
  std::vector<int64_t> split, axes;
  for (size_t a = 0; a < inDims.size(); ++a) {
    split.push_back(outDims[a] / std::max<int64_t>(inDims[a], 1));
    split.push_back(inDims[a]);
    axes.push_back(int64_t(2 * a));
  }
  og[0] = b.reshape(b.reduceSum(b.reshape(rg[0], split), axes, false), inDims);
}

// Gather along `axis`: the cotangent scatter-added into zeros at the
// indices (ScatterND over the axis moved to the front; negative indices
// wrapped first).
void gather(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *data = in(b, 0), *idx = in(b, 1);
  std::vector<int64_t> dDims = b.dims(data);
  size_t r = dDims.size();
  int64_t axis = normAxis(b.fwd.getInt("axis"), r);
  std::vector<int64_t> iDims = b.dims(idx);
  Value *i64 = idx->type.dtype == DType::I64
                   ? idx
                   : b.op(OpKind::Cast, {idx}, {{"to", Attribute(DType::I64)}});
  Value *zeroI =
      b.f.addConstant(b.f.uniqueName("gather_grad_zero"), TensorType{DType::I64, {}},
                      TensorData::copyOf(std::array<int64_t, 1>{0}.data(), 8), b.fwd.loc);
  int64_t extent = dDims[size_t(axis)];
  Value *extentC = b.f.addConstant(b.f.uniqueName("gather_grad_extent"), TensorType{DType::I64, {}},
                                   TensorData::copyOf(&extent, 8), b.fwd.loc);
  i64 = b.where(b.op(OpKind::Less, {i64, zeroI}), b.add(i64, extentC), i64);
  // g: [d0..d(axis-1), i..., d(axis+1)..]: move the index axes to the front.
  size_t ni = iDims.size();
  std::vector<int64_t> perm;
  for (size_t k = 0; k < ni; ++k)
    perm.push_back(int64_t(axis) + int64_t(k));
  for (size_t k = 0; k < size_t(axis); ++k)
    perm.push_back(int64_t(k));
  for (size_t k = size_t(axis) + ni; k < r - 1 + ni; ++k)
    perm.push_back(int64_t(k));
  Value *g = b.transpose(rg[0], perm);
  // data with `axis` in front: [extent, other dims...].
  std::vector<int64_t> front{extent};
  std::vector<int64_t> dperm{axis};
  for (size_t k = 0; k < r; ++k)
    if (int64_t(k) != axis) {
      front.push_back(dDims[k]);
      dperm.push_back(int64_t(k));
    }
  std::vector<int64_t> idxDims = iDims;
  idxDims.push_back(1);
  Value *scattered =
      b.op(OpKind::ScatterND, {b.expandTo(b.scalar(0, rg[0]), front), b.reshape(i64, idxDims), g},
           {{"reduction", Attribute(std::string("add"))}});
  std::vector<int64_t> inv(r);
  for (size_t k = 0; k < r; ++k)
    inv[size_t(dperm[k])] = int64_t(k);
  og[0] = b.transpose(scattered, inv);
}

} // namespace tc::grad
