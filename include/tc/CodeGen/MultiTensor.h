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
#pragma once
#include "tc/IR/IR.h"
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
