// channels-last: convolution chains run in NHWC (what cuDNN's tensor-core
// kernels want), and the layout flows on through the ops that do not care
// or can be told, with transposes only where it meets the rest of the
// graph. Walks the ops in order keeping, for each NCHW value, its NHWC twin:
//  - a Conv (rank >= 3) takes its input's twin (or a Transpose to NHWC),
//    gets OHWI weights (converted at compile time when constant, else one
//    Transpose per weight) and channels_last = 1; its result is an NHWC twin;
//  - with the conv-transpose option (tc-opt --target=cuda sets it unless
//    --nhwc-conv-transpose=off), so does a ConvTranspose whose input is in
//    NHWC already, or is the dY
//    a ConvWeightGrad reads (Conv's gradient rule: dW takes dY in NHWC
//    anyway, so dX = ConvTranspose(dY) keeps the backward chain NHWC); its
//    weights [C, k..., M/group] are, for a Conv's gradient, that Conv's
//    OHWI ones (the same Transpose). A lone NCHW one stays NCHW;
//  - a ConvWeightGrad (a Conv's backward-filter pass) reading a twin takes
//    both operands in NHWC and channels_last = 1; its OHWI result goes back
//    to OIHW right after (the optimizer's update reads it with NCHW state);
//  - a pointwise op with a twin operand runs on NHWC when every other operand
//    is a twin, a scalar, a full-rank value (moved to NHWC where that is free:
//    a constant, a Reshape, an Expand of [N,C,1,1]) or a value of
//    rank - 1 (broadcast over the batch: a constant permuted too, a per-channel
//    [C,1,1] reshaped); its result is a twin;
//  - an op whose data operand is a twin and that can follow its layout
//    (pools, reductions, Concat, Resize, Pad ...: ChannelsLastOps.cpp) is
//    rewritten for NHWC; its result is a twin;
//  - any other op reading a twin reads its NCHW form (shared): a Reshape
//    when only size-1 axes move ([N,1,1,C] after a global pool), else a
//    Transpose;
//  - a returned twin is transposed back under its public name.
// canonicalize then cancels Transpose pairs the walk left behind.
#include "ChannelsLast.h"
#include "tc/IR/Layout.h"
#include "tc/IR/OpAttrs.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_map>

namespace tc {

namespace channels_last {

int64_t lastAxis(int64_t a, size_t rank) {
  int64_t r = int64_t(rank);
  if (a < 0)
    a += r;
  return a == 0 ? 0 : a == 1 ? r - 1 : a - 1;
}

bool Walk::run() {
  std::vector<std::unique_ptr<Op>> old = std::move(f_.ops);
  f_.ops.clear();
  for (const auto &op : old)
    if (op->is(OpKind::ConvWeightGrad))
      weightGradDy_.insert(op->operand(1));
  for (auto &owned : old) {
    for (Value *&v : owned->operands)
      if (auto s = weightGradNchw_.find(v); v && s != weightGradNchw_.end())
        v = s->second;
    bool weightGrad =
        owned->is(OpKind::ConvWeightGrad) && !attr<OpKind::ConvWeightGrad, "channels_last">(*owned);
    if (!followFlat(*owned))
      rewrite(*owned);
    Op &op = *owned;
    f_.ops.push_back(std::move(owned));
    // A weight gradient goes back to the weights' layout at once (one
    // Transpose of dW, a Reshape for 1x1 kernels), not as a twin: its
    // readers are the optimizer's update of NCHW state, which would
    // otherwise run on NHWC and transpose its products (resnet50's AMP
    // step: two f32 transposes a 3x3 conv, 0.19 ms) and not fuse.
    if (weightGrad && isTwin(op.result())) {
      Value *y = op.result();
      std::vector<int64_t> perm = toChannelsFirstPerm(y->type.rank());
      Value *n = reshapeIfTrivial(y, perm, "_oihw");
      n = n ? n : transpose(y, perm, "_oihw");
      std::string name = y->name; // the OIHW one keeps it, as a returned twin's would
      y->name = f_.uniqueName(name + "_nhwc");
      n->name = name;
      weightGradNchw_[y] = n;
    }
  }
  for (Value *&r : f_.results)
    if (auto s = weightGradNchw_.find(r); s != weightGradNchw_.end())
      r = s->second;
  // A returned twin or flattened twin goes back to NCHW (made here or shared
  // with a reader), which takes the public name; the NHWC one says its layout.
  std::unordered_map<const Value *, bool> renamed;
  for (Value *&r : f_.results) {
    Value *back = flat_.count(r) ? restoreFlat(r) : isTwin(r) ? toFirst(r) : r;
    if (back != r && !renamed[r]) {
      renamed[r] = true;
      back->name = r->name;
      r->name = f_.uniqueName(back->name + "_nhwc");
    }
    r = back;
  }
  return changed_;
}

void Walk::rewrite(Op &op) {
  if (op.is(OpKind::Conv) && op.operand(0)->type.rank() >= 3 &&
      !attr<OpKind::Conv, "channels_last">(op))
    convert(op);
  else if (convTranspose_ && op.is(OpKind::ConvTranspose) && op.operand(0)->type.rank() >= 3 &&
           !attr<OpKind::ConvTranspose, "channels_last">(op) &&
           (isAnchor(op.operand(0)) || weightGradDy_.count(op.operand(0))))
    convert(op);
  else if (op.is(OpKind::ConvWeightGrad) && !attr<OpKind::ConvWeightGrad, "channels_last">(op) &&
           (isTwin(op.operand(0)) || isTwin(op.operand(1))))
    convertWeightGrad(op);
  else if (op.info().category == FusionCategory::Pointwise && runsOnTwins(op))
    retypePointwise(op);
  else if (op.is(OpKind::Transpose) && !isTwin(op.operand(0)))
    noteModelTranspose(op);
  else if (!(readsTwin(op) && followLayout(*this, op)))
    for (Value *&v : op.operands)
      if (v && isTwin(v))
        v = toFirst(v);
}

Value *Walk::transpose(Value *v, const std::vector<int64_t> &perm, const std::string &suffix) {
  Shape s = permuteShape(v->type.shape, perm);
  Op *t = f_.addOp(OpKind::Transpose, {v}, {f_.uniqueName(v->name + suffix)},
                   {TensorType{v->type.dtype, s}}, v->def ? v->def->loc : Location{});
  t->setAttr("perm", Attribute(perm));
  changed_ = true;
  return t->result();
}

Value *Walk::constant(const Value *v, const std::vector<int64_t> &perm, const std::string &suffix) {
  HostTensor t = permuteAxes(constantTensor(*v), perm);
  return f_.addConstant(f_.uniqueName(v->name + suffix), t.type(),
                        TensorData::copyOf(t.bytes(), t.byteSize()), v->loc);
}

Value *Walk::ints(const std::string &base, const std::vector<int64_t> &values, Location loc) {
  return addIntsConstant(f_, base, values, loc);
}

// Reshape's shape for `shape` permuted by `perm` when the permutation moves
// only size-1 axes (the element order stays, e.g. [N,1,1,C] <-> [N,C,1,1]):
// the static dims, 0 ("copy") for a dim that is not static and stays; none
// when the permutation moves other axes or a dim that is not static.
static std::optional<std::vector<int64_t>> orderKeepingDims(const Shape &shape,
                                                            const std::vector<int64_t> &perm) {
  Shape out = permuteShape(shape, perm);
  std::vector<int64_t> dims;
  int64_t prev = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if ((!out[i].isStatic() && perm[i] != int64_t(i)) || out[i].size == 0)
      return std::nullopt; // (a static 0 would read as "copy")
    dims.push_back(out[i].isStatic() ? out[i].size : 0);
    if (out[i].isStatic() && out[i].size == 1)
      continue;
    if (perm[i] < prev)
      return std::nullopt;
    prev = perm[i];
  }
  return dims;
}

Value *Walk::reshape(Value *v, const std::vector<int64_t> &dims, const Shape &out,
                     const std::string &suffix) {
  Location loc = v->def ? v->def->loc : Location{};
  Op *r = f_.addOp(OpKind::Reshape, {v, ints(v->name + "_shape", dims, loc)},
                   {f_.uniqueName(v->name + suffix)}, {TensorType{v->type.dtype, out}}, loc);
  changed_ = true;
  return r->result();
}

Value *Walk::reshapeIfTrivial(Value *v, const std::vector<int64_t> &perm,
                              const std::string &suffix) {
  std::optional<std::vector<int64_t>> dims = orderKeepingDims(v->type.shape, perm);
  return dims ? reshape(v, *dims, permuteShape(v->type.shape, perm), suffix) : nullptr;
}

Value *Walk::toLast(Value *v) {
  if (isTwin(v))
    return v;
  if (auto it = twin_.find(v); it != twin_.end())
    return it->second;
  std::vector<int64_t> perm = toChannelsLastPerm(v->type.rank());
  Value *t = v->isConstant() ? constant(v, perm, "_nhwc") : reshapeIfTrivial(v, perm, "_nhwc");
  if (const Op *e = t ? nullptr : freeExpand(v)) {
    Shape out = permuteShape(v->type.shape, perm);
    t = f_.addOp(OpKind::Expand,
                 {toLast(e->operand(0)), ints(v->name + "_shape", staticDims(out), e->loc)},
                 {f_.uniqueName(v->name + "_nhwc")}, {TensorType{v->type.dtype, out}}, e->loc)
            ->result();
    changed_ = true;
  }
  if (!t)
    t = transpose(v, perm, "_nhwc");
  isTwinValue_[t] = true;
  first_[t] = v;
  return twin_[v] = t;
}

Value *Walk::toFirst(Value *v) {
  if (auto it = first_.find(v); it != first_.end())
    return it->second;
  std::vector<int64_t> perm = toChannelsFirstPerm(v->type.rank());
  Value *t = reshapeIfTrivial(v, perm, "_nchw");
  if (!t)
    t = transpose(v, perm, "_nchw");
  first_[v] = t;
  twin_[t] = v;
  return t;
}

void Walk::retypeAsTwins(Op &op) {
  std::vector<TensorType> types = inferResultTypes(op);
  for (size_t i = 0; i < op.results.size(); ++i) {
    op.results[i]->type = types.at(i);
    isTwinValue_[op.results[i]] = true;
  }
  changed_ = true;
}

Value *Walk::weightsLast(Value *w) {
  auto [it, fresh] = weightsLast_.try_emplace(w, nullptr);
  if (fresh) {
    std::vector<int64_t> perm = toChannelsLastPerm(w->type.rank());
    it->second = w->isConstant() ? constant(w, perm, "_ohwi") : transpose(w, perm, "_ohwi");
  }
  return it->second;
}

void Walk::convert(Op &op) {
  op.operands[0] = toLast(op.operands[0]);
  Value *w = op.operands[1];
  op.operands[1] = weightsLast(w);
  // Test-only: TC_TEST_CONVT_SWAP_KERNEL_AXES gives a ConvTranspose its
  // weights with the first two kernel axes swapped (wrong, yet well typed
  // for square kernels), which the numeric tests must catch
  // (test/Runtime/cuda-conv-transpose-nhwc.test).
  if (op.is(OpKind::ConvTranspose) && std::getenv("TC_TEST_CONVT_SWAP_KERNEL_AXES") &&
      w->type.rank() >= 4 && w->type.shape[2] == w->type.shape[3]) {
    std::vector<int64_t> perm = toChannelsLastPerm(w->type.rank());
    std::swap(perm[1], perm[2]);
    op.operands[1] =
        w->isConstant() ? constant(w, perm, "_swapped") : transpose(w, perm, "_swapped");
  }
  op.setAttr("channels_last", Attribute(int64_t(1)));
  Value *y = op.result();
  y->type.shape = permuteShape(y->type.shape, toChannelsLastPerm(y->type.rank()));
  isTwinValue_[y] = true;
  changed_ = true;
}

// A Conv's weight gradient over NHWC activations: X and dY in NHWC, the
// result OHWI, which is a twin (its readers take it back, a Transpose of
// the weights' size, or follow its layout).
void Walk::convertWeightGrad(Op &op) {
  op.operands[0] = toLast(op.operands[0]);
  op.operands[1] = toLast(op.operands[1]);
  op.setAttr("channels_last", Attribute(int64_t(1)));
  Value *y = op.result();
  y->type.shape = permuteShape(y->type.shape, toChannelsLastPerm(y->type.rank()));
  isTwinValue_[y] = true;
  changed_ = true;
}

// A model's own Transpose between the layouts (ConvNeXt's permutes around
// its LayerNorm and Linear layers) pairs its operand and result: an op
// reading the NCHW one may read the other instead.
void Walk::noteModelTranspose(Op &op) {
  Value *x = op.operand(0), *y = op.result();
  size_t r = x->type.rank();
  std::vector<int64_t> perm = attr<OpKind::Transpose, "perm">(op);
  if (r < 3)
    return;
  if (perm.empty()) // [] reverses
    for (size_t i = r; i-- > 0;)
      perm.push_back(int64_t(i));
  if (perm == toChannelsFirstPerm(r))
    twin_[y] = x;
  else if (perm == toChannelsLastPerm(r))
    twin_[x] = y;
  // One that moves only size-1 axes (ConvNeXt's permutes of its pooled
  // [N,C,1,1]) is a Reshape.
  if (std::optional<std::vector<int64_t>> dims = orderKeepingDims(x->type.shape, perm)) {
    op.kind = OpKind::Reshape;
    op.attrs.clear();
    op.operands.push_back(ints(y->name + "_shape", *dims, op.loc));
    changed_ = true;
  }
}

// The data operand is a twin (for Concat: any operand).
bool Walk::readsTwin(const Op &op) const {
  if (op.is(OpKind::Concat))
    return std::any_of(op.operands.begin(), op.operands.end(),
                       [&](const Value *v) { return v && isTwin(v); });
  return op.operand(0) && isTwin(op.operand(0));
}

// The NHWC permutation of a rank-`rank` value without its batch axis
// ([C, H, W] -> [H, W, C]).
static std::vector<int64_t> batchlessLastPerm(size_t rank) {
  std::vector<int64_t> perm;
  for (int64_t a : toChannelsLastPerm(rank))
    if (a > 0)
      perm.push_back(a - 1);
  return perm;
}

// An NCHW Expand (static shape, same rank) of a value whose NHWC form is
// free (a constant, a twin made already, a Reshape of [N,C,1,1]): its NHWC
// form is an Expand of that, not a Transpose (GlobalAveragePool's gradient
// expands [N,C,1,1] so, and the backward behind it stays NHWC).
const Op *Walk::freeExpand(const Value *v) const {
  const Op *d = v->def;
  size_t r = v->type.rank();
  if (!d || !d->is(OpKind::Expand) || r < 3 || !isStaticShape(v->type.shape) ||
      d->operand(0)->type.rank() != r)
    return nullptr;
  const Value *x = d->operand(0);
  return x->isConstant() || twin_.count(x) || orderKeepingDims(x->type.shape, toChannelsLastPerm(r))
             ? d
             : nullptr;
}

// A value in NHWC, or an NCHW one whose NHWC form is at hand.
bool Walk::isAnchor(const Value *v) const {
  return isTwin(v) || (twin_.count(v) && v->type.rank() >= 3);
}

// A pointwise op can run on NHWC when one operand is a twin and the rest
// can follow (see the file comment).
bool Walk::runsOnTwins(const Op &op) const {
  const Value *anchor = nullptr;
  for (const Value *v : op.operands)
    if (v && isAnchor(v))
      anchor = v;
  if (!anchor)
    return false;
  size_t rank = anchor->type.rank();
  // Where both layouts are the same bytes for every operand (a 1x1 conv's
  // weights, [N,C,1,1]) and one is in NCHW, NCHW: nothing moves either way,
  // and a train step's updated state (an optimizer's update of a 1x1 conv's
  // weights and moments) stays in its public form, written over its input
  // (CudaRun.cpp inPlaceResults) rather than through a view.
  bool sameBytes = true, readsNchw = false;
  for (const Value *v : op.operands)
    if (v && v->type.rank() > 0) {
      std::vector<int64_t> perm = isTwin(v) ? toChannelsFirstPerm(rank) : toChannelsLastPerm(rank);
      sameBytes &= v->type.rank() == rank && orderKeepingDims(v->type.shape, perm);
      readsNchw |= !isTwin(v);
    }
  if (sameBytes && readsNchw)
    return false;
  for (const Value *v : op.operands) {
    if (!v || isTwin(v) || v->type.rank() == 0)
      continue;
    // A full-rank NCHW value moves to NHWC only when that is free (a
    // constant, a twin made already, a Reshape): a Transpose here would
    // just replace the one back to NCHW for this op.
    bool fullRank = v->type.rank() == rank, batchless = v->type.rank() == rank - 1;
    if (fullRank && !v->isConstant() && !twin_.count(v) &&
        !orderKeepingDims(v->type.shape, toChannelsLastPerm(rank)) && !freeExpand(v))
      return false;
    // Batchless: a constant (permuted at compile time) or a value only whose
    // size-1 axes move (a batch norm's per-channel [C,1,1] scale: a Reshape).
    if (!fullRank && !(batchless && (v->isConstant() ||
                                     orderKeepingDims(v->type.shape, batchlessLastPerm(rank)))))
      return false;
  }
  return true;
}

void Walk::retypePointwise(Op &op) {
  size_t rank = 0;
  for (const Value *v : op.operands)
    if (v && isAnchor(v))
      rank = v->type.rank();
  for (Value *&v : op.operands) {
    if (!v || isTwin(v) || v->type.rank() == 0)
      continue;
    if (v->type.rank() == rank) {
      v = toLast(v);
    } else { // [C, H, W] -> [H, W, C]
      std::vector<int64_t> perm = batchlessLastPerm(rank);
      v = v->isConstant() ? constant(v, perm, "_hwc") : reshapeIfTrivial(v, perm, "_hwc");
    }
  }
  retypeAsTwins(op);
}

} // namespace channels_last

bool runChannelsLastPass(Module &m, const PassOptions &o) {
  // The entry function only: Fused callees and control-flow bodies keep
  // their signatures (the pass runs before fusion).
  return channels_last::Walk(m.main(), o.getBool("conv-transpose")).run();
}

} // namespace tc
