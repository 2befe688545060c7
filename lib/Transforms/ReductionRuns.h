// Reductions whose rows a thread per row would serve badly (ReductionRuns.cpp):
// the fuse pass splits them first and keeps their epilogues over the input
// out of their kernels.
#pragma once
#include "tc/IR/IR.h"

namespace tc {

// Whether codegen's kernel for Reduce* `op` with results over its input X
// is fine: its reduced axes are X's trailing ones (contiguous rows: a block
// per row on CUDA), or its rows, a loop per row (a thread per row on CUDA),
// are short (a channels-first LayerNorm: N*H*W rows of C) or many. Not for
// few long rows: batch norm's statistics over N, H, W. Symbolic dims count
// as 1 (a dynamic batch is no guarantee of rows). Other ops: true.
bool threadPerRowFits(const Op &op);

// Splits f's ReduceSum/Mean/Max/Min over several runs of axes, the last
// trailing, whose rows a thread per row would not fit, into the trailing
// run's reduction and the rest's. Returns whether any was.
bool splitReductionRuns(Function &f);

} // namespace tc
