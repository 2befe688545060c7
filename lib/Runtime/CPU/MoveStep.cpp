#include "MoveStep.h"
#include "tc/IR/ElementMove.h"
#include "tc/Support/Error.h"
#include <algorithm>
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

// Operand `v`'s integers at `p` (i32 or i64; its static element count).
std::vector<int64_t> intsAt(const Value &v, const void *p) {
  int64_t n = 1;
  for (const Dim &d : v.type.shape)
    n *= d.size;
  std::vector<int64_t> out(size_t(std::max<int64_t>(n, 0)));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = v.type.dtype == DType::I64 ? static_cast<const int64_t *>(p)[i]
                                        : static_cast<const int32_t *>(p)[i];
  return out;
}

// Slice: the bounds are read on every run (constants, or values computed at
// run time), clamped as ONNX says, and must select the plan's result dims.
MoveStep slice(const Op &op) {
  const Value &data = *op.operand(0), &out = *op.result();
  for (size_t k = 1; k < op.operands.size(); ++k)
    if (const Value *b = op.operand(k);
        b && b->type.dtype != DType::I64 && b->type.dtype != DType::I32)
      return nullptr;
  size_t r = data.type.rank(), nops = op.operands.size();
  std::vector<int64_t> dim, count, stride(r, 1);
  for (const Dim &d : data.type.shape)
    dim.push_back(d.size);
  for (const Dim &d : out.type.shape)
    count.push_back(d.size);
  for (size_t i = r; i-- > 1;)
    stride[i - 1] = stride[i] * dim[i];
  int64_t esz = int64_t(dtypeSize(data.type.dtype));
  std::string where = op.where();
  return [=, &op](void *const *bufs) {
    auto bound = [&](size_t k) {
      const Value *v = k < nops ? op.operand(k) : nullptr;
      return v ? intsAt(*v, bufs[k]) : std::vector<int64_t>();
    };
    std::vector<int64_t> starts = bound(1), ends = bound(2), axes = bound(3), steps = bound(4);
    if (!op.operand(3))
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(int64_t(i));
    steps.resize(axes.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size())
      fail(where, ": starts, ends and axes of different lengths");
    // Per axis: the first element and the step; the counts must be the plan's.
    std::vector<int64_t> first(r, 0), step(r, 1);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t ax = axes[i] < 0 ? axes[i] + int64_t(r) : axes[i];
      if (ax < 0 || ax >= int64_t(r) || steps[i] == 0)
        fail(where, ": axis ", axes[i], " with step ", steps[i], " for rank ", r);
      int64_t D = dim[size_t(ax)], st = steps[i];
      auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
        return std::clamp<int64_t>(v < 0 ? std::max<int64_t>(v, -D - 1) + D : v, lo, hi);
      };
      int64_t b = clamp(starts[i], 0, st > 0 ? D : D - 1),
              e = clamp(ends[i], st > 0 ? 0 : -1, st > 0 ? D : D - 1);
      int64_t n =
          st > 0 ? (e > b ? (e - b + st - 1) / st : 0) : (b > e ? (b - e - st - 1) / -st : 0);
      if (n != count[size_t(ax)])
        fail(where, ": the bounds read at run time select ", n, " elements of axis ", ax,
             " where the planned shape has ", count[size_t(ax)]);
      first[size_t(ax)] = b;
      step[size_t(ax)] = st;
    }
    const auto *src = static_cast<const uint8_t *>(bufs[0]);
    auto *dst = static_cast<uint8_t *>(bufs[nops]);
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
