// Gradient rules of data movement: each op's cotangent moved back to where
// its operand's elements came from (the inverse reshape or permutation, the
// parts of a Concat, the zero border of a Slice, a scatter-add for Gather).
#include "GradRules.h"
#include "tc/IR/IndexMath.h"
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

namespace tc::grad {

namespace {
Value *in(GradBuilder &b, size_t i) { return b.fwd.operand(i); }
int64_t normAxis(int64_t a, size_t rank) { return a < 0 ? a + int64_t(rank) : a; }
} // namespace

// Reshape, Flatten, Squeeze, Unsqueeze: the cotangent in the operand's dims.
void reshapeLike(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.reshape(rg[0], b.dims(in(b, 0)));
}

void transpose(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> perm = b.fwd.getInts("perm");
  size_t r = in(b, 0)->type.rank();
  if (perm.empty())
    for (size_t i = 0; i < r; ++i)
      perm.push_back(int64_t(r - 1 - i));
  std::vector<int64_t> inv(r);
  for (size_t i = 0; i < r; ++i)
    inv[size_t(perm[i])] = int64_t(i);
  og[0] = b.transpose(rg[0], inv);
}

void expand(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.unbroadcast(rg[0], b.dims(in(b, 0)));
}

namespace {
// Elements [from, to) of one axis.
Value *sliceAxis(GradBuilder &b, Value *v, size_t axis, int64_t from, int64_t to) {
  return b.op(OpKind::Slice, {v, b.ints({from}), b.ints({to}), b.ints({int64_t(axis)})});
}
} // namespace

void concat(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  size_t r = in(b, 0)->type.rank();
  int64_t axis = normAxis(b.fwd.getInt("axis"), r);
  std::vector<int64_t> sizes;
  for (Value *v : b.fwd.operands)
    sizes.push_back(b.dims(v)[size_t(axis)]);
  // One part wanted (a weight joined to constant padding: a tied head's
  // table): its Slice, a view where the part is a contiguous run (leading
  // rows), not a Split kernel copying it.
  if (std::count(w.begin(), w.end(), true) == 1) {
    size_t i = size_t(std::find(w.begin(), w.end(), true) - w.begin());
    int64_t start = std::accumulate(sizes.begin(), sizes.begin() + std::ptrdiff_t(i), int64_t(0));
    og[i] = sliceAxis(b, rg[0], size_t(axis), start, start + sizes[i]);
    return;
  }
  std::vector<Value *> parts = b.ops(OpKind::Split, {rg[0]}, sizes.size(),
                                     {{"axis", Attribute(axis)}, {"split", Attribute(sizes)}});
  for (size_t i = 0; i < og.size(); ++i)
    if (w[i])
      og[i] = parts[i];
}

void split(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<Value *> parts;
  for (size_t i = 0; i < rg.size(); ++i)
    parts.push_back(rg[i] ? rg[i] : b.zerosLike(b.fwd.result(i)));
  int64_t axis = normAxis(b.fwd.getInt("axis"), in(b, 0)->type.rank());
  og[0] = parts.size() == 1 ? parts[0] : b.op(OpKind::Concat, parts, {{"axis", Attribute(axis)}});
}

namespace {
// The elements of a constant integer tensor.
std::optional<std::vector<int64_t>> constIntsOf(const Value *v) {
  if (!v->isConstant() || (v->type.dtype != DType::I32 && v->type.dtype != DType::I64))
    return std::nullopt;
  std::vector<int64_t> out;
  size_t n = size_t(staticNumElements(v->type.shape).value_or(0));
  for (size_t k = 0; k < n; ++k)
    out.push_back(v->type.dtype == DType::I32 ? int64_t(v->data->as<int32_t>()[k])
                                              : v->data->as<int64_t>()[k]);
  return out;
}
std::optional<std::vector<int64_t>> constInts(GradBuilder &b, size_t i) {
  Value *v = in(b, i);
  if (!v)
    return std::vector<int64_t>{};
  return constIntsOf(v);
}
// One axis in reverse order.
Value *reverseAxis(GradBuilder &b, Value *v, size_t axis) {
  return b.op(OpKind::Slice, {v, b.ints({-1}), b.ints({std::numeric_limits<int64_t>::min()}),
                              b.ints({int64_t(axis)}), b.ints({-1})});
}
} // namespace

// Slice with constant starts/ends/axes/steps: per sliced axis, the n
// cotangent elements go back to positions s, s + k, ... s + (n-1) k of an
// axis of the operand's size (k - 1 zeros after each, by a Pad of an
// inserted axis, then padded or cropped into place); a negative step reads
// them in reverse first.
void slice(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> inDims = b.dims(in(b, 0)), outDims = b.dims(b.fwd.result());
  auto starts = constInts(b, 1), ends = constInts(b, 2), axes = constInts(b, 3),
       steps = constInts(b, 4);
  if (!starts || !ends || !axes || !steps)
    fail(b.fwd.where(), ": the gradient of a Slice needs constant starts, ends, axes and steps");
  size_t r = inDims.size();
  for (int64_t d : outDims)
    if (d == 0) {
      og[0] = b.zerosLike(in(b, 0));
      return;
    }
  Value *g = rg[0];
  for (size_t k = 0; k < starts->size(); ++k) {
    size_t axis = size_t(axes->empty() ? int64_t(k) : normAxis((*axes)[k], r));
    int64_t step = steps->empty() ? 1 : (*steps)[k], dim = inDims[axis];
    SliceRange sr = sliceRange(dim, (*starts)[k], (*ends)[k], step);
    int64_t n = outDims[axis], s = sr.start;
    if (step < 0) {
      g = reverseAxis(b, g, axis);
      s += (n - 1) * step; // the lowest position read
      step = -step;
    }
    if (step > 1 && n > 1) {
      std::vector<int64_t> d = b.dims(g), ins = d;
      ins.insert(ins.begin() + std::ptrdiff_t(axis) + 1, 1);
      Value *spread = b.padAxis(b.reshape(g, ins), axis + 1, 0, step - 1);
      d[axis] = n * step;
      g = b.reshape(spread, d);
    }
    int64_t len = b.dims(g)[axis];
    g = b.padAxis(g, axis, s, dim - s - len);
  }
  og[0] = g;
}

// Pad: constant mode, the cotangent sliced back out of the border; edge,
// reflect and wrap, per axis, the border's cotangents added to the elements
// they copied (summed onto the edge; reversed onto the reflected ones;
// onto the far end for wrap).
void pad(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0])
    return;
  const std::string &mode = b.fwd.getString("mode");
  std::vector<int64_t> pads = b.fwd.getInts("pads");
  if (mode == "constant") {
    for (int64_t &p : pads)
      p = -p;
    og[0] = b.op(OpKind::Pad, {rg[0]}, {{"pads", Attribute(pads)}});
    return;
  }
  if (mode != "edge" && mode != "reflect" && mode != "wrap")
    fail(b.fwd.where(), ": the gradient of a Pad in mode '", mode, "' is not supported");
  std::vector<int64_t> inDims = b.dims(in(b, 0));
  size_t r = inDims.size();
  Value *g = rg[0];
  for (size_t a = 0; a < r; ++a) {
    int64_t p = pads[a], q = pads[r + a], d = inDims[a];
    if (p == 0 && q == 0)
      continue;
    int64_t most = mode == "reflect" ? d - 1 : d;
    if (p < 0 || q < 0 || p > most || q > most)
      fail(b.fwd.where(), ": the gradient of a Pad in mode '", mode, "' with pads ", p, " and ", q,
           " on an axis of ", d, " is not supported (0 to ", most, ")");
    Value *acc = sliceAxis(b, g, a, p, p + d);
    if (p > 0) {
      Value *left = sliceAxis(b, g, a, 0, p);
      if (mode == "edge")
        left = b.padAxis(b.reduceSum(left, {int64_t(a)}, true), a, 0, d - 1);
      else if (mode == "reflect")
        left = b.padAxis(reverseAxis(b, left, a), a, 1, d - 1 - p);
      else
        left = b.padAxis(left, a, d - p, 0);
      acc = b.add(acc, left);
    }
    if (q > 0) {
      Value *right = sliceAxis(b, g, a, p + d, p + d + q);
      if (mode == "edge")
        right = b.padAxis(b.reduceSum(right, {int64_t(a)}, true), a, d - 1, 0);
      else if (mode == "reflect")
        right = b.padAxis(reverseAxis(b, right, a), a, d - 1 - q, 1);
      else
        right = b.padAxis(right, a, 0, d - q);
      acc = b.add(acc, right);
    }
    g = acc;
  }
  og[0] = g;
}

// Tile: sum the repeats, seen as extra axes [r0, d0, r1, d1, ...].
void tile(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<int64_t> inDims = b.dims(in(b, 0)), outDims = b.dims(b.fwd.result());
  std::vector<int64_t> split, axes;
  for (size_t a = 0; a < inDims.size(); ++a) {
    split.push_back(outDims[a] / std::max<int64_t>(inDims[a], 1));
    split.push_back(inDims[a]);
    axes.push_back(int64_t(2 * a));
  }
  og[0] = b.reshape(b.reduceSum(b.reshape(rg[0], split), axes, false), inDims);
}

namespace {
// Indices (wrapped) that are `repeats` copies, one after another, of the
// rows first, first + 1, ..., first + length - 1 of a table of `extent`.
struct IndexRun {
  int64_t first;
  size_t length, repeats;
};
// Constant indices into an axis of `extent`, negative ones wrapped; false
// where one is out of range (the forward's error, not the gradient's).
bool wrapConstIndices(std::vector<int64_t> &c, int64_t extent) {
  for (int64_t &i : c) {
    if (i < -extent || i >= extent)
      return false;
    i = i < 0 ? i + extent : i;
  }
  return true;
}
std::optional<IndexRun> periodicRun(std::vector<int64_t> c, int64_t extent) {
  if (!wrapConstIndices(c, extent))
    return std::nullopt;
  size_t length = 1;
  while (length < c.size() && c[length] == c[0] + int64_t(length))
    ++length;
  if (c.size() % length != 0)
    return std::nullopt;
  for (size_t k = length; k < c.size(); ++k)
    if (c[k] != c[k - length])
      return std::nullopt;
  return IndexRun{c[0], length, c.size() / length};
}
} // namespace

// Gather along `axis`: the cotangent scatter-added into zeros at the
// indices (ScatterND over the axis moved to the front; negative indices
// wrapped first).
void gather(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *data = in(b, 0), *idx = in(b, 1);
  std::vector<int64_t> dDims = b.dims(data);
  size_t r = dDims.size();
  int64_t axis = normAxis(b.fwd.getInt("axis"), r);
  std::vector<int64_t> iDims = b.dims(idx);
  int64_t extent = dDims[size_t(axis)];
  // One constant index (a packed qkv's q, k or v; a class token): the
  // cotangent padded with zeros along the axis, a move that fuses into the
  // sum of the other indices' cotangents, not a scatter into a zero tensor
  // of the data's size per index (two passes each) summed after.
  std::optional<std::vector<int64_t>> c = constInts(b, 1);
  if (c && c->size() == 1) {
    int64_t at = (*c)[0] < 0 ? (*c)[0] + extent : (*c)[0];
    if (at >= 0 && at < extent) {
      std::vector<int64_t> one = dDims;
      one[size_t(axis)] = 1;
      og[0] = b.padAxis(b.reshape(rg[0], one), size_t(axis), at, extent - 1 - at);
      return;
    }
  }
  std::optional<IndexRun> run = c ? periodicRun(*c, extent) : std::nullopt;
  // g: [d0..d(axis-1), i..., d(axis+1)..]: move the index axes to the front.
  size_t ni = iDims.size();
  std::vector<int64_t> perm;
  for (size_t k = 0; k < ni; ++k)
    perm.push_back(int64_t(axis) + int64_t(k));
  for (size_t k = 0; k < size_t(axis); ++k)
    perm.push_back(int64_t(k));
  for (size_t k = size_t(axis) + ni; k < r - 1 + ni; ++k)
    perm.push_back(int64_t(k));
  Value *g = b.transpose(rg[0], perm);
  // data with `axis` in front: [extent, other dims...].
  std::vector<int64_t> front{extent};
  std::vector<int64_t> dperm{axis};
  for (size_t k = 0; k < r; ++k)
    if (int64_t(k) != axis) {
      front.push_back(dDims[k]);
      dperm.push_back(int64_t(k));
    }
  Value *scattered;
  if (run) {
    // Constant indices that repeat one ascending run of rows (position
    // ids, arange per sequence; token types, all 0): the cotangent's
    // repeats summed (a column sum) and padded with zeros to the table,
    // where a scatter-add serializes on the duplicates (a token type's one
    // row: ~190 us of roberta_base's step on an H100).
    std::vector<int64_t> byRun{int64_t(run->repeats), int64_t(run->length)};
    byRun.insert(byRun.end(), front.begin() + 1, front.end());
    Value *rows = run->repeats == 1
                      ? b.reshape(g, std::vector<int64_t>(byRun.begin() + 1, byRun.end()))
                      : b.reduceSum(b.reshape(g, byRun), {0}, false);
    scattered = b.padAxis(rows, 0, run->first, extent - run->first - int64_t(run->length));
  } else {
    Value *i64 = idx->type.dtype == DType::I64
                     ? idx
                     : b.op(OpKind::Cast, {idx}, {{"to", Attribute(DType::I64)}});
    Value *zeroI =
        b.f.addConstant(b.f.uniqueName("gather_grad_zero"), TensorType{DType::I64, {}},
                        TensorData::copyOf(std::array<int64_t, 1>{0}.data(), 8), b.fwd.loc);
    Value *extentC =
        b.f.addConstant(b.f.uniqueName("gather_grad_extent"), TensorType{DType::I64, {}},
                        TensorData::copyOf(&extent, 8), b.fwd.loc);
    i64 = b.where(b.op(OpKind::Less, {i64, zeroI}), b.add(i64, extentC), i64);
    std::vector<int64_t> idxDims = iDims;
    idxDims.push_back(1);
    scattered =
        b.op(OpKind::ScatterND, {b.expandTo(b.scalar(0, rg[0]), front), b.reshape(i64, idxDims), g},
             {{"reduction", Attribute(std::string("add"))}});
  }
  std::vector<int64_t> inv(r);
  for (size_t k = 0; k < r; ++k)
    inv[size_t(dperm[k])] = int64_t(k);
  og[0] = b.transpose(scattered, inv);
}

namespace {
// i64 indices with the negative ones wrapped by `extent` (an i64 tensor that
// broadcasts against them).
Value *wrapIndices(GradBuilder &b, Value *idx, const std::vector<int64_t> &extent,
                   const std::vector<int64_t> &extentDims) {
  Value *i64 = idx->type.dtype == DType::I64
                   ? idx
                   : b.op(OpKind::Cast, {idx}, {{"to", Attribute(DType::I64)}});
  Value *ext = b.reshape(b.ints(extent), extentDims);
  Value *zero = b.reshape(b.ints({0}), {});
  return b.where(b.op(OpKind::Less, {i64, zero}), b.add(i64, ext), i64);
}
// GatherElements / ScatterElements indices along `axis` of `data`, wrapped.
Value *elementIndices(GradBuilder &b, Value *idx, const Value *data, int64_t axis) {
  return wrapIndices(b, idx, {b.dims(data)[size_t(axis)]}, {});
}
// GatherND / ScatterND index tuples into `data`, wrapped; with `batchDims`
// leading batch axes, each tuple prefixed by its batch coordinates (so a
// ScatterND with no batch axes writes where the GatherND read).
Value *tupleIndices(GradBuilder &b, Value *idx, const Value *data, int64_t batchDims = 0) {
  std::vector<int64_t> iD = b.dims(idx), dD = b.dims(data);
  size_t k = size_t(iD.back()), nb = size_t(batchDims);
  std::vector<int64_t> shape(iD.size(), 1);
  shape.back() = int64_t(k);
  Value *t = wrapIndices(
      b, idx,
      std::vector<int64_t>(dD.begin() + std::ptrdiff_t(nb), dD.begin() + std::ptrdiff_t(nb + k)),
      shape);
  if (nb == 0)
    return t;
  // The batch coordinates of every tuple: [i0 .. i(nb-1)] over indices' dims but the last.
  std::vector<int64_t> lead(iD.begin(), iD.end() - 1), coords;
  int64_t count = 1;
  for (int64_t d : lead)
    count *= d;
  for (int64_t e = 0; e < count; ++e) {
    std::vector<int64_t> at(lead.size());
    for (size_t a = lead.size(), rest = size_t(e); a-- > 0;) {
      at[a] = int64_t(rest % size_t(lead[a]));
      rest /= size_t(lead[a]);
    }
    coords.insert(coords.end(), at.begin(), at.begin() + std::ptrdiff_t(nb));
  }
  std::vector<int64_t> cD = lead;
  cD.push_back(int64_t(nb));
  Value *c = b.reshape(b.ints(coords), cD);
  return b.op(OpKind::Concat, {c, t}, {{"axis", Attribute(int64_t(iD.size() - 1))}});
}
Attribute addReduction() { return Attribute(std::string("add")); }
} // namespace

namespace {
// GatherElements whose index is a constant (or an Expand of one along
// leading axes) that picks each element at most once along `axis` in every
// row (DeBERTa's relative-position gathers: i - j + span): its gradient as
// a gather, each data element taking the cotangent element that picked it,
// 0 where none did; a ScatterElements would have every element scan its
// row's updates (2 x 12 of them in deberta_v3_base's step).
Value *injectiveGatherGrad(GradBuilder &b, Value *g, Value *data, Value *idx, int64_t axis) {
  const Value *base = idx->def && idx->def->is(OpKind::Expand) ? idx->def->operand(0) : idx;
  std::optional<std::vector<int64_t>> c = constIntsOf(base);
  std::vector<int64_t> dd = b.dims(data), od = b.dims(g);
  size_t r = dd.size(), a = size_t(axis);
  if (!c || base->type.rank() != r || !isStaticShape(base->type.shape) ||
      !wrapConstIndices(*c, dd[a]))
    return nullptr;
  std::vector<int64_t> bd = staticDims(base->type.shape);
  // Leading axes [0, k) broadcast (1 in the base); the rest whole, and the
  // data's extents off the axis (no partial rows).
  size_t k = 0;
  while (k < r && k != a && bd[k] == 1 && od[k] != 1)
    ++k;
  for (size_t d = 0; d < r; ++d)
    if ((d >= k && bd[d] != od[d]) || (d != a && od[d] != dd[d]))
      return nullptr;
  // Per row of the base (all but the axis, leading axes dropped): the
  // source of each data element along the axis, as a flat offset into the
  // cotangent's trailing axes [k, r).
  int64_t inner = 1, n = dd[a], m = od[a];
  for (size_t d = a + 1; d < r; ++d)
    inner *= dd[d];
  int64_t rows = 1;
  for (size_t d = k; d < a; ++d)
    rows *= dd[d];
  int64_t total = rows * n * inner;
  std::vector<int32_t> src(size_t(total), 0);
  std::vector<uint8_t> valid(size_t(total), 0);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t in = 0; in < inner; ++in) {
        int64_t at = (row * m + j) * inner + in, v = (*c)[size_t(at)];
        int64_t to = (row * n + v) * inner + in;
        if (valid[size_t(to)] || at > INT32_MAX)
          return nullptr; // picked twice: a sum, the scatter's
        valid[size_t(to)] = 1;
        src[size_t(to)] = int32_t(at);
      }
  std::vector<int64_t> lead(od.begin(), od.begin() + std::ptrdiff_t(k));
  std::vector<int64_t> flatG = lead, maskDims(r, 1);
  flatG.push_back(rows * m * inner);
  for (size_t d = k; d < r; ++d)
    maskDims[d] = dd[d];
  Value *srcC =
      b.f.addConstant(b.f.uniqueName("gather_grad_src"), TensorType{DType::I32, makeShape({total})},
                      TensorData::copyOf(src.data(), src.size() * 4), b.fwd.loc);
  Value *validC = b.f.addConstant(b.f.uniqueName("gather_grad_hit"),
                                  TensorType{DType::Bool, makeShape(maskDims)},
                                  TensorData::copyOf(valid.data(), valid.size()), b.fwd.loc);
  Value *picked =
      b.op(OpKind::Gather, {b.reshape(g, flatG), srcC}, {{"axis", Attribute(int64_t(k))}});
  return b.where(validC, b.reshape(picked, dd), b.scalar(0, g));
}
} // namespace

// GatherElements: the cotangent scatter-added at the indices (or gathered
// from the positions an injective constant index picked).
void gatherElements(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *data = in(b, 0);
  int64_t axis = normAxis(b.fwd.getInt("axis"), data->type.rank());
  if ((og[0] = injectiveGatherGrad(b, rg[0], data, in(b, 1), axis)))
    return;
  og[0] = b.op(OpKind::ScatterElements,
               {b.zerosLike(data), elementIndices(b, in(b, 1), data, axis), rg[0]},
               {{"axis", Attribute(axis)}, {"reduction", addReduction()}});
}

// GatherND: the cotangent scatter-added at the index tuples (batch axes made
// part of the tuples).
void gatherND(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *data = in(b, 0);
  Value *idx = tupleIndices(b, in(b, 1), data, b.fwd.getInt("batch_dims"));
  og[0] = b.op(OpKind::ScatterND, {b.zerosLike(data), idx, rg[0]}, {{"reduction", addReduction()}});
}

// ScatterND / ScatterElements (reduction none or add): the updates' cotangent
// gathered from the positions they went to; data's is the cotangent with
// those positions zeroed (none) or all of it (add).
void scatterND(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  const std::string &red = b.fwd.getString("reduction");
  if (red != "none" && red != "add")
    fail(b.fwd.where(), ": the gradient of a ScatterND with reduction '", red,
         "' is not supported (none or add)");
  Value *idx = tupleIndices(b, in(b, 1), in(b, 0));
  if (w[0])
    og[0] = red == "add" ? rg[0] : b.op(OpKind::ScatterND, {rg[0], idx, b.zerosLike(in(b, 2))});
  if (w[2])
    og[2] = b.op(OpKind::GatherND, {rg[0], idx});
}

void scatterElements(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  const std::string &red = b.fwd.getString("reduction");
  if (red != "none" && red != "add")
    fail(b.fwd.where(), ": the gradient of a ScatterElements with reduction '", red,
         "' is not supported (none or add)");
  int64_t axis = normAxis(b.fwd.getInt("axis"), in(b, 0)->type.rank());
  Value *idx = elementIndices(b, in(b, 1), in(b, 0), axis);
  if (w[0])
    og[0] = red == "add" ? rg[0]
                         : b.op(OpKind::ScatterElements, {rg[0], idx, b.zerosLike(in(b, 2))},
                                {{"axis", Attribute(axis)}});
  if (w[2])
    og[2] = b.op(OpKind::GatherElements, {rg[0], idx}, {{"axis", Attribute(axis)}});
}

// CumSum: the running sum of the cotangent in the other direction.
void cumSum(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  if (in(b, 1))
    fail(b.fwd.where(), ": the gradient of a CumSum needs a constant axis");
  og[0] = b.op(OpKind::CumSum, {rg[0]},
               {{"axis", Attribute(b.fwd.getInt("axis"))},
                {"exclusive", Attribute(b.fwd.getInt("exclusive"))},
                {"reverse", Attribute(int64_t(!b.fwd.getInt("reverse")))}});
}

// DepthToSpace and SpaceToDepth are permutations: DCR's inverse is
// SpaceToDepth and back; CRD's, its reshape-transpose-reshape undone.
void depthToSpace(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  int64_t bs = b.fwd.getInt("blocksize");
  if (b.fwd.getString("mode") != "CRD") {
    og[0] = b.op(OpKind::SpaceToDepth, {rg[0]}, {{"blocksize", Attribute(bs)}});
    return;
  }
  // Forward: [N, C, b, b, H, W] -perm [0,1,4,2,5,3]-> [N, C, H, b, W, b].
  std::vector<int64_t> xD = b.dims(in(b, 0));
  if (xD.size() != 4)
    fail(b.fwd.where(), ": the gradient of a CRD DepthToSpace needs a 4-D input");
  int64_t C = xD[1] / (bs * bs), H = xD[2], W = xD[3];
  Value *g = b.reshape(rg[0], {xD[0], C, H, bs, W, bs});
  og[0] = b.reshape(b.transpose(g, {0, 1, 3, 5, 2, 4}), xD);
}

void spaceToDepth(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.op(OpKind::DepthToSpace, {rg[0]},
               {{"blocksize", Attribute(b.fwd.getInt("blocksize"))},
                {"mode", Attribute(std::string("DCR"))}});
}

// Trilu: the same triangle of the cotangent.
void trilu(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  std::vector<Value *> ins{rg[0]};
  if (b.fwd.operands.size() > 1 && in(b, 1))
    ins.push_back(in(b, 1));
  og[0] = b.op(OpKind::Trilu, ins, {{"upper", Attribute(b.fwd.getInt("upper"))}});
}

// TopK: the values' cotangent scatter-added at their indices.
void topK(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  Value *x = in(b, 0);
  int64_t axis = normAxis(b.fwd.getInt("axis"), x->type.rank());
  og[0] = b.op(OpKind::ScatterElements, {b.zerosLike(x), b.fwd.result(1), rg[0]},
               {{"axis", Attribute(axis)}, {"reduction", addReduction()}});
}

// ReverseSequence reverses back.
void reverseSequence(GradBuilder &b, const Grads &rg, const Wanted &, Grads &og) {
  og[0] = b.op(OpKind::ReverseSequence, {rg[0], in(b, 1)},
               {{"batch_axis", Attribute(b.fwd.getInt("batch_axis"))},
                {"time_axis", Attribute(b.fwd.getInt("time_axis"))}});
}

} // namespace tc::grad
