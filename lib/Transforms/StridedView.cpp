#include "StridedView.h"
#include "tc/IR/ConstantInts.h"

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

bool isOne(const Dim &d) { return d.isStatic() && d.size == 1; }

// `v` reshaped to `target` (the same elements in the same order): axes of
// equal products form groups; a group's source axes must be adjacent in
// memory (each stride its inner neighbour's times its size). Symbolic axes
// must meet one to one.
std::optional<StridedView> reshape(const StridedView &v, const Shape &target) {
  StridedView out;
  out.offset = v.offset;
  size_t i = 0, n = v.sizes.size();
  auto skipOnes = [&] {
    while (i < n && isOne(v.sizes[i]))
      ++i;
  };
  for (size_t j = 0; j < target.size();) {
    if (isOne(target[j])) {
      out.sizes.push_back(target[j]);
      out.strides.push_back(0);
      ++j;
      continue;
    }
    skipOnes();
    if (i == n)
      return std::nullopt;
    if (!v.sizes[i].isStatic() || !target[j].isStatic()) {
      if (v.sizes[i] != target[j] || v.sizes[i].isUnknown())
        return std::nullopt;
      out.sizes.push_back(target[j]);
      out.strides.push_back(v.strides[i]);
      ++i, ++j;
      continue;
    }
    // A group: source axes i..last and target axes j..jEnd of one product.
    std::vector<size_t> src{i};
    int64_t ps = v.sizes[i].size, pt = target[j].size;
    size_t jEnd = j;
    while (ps != pt) {
      if (ps < pt) {
        ++i;
        skipOnes();
        if (i == n || !v.sizes[i].isStatic())
          return std::nullopt;
        src.push_back(i);
        ps *= v.sizes[i].size;
      } else {
        if (++jEnd == target.size() || !target[jEnd].isStatic())
          return std::nullopt;
        pt *= target[jEnd].size;
      }
    }
    for (size_t k = 0; k + 1 < src.size(); ++k)
      if (v.strides[src[k]] < 0 ||
          v.strides[src[k]] != v.strides[src[k + 1]] * v.sizes[src[k + 1]].size)
        return std::nullopt;
    int64_t inner = v.strides[src.back()];
    if (inner < 0)
      return std::nullopt;
    size_t first = out.sizes.size();
    for (size_t t = j; t <= jEnd; ++t) {
      out.sizes.push_back(target[t]);
      out.strides.push_back(0);
    }
    for (size_t t = out.sizes.size(); t-- > first;) {
      out.strides[t] = inner;
      inner *= out.sizes[t].size;
    }
    ++i;
    j = jEnd + 1;
  }
  skipOnes();
  if (i != n)
    return std::nullopt;
  return out;
}

// The axis `a` (negative from the end) of a rank-r tensor, or nullopt.
std::optional<size_t> axisOf(int64_t a, size_t r) {
  if (a < 0)
    a += int64_t(r);
  if (a < 0 || a >= int64_t(r))
    return std::nullopt;
  return size_t(a);
}

} // namespace

StridedView StridedView::rowMajor(const Shape &s) {
  StridedView v{s, Ints(s.size()), 0};
  int64_t stride = 1;
  for (size_t a = s.size(); a-- > 0;) {
    v.strides[a] = stride;
    stride = stride >= 0 && s[a].isStatic() ? stride * s[a].size : -1;
  }
  return v;
}

bool StridedView::isRowMajor() const {
  StridedView r = rowMajor(sizes);
  if (offset != 0)
    return false;
  for (size_t a = 0; a < sizes.size(); ++a)
    if (!isOne(sizes[a]) && (strides[a] < 0 || strides[a] != r.strides[a]))
      return false;
  return true;
}

bool isStridedViewOp(const Op &op) {
  switch (op.kind) {
  case OpKind::Identity:
  case OpKind::Transpose:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Flatten:
  case OpKind::Slice:
  case OpKind::Split:
  case OpKind::Gather: return true;
  default: return false;
  }
}

std::optional<StridedView> applyViewOp(const StridedView &v, const Op &op, const Value *result) {
  const Shape &out = result->type.shape;
  size_t r = v.sizes.size();
  switch (op.kind) {
  case OpKind::Transpose: {
    Ints perm = op.findAttr("perm") ? op.getInts("perm") : Ints{};
    if (perm.empty())
      for (size_t a = r; a-- > 0;)
        perm.push_back(int64_t(a));
    if (perm.size() != r)
      return std::nullopt;
    StridedView t{{}, {}, v.offset};
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(r))
        return std::nullopt;
      t.sizes.push_back(v.sizes[size_t(p)]);
      t.strides.push_back(v.strides[size_t(p)]);
    }
    return t;
  }
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Flatten: return reshape(v, out);
  case OpKind::Gather: {
    std::optional<Ints> idx = infer::constantInts(op.operand(1));
    std::optional<size_t> a = axisOf(op.getInt("axis"), r);
    if (!idx || idx->size() != 1 || op.operand(1)->type.rank() != 0 || !a ||
        !v.sizes[*a].isStatic() || v.strides[*a] < 0)
      return std::nullopt;
    int64_t p = (*idx)[0] < 0 ? (*idx)[0] + v.sizes[*a].size : (*idx)[0];
    if (p < 0 || p >= v.sizes[*a].size)
      return std::nullopt;
    StridedView g = v;
    g.offset += p * v.strides[*a];
    g.sizes.erase(g.sizes.begin() + long(*a));
    g.strides.erase(g.strides.begin() + long(*a));
    return g;
  }
  case OpKind::Split: {
    std::optional<size_t> a = axisOf(op.getInt("axis"), r);
    if (!a || v.strides[*a] < 0 || out.size() != r)
      return std::nullopt;
    int64_t start = 0;
    for (const Value *part : op.results) {
      if (part == result)
        break;
      const Dim &d = part->type.shape[*a];
      if (!d.isStatic())
        return std::nullopt;
      start += d.size;
    }
    StridedView s = v;
    s.offset += start * v.strides[*a];
    s.sizes[*a] = out[*a];
    return s;
  }
  case OpKind::Slice: {
    std::optional<Ints> starts = infer::constantInts(op.operand(1)),
                        ends = infer::constantInts(op.operand(2));
    std::optional<Ints> axes = op.operand(3) ? infer::constantInts(op.operand(3)) : std::nullopt;
    std::optional<Ints> steps = op.operand(4) ? infer::constantInts(op.operand(4)) : std::nullopt;
    if (!starts || !ends || starts->size() != ends->size() || (op.operand(3) && !axes) ||
        (op.operand(4) && !steps))
      return std::nullopt;
    StridedView s = v;
    for (size_t k = 0; k < starts->size(); ++k) {
      std::optional<size_t> a = axisOf(axes ? (*axes)[k] : int64_t(k), r);
      if (!a || (steps && (*steps)[k] != 1) || !v.sizes[*a].isStatic() || v.strides[*a] < 0)
        return std::nullopt;
      int64_t size = v.sizes[*a].size, b = (*starts)[k], e = (*ends)[k];
      b = b < 0 ? b + size : b;
      e = e < 0 ? e + size : std::min(e, size);
      if (b < 0 || b >= e || !out[*a].isStatic() || out[*a].size != e - b)
        return std::nullopt;
      s.offset += b * v.strides[*a];
      s.sizes[*a] = out[*a];
    }
    return s;
  }
  default: return std::nullopt;
  }
}

} // namespace tc
