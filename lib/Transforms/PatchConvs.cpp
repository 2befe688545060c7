// A patch-embedding Conv (ViT, DeiT, BEiT, MLP-Mixer: kernel = stride, no
// padding, 16x16 over 3 channels) is a GEMM over non-overlapping patches:
// cuDNN ran vit's [32,3,224,224] x [768,3,16,16] at 26 TFLOP/s (280 us, 7-10%
// of those models). This pass (CUDA's pre-fusion pipeline, before
// channels-last) rewrites it as
//   Reshape x [N,C,H',p,W',q] -> Transpose [N,H',W',p,q,C] -> Reshape
//   [N,H',W',p*q*C] -> MatMul with the weight as a constant [p*q*C, O]
//   (+ the bias) -> Transpose back to NCHW
// (an NHWC Conv the same, without the last Transpose): one copy of the
// input (the Cast to f16 reads through it) and one cuBLASLt GEMM.
// Small patches (ConvNeXt's and Swin's 4x4 stems, K = 48) stay convolutions:
// cuDNN runs them near bandwidth already; so do 1x1 convs (kernel = stride
// = 1) here: channels-last keeps them in NHWC without a copy, and
// conv-gemms (after it) makes them GEMMs there (maxvit's 1x1 convs as
// patch GEMMs before channels-last cost it 1.2 ms of NCHW transposes).
#include "tc/IR/OpTable.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <optional>

namespace tc {

namespace {

// The smallest patch (p*q*C) worth a GEMM.
constexpr int64_t kMinPatchElements = 256;

// Spatial extents and channels of x, NCHW or NHWC.
struct Layout {
  bool last;
  int64_t h, w, c;
};

std::optional<Layout> patchLayout(const Op &conv) {
  const Value *x = conv.operand(0), *w = conv.operand(1);
  if (conv.getInt("group") != 1 || x->type.rank() != 4 || !w->isConstant() || w->type.rank() != 4 ||
      conv.getString("auto_pad") != "NOTSET")
    return std::nullopt;
  bool last = conv.getInt("channels_last") != 0;
  for (size_t d = 1; d < 4; ++d)
    if (!x->type.shape[d].isStatic() || !w->type.shape[d].isStatic())
      return std::nullopt;
  const Shape &xs = x->type.shape, &ws = w->type.shape;
  Layout l{last, xs[last ? 1 : 2].size, xs[last ? 2 : 3].size, xs[last ? 3 : 1].size};
  std::vector<int64_t> k{ws[last ? 1 : 2].size, ws[last ? 2 : 3].size};
  std::vector<int64_t> strides = conv.getInts("strides"), pads = conv.getInts("pads"),
                       dil = conv.getInts("dilations");
  if (strides != k || (!pads.empty() && pads != std::vector<int64_t>(4, 0)) ||
      (!dil.empty() && dil != std::vector<int64_t>{1, 1}) || l.h % k[0] || l.w % k[1] ||
      ws[last ? 3 : 1].size != l.c || k[0] * k[1] == 1 || k[0] * k[1] * l.c < kMinPatchElements)
    return std::nullopt;
  return l;
}

// Appends the patch GEMM's ops to f (they come before `conv`) and turns
// `conv` itself into the last of them, so its result, name and users stay.
void rewrite(Function &f, Op &conv, const Layout &l) {
  Value *x = conv.operand(0), *w = conv.operand(1);
  Value *bias = conv.operands.size() > 2 ? conv.operand(2) : nullptr;
  const Shape &ws = w->type.shape;
  int64_t p = ws[l.last ? 1 : 2].size, q = ws[l.last ? 2 : 3].size, o = ws[0].size;
  int64_t hp = l.h / p, wp = l.w / q, k = p * q * l.c;
  DType t = x->type.dtype;
  Dim n = x->type.shape[0];
  Location loc = conv.loc;
  auto fixed = [](std::vector<int64_t> v) {
    Shape s;
    for (int64_t d : v)
      s.push_back(Dim::fixed(d));
    return s;
  };
  auto add = [&](OpKind kind, std::vector<Value *> in, const std::string &suffix, Shape s) {
    s.insert(s.begin(), n);
    return f.addOp(kind, std::move(in), {f.uniqueName(x->name + suffix)}, {TensorType{t, s}}, loc);
  };
  // x as patches [N, H', p, W', q, C] (NHWC) or [N, C, H', p, W', q] (NCHW),
  // then its rows [N, H', W', p, q, C]: ONE Transpose either way. (The batch
  // may be symbolic: Reshape's 0 copies it.)
  std::vector<int64_t> split =
      l.last ? std::vector<int64_t>{hp, p, wp, q, l.c} : std::vector<int64_t>{l.c, hp, p, wp, q};
  std::vector<int64_t> splitDims{0};
  splitDims.insert(splitDims.end(), split.begin(), split.end());
  Op *patches =
      add(OpKind::Reshape, {x, addIntsConstant(f, x->name + "_patch_dims", splitDims, loc)},
          "_patches", fixed(split));
  Op *gather =
      add(OpKind::Transpose, {patches->result()}, "_patch_rows", fixed({hp, wp, p, q, l.c}));
  gather->setAttr("perm", Attribute(l.last ? std::vector<int64_t>{0, 1, 3, 2, 4, 5}
                                           : std::vector<int64_t>{0, 2, 4, 3, 5, 1}));
  Op *rows = add(OpKind::Reshape,
                 {gather->result(), addIntsConstant(f, x->name + "_row_dims", {0, hp, wp, k}, loc)},
                 "_patch_matrix", fixed({hp, wp, k}));
  // The weight as [K, O], K in the rows' (p, q, C) order.
  HostTensor wt = constantTensor(*w);
  if (!l.last)
    wt = permuteAxes(wt, {0, 2, 3, 1}); // OIHW -> OHWI
  HostTensor wk =
      permuteAxes(HostTensor::fromBytes(wt.dtype(), {o, k}, wt.bytes(), wt.byteSize()), {1, 0});
  Value *wm = f.addConstant(f.uniqueName(w->name + "_kxo"), wk.type(),
                            TensorData::copyOf(wk.bytes(), wk.byteSize()), w->loc);
  std::vector<Value *> gemm{rows->result(), wm};
  conv.attrs.clear();
  if (l.last && !bias) {
    conv.kind = OpKind::MatMul;
    conv.operands = gemm;
    return;
  }
  Value *y = add(OpKind::MatMul, gemm, "_patch_gemm", fixed({hp, wp, o}))->result();
  if (l.last) {
    conv.kind = OpKind::Add;
    conv.operands = {y, bias};
    return;
  }
  if (bias)
    y = add(OpKind::Add, {y, bias}, "_patch_biased", fixed({hp, wp, o}))->result();
  conv.kind = OpKind::Transpose; // back to NCHW
  conv.operands = {y};
  conv.setAttr("perm", Attribute(std::vector<int64_t>{0, 3, 1, 2}));
}

} // namespace

bool runPatchConvsPass(Module &m, const PassOptions &) {
  return rewriteOpsInPlace(m, [](Function &f, Op &op) {
    std::optional<Layout> l = op.is(OpKind::Conv) ? patchLayout(op) : std::nullopt;
    if (l)
      rewrite(f, op, *l);
    return l.has_value();
  });
}

} // namespace tc
