// THE decision which kind of kernel a group becomes, made once before any
// code is emitted (classifyKernel in tc/CodeGen/KernelEmitter.h). It looks
// at the group's structure and which dialect each family serves; the
// family's emitter then checks what it needs of shapes and attributes.
#include "Families.h"
#include "tc/IR/ElementMove.h"
#include <algorithm>

namespace tc::kernels {

namespace {

bool isRowReduction(const Op &op) {
  return op.is(OpKind::Softmax) || op.is(OpKind::LogSoftmax) || op.is(OpKind::LayerNormalization);
}

} // namespace

std::optional<KernelClass> classify(const KernelContext &c) {
  const Function &f = c.f;
  if (f.results.empty() || f.ops.empty())
    return c.reject("an empty group");
  // CUDA passes bufs and dims by value: kernel parameters hold 4 KB.
  if (c.cuda() && 8 * (f.args.size() + f.results.size() + std::max<size_t>(c.numDims, 1)) > 4096)
    return c.reject("more arguments and dims than a CUDA kernel's 4 KB of parameters hold");
  // Data movement: any element type (bytes are moved), Split's results differ.
  const Op &first = *f.ops.front();
  if (first.is(OpKind::Transpose))
    return KernelClass{KernelKind::Transpose, &first};
  if (isElementMove(first.kind)) {
    if (!c.cuda())
      return c.reject(std::string(first.name()) + " is a run-time copy on CPU");
    return KernelClass{KernelKind::DataMovement, &first};
  }
  for (const Value *r : f.results)
    if (r->type.shape != c.domain)
      return c.reject("results of different shapes");
  for (const Value *a : f.args)
    if (!c.st(a->type.dtype))
      return c.reject("argument %" + a->name + " of type " + a->type.str());
  if (c.cuda())
    for (const auto &op : f.ops)
      if (op->info().category == FusionCategory::Library)
        return c.reject(std::string(op->name()) + " is a library call on CUDA (cuBLASLt/cuDNN), "
                                                  "not a generated kernel");
  if (first.is(OpKind::MaxPool) || first.is(OpKind::AveragePool))
    return KernelClass{KernelKind::Pool, &first};
  if (first.is(OpKind::Attention))
    return KernelClass{KernelKind::Attention, &first};
  // At most one anchor: a contraction (the group's first op), a row
  // reduction or (CUDA) a reduction; pointwise groups have none.
  KernelClass cls{KernelKind::Pointwise, nullptr};
  if (first.is(OpKind::MatMul) || first.is(OpKind::Gemm) || first.is(OpKind::Conv))
    cls = {KernelKind::Contraction, &first};
  for (const auto &op : f.ops) {
    bool rows = isRowReduction(*op), reduce = !rows && c.cuda() && reduction(*op);
    if (rows || reduce) {
      if (cls.anchor)
        return c.reject("two anchors");
      cls = {rows ? KernelKind::RowReduction : KernelKind::Reduction, op.get()};
    } else if (op->info().category == FusionCategory::Reduction ||
               (op->info().category == FusionCategory::Library && op.get() != cls.anchor)) {
      return c.reject("no code for " + std::string(op->name()));
    }
  }
  return cls;
}

} // namespace tc::kernels
