#include "StridedView.h"
#include "tc/IR/ConstantInts.h"

namespace tc {

namespace {

using Ints = std::vector<int64_t>;

bool isOne(const Dim &d) { return d.isStatic() && d.size == 1; }

// One (size, stride) run of elements: a plain axis or a merged one's part.
using SubAxis = std::pair<int64_t, int64_t>;

// Target dims of one product, given the source sub-axes `src` (outer
// first) of that product: each target dim's sub-axes (outer first), the
// innermost dims taken from the innermost sub-axes, a sub-axis split where
// a dim divides it; nullopt where a dim straddles two without taking both
// whole.
std::optional<std::vector<std::vector<SubAxis>>> distribute(std::vector<SubAxis> src,
                                                            const std::vector<int64_t> &dims) {
  std::vector<std::vector<SubAxis>> out(dims.size());
  for (size_t t = dims.size(); t-- > 0;) {
    int64_t want = dims[t];
    while (want > 1) {
      if (src.empty())
        return std::nullopt;
      auto [n, stride] = src.back();
      if (n % want == 0) { // the dim is the sub-axis' inner part
        out[t].insert(out[t].begin(), {want, stride});
        src.back() = {n / want, stride * want};
        want = 1;
      } else if (want % n == 0) { // the sub-axis is the dim's inner part
        out[t].insert(out[t].begin(), {n, stride});
        src.pop_back();
        want /= n;
      } else {
        return std::nullopt;
      }
      if (!src.empty() && src.back().first == 1)
        src.pop_back();
    }
  }
  return out;
}

// `v` reshaped to `target` (the same elements in the same order): axes of
// equal products form groups; within a group the source's sub-axes (a
// plain axis is one, a merged one its parts) are split or gathered into
// the target dims; a target dim whose sub-axes chain in memory (each
// stride its inner neighbour's times its size) is plain, else merged.
// Symbolic axes must meet one to one.
std::optional<StridedView> reshape(const StridedView &v, const Shape &target) {
  StridedView out;
  out.offset = v.offset;
  size_t i = 0, n = v.sizes.size();
  auto skipOnes = [&] {
    while (i < n && isOne(v.sizes[i]))
      ++i;
  };
  auto subAxes = [&](size_t a) {
    return a < v.merged.size() && !v.merged[a].empty()
               ? v.merged[a]
               : std::vector<SubAxis>{{v.sizes[a].size, v.strides[a]}};
  };
  auto push = [&](const Dim &d, int64_t stride, std::vector<SubAxis> parts = {}) {
    out.sizes.push_back(d);
    out.strides.push_back(stride);
    out.merged.push_back(std::move(parts));
  };
  for (size_t j = 0; j < target.size();) {
    if (isOne(target[j])) {
      push(target[j], 0);
      ++j;
      continue;
    }
    skipOnes();
    if (i == n)
      return std::nullopt;
    if (!v.sizes[i].isStatic() || !target[j].isStatic()) {
      if (v.sizes[i] != target[j] || v.sizes[i].isUnknown())
        return std::nullopt;
      push(target[j], v.strides[i], subAxes(i).size() > 1 ? subAxes(i) : std::vector<SubAxis>{});
      ++i, ++j;
      continue;
    }
    // A group: source axes i..last and target axes j..jEnd of one product.
    std::vector<SubAxis> src = subAxes(i);
    int64_t ps = v.sizes[i].size, pt = target[j].size;
    size_t jEnd = j;
    while (ps != pt) {
      if (ps < pt) {
        ++i;
        skipOnes();
        if (i == n || !v.sizes[i].isStatic())
          return std::nullopt;
        std::vector<SubAxis> more = subAxes(i);
        src.insert(src.end(), more.begin(), more.end());
        ps *= v.sizes[i].size;
      } else {
        if (++jEnd == target.size() || !target[jEnd].isStatic())
          return std::nullopt;
        pt *= target[jEnd].size;
      }
    }
    std::vector<int64_t> dims;
    for (size_t t = j; t <= jEnd; ++t)
      dims.push_back(target[t].size);
    for (const SubAxis &a : src)
      if (a.second < 0)
        return std::nullopt;
    std::optional<std::vector<std::vector<SubAxis>>> parts = distribute(src, dims);
    if (!parts)
      return std::nullopt;
    for (size_t t = j; t <= jEnd; ++t) {
      std::vector<SubAxis> &p = (*parts)[t - j];
      // Chained neighbours are one run.
      for (size_t k = p.size(); k-- > 1;)
        if (p[k - 1].second == p[k].second * p[k].first) {
          p[k - 1] = {p[k - 1].first * p[k].first, p[k].second};
          p.erase(p.begin() + long(k));
        }
      if (p.size() <= 1)
        push(target[t], p.empty() ? 0 : p[0].second);
      else
        push(target[t], -1, std::move(p));
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
  StridedView v{s, Ints(s.size()), 0, {}};
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
    StridedView t{{}, {}, v.offset, {}};
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(r))
        return std::nullopt;
      t.sizes.push_back(v.sizes[size_t(p)]);
      t.strides.push_back(v.strides[size_t(p)]);
      t.merged.push_back(size_t(p) < v.merged.size() ? v.merged[size_t(p)]
                                                     : std::vector<SubAxis>{});
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
    if (*a < g.merged.size())
      g.merged.erase(g.merged.begin() + long(*a));
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
