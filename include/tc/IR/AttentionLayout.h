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
#pragma once
#include "tc/IR/IR.h"
#include <cstdint>
#include <vector>

namespace tc {

constexpr int64_t kHeadsMajorPacked = 1024;

// Axes of one Attention tensor. The feature axis is always the last one.
struct AttentionAxes {
  size_t batch = 0, heads = 1, tokens = 2, features = 3;
  int64_t part = -1;   // packed: the index along axis partAxis (N), else -1
  size_t partAxis = 2; // packed: 2 for [B, S, N, H, D], 3 for [B, S, H, N, D]
  size_t rank() const { return part < 0 ? 4 : 5; }
};

// The layout code of tensor `i` (0 q, 1 k, 2 v, 3 the result) of Attention
// op `op`; throws tc::Error on a code the tensor cannot take.
int64_t attentionLayoutCode(const Op &op, size_t i);
AttentionAxes attentionAxes(int64_t code);
inline AttentionAxes attentionAxes(const Op &op, size_t i) {
  return attentionAxes(attentionLayoutCode(op, i));
}

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
