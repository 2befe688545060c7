// Which shape ops copy elements to computed positions, and which are
// sliding windows, for the fuse pass (which outlines them) and the kernel
// emitter (which generates them).
#pragma once
#include "tc/IR/OpTable.h"

namespace tc {

// Gather, Concat, Slice, Split, Expand, Pad, Tile: the DataMovement family
// generates kernels for them (Kernels/DataMovement.cpp); on the CPU the
// runtime copies those of isCpuCopyMove instead.
bool isElementMove(OpKind k);
// Gather, Concat, Split, Slice: runs of bytes the CPU runtime's copy step
// (lib/Runtime/CPU/MoveStep.cpp) moves with memcpy. The other element
// moves (Expand, Pad, Tile) are kernels on both targets: the fuse pass
// outlines a lone one for every target.
bool isCpuCopyMove(OpKind k);

// Trilu, DepthToSpace, SpaceToDepth, GatherElements, GatherND,
// ScatterElements, ScatterND, CumSum, Resize, ConstantOfShape, EyeLike,
// Range, OneHot, ReverseSequence, LRN, GridSample, RoiAlign, MaxUnpool, Det,
// Dropout, DFT, STFT, the Hann / Hamming / Blackman windows, MelWeightMatrix:
// each result element computed from input elements found from its coordinate
// (a few, or a line: Det's matrix, a DFT's axis). Both targets generate them
// (the fuse pass outlines a lone one reading or making float or bool data or
// data of rank 2 or more, or any Range or ConstantOfShape that is no shape
// computation; Kernels/IndexMove.cpp).
bool isIndexMove(OpKind k);

// ScatterND, ScatterElements: the result starts as a copy of the data
// (operand 0), a copy the kernel skips where the two are one buffer
// (IndexMoveParts.cpp): the memory plan may write the result over the data
// (MemoryPlan.cpp; an outlined one's Fused attribute `overwrites`, Fusion.cpp).
inline bool startsFromData(OpKind k) {
  return k == OpKind::ScatterND || k == OpKind::ScatterElements;
}

// MaxPool, MaxPoolGrad, AveragePool, LpPool, ConvTranspose, ConvWeightGrad: sliding-window ops the
// fuse pass keeps alone (no epilogue) and outlines, the Pool family generates.
bool isWindowOp(OpKind k);

// Ops whose result keeps the input items that pass a test, sized by the
// data (NonZero, Compress, NonMaxSuppression, Unique): the compaction family's,
// both targets (lib/CodeGen/Kernels/Compaction.cpp), outlined alone like
// index moves.
inline bool isCompaction(OpKind k) {
  return k == OpKind::NonZero || k == OpKind::Compress || k == OpKind::NonMaxSuppression ||
         k == OpKind::Unique;
}

} // namespace tc
