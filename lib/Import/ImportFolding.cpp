// Import-time folding of shape computations: Shape (and Size) of static dims
// becomes a constant, and so does any op whose operands are all constants
// and whose results are small, evaluated by the reference kernels. A
// Shape -> Gather -> Concat -> Reshape chain over static dims thus leaves a
// Reshape with a constant shape; over symbolic dims the ops stay and run.
#include "OnnxOps.h"
#include "tc/Runtime/RefExecutor.h"
#include <algorithm>
#include <unordered_set>

namespace tc::onnximport {

namespace {

// Results larger than this stay ops: folding must not bloat the model.
constexpr size_t kMaxFoldedBytes = 64 * 1024;

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

std::optional<std::vector<HostTensor>> evaluate(const Op &op) {
  if ((op.is(OpKind::Shape) || op.is(OpKind::Size)) && op.operand(0)) {
    auto t = evaluateShapeOp(op);
    if (!t)
      return std::nullopt;
    std::vector<HostTensor> r;
    r.push_back(std::move(*t));
    return r;
  }
  RefKernel kernel = lookupRefKernel(op.kind);
  if (!kernel || op.operands.empty())
    return std::nullopt;
  size_t bytes = 0;
  for (const Value *r : op.results) {
    std::optional<size_t> b = byteSize(r->type);
    if (!b || (bytes += *b) > kMaxFoldedBytes)
      return std::nullopt;
  }
  for (const Value *v : op.operands)
    if (v && !v->isConstant())
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
      storage.push_back(HostTensor::fromBytes(v->type.dtype, staticDims(v->type.shape),
                                              v->data->ptr, v->data->size));
      ins.push_back(&storage.back());
    }
    std::vector<HostTensor> outs;
    for (const Value *r : op.results)
      outs.emplace_back(r->type.dtype, staticDims(r->type.shape));
    kernel(op, ins, outs);
    return outs;
  } catch (const Error &) {
    // An op that fails on its constants fails the same way at run time; it
    // is not the importer's to report.
    return std::nullopt;
  }
}

} // namespace

bool foldAtImport(Function &f, Op *op, std::vector<Value *> &folded) {
  std::optional<std::vector<HostTensor>> outs = evaluate(*op);
  if (!outs || outs->size() != op->results.size())
    return false;
  // The op is one a node just emitted: search from the back.
  auto pos = std::find_if(f.ops.rbegin(), f.ops.rend(), [&](auto &p) { return p.get() == op; });
  if (pos == f.ops.rend())
    return false;
  // The op's result values become the constants: every use and the ONNX
  // name binding stay as they are.
  for (size_t i = 0; i < outs->size(); ++i) {
    Value *v = op->results[i];
    const HostTensor &t = (*outs)[i];
    v->def = nullptr;
    v->resultIndex = 0;
    v->data = TensorData::copyOf(t.bytes(), t.byteSize());
    v->loc = op->loc;
    f.constants.push_back(v);
    folded.push_back(v);
  }
  f.ops.erase(std::next(pos).base());
  return true;
}

void dropUnusedFolded(Function &f, const std::vector<Value *> &folded) {
  std::unordered_set<const Value *> dead(folded.begin(), folded.end());
  for (const Value *r : f.results)
    dead.erase(r);
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      dead.erase(v);
  std::erase_if(f.constants, [&](const Value *c) { return dead.count(c) != 0; });
}

} // namespace tc::onnximport
