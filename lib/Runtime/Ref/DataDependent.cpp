// Kernels of the ops whose output sizes depend on operand values: NonZero,
// Compress, Unique, NonMaxSuppression. They are registered as setting their
// output dims (Kernels.h): each replaces its outputs with tensors of the final
// shape, keeping the dtype the shape rule gave.
#include "Kernels.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// The one axis of attribute `axis` ([] or [a]), normalized; -1 for [].
int64_t optionalAxis(const Op &op, size_t rank) {
  const std::vector<int64_t> &axis = op.attr("axis").ints();
  return axis.empty() ? -1 : normalizeAxis(axis[0], int64_t(rank));
}

// Copies `n` elements from src[from...] to dst[to...] (same dtype, raw bytes).
void copyElements(const HostTensor &src, int64_t from, HostTensor &dst, int64_t to, int64_t n) {
  size_t es = dtypeSize(src.dtype());
  std::memcpy(dst.bytes() + size_t(to) * es, src.bytes() + size_t(from) * es, size_t(n) * es);
}

// An axis as (outer, size, inner): the element of (o, i, k) is at
// (o * size + i) * inner + k. Axis -1 is the flattened tensor.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
  AxisSplit(const Dims &d, int64_t axis) {
    if (axis < 0) {
      size = numElements(d);
      return;
    }
    for (int64_t a = 0; a < int64_t(d.size()); ++a)
      (a < axis ? outer : a == axis ? size : inner) *= d[size_t(a)];
  }
};

// ---- NonZero ----------------------------------------------------------------

void nonZeroKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  Dims strides = stridesOf(x.shape());
  std::vector<int64_t> hits;
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    if (x.getDouble(i) != 0) // NaN is nonzero
      hits.push_back(i);
  int64_t r = int64_t(x.rank()), count = int64_t(hits.size());
  HostTensor y(outs[0].dtype(), {r, count});
  for (int64_t j = 0; j < count; ++j)
    for (int64_t a = 0; a < r; ++a)
      y.setInt(a * count + j, hits[size_t(j)] / strides[size_t(a)] % x.shape()[size_t(a)]);
  outs[0] = std::move(y);
}

// ---- Compress ---------------------------------------------------------------

void compressKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0], &c = *ins[1];
  int64_t axis = optionalAxis(op, x.rank());
  AxisSplit s(x.shape(), axis);
  if (c.numElements() > s.size)
    fail("condition has ", c.numElements(), " elements, more than the ",
         axis < 0 ? "input's " : "axis' ", s.size);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < c.numElements(); ++i)
    if (c.getInt(i))
      kept.push_back(i);
  Dims dims{int64_t(kept.size())};
  if (axis >= 0) {
    dims = x.shape();
    dims[size_t(axis)] = int64_t(kept.size());
  }
  HostTensor y(outs[0].dtype(), dims);
  int64_t to = 0;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i : kept) {
      copyElements(x, (o * s.size + i) * s.inner, y, to, s.inner);
      to += s.inner;
    }
  outs[0] = std::move(y);
}

// ---- Unique -----------------------------------------------------------------

// Three-way comparison of elements i and j of t by value (NaNs equal to each
// other and after every number, so that sorting is well defined).
int compareElements(const HostTensor &t, int64_t i, int64_t j) {
  if (isFloat(t.dtype())) {
    double a = t.getDouble(i), b = t.getDouble(j);
    if (std::isnan(a) || std::isnan(b))
      return int(std::isnan(a)) - int(std::isnan(b));
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (t.dtype() == DType::U64) {
    uint64_t a = uint64_t(t.getInt(i)), b = uint64_t(t.getInt(j));
    return a < b ? -1 : a > b ? 1 : 0;
  }
  int64_t a = t.getInt(i), b = t.getInt(j);
  return a < b ? -1 : a > b ? 1 : 0;
}

void uniqueKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 4);
  const HostTensor &x = *ins[0];
  int64_t axis = optionalAxis(op, x.rank());
  AxisSplit s(x.shape(), axis);
  // Slice k is the elements (o, k, i) for every o, i in row-major order.
  auto compareSlices = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i)
        if (int c =
                compareElements(x, (o * s.size + a) * s.inner + i, (o * s.size + b) * s.inner + i))
          return c;
    return 0;
  };
  // Stable sort by value: among equal slices the first occurrence leads.
  std::vector<int64_t> order(size_t(s.size));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compareSlices(a, b) < 0; });
  // Groups of equal slices, each named by its first occurrence.
  std::vector<int64_t> first, counts, group(size_t(s.size));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compareSlices(order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    group[size_t(order[k])] = int64_t(first.size() - 1);
    ++counts.back();
  }
  // Output position of each group: sorted order, or order of first occurrence.
  int64_t u = int64_t(first.size());
  std::vector<int64_t> pos(static_cast<size_t>(u));
  std::iota(pos.begin(), pos.end(), 0);
  if (op.getInt("sorted") == 0) {
    std::vector<int64_t> byFirst(pos);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return first[size_t(a)] < first[size_t(b)]; });
    for (int64_t p = 0; p < u; ++p)
      pos[size_t(byFirst[size_t(p)])] = p;
  }
  Dims ydims{u};
  if (axis >= 0) {
    ydims = x.shape();
    ydims[size_t(axis)] = u;
  }
  HostTensor y(outs[0].dtype(), ydims), indices(outs[1].dtype(), {u}),
      inverse(outs[2].dtype(), {s.size}), count(outs[3].dtype(), {u});
  for (int64_t g = 0; g < u; ++g) {
    int64_t p = pos[size_t(g)];
    for (int64_t o = 0; o < s.outer; ++o)
      copyElements(x, (o * s.size + first[size_t(g)]) * s.inner, y, (o * u + p) * s.inner, s.inner);
    indices.setInt(p, first[size_t(g)]);
    count.setInt(p, counts[size_t(g)]);
  }
  for (int64_t k = 0; k < s.size; ++k)
    inverse.setInt(k, pos[size_t(group[size_t(k)])]);
  outs[0] = std::move(y);
  outs[1] = std::move(indices);
  outs[2] = std::move(inverse);
  outs[3] = std::move(count);
}

// ---- NonMaxSuppression --------------------------------------------------------

struct Box {
  double y1, x1, y2, x2; // y1 <= y2, x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

Box loadBox(const HostTensor &boxes, int64_t at, bool centerPoint) {
  double v[4];
  for (int64_t k = 0; k < 4; ++k)
    v[k] = boxes.getDouble(at + k);
  if (centerPoint) // [x_center, y_center, width, height]
    return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
  return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

// Intersection over union > threshold; boxes without area never suppress.
bool overlaps(const Box &a, const Box &b, double threshold) {
  double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0 || a.area() <= 0 || b.area() <= 0)
    return false;
  double inter = h * w, uni = a.area() + b.area() - inter;
  return uni > 0 && inter / uni > threshold;
}

void nonMaxSuppressionKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &boxes = *ins[0], &scores = *ins[1];
  auto opt = [&](size_t i) { return i < ins.size() ? ins[i] : nullptr; };
  int64_t batches = boxes.shape()[0], n = boxes.shape()[1], classes = scores.shape()[1];
  if (scores.shape()[0] != batches || scores.shape()[2] != n)
    fail("boxes ", boxes.typeStr(), " and scores ", scores.typeStr(), " do not match");
  int64_t maxOut = opt(2) ? std::max<int64_t>(opt(2)->getInt(0), 0) : 0;
  double iou = opt(3) ? opt(3)->getDouble(0) : 0.0;
  if (!(iou >= 0 && iou <= 1))
    fail("iou_threshold must be in [0, 1], got ", iou);
  bool center = op.getInt("center_point_box") == 1;
  std::vector<int64_t> rows; // batch, class, box
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      int64_t sBase = (b * classes + c) * n;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (!opt(4) || scores.getDouble(sBase + i) > opt(4)->getDouble(0))
          cand.push_back(i);
      // Highest score first; equal scores by box index.
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) {
        return scores.getDouble(sBase + i) > scores.getDouble(sBase + j);
      });
      std::vector<Box> kept;
      for (int64_t i : cand) {
        if (int64_t(kept.size()) >= maxOut)
          break;
        Box box = loadBox(boxes, (b * n + i) * 4, center);
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const Box &k) { return overlaps(k, box, iou); }))
          continue;
        kept.push_back(box);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  HostTensor y(outs[0].dtype(), {int64_t(rows.size() / 3), 3});
  for (size_t k = 0; k < rows.size(); ++k)
    y.setInt(int64_t(k), rows[k]);
  outs[0] = std::move(y);
}

} // namespace

void registerDataDependentKernels(KernelTable &t, SetsOutputDimsTable &setsDims) {
  auto add = [&](OpKind k, RefKernel f) {
    t[size_t(k)] = f;
    setsDims[size_t(k)] = true;
  };
  add(OpKind::NonZero, nonZeroKernel);
  add(OpKind::Compress, compressKernel);
  add(OpKind::Unique, uniqueKernel);
  add(OpKind::NonMaxSuppression, nonMaxSuppressionKernel);
}

} // namespace tc::ref
