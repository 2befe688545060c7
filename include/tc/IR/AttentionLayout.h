// Where the Attention op (Ops.def) finds (batch, head, token, feature) in
// each of q, k, v and its result: its `layout` attribute, one code per
// tensor, decoded here once for the shape rule, the reference kernel and
// the generated kernels.
//
//   0      [B, H, S, D]     (the default, and every code when `layout` is [])
//   1      [B, S, H, D]     (the projections' own order: no head split/merge)
//   2 + p  part p of a packed [B, S, N, H, D] (q, k, v only: the qkv
//          projection read in place; its token stride is N * H * D)
//   kHeadsMajorPacked + p
//          part p of a packed [B, S, H, N, D] (q, k, v only: each head's
//          parts side by side, as a qkv projection whose output channels
//          are head-major -- timm's CoAtNet/MaxViT "rw" attention over a
//          1x1 conv, read in place from the channels-last conv output)
//   kSeqFirst
//          [S, B, H, D]     (sequence-first: torchvision's and fairseq's
//          MultiheadAttention, whose projections are [S, B, E])
//   kSeqFirstPacked + p
//          part p of a packed [S, B, N, H, D] (q, k, v only: their packed
//          in_proj read in place)
// Every code is a result's (and AttentionGrad's out's and dout's) but the
// packed ones; AttentionGrad's dq, dk, dv may be parts 0, 1, 2 of one
// packing (its one result then that packed tensor).
#pragma once
#include "tc/IR/IR.h"
#include <cstdint>
#include <vector>

namespace tc {

constexpr int64_t kHeadsMajorPacked = 1024, kSeqFirst = 2048, kSeqFirstPacked = 3072;
// Whether `code` is one of a packed tensor's part (q, k, v only).
inline bool isPackedAttentionCode(int64_t code) {
  return (code >= 2 && code < kSeqFirst) || code >= kSeqFirstPacked;
}

// Axes of one Attention tensor. The feature axis is always the last one.
struct AttentionAxes {
  size_t batch = 0, heads = 1, tokens = 2, features = 3;
  int64_t part = -1;   // packed: the index along axis partAxis (N), else -1
  size_t partAxis = 2; // packed: 2 for [B, S, N, H, D] and [S, B, N, H, D], 3 for [B, S, H, N, D]
  size_t rank() const { return part < 0 ? 4 : 5; }
};

// The tensors a `layout` attribute has a code for: Attention's first four
// (its result is kOut), AttentionGrad's all eight. Codes of kOut and past
// are 0 or 1.
enum AttentionTensor : size_t {
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnOut,
  kAttnDout,
  kAttnDq,
  kAttnDk,
  kAttnDv
};
// How many codes `op` (Attention or AttentionGrad) has; AttentionGrad's
// operand index of tensor `i` (q, k, v, out, dout) and result of dq, dk, dv.
size_t attentionTensorCount(const Op &op);
size_t attentionGradOperand(size_t i);

// The layout code of tensor `i` (AttentionTensor) of Attention or
// AttentionGrad op `op`; throws tc::Error on a code the tensor cannot take.
int64_t attentionLayoutCode(const Op &op, size_t i);
AttentionAxes attentionAxes(int64_t code);
inline AttentionAxes attentionAxes(const Op &op, size_t i) {
  return attentionAxes(attentionLayoutCode(op, i));
}

// The dims of a tensor of logical dims `bhsd` ([B, H, S, D]) in code
// `code`: a result's type (a packed code's: the whole packed tensor, of
// `parts` parts).
Shape attentionPhysicalShape(const Shape &bhsd, int64_t code, int64_t parts = 3);

// Its inverse: the logical [B, H, S, D] of a tensor of dims `d` (a Shape or
// static dims) in axes `a`, whose rank `d` must have.
template <class T>
std::vector<T> attentionLogicalDims(const AttentionAxes &a, const std::vector<T> &d) {
  return {d[a.batch], d[a.heads], d[a.tokens], d[a.features]};
}

// Whether AttentionGrad `op`'s dq, dk, dv codes are parts 0, 1, 2 of one
// packing (its one result the packed tensor).
bool attentionGradPacked(const Op &op);

// AttentionGrad `op`'s result index of dmask (its `mask_grad` result, after
// dq, dk, dv or the packed one), or -1 where it has none.
int attentionGradMaskResult(const Op &op);

// Element strides of a tensor of dims `dims` (row-major) along the axes,
// and the offset of its part: what the reference kernel indexes with.
struct AttentionStrides {
  int64_t batch, heads, tokens, offset;
};
AttentionStrides attentionStrides(const AttentionAxes &a, const std::vector<int64_t> &dims);

// The scores' factor of an Attention (or AttentionGrad) op whose q and k
// have `headDim` features: its `scale`, or 1 / sqrt(headDim) where it is 0.
double attentionScale(const Op &op, int64_t headDim);

// The CUDA attention-backward kernels' largest head dim (Kernels/AttentionGrad.cpp);
// attention-grad-gemms takes f16/bf16 AttentionGrads beyond it (Gemma's 256).
constexpr int64_t kCudaAttentionGradMaxHeadDim = 128;

} // namespace tc
