// Multi-tensor ("horizontal") launches: a run of independent steps whose
// pointwise kernels are equal up to their sizes (a train step's per-parameter
// optimizer updates) runs as ONE launch over all of their tensors.
//
// Codegen (lib/CodeGen/MultiTensorRuns.cpp) decides the runs: it moves each
// run's steps next to each other in `main` and marks them with the Fused
// op's attribute `multi_tensor` (the run's number, > 0; consecutive steps
// with the same number are one run). The memory plan treats a run as one
// step (MemoryPlan.h), so no member's result lands where another member
// still reads. Every member's kernel is the one over the group with its
// sizes erased (below), the same for all of them: one kernel, their
// pointers and sizes in a table.
//
// Sizes erased: every value of the group with the shape of result 0 (the
// domain) is flat, `[n]`, every other one (a single element: a step size,
// a bias correction) a scalar `[]`. The kernel's dims[] is then one entry,
// n, per flat value, none per scalar (multiTensorDims).
//
// CUDA (launch `multi-tensor`, tc/CodeGen/KernelEmitter.h): the kernel's
// parameter is { const entry *table; int64_t count; }, each entry the
// member's ordinary parameter (bufs, then dims as erased) followed by two
// int64 words: its first block and its block count; blockIdx.x finds its
// entry (the last whose first block is at most it) and the block runs the
// member's grid-stride loop as block (blockIdx.x - first) of `blocks`. The
// runtime builds the table once per shape plan, in device memory.
// CPU: the member's kernel is the erased one; the runtime runs the run as
// one parallel loop over the members' elements concatenated, each piece a
// call over a part of one member (its flat pointers advanced, n the part's
// length).
//
// Reductions (CUDA only): steps whose groups are full `split` reductions of
// one statistic to a single element (the AMP overflow check's sum of each
// large gradient, tc/Transforms/Training: one launch each, ~9 us apiece)
// form runs the same way. Their flat values are those of the reduced
// input's shape (multiTensorShape), the results single elements. The
// kernel is the Reduction family's `split` kernel over the member's share
// of the grid (Kernels/SplitRows.cpp): a member of n elements gets
// multiTensorSplitBlocks(n) blocks, each summing a chunk in a fixed order
// and its last block combining the partials in order: a member's sum
// depends on its n alone (not on the other members, nor on how many blocks
// are resident), though not the unfused kernel's bits (that one splits
// finer, to fill the GPU alone). Its
// entry's parameter has one more buffer, its own scratch
// (multiTensorScratchBytes: its blocks' partials, its statistic, its
// counter; the runtime's, zero before the first launch, left zero by
// each), and the `pass` field (0). A member's n must be a multiple of
// kMultiTensorReduceMultiple: the erased kernel's vectors are then the
// member's own kernel's (a vector width divides n), and so are its chunks.
#pragma once
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/IR/IR.h"
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tc {

// The most tensors one multi-tensor launch takes (its table's entries).
inline constexpr size_t kMultiTensorMaxTensors = 256;

// The run `call` (a Fused op of main) belongs to: 0 for none.
inline int64_t multiTensorRun(const Op &call) {
  const Attribute *a = call.is(OpKind::Fused) ? call.findAttr("multi_tensor") : nullptr;
  return a ? a->i() : 0;
}

// Whether value type `t` of a group whose result 0 has shape `domain` is
// flat in the erased kernel (else a scalar).
inline bool multiTensorFlat(const TensorType &t, const Shape &domain) { return t.shape == domain; }

// The shape of a member's flat values, of its `values` (arguments, then
// results): a pointwise run's domain, result 0's shape; a reduction run's
// reduced input, the largest of them.
inline const Shape &multiTensorShape(const std::vector<const Value *> &values, size_t args,
                                     bool reduction) {
  if (!reduction)
    return values.at(args)->type.shape;
  const Value *widest = values.at(0);
  for (const Value *v : values)
    if (staticNumElements(v->type.shape).value_or(0) >
        staticNumElements(widest->type.shape).value_or(0))
      widest = v;
  return widest->type.shape;
}

// A reduction member's element count is a multiple of this: every `split`
// kernel's vector width (16 bytes of f16) divides it.
inline constexpr int64_t kMultiTensorReduceMultiple = 8;

// A reduction member's blocks: a lone `split` launch's (splitBlocks) over
// n / kMultiTensorReduceWork elements, each block summing that many times
// a lone launch's chunk. The run fills the GPU by its members together; at
// a lone launch's chunks the blocks' table searches and partials took most
// of the time (roberta_base's overflow check: 21873 blocks over 124M f32
// gradients, 1.8 TB/s, 37% of the H200's bandwidth).
inline constexpr int64_t kMultiTensorReduceWork = 8;
inline int64_t multiTensorSplitBlocks(int64_t n, unsigned block) {
  return splitBlocks((n + kMultiTensorReduceWork - 1) / kMultiTensorReduceWork, block);
}

// A reduction member's scratch: its blocks' partials and its statistic, 8
// bytes each, then its counter (the kernel's layout, SplitRows.cpp).
inline uint64_t multiTensorScratchBytes(uint64_t blocks) { return (blocks + 1) * 8 + 8; }

// The erased kernel's dims[] for `values` (a member's arguments, then its
// results; static): n for each flat value, nothing for a scalar.
inline std::vector<int64_t> multiTensorDims(const std::vector<const Value *> &values,
                                            const Shape &domain, int64_t n) {
  std::vector<int64_t> dims;
  for (const Value *v : values)
    if (multiTensorFlat(v->type, domain))
      dims.push_back(n);
  return dims;
}

} // namespace tc
