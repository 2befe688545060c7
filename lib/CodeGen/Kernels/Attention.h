// What the Attention family's two CUDA kernels share (Attention.cpp: the
// f32-FMA kernel and the CPU one; AttentionMma.cpp: the tensor-core kernel
// for f16/bf16 data).
#pragma once
#include "Families.h"
#include "tc/IR/AttentionLayout.h"
#include <optional>
#include <string>

namespace tc::kernels {

struct AttentionOperands {
  const Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr, *out = nullptr;
  int64_t d = 0, dv = 0;
  double scale = 0;
  bool causal = false;
  AttentionAxes axes[4];      // of q, k, v and out (AttentionGrad's: dq), by the op's layout
  const Value *lse = nullptr; // the log-sum-exp result, if the op has it
  // AttentionGrad's out and dout operands and dk, dv results (the kernels'
  // Y, G, DK, DVo) and their axes; null for Attention.
  const Value *y = nullptr, *g = nullptr, *dkOut = nullptr, *dvOut = nullptr;
  AttentionAxes gradAxes[4];
};

// The operands of the group's Attention or AttentionGrad `op` (the group's
// only op; every operand a kernel argument; float data, static head dims
// 1..maxHeadDim), or nullopt with the context's `why` set.
std::optional<AttentionOperands> attentionOperands(const KernelContext &c, const Op &op,
                                                   int64_t maxHeadDim);

// The typed pointers Q K V (M) O (at their part of a packed tensor), the
// dims (B, H, Sq, QB, KB, VB, HKV, SKV, group), the element strides of
// (batch, head, token) of each of q, k, v, out by its layout (QSB, QSH,
// QSS, ... OSS; features are contiguous; AttentionGrad's also of Y, G, DK,
// DV: YSB ... DVSS) and the mask's broadcast strides ms[4] over (b, h, i,
// j) and its batch MB.
void emitAttentionSetup(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                        DType t);
// The mask's value at (b, h, i, j): batch b % MB (its (b, h) base `mbase`
// comes with attentionBases).
std::string attentionMaskAt(const KernelContext &c, DType t);
// q (at query row i0), k and v of (b, h): their (batch, head) bases; query
// row r of q is at q + r * QSS, key j at k + j * KSS, v + j * VSS.
std::string attentionBases(const KernelContext &c, DType t);

// The tensor-core kernel covers f16/bf16 with head dims up to 256 (padded
// to multiples of 16 inside).
bool attentionMmaApplies(const AttentionOperands &o, DType t);
// Its body (after the signature and the setup), and its launch's `vec`:
// about one 64-query block per (batch, head, query tile).
void emitAttentionMma(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                      DType t);
unsigned attentionMmaVec(const AttentionOperands &o);
// Elements a thread moves at once along a row of `n` elements of `bytes`
// each: the most that fit 16 bytes and divide n (row offsets are multiples
// of the head dim: features are contiguous and last).
int64_t vectorWidth(int64_t n, int64_t bytes);

// The split-key kernel (AttentionDecode.cpp) for few queries over many
// keys (a decode step): `columns` launch of kAttentionDecodeGrid blocks of
// `block` threads. Its shape: Sq, the query heads per kv head, their
// product (an item's query rows), the elements a K and a V row load take
// and a thread's value columns, and the keys a tile. nullopt where it does
// not apply (TC_CUDA_ATTENTION_SPLITKV=0 never; =1 also over few static
// keys).
struct AttentionDecodeShape {
  int64_t sq = 0, group = 0, rows = 0, vw = 1, vwv = 1, cw = 1, tk = 0;
  unsigned block = 0;
};
inline constexpr unsigned kAttentionDecodeGrid = 264; // two blocks an SM of a 132-SM GPU
std::optional<AttentionDecodeShape> attentionDecodeShape(const AttentionOperands &o, DType t);
void emitAttentionDecode(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                         DType t, const AttentionDecodeShape &s);

// Its file-scope helpers (mma, ldmatrix, cp.async; guarded against a
// second kernel's copy), emitted before the kernel.
std::string attentionMmaHelpers(DType t);
// What the tensor-core kernels' emitters share (AttentionMma.cpp; the
// gradient's kernel is AttentionGradMma.cpp): a head dim padded to a
// multiple of 16; the statement (at indent `in`) that copies `chunk`
// 16-bit elements from global `src` to shared `at` (cp.async where 4+
// bytes) if `cond`, else stores zeros there; and, on m16 tiles c[0..count)
// (`c` and `a` per tile mt < MT where `mtiles`), the loop c[n], c[n + 1] +=
// a * B whose B fragments of two n8 tiles come by ONE `ldsm` at `at`
// (`at` may use the loop's n).
int64_t attentionMmaPadded(int64_t d);
std::string attentionTileCopy(int64_t chunk, const std::string &in, const std::string &cond,
                              const std::string &at, const std::string &src);
void emitMmaPairs(std::ostream &os, const std::string &mma, const std::string &count,
                  const std::string &ldsm, const std::string &at, const std::string &c,
                  const std::string &a, bool mtiles);

// A CUDA dq item's zeros in dmask at the keys [jend, SKV) past its causal
// diagonal, for its nq rows from i0 (AttentionGrad's both CUDA kernels).
std::string attentionGradDmaskTail(const KernelContext &c, DType t);

// The tensor-core AttentionGrad kernel (AttentionGradMma.cpp): f16/bf16
// with even head dims up to 128; its body after the setup, and its
// launch's `vec`. `maskGrad`: the op's dmask result (DS) is written.
bool attentionGradMmaApplies(const AttentionOperands &o, DType t);
void emitAttentionGradMma(std::ostream &os, const KernelContext &c, const AttentionOperands &o,
                          DType t, bool maskGrad);
unsigned attentionGradMmaVec(const AttentionOperands &o);

// AttentionGrad's kernel (AttentionGrad.cpp), both dialects.
std::optional<EmittedKernel> emitAttentionGrad(const KernelContext &c, const Op &op);

} // namespace tc::kernels
