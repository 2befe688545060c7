// fold-constants: ops whose operands are all constants (and Shape/Size of
// static dims) become constants, evaluated by the reference kernels, so the
// compiled code never recomputes what is known now. Results above the size
// limit stay ops: folding a broadcast of a scalar into a large tensor would
// trade a cheap kernel for weight bytes. An i64 scalar or vector whose
// tracked contents are all constants (a static dim gathered from the Shape
// of a value with a symbolic batch) folds too: it is no shape computation
// left for run time, which would cost the artifact its stored shape plan.
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeContents.h"
#include "tc/Transforms/ShapeInference.h"
#include <cstring>

namespace tc {

namespace {

// `op`'s result as a constant where the tracker knows every element (after
// visiting op); rank <= 1 only: the tracker keeps contents as a flat list.
std::optional<std::vector<HostTensor>> knownInts(const ShapeTracker &tracker, const Op &op) {
  if (op.results.size() != 1 || op.is(OpKind::Fused))
    return std::nullopt;
  const TensorType &t = op.result()->type;
  auto n = staticNumElements(t.shape);
  auto c = tracker.contents(op.result());
  if (t.dtype != DType::I64 || t.rank() > 1 || !n || !c || int64_t(c->size()) != *n)
    return std::nullopt;
  HostTensor out(DType::I64, staticDims(t.shape));
  for (size_t i = 0; i < c->size(); ++i) {
    const ShapeEntry &e = (*c)[i];
    if (!e || !e->isConstant())
      return std::nullopt;
    out.setInt(int64_t(i), e->constantValue());
  }
  std::vector<HostTensor> r;
  r.push_back(std::move(out));
  return r;
}

// A gather from a constant whose elements are all equal reads that value
// wherever its indices point: RoBERTa's token types (a zero buffer gathered
// at the run-time position ids) become a constant, and the table's gradient
// a column sum instead of a scatter-add that serializes on one row.
std::optional<std::vector<HostTensor>> splatGather(const Op &op, size_t maxBytes) {
  if (!op.is(OpKind::Gather) && !op.is(OpKind::GatherElements) && !op.is(OpKind::GatherND))
    return std::nullopt;
  const Value *data = op.operand(0);
  const TensorType &t = op.result()->type;
  auto n = staticNumElements(t.shape);
  size_t width = dtypeSize(t.dtype); // 0 for strings
  if (!data->isConstant() || !data->data || data->type.dtype != t.dtype || !n || *n == 0 ||
      width == 0 || size_t(*n) * width > maxBytes)
    return std::nullopt;
  const TensorData &d = *data->data;
  if (d.size < width || d.size % width != 0)
    return std::nullopt;
  for (size_t at = width; at < d.size; at += width)
    if (std::memcmp(d.ptr, d.ptr + at, width) != 0)
      return std::nullopt;
  HostTensor out(t.dtype, staticDims(t.shape));
  for (size_t at = 0; at < out.byteSize(); at += width)
    std::memcpy(out.bytes() + at, d.ptr, width);
  std::vector<HostTensor> r;
  r.push_back(std::move(out));
  return r;
}

bool foldOnce(Module &m, size_t maxBytes) {
  bool changed = false;
  for (auto &f : m.functions) {
    std::vector<Op *> candidates;
    for (auto &op : f->ops)
      candidates.push_back(op.get());
    // In order, so a folded result makes its users foldable in the same run.
    bool here = false;
    ShapeTracker tracker;
    for (Op *op : candidates) {
      auto outs = evaluateConstantOp(*op, maxBytes);
      if (!outs)
        outs = splatGather(*op, maxBytes);
      if (!outs) {
        tracker.visit(*op);
        outs = knownInts(tracker, *op);
      }
      if (outs) {
        replaceOpByConstants(*f, op, std::move(*outs));
        here = true;
      }
    }
    if (here)
      f->removeUnusedConstants();
    changed |= here;
  }
  return changed;
}

} // namespace

bool runFoldConstantsPass(Module &m, const PassOptions &opts) {
  size_t maxBytes = size_t(std::max<int64_t>(opts.getInt("max-bytes"), 0));
  bool changed = false;
  // Folding makes shapes known (a Reshape's shape becomes a constant), and
  // known shapes make more folding possible (Shape of a now-static value):
  // alternate with shape inference until neither learns anything. Each
  // round can settle one more link of a chain (a transformer layer's
  // Shape -> Concat -> Reshape feeds the next layer's), so no round limit:
  // every round that goes on removed an op.
  for (;;) {
    bool folded = foldOnce(m, maxBytes);
    changed |= folded;
    if (!folded || !inferShapes(m))
      break;
  }
  return changed;
}

} // namespace tc
