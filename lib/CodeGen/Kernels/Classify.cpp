// THE decision which kind of kernel a group becomes, made once before any
// code is emitted (classifyKernel in tc/CodeGen/KernelEmitter.h). It looks
// at the group's structure and which dialect each family serves; the
// family's emitter then checks what it needs of shapes and attributes.
#include "Families.h"
#include "tc/IR/ElementMove.h"
#include "tc/Transforms/KernelParams.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>

namespace tc::kernels {

namespace {

// Softmax / LogSoftmax / LayerNormalization(Grad) over the last axis; over
// others, and LayerNormalization with its Mean / InvStdDev results (row
// statistics), they are the Reduction family's (LayerNormalizationGrad has
// no other kernel: autodiff makes it over the last axis only; its second
// result, dY * xhat, is the row kernel's too).
bool isRowReduction(const Op &op) {
  if (!op.is(OpKind::Softmax) && !op.is(OpKind::LogSoftmax) && !op.is(OpKind::LayerNormalization) &&
      !op.is(OpKind::LayerNormalizationGrad))
    return false;
  int64_t axis = op.getInt("axis"), r = int64_t(op.operand(0)->type.rank());
  return (op.results.size() == 1 || op.is(OpKind::LayerNormalizationGrad)) &&
         (axis == -1 || axis == r - 1);
}

} // namespace

std::optional<KernelClass> classify(const KernelContext &c) {
  const Function &f = c.f;
  if (f.results.empty() || f.ops.empty())
    return c.reject("an empty group");
  // CUDA passes bufs and dims by value: kernel parameters hold 4 KB (the
  // fuse pass keeps its groups below; KernelParams.h).
  if (c.cuda() &&
      f.args.size() + f.results.size() + std::max<size_t>(c.numDims, 1) > kKernelParamSlots)
    return c.reject("more arguments and dims than a CUDA kernel's 4 KB of parameters hold");
  // Data movement: any element type (bytes are moved), Split's results
  // differ; moves the fuse pass inlined into pointwise ops are read by a
  // Pointwise kernel instead.
  const Op &first = *f.ops.front();
  // GatherElements reading its indices through their Expand (the pass
  // expand-into-gathers): the gather decides.
  if (f.ops.size() == 2 && first.is(OpKind::Expand) && f.ops[1]->is(OpKind::GatherElements) &&
      f.ops[1]->operand(1) == first.result())
    return KernelClass{KernelKind::DataMovement, f.ops[1].get()};
  // A result sized by the data: count, then scatter (Compaction.cpp).
  if (isCompaction(first.kind))
    return KernelClass{KernelKind::Compaction, &first};
  if (!inlinesMoves(f)) {
    if (first.is(OpKind::Transpose))
      return KernelClass{KernelKind::Transpose, &first};
    if (isIndexMove(first.kind)) // both dialects (IndexMove.cpp)
      return KernelClass{KernelKind::DataMovement, &first};
    // Index moves too: RuntimeAxesReduce.cpp, UnaryEinsum.cpp.
    if (f.ops.size() == 1 && (isRuntimeAxesReduce(first) || isUnaryEinsum(first)))
      return KernelClass{KernelKind::DataMovement, &first};
    if (isElementMove(first.kind)) {
      if (!c.cuda() && isCpuCopyMove(first.kind))
        return c.reject(std::string(first.name()) + " is a run-time copy on CPU");
      return KernelClass{KernelKind::DataMovement, &first};
    }
  }
  // The attention family writes its results (an Attention's log-sum-exp,
  // AttentionGrad's dq, dk, dv) each by its own shape.
  if (first.is(OpKind::Attention) || first.is(OpKind::AttentionGrad))
    return KernelClass{KernelKind::Attention, &first};
  // One domain; a LayerNormalization's Mean / InvStdDev beside its Y, and
  // values of a reduction's result shape beside ones of its input's (the
  // domain: codegen puts such a result first), are one value per row (the
  // Reduction family writes them).
  auto perRow = [&](const Value *r) {
    if (isRowStatistic(r))
      return r->def->result()->type.shape == c.domain;
    return std::any_of(f.ops.begin(), f.ops.end(), [&](const auto &op) {
      return isReduceAnchor(*op) && op->operand(0)->type.shape == c.domain &&
             op->result()->type.shape == r->type.shape;
    });
  };
  for (const Value *r : f.results)
    if (r->type.shape != c.domain && !perRow(r))
      return c.reject("results of different shapes");
  for (const Value *a : f.args)
    if (!c.st(a->type.dtype))
      return c.reject("argument %" + a->name + " of type " + a->type.str());
  for (const auto &op : f.ops)
    if (op->is(OpKind::Einsum))
      return c.reject("Einsum '" + op->getString("equation") + "' that the lower-einsum pass " +
                      (einsumObstacle(*op).empty() ? "did not run on (tc-opt -O0)"
                                                   : "leaves alone: " + einsumObstacle(*op)));
  if (isWindowOp(first.kind))
    return KernelClass{KernelKind::Pool, &first};
  // Grouped convs have a CUDA kernel; whether it or cuDNN runs one is the
  // backend's rule (CudaCodegen.cpp: convTakesKernel).
  if (c.cuda() && first.is(OpKind::Conv) && first.getInt("group") > 1)
    return KernelClass{KernelKind::DepthwiseConv, &first};
  if (c.cuda())
    for (const auto &op : f.ops)
      if (op->info().category == FusionCategory::Library)
        return c.reject(std::string(op->name()) + " is a library call on CUDA (cuBLASLt/cuDNN), "
                                                  "not a generated kernel");
  // At most one anchor: a contraction (the group's first op), a row
  // reduction or (CUDA) a reduction; pointwise groups have none.
  KernelClass cls{KernelKind::Pointwise, nullptr};
  if (first.is(OpKind::MatMul) || first.is(OpKind::Gemm) || first.is(OpKind::Conv))
    cls = {KernelKind::Contraction, &first};
  for (const auto &op : f.ops) {
    bool rows = isRowReduction(*op), reduce = !rows && isReduceAnchor(*op);
    if (rows || reduce) {
      if (cls.anchor)
        return c.reject("two anchors");
      cls = {rows ? KernelKind::RowReduction : KernelKind::Reduction, op.get()};
    } else if (op->is(OpKind::Hardmax)) {
      return c.reject("Hardmax that the lower-hardmax pass " +
                      (hardmaxObstacle(*op).empty() ? std::string("did not run on (tc-opt -O0)")
                                                    : "leaves alone: " + hardmaxObstacle(*op)));
    } else if (op->info().category == FusionCategory::Reduction ||
               (op->info().category == FusionCategory::Library && op.get() != cls.anchor)) {
      return c.reject("no code for " + std::string(op->name()));
    }
  }
  // Integer tensors (position ids, masks, casts through i32) only in
  // pointwise kernels: the other families' code is float code, except the
  // indices an ArgMax / ArgMin / TopK anchor writes.
  if (cls.kind != KernelKind::Pointwise) {
    auto integer = [](const Value *v) { return isInteger(v->type.dtype); };
    bool indices = cls.anchor && (cls.anchor->is(OpKind::ArgMax) ||
                                  cls.anchor->is(OpKind::ArgMin) || cls.anchor->is(OpKind::TopK));
    // A TopK's k computed at run time only sizes its result.
    auto k = [&](const Op &op, const Value *v) {
      return &op == cls.anchor && op.is(OpKind::TopK) && v == op.operand(1);
    };
    for (const auto &op : f.ops)
      if ((!(indices && op.get() == cls.anchor) &&
           std::any_of(op->results.begin(), op->results.end(), integer)) ||
          std::any_of(op->operands.begin(), op->operands.end(),
                      [&](const Value *v) { return v && integer(v) && !k(*op, v); }))
        return c.reject(std::string(op->name()) + " on integer data outside a pointwise kernel");
  }
  return cls;
}

} // namespace tc::kernels
