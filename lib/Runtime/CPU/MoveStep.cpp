#include "MoveStep.h"
#include "tc/IR/ElementMove.h"
#include "tc/Support/Error.h"
#include <cstring>

namespace tc {

namespace {

// A static shape as [outer, axis, inner-bytes] around `axis`.
struct Around {
  int64_t outer = 1, dim = 1, innerBytes = 1;
};

Around around(const Value &v, int64_t axis) {
  Around a;
  a.innerBytes = int64_t(dtypeSize(v.type.dtype));
  const Shape &s = v.type.shape;
  for (size_t d = 0; d < s.size(); ++d)
    (int64_t(d) < axis ? a.outer : int64_t(d) == axis ? a.dim : a.innerBytes) *= s[d].size;
  return a;
}

int64_t normalizedAxis(const Op &op, const Value &v) {
  int64_t axis = op.getInt("axis"), r = int64_t(v.type.rank());
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> constantInts(const Value *v) {
  std::vector<int64_t> out;
  if (v->type.dtype == DType::I64)
    out.assign(v->data->as<int64_t>(), v->data->as<int64_t>() + v->data->size / 8);
  else
    for (size_t i = 0; i < v->data->size / 4; ++i)
      out.push_back(v->data->as<int32_t>()[i]);
  return out;
}

MoveStep gather(const Op &op) {
  const Value &data = *op.operand(0), &indices = *op.operand(1);
  if (indices.type.dtype != DType::I64 && indices.type.dtype != DType::I32)
    return nullptr;
  Around d = around(data, normalizedAxis(op, data));
  int64_t count = 1;
  for (const Dim &x : indices.type.shape)
    count *= x.size;
  bool wide = indices.type.dtype == DType::I64;
  std::string where = op.where();
  return [=](void *const *bufs) {
    const auto *src = static_cast<const uint8_t *>(bufs[0]);
    auto *dst = static_cast<uint8_t *>(bufs[2]);
    for (int64_t i = 0; i < count; ++i) {
      int64_t idx = wide ? static_cast<const int64_t *>(bufs[1])[i]
                         : static_cast<const int32_t *>(bufs[1])[i];
      if (idx < -d.dim || idx >= d.dim)
        fail(where, ": index ", idx, " is out of range for an axis of size ", d.dim);
      idx += idx < 0 ? d.dim : 0;
      for (int64_t o = 0; o < d.outer; ++o)
        std::memcpy(dst + (o * count + i) * d.innerBytes, src + (o * d.dim + idx) * d.innerBytes,
                    size_t(d.innerBytes));
    }
  };
}

// Concat and Split: blocks of each part laid side by side along the axis.
MoveStep joinOrSplit(const Op &op, bool join) {
  const Value &whole = join ? *op.result() : *op.operand(0);
  int64_t axis = normalizedAxis(op, whole);
  const std::vector<Value *> &parts = join ? op.operands : op.results;
  std::vector<int64_t> bytes; // per part, per outer index
  for (const Value *p : parts) {
    if (!p)
      return nullptr;
    Around a = around(*p, axis);
    bytes.push_back(a.dim * a.innerBytes);
  }
  Around w = around(whole, axis);
  size_t n = parts.size();
  return [=](void *const *bufs) {
    auto *all = static_cast<uint8_t *>(bufs[join ? n : 0]);
    for (int64_t o = 0; o < w.outer; ++o) {
      uint8_t *row = all + o * w.dim * w.innerBytes;
      for (size_t k = 0; k < n; ++k) {
        auto *part = static_cast<uint8_t *>(bufs[join ? k : 1 + k]) + o * bytes[k];
        if (join)
          std::memcpy(row, part, size_t(bytes[k]));
        else
          std::memcpy(part, row, size_t(bytes[k]));
        row += bytes[k];
      }
    }
  };
}

MoveStep slice(const Op &op) {
  const Value &data = *op.operand(0), &out = *op.result();
  for (size_t k = 1; k < op.operands.size(); ++k)
    if (op.operand(k) && !op.operand(k)->isConstant())
      return nullptr; // bounds known only at run time
  size_t r = data.type.rank();
  std::vector<int64_t> starts = constantInts(op.operand(1)), axes, steps;
  if (const Value *a = op.operand(3))
    axes = constantInts(a);
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (const Value *s = op.operand(4))
    steps = constantInts(s);
  steps.resize(axes.size(), 1);
  // Per axis: first element and step (ONNX clamping of the start); counts
  // are the result's dims.
  std::vector<int64_t> first(r, 0), step(r, 1), stride(r, 1);
  for (size_t i = r; i-- > 1;)
    stride[i - 1] = stride[i] * data.type.shape[i].size;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i] < 0 ? axes[i] + int64_t(r) : axes[i];
    int64_t dim = data.type.shape[size_t(ax)].size, s = starts.at(i);
    if (steps[i] == 0)
      return nullptr;
    s = s < 0 ? std::max<int64_t>(s, -dim) + dim : s;
    s = steps[i] > 0 ? std::min(s, dim) : std::min(s, dim - 1);
    first[size_t(ax)] = s;
    step[size_t(ax)] = steps[i];
  }
  std::vector<int64_t> count;
  for (const Dim &d : out.type.shape)
    count.push_back(d.size);
  int64_t esz = int64_t(dtypeSize(data.type.dtype));
  return [=](void *const *bufs) {
    const auto *src = static_cast<const uint8_t *>(bufs[0]);
    auto *dst = static_cast<uint8_t *>(bufs[op.operands.size()]);
    // Walks the result in order; the last axis copies a run when contiguous.
    std::function<void(size_t, int64_t)> walk = [&](size_t axis, int64_t offset) {
      int64_t at = offset + first[axis] * stride[axis];
      if (axis + 1 == r) {
        if (step[axis] == 1) {
          std::memcpy(dst, src + at * esz, size_t(count[axis] * esz));
          dst += count[axis] * esz;
        } else {
          for (int64_t i = 0; i < count[axis]; ++i, dst += esz)
            std::memcpy(dst, src + (at + i * step[axis] * stride[axis]) * esz, size_t(esz));
        }
        return;
      }
      for (int64_t i = 0; i < count[axis]; ++i)
        walk(axis + 1, at + i * step[axis] * stride[axis]);
    };
    if (r == 0)
      std::memcpy(dst, src, size_t(esz));
    else
      walk(0, 0);
  };
}

} // namespace

MoveStep makeMoveStep(const Op &op) {
  for (const Value *v : op.operands)
    if (v && v->type.dtype == DType::Str)
      return nullptr;
  if (!isCpuCopyMove(op.kind))
    return nullptr;
  switch (op.kind) {
  case OpKind::Gather: return gather(op);
  case OpKind::Concat: return joinOrSplit(op, /*join=*/true);
  case OpKind::Split: return joinOrSplit(op, /*join=*/false);
  case OpKind::Slice: return slice(op);
  default: return nullptr;
  }
}

} // namespace tc
