#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <algorithm>

namespace tc {

namespace {

HostTensor i64Tensor(const std::vector<int64_t> &v, bool scalar) {
  HostTensor t(DType::I64,
               scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(int64_t(i), v[i]);
  return t;
}

// Shape and Size need only the operand's type.
std::optional<HostTensor> evaluateShapeOp(const Op &op) {
  const Shape &s = op.operand(0)->type.shape;
  if (op.is(OpKind::Size)) {
    auto n = staticNumElements(s);
    return n ? std::optional(i64Tensor({*n}, true)) : std::nullopt;
  }
  int64_t r = int64_t(s.size());
  auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  std::vector<int64_t> dims;
  for (int64_t d = clampAxis(op.getInt("start")), end = clampAxis(op.getInt("end")); d < end; ++d) {
    if (!s[size_t(d)].isStatic())
      return std::nullopt;
    dims.push_back(s[size_t(d)].size);
  }
  return i64Tensor(dims, false);
}

// Data movement (the op table's Shape category: Transpose, Reshape, Slice,
// Gather, Concat, ...) and Cast whose results hold no more bytes than their
// operands: folded whatever their size. Such a result costs no more weight
// bytes than it reads, while left as an op it reruns every inference (a tied
// LM head's Transpose + Cast of the embedding: 150-300 us per run on opt,
// falcon, gpt_neo). Expand, Tile, Pad, ConstantOfShape grow: the limit holds.
bool movesNoMoreThanItReads(const Op &op, size_t resultBytes) {
  if (opInfo(op.kind).category != FusionCategory::Shape && !op.is(OpKind::Cast))
    return false;
  size_t read = 0;
  for (const Value *v : op.operands)
    read += v ? v->data->size : 0;
  return resultBytes <= read;
}

} // namespace

std::optional<std::vector<HostTensor>> evaluateConstantOp(const Op &op, size_t maxResultBytes) {
  if ((op.is(OpKind::Shape) || op.is(OpKind::Size)) && op.operand(0)) {
    auto t = evaluateShapeOp(op);
    if (!t)
      return std::nullopt;
    std::vector<HostTensor> r;
    r.push_back(std::move(*t));
    return r;
  }
  RefKernel kernel = lookupRefKernel(op.kind);
  // Data-dependent ops learn their output dims only by running; their
  // results are not sized by the types here.
  if (!kernel || op.operands.empty() || refKernelSetsOutputDims(op.kind))
    return std::nullopt;
  // A rank's shard of a constant differs between ranks: never one constant.
  if (op.is(OpKind::RankSlice))
    return std::nullopt;
  for (const Value *v : op.operands)
    if (v && !v->isConstant())
      return std::nullopt;
  size_t bytes = 0;
  for (const Value *r : op.results) {
    std::optional<size_t> b = byteSize(r->type);
    if (!b)
      return std::nullopt;
    bytes += *b;
  }
  if (bytes > maxResultBytes && !movesNoMoreThanItReads(op, bytes))
    return std::nullopt;
  try {
    std::vector<HostTensor> storage;
    storage.reserve(op.operands.size());
    std::vector<const HostTensor *> ins;
    for (const Value *v : op.operands) {
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      storage.push_back(constantTensor(*v));
      ins.push_back(&storage.back());
    }
    std::vector<HostTensor> outs;
    for (const Value *r : op.results)
      outs.emplace_back(r->type.dtype, staticDims(r->type.shape));
    kernel(op, ins, outs);
    return outs;
  } catch (const Error &) {
    return std::nullopt;
  }
}

void replaceOpByConstants(Function &f, Op *op, std::vector<HostTensor> values) {
  auto pos = std::find_if(f.ops.rbegin(), f.ops.rend(), [&](auto &p) { return p.get() == op; });
  if (pos == f.ops.rend() || values.size() != op->results.size())
    throw Error("replaceOpByConstants: op is not in @" + f.name);
  for (size_t i = 0; i < values.size(); ++i) {
    Value *v = op->results[i];
    v->def = nullptr;
    v->resultIndex = 0;
    v->data = TensorData::copyOf(values[i].bytes(), values[i].byteSize());
    v->loc = op->loc;
    f.constants.push_back(v);
  }
  f.ops.erase(std::next(pos).base());
}

} // namespace tc
