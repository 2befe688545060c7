// What one step of a specialized entry function is and costs, for tc-prof's
// tables: the ONNX nodes it came from, its signature, the bytes it must move
// and the FLOPs it performs. Sizes come from the call site; a Fused callee's
// symbolic dims are bound from its operands.
//
// FLOP rules (each op's FlopRule column in Ops.def; multiply-add = 2):
// MatMul/Gemm 2*M*N*K per batch; Conv 2 * output elements * (Cin/group *
// kernel elements); ConvTranspose 2 * input elements * (Cout/group * kernel
// elements); ConvWeightGrad 2 * dY elements * (Cin/group * kernel elements);
// Attention 2 * B*H*Sq*Skv * (D + Dv) (q k^T and p v; causal
// masking not discounted); AttentionGrad 2 * B*H*Sq*Skv * (3 D + 2 Dv) (q k^T,
// dout v^T, dv, dq, dk; its kernels' recomputes not counted); other ops 1 per element of their
// result (pointwise, pooling windows count their size), reductions 1 per element read; moves,
// views, shape ops and Einsum 0. Bytes: every distinct operand read once plus every result written
// once (a lower bound on traffic: what a perfect cache would move).
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/Trace.h"

namespace tc {

// `kind`/`detail` are left for the runtime to fill in.
StepInfo describeStep(const Module &m, const Op &op);

} // namespace tc
