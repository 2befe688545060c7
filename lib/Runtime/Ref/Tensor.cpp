// Data-movement kernels: Identity, Reshape, Flatten (copies), Transpose,
// Concat, and the indexing ops (Slice, Gather*, Scatter*, ...). They move
// raw elements, so every dtype is exact.
#include "Kernels.h"
#include "tc/IR/IndexMath.h"
#include <algorithm>
#include <cmath>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// Copies element `si` of `src` to element `di` of `dst` (same dtype).
inline void copyElem(HostTensor &dst, int64_t di, const HostTensor &src, int64_t si) {
  if (dst.dtype() == DType::Str) {
    dst.strings()[size_t(di)] = src.strings()[size_t(si)];
    return;
  }
  size_t es = dtypeSize(dst.dtype());
  std::memcpy(dst.bytes() + size_t(di) * es, src.bytes() + size_t(si) * es, es);
}

// Copies `n` consecutive elements (raw bytes, or str elements).
void copyRun(HostTensor &dst, int64_t di, const HostTensor &src, int64_t si, int64_t n) {
  if (dst.dtype() == DType::Str) {
    std::copy_n(src.strings().begin() + si, n, dst.strings().begin() + di);
    return;
  }
  size_t es = dtypeSize(dst.dtype());
  if (n)
    std::memcpy(dst.bytes() + size_t(di) * es, src.bytes() + size_t(si) * es, size_t(n) * es);
}

// Identity, Reshape and Flatten: same elements in the same row-major order.
void copyKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  if (x.dtype() != y.dtype() || x.byteSize() != y.byteSize() || x.numElements() != y.numElements())
    fail("cannot copy ", x.typeStr(), " into ", y.typeStr(), " (element counts differ)");
  if (x.dtype() == DType::Str)
    y.strings() = x.strings();
  else if (x.byteSize())
    std::memcpy(y.bytes(), x.bytes(), x.byteSize());
}

void transposeKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  size_t r = x.rank();
  Dims perm = op.getInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < r; ++i)
      perm.push_back(int64_t(r - 1 - i));
  std::vector<bool> seen(r);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(r) || seen[size_t(p)] || perm.size() != r)
      fail("perm is not a permutation of the ", r, " axes");
    seen[size_t(p)] = true;
  }
  Dims inStr = stridesOf(x.shape()), expect(r), srcStr(r);
  for (size_t i = 0; i < r; ++i) {
    expect[i] = x.shape()[size_t(perm[i])];
    srcStr[i] = inStr[size_t(perm[i])];
  }
  if (expect != y.shape() || x.dtype() != y.dtype())
    fail("internal: result ", y.typeStr(), " is not the transpose of ", x.typeStr());
  // Walk the output in order; output axis i steps input axis perm[i].
  size_t es = dtypeSize(x.dtype());
  Dims idx(r, 0);
  int64_t src = 0;
  for (int64_t o = 0, n = y.numElements(); o < n; ++o) {
    std::memcpy(y.bytes() + size_t(o) * es, x.bytes() + size_t(src) * es, es);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < expect[d]) {
        src += srcStr[d];
        break;
      }
      src -= srcStr[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
}

void concatKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  HostTensor &y = outs[0];
  int64_t r = int64_t(y.rank());
  int64_t axis = normalizeAxis(op.getInt("axis"), r);
  const Dims &ys = y.shape();
  int64_t outer = 1, inner = 1, total = 0;
  for (int64_t d = 0; d < axis; ++d)
    outer *= ys[size_t(d)];
  for (int64_t d = axis + 1; d < r; ++d)
    inner *= ys[size_t(d)];
  for (const HostTensor *t : ins) {
    if (!t || t->dtype() != y.dtype() || int64_t(t->rank()) != r)
      fail("internal: concat operand does not match the result ", y.typeStr());
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t->shape()[size_t(d)] != ys[size_t(d)])
        fail("operand ", t->typeStr(), " differs from the result ", y.typeStr(), " off the axis");
    total += t->shape()[size_t(axis)];
  }
  if (total != ys[size_t(axis)])
    fail("internal: operands do not add up to the result ", y.typeStr());
  // Each outer slice of the result is the operands' slices one after another.
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *t : ins) {
      int64_t chunk = t->shape()[size_t(axis)] * inner;
      copyRun(y, dst, *t, o * chunk, chunk);
      dst += chunk;
    }
}

// ---- More shape and data movement ------------------------------------------

// Calls fn(index, linear) for every multi-index of `dims` in row-major order.
template <typename F> void forEachIndex(const Dims &dims, F &&fn) {
  int64_t n = numElements(dims);
  Dims idx(dims.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    fn(idx, o);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d])
        break;
      idx[d] = 0;
    }
  }
}

int64_t product(const Dims &d, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= d[i];
  return n;
}

// An index into an axis of size `dim`; negative counts from the end.
int64_t checkIndex(int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    fail("index ", i, " is out of range for an axis of size ", dim);
  return i < 0 ? i + dim : i;
}

void splitKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, outs.size());
  const HostTensor &x = *ins[0];
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  const Dims &xs = x.shape();
  int64_t outer = product(xs, 0, size_t(axis)), inner = product(xs, size_t(axis) + 1, xs.size());
  size_t es = dtypeSize(x.dtype());
  int64_t offset = 0;
  for (HostTensor &y : outs) {
    int64_t part = y.shape()[size_t(axis)];
    if (offset + part > xs[size_t(axis)])
      fail("internal: split parts exceed the axis");
    size_t chunk = size_t(part * inner) * es;
    for (int64_t o = 0; o < outer && chunk; ++o)
      std::memcpy(y.bytes() + size_t(o) * chunk,
                  x.bytes() + (size_t(o * xs[size_t(axis)] + offset) * size_t(inner)) * es, chunk);
    offset += part;
  }
}

void sliceKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  int64_t r = int64_t(x.rank());
  Dims starts = loadInts(*ins[1]), ends = loadInts(*ins[2]);
  size_t n = starts.size();
  Dims axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i)
    axes[i] = int64_t(i);
  if (ins.size() > 3 && ins[3])
    axes = loadInts(*ins[3]);
  if (ins.size() > 4 && ins[4])
    steps = loadInts(*ins[4]);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    fail("starts, ends, axes and steps must have the same length");
  Dims start(size_t(r), 0), step(size_t(r), 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = normalizeAxis(axes[i], r);
    if (steps[i] == 0)
      fail("steps must be nonzero");
    SliceRange sr = sliceRange(x.shape()[size_t(a)], starts[i], ends[i], steps[i]);
    if (sr.count != y.shape()[size_t(a)])
      fail("internal: slice of axis ", a, " has ", sr.count, " elements, result has ",
           y.shape()[size_t(a)]);
    start[size_t(a)] = sr.start;
    step[size_t(a)] = steps[i];
  }
  Dims xStr = stridesOf(x.shape());
  forEachIndex(y.shape(), [&](const Dims &idx, int64_t o) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (start[d] + idx[d] * step[d]) * xStr[d];
    copyElem(y, o, x, src);
  });
}

void gatherKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape();
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(x.rank())));
  Dims ind = loadInts(*ins[1]);
  int64_t outer = product(xs, 0, axis), dim = xs[axis], inner = product(xs, axis + 1, xs.size());
  if (outer * int64_t(ind.size()) * inner != y.numElements())
    fail("internal: result ", y.typeStr(), " does not match the gather");
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : ind) {
      int64_t k = checkIndex(i, dim);
      copyRun(y, dst, x, (o * dim + k) * inner, inner);
      dst += inner;
    }
}

void gatherElementsKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(x.rank())));
  Dims ind = loadInts(*ins[1]), xStr = stridesOf(x.shape());
  forEachIndex(ins[1]->shape(), [&](const Dims &idx, int64_t o) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = d == axis ? checkIndex(ind[size_t(o)], x.shape()[d]) : idx[d];
      if (i >= x.shape()[d])
        fail("indices shape ", ins[1]->typeStr(), " exceeds data ", x.typeStr(), " off the axis");
      src += i * xStr[d];
    }
    copyElem(y, o, x, src);
  });
}

void gatherNDKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  const Dims &xs = x.shape(), &is = ins[1]->shape();
  size_t b = size_t(op.getInt("batch_dims")), q = is.size(), k = size_t(is.back());
  Dims ind = loadInts(*ins[1]), xStr = stridesOf(xs);
  int64_t batches = product(is, 0, b), tuples = product(is, b, q - 1);
  int64_t slice = product(xs, b + k, xs.size()), perBatch = product(xs, b, xs.size());
  if (batches * tuples * slice != y.numElements())
    fail("internal: result ", y.typeStr(), " does not match the gather");
  size_t es = dtypeSize(x.dtype());
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t src = bi * perBatch, row = bi * tuples + t;
      for (size_t j = 0; j < k; ++j)
        src += checkIndex(ind[size_t(row) * k + j], xs[b + j]) * xStr[b + j];
      if (slice)
        std::memcpy(y.bytes() + size_t(row * slice) * es, x.bytes() + size_t(src) * es,
                    size_t(slice) * es);
    }
}

// Writes element `ui` of `upd` into element `di` of `y`, combined as
// `reduction` says.
class Scatter {
public:
  Scatter(const Op &op, HostTensor &y, const HostTensor &upd) : y_(y), upd_(upd) {
    const std::string &r = op.getString("reduction");
    red_ = r == "none" ? 0 : r == "add" ? 1 : r == "mul" ? 2 : r == "max" ? 3 : r == "min" ? 4 : -1;
    if (red_ < 0)
      fail("unknown reduction '", r, "'");
  }
  void operator()(int64_t di, int64_t ui) {
    if (red_ == 0)
      return copyElem(y_, di, upd_, ui);
    if (isFloat(y_.dtype())) {
      double a = y_.getDouble(di), b = upd_.getDouble(ui);
      y_.setDouble(di, red_ == 1   ? a + b
                       : red_ == 2 ? a * b
                       : red_ == 3 ? (b > a ? b : a)
                                   : (b < a ? b : a));
      return;
    }
    int64_t a = y_.getInt(di), b = upd_.getInt(ui);
    bool u64 = y_.dtype() == DType::U64;
    bool less = u64 ? uint64_t(b) < uint64_t(a) : b < a;
    y_.setInt(di, red_ == 1   ? wrapAdd(a, b)
                  : red_ == 2 ? wrapMul(a, b)
                  : red_ == 3 ? (less ? a : b)
                              : (less ? b : a));
  }

private:
  HostTensor &y_;
  const HostTensor &upd_;
  int red_;
};

void copyInto(HostTensor &y, const HostTensor &x) {
  if (!y.sameType(x))
    fail("internal: result ", y.typeStr(), " differs from data ", x.typeStr());
  if (x.byteSize())
    std::memcpy(y.bytes(), x.bytes(), x.byteSize());
}

void scatterElementsKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0], &upd = *ins[2];
  HostTensor &y = outs[0];
  copyInto(y, x);
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), int64_t(x.rank())));
  Dims ind = loadInts(*ins[1]), xStr = stridesOf(x.shape());
  if (ins[1]->shape() != upd.shape())
    fail("updates ", upd.typeStr(), " and indices ", ins[1]->typeStr(), " differ in shape");
  Scatter put(op, y, upd);
  forEachIndex(ins[1]->shape(), [&](const Dims &idx, int64_t u) {
    int64_t dst = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = d == axis ? checkIndex(ind[size_t(u)], x.shape()[d]) : idx[d];
      if (i >= x.shape()[d])
        fail("indices shape ", ins[1]->typeStr(), " exceeds data ", x.typeStr(), " off the axis");
      dst += i * xStr[d];
    }
    put(dst, u);
  });
}

void scatterNDKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0], &upd = *ins[2];
  HostTensor &y = outs[0];
  copyInto(y, x);
  const Dims &xs = x.shape(), &is = ins[1]->shape();
  size_t k = size_t(is.back());
  Dims ind = loadInts(*ins[1]), xStr = stridesOf(xs);
  int64_t tuples = product(is, 0, is.size() - 1), slice = product(xs, k, xs.size());
  if (tuples * slice != upd.numElements())
    fail("updates ", upd.typeStr(), " do not match indices ", ins[1]->typeStr());
  Scatter put(op, y, upd);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (size_t j = 0; j < k; ++j)
      dst += checkIndex(ind[size_t(t) * k + j], xs[j]) * xStr[j];
    for (int64_t s = 0; s < slice; ++s)
      put(dst + s, t * slice + s);
  }
}

void expandKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  BroadcastWalk walk(outs[0].shape(), {ins[0]->shape()});
  walk.run([&](int64_t o, const int64_t *i) { copyElem(outs[0], o, *ins[0], i[0]); });
}

void shapeKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const Dims &xs = ins[0]->shape();
  int64_t r = int64_t(xs.size());
  auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  int64_t start = clampAxis(op.getInt("start")), end = clampAxis(op.getInt("end"));
  if (outs[0].numElements() != std::max<int64_t>(0, end - start))
    fail("internal: result ", outs[0].typeStr(), " does not hold the dims");
  for (int64_t d = start; d < end; ++d)
    outs[0].setInt(d - start, xs[size_t(d)]);
}

void sizeKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  outs[0].setInt(0, ins[0]->numElements());
}

void constantOfShapeKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  double v = op.getFloat("value");
  for (int64_t i = 0, n = outs[0].numElements(); i < n; ++i)
    outs[0].setDouble(i, v);
}

void rangeKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  HostTensor &y = outs[0];
  int64_t n = y.numElements();
  if (isFloat(y.dtype())) {
    double start = ins[0]->getDouble(0), delta = ins[2]->getDouble(0);
    for (int64_t i = 0; i < n; ++i)
      y.setDouble(i, start + double(i) * delta);
  } else {
    int64_t start = ins[0]->getInt(0), delta = ins[2]->getInt(0);
    for (int64_t i = 0; i < n; ++i)
      y.setInt(i, wrapAdd(start, wrapMul(i, delta)));
  }
}

void tileKernel(const Op &, const Ins &ins, Outs &outs) {
  expectArity(ins, 2, outs, 1);
  const HostTensor &x = *ins[0];
  const Dims &xs = x.shape();
  Dims xStr = stridesOf(xs);
  forEachIndex(outs[0].shape(), [&](const Dims &idx, int64_t o) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (idx[d] % xs[d]) * xStr[d];
    copyElem(outs[0], o, x, src);
  });
}

void triluKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  __int128 k = ins.size() > 1 && ins[1] ? ins[1]->getInt(0) : 0;
  bool upper = op.getInt("upper") != 0;
  const Dims &xs = x.shape();
  int64_t rows = xs[xs.size() - 2], cols = xs.back();
  // y is zero-filled; copy the kept triangle.
  for (int64_t o = 0, n = y.numElements(); o < n; ++o) {
    __int128 i = (o / cols) % rows, j = o % cols;
    if (upper ? j - i >= k : j - i <= k)
      copyElem(y, o, x, o);
  }
}

void oneHotKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &ind = *ins[0], &vals = *ins[2];
  HostTensor &y = outs[0];
  if (vals.numElements() != 2)
    fail("values must have two elements [off, on], got ", vals.typeStr());
  int64_t r = int64_t(y.rank());
  size_t axis = size_t(normalizeAxis(op.getInt("axis"), r));
  int64_t depth = y.shape()[axis];
  const Dims &is = ind.shape();
  int64_t outer = product(is, 0, axis), inner = product(is, axis, is.size());
  for (int64_t o = 0, n = y.numElements(); o < n; ++o)
    copyElem(y, o, vals, 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = ind.getInt(o * inner + i); // float indices truncate
      if (v < 0 && v >= -depth)
        v += depth;
      if (v >= 0 && v < depth)
        copyElem(y, (o * depth + v) * inner + i, vals, 1);
    }
}

// DepthToSpace (toSpace) and SpaceToDepth: element (n, c, h, w) of the
// space-side tensor, with h = hb * b + i and w = wb * b + j, is channel
// (i * b + j) * C + c (DCR) or c * b * b + i * b + j (CRD) at (hb, wb) of
// the depth-side tensor.
template <bool ToSpace> void blockKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  int64_t b = op.getInt("blocksize");
  bool crd = ToSpace && op.getString("mode") == "CRD";
  const Dims &space = ToSpace ? y.shape() : x.shape(), &depth = ToSpace ? x.shape() : y.shape();
  Dims spaceStr = stridesOf(space), depthStr = stridesOf(depth);
  int64_t C = space[1];
  forEachIndex(space, [&](const Dims &idx, int64_t s) {
    int64_t i = idx[2] % b, j = idx[3] % b;
    int64_t c = crd ? idx[1] * b * b + i * b + j : (i * b + j) * C + idx[1];
    int64_t d = idx[0] * depthStr[0] + c * depthStr[1] + (idx[2] / b) * depthStr[2] +
                (idx[3] / b) * depthStr[3];
    if (ToSpace)
      copyElem(y, s, x, d);
    else
      copyElem(y, d, x, s);
  });
}

void eyeLikeKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  HostTensor &y = outs[0];
  int64_t rows = y.shape()[0], cols = y.shape()[1], k = op.getInt("k");
  for (int64_t i = 0; i < rows; ++i) {
    __int128 j = __int128(i) + k;
    if (j >= 0 && j < cols)
      y.setInt(i * cols + int64_t(j), 1);
  }
}

} // namespace

void registerTensorKernels(KernelTable &t) {
  t[size_t(OpKind::Identity)] = copyKernel;
  t[size_t(OpKind::Reshape)] = copyKernel;
  t[size_t(OpKind::Flatten)] = copyKernel;
  t[size_t(OpKind::Transpose)] = transposeKernel;
  t[size_t(OpKind::Concat)] = concatKernel;
  t[size_t(OpKind::Squeeze)] = copyKernel;
  t[size_t(OpKind::Unsqueeze)] = copyKernel;
  t[size_t(OpKind::Split)] = splitKernel;
  t[size_t(OpKind::Slice)] = sliceKernel;
  t[size_t(OpKind::Gather)] = gatherKernel;
  t[size_t(OpKind::GatherElements)] = gatherElementsKernel;
  t[size_t(OpKind::GatherND)] = gatherNDKernel;
  t[size_t(OpKind::ScatterElements)] = scatterElementsKernel;
  t[size_t(OpKind::ScatterND)] = scatterNDKernel;
  t[size_t(OpKind::Expand)] = expandKernel;
  t[size_t(OpKind::Shape)] = shapeKernel;
  t[size_t(OpKind::Size)] = sizeKernel;
  t[size_t(OpKind::ConstantOfShape)] = constantOfShapeKernel;
  t[size_t(OpKind::Range)] = rangeKernel;
  t[size_t(OpKind::Tile)] = tileKernel;
  t[size_t(OpKind::Trilu)] = triluKernel;
  t[size_t(OpKind::OneHot)] = oneHotKernel;
  t[size_t(OpKind::DepthToSpace)] = blockKernel<true>;
  t[size_t(OpKind::SpaceToDepth)] = blockKernel<false>;
  t[size_t(OpKind::EyeLike)] = eyeLikeKernel;
}

} // namespace tc::ref
