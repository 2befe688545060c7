// Shape rules of reshaping and data-movement ops.
#include "OpInference.h"
#include "tc/IR/IndexMath.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>

namespace tc::infer {

std::vector<TensorType> inferReshape(const Op &op) {
  const TensorType &x = operandType(op, 0), &s = operandType(op, 1);
  if (s.dtype != DType::I64 || s.rank() != 1)
    fail("shape must be a 1-D i64 tensor, got ", s.str());
  auto target = constantInts(op.operand(1));
  if (!target) {
    // Shape computed at run time: only the rank is known.
    if (!s.shape[0].isStatic())
      fail("shape operand has unknown length");
    if (s.shape[0].size > 64)
      fail("shape operand has ", s.shape[0].size, " entries; tc supports rank <= 64");
    return {TensorType{x.dtype, Shape(s.shape[0].size, Dim::unknown())}};
  }
  bool allowZero = op.getInt("allowzero");
  Shape out;
  int inferAt = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == -1) {
      if (inferAt >= 0)
        fail("shape has more than one -1");
      inferAt = int(i);
      out.push_back(Dim::unknown());
    } else if (d == 0 && !allowZero) {
      if (i >= x.rank())
        fail("shape[", i, "] = 0 copies a dimension the input does not have");
      out.push_back(x.shape[i]);
    } else if (d < 0) {
      fail("shape[", i, "] = ", d, " is invalid");
    } else {
      out.push_back(Dim::fixed(d));
    }
  }
  // The -1 dim: the input's elements over the other output dims, an
  // expression of the symbolic dims where they are (DimExpr.h).
  Shape rest = out;
  if (inferAt >= 0)
    rest.erase(rest.begin() + inferAt);
  Dim nIn = product(x.shape, 0, x.rank()), nOut = product(rest, 0, rest.size());
  if (nIn.isStatic() && nOut.isStatic()) {
    if (inferAt < 0 && nIn.size != nOut.size)
      fail("cannot reshape ", x.str(), " (", nIn.size, " elements) to ", nOut.size, " elements");
    if (inferAt >= 0 && nOut.size && nIn.size % nOut.size)
      fail("cannot reshape ", x.str(), " (", nIn.size, " elements) into a multiple of ", nOut.size);
  }
  if (inferAt >= 0 && !(nOut.isStatic() && nOut.size == 0))
    out[inferAt] = dimQuotient(nIn, nOut);
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferTranspose(const Op &op) {
  const TensorType &x = operandType(op, 0);
  std::vector<int64_t> perm = op.getInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < x.rank(); ++i)
      perm.push_back(int64_t(x.rank() - 1 - i));
  if (perm.size() != x.rank())
    fail("perm has ", perm.size(), " entries for a rank-", x.rank(), " input");
  std::vector<bool> seen(x.rank());
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(x.rank()) || seen[p])
      fail("perm is not a permutation of 0..", x.rank() - 1);
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferFlatten(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t r = int64_t(x.rank());
  int64_t axis = op.getInt("axis");
  if (axis < -r || axis > r)
    fail("axis ", axis, " is out of range for rank ", r);
  if (axis < 0)
    axis += r;
  return {TensorType{x.dtype, {product(x.shape, 0, axis), product(x.shape, axis, r)}}};
}

std::vector<TensorType> inferConcat(const Op &op) {
  const TensorType &first = operandType(op, 0);
  int64_t r = int64_t(first.rank());
  if (r == 0)
    fail("cannot concatenate scalars");
  int64_t axis = normalizeAxis(op.getInt("axis"), r);
  Shape out = first.shape;
  int64_t total = 0;
  bool allStatic = true;
  Dim sum;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TensorType &t = operandType(op, i);
    if (t.dtype != first.dtype || int64_t(t.rank()) != r)
      fail("input ", i, " ", t.str(), " does not match input 0 ", first.str());
    for (int64_t d = 0; d < r; ++d) {
      if (d == axis)
        continue;
      const Dim &a = out[d], &b = t.shape[d];
      if (a.isStatic() && b.isStatic() && a.size != b.size)
        fail("input ", i, " ", t.str(), " differs from input 0 ", first.str(), " off the axis");
      if (!a.isStatic() && b.isStatic())
        out[d] = b;
    }
    if (t.shape[axis].isStatic())
      total = checkedAdd(total, t.shape[axis].size);
    else
      allStatic = false;
    sum = i ? dimSum(sum, t.shape[axis]) : t.shape[axis];
  }
  out[axis] = allStatic ? Dim::fixed(total) : sum; // past + 1: an expression
  return {TensorType{first.dtype, out}};
}

// ---- More shape and data movement ------------------------------------------

namespace {

bool isIndexType(DType t) { return t == DType::I64 || t == DType::I32; }

void requireIndices(const TensorType &t, const char *what) {
  if (!isIndexType(t.dtype))
    fail(what, " must be i32 or i64, got ", t.str());
}

// A 1-D integer operand (a shape, axes, repeats): its length, which must be
// static.
int64_t vectorLength(const TensorType &t, const char *what, bool i64Only = false) {
  if (t.rank() != 1 || !(i64Only ? t.dtype == DType::I64 : isIndexType(t.dtype)))
    fail(what, " must be a 1-D ", i64Only ? "i64" : "i32 or i64", " tensor, got ", t.str());
  if (!t.shape[0].isStatic())
    fail(what, " has unknown length");
  if (t.shape[0].size > 1024)
    fail(what, " has ", t.shape[0].size, " entries; tc supports rank <= 1024");
  return t.shape[0].size;
}

// The value of a one-element constant operand, or nullopt when not constant.
const Value *constantScalar(const Value *v) {
  if (!v || !v->isConstant())
    return nullptr;
  auto n = staticNumElements(v->type.shape);
  if (!n || *n != 1 || v->data->size != dtypeSize(v->type.dtype))
    return nullptr;
  return v;
}

// A scalar operand: rank 0, or one element of rank 1 (which ONNX exporters
// produce too).
void requireScalar(const TensorType &t, const char *what) {
  auto n = staticNumElements(t.shape);
  if (t.rank() > 1 || (t.rank() == 1 && n && *n != 1))
    fail(what, " must be a scalar, got ", t.str());
}

} // namespace

std::vector<TensorType> inferSqueeze(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t r = int64_t(x.rank());
  if (op.operand(1)) { // axes computed at run time: rank r - n, sizes unknown
    int64_t n = runtimeIntsLength(op, 1);
    if (n == 0 || n > r)
      fail("axes operand has ", n, " entries for a rank-", r, " input");
    return {TensorType{x.dtype, Shape(size_t(r - n), Dim::unknown())}};
  }
  std::vector<bool> drop(x.rank());
  const std::vector<int64_t> &axes = op.getInts("axes");
  if (axes.empty()) {
    for (int64_t d = 0; d < r; ++d) {
      if (!x.shape[d].isStatic())
        fail("without axes, every dim must be static to know which are 1; got ", x.str());
      drop[d] = x.shape[d].size == 1;
    }
  }
  for (int64_t a : axes) {
    int64_t d = normalizeAxis(a, r);
    if (drop[d])
      fail("axis ", a, " is listed twice");
    if (x.shape[d].isStatic() && x.shape[d].size != 1)
      fail("cannot squeeze axis ", a, " of size ", x.shape[d].size);
    drop[d] = true;
  }
  Shape out;
  for (int64_t d = 0; d < r; ++d)
    if (!drop[d])
      out.push_back(x.shape[d]);
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferUnsqueeze(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (op.operand(1)) { // axes computed at run time: rank r + n, sizes unknown
    int64_t n = runtimeIntsLength(op, 1);
    return {TensorType{x.dtype, Shape(x.rank() + size_t(n), Dim::unknown())}};
  }
  const std::vector<int64_t> &axes = op.getInts("axes");
  int64_t r = int64_t(x.rank()), outRank = checkedAdd(r, int64_t(axes.size()));
  std::vector<bool> added(static_cast<size_t>(outRank));
  for (int64_t a : axes) {
    if (a < -outRank || a >= outRank)
      fail("axis ", a, " is out of range for the rank-", outRank, " result");
    int64_t d = a < 0 ? a + outRank : a;
    if (added[d])
      fail("axis ", a, " is listed twice");
    added[d] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    out.push_back(added[d] ? Dim::fixed(1) : x.shape[next++]);
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferSplit(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  size_t n = op.results.size();
  if (n == 0)
    fail("has no results");
  const Dim &d = x.shape[axis];
  const std::vector<int64_t> &split = op.getInts("split");
  std::vector<TensorType> out(n, x);
  if (op.operand(1)) { // sizes computed at run time
    if (runtimeIntsLength(op, 1) != int64_t(n))
      fail("split operand ", operandType(op, 1).str(), " must hold ", n, " sizes");
    for (TensorType &t : out)
      t.shape[axis] = Dim::unknown();
    return out;
  }
  if (!split.empty()) {
    if (split.size() != n)
      fail("split has ", split.size(), " sizes for ", n, " results");
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (split[i] < 0)
        fail("split size ", split[i], " is negative");
      total = checkedAdd(total, split[i]);
      out[i].shape[axis] = Dim::fixed(split[i]);
    }
    if (d.isStatic() && total != d.size)
      fail("split sizes add up to ", total, ", but axis ", axis, " has size ", d.size);
    return out;
  }
  if (!d.isStatic()) {
    if (n > 1)
      for (TensorType &t : out)
        t.shape[axis] = Dim::unknown();
    return out;
  }
  int64_t chunk = d.size / int64_t(n) + (d.size % int64_t(n) != 0);
  int64_t last = d.size - chunk * int64_t(n - 1);
  if (last < 0)
    fail("axis ", axis, " of size ", d.size, " cannot be split into ", n, " parts");
  for (size_t i = 0; i < n; ++i)
    out[i].shape[axis] = Dim::fixed(i + 1 == n ? last : chunk);
  return out;
}

std::vector<TensorType> inferSlice(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t r = int64_t(x.rank());
  const TensorType &st = operandType(op, 1), &en = operandType(op, 2);
  int64_t n = vectorLength(st, "starts");
  if (vectorLength(en, "ends") != n || en.dtype != st.dtype)
    fail("ends ", en.str(), " does not match starts ", st.str());
  for (size_t i = 3; i < 5; ++i)
    if (const Value *v = op.operand(i)) {
      const char *what = i == 3 ? "axes" : "steps";
      if (vectorLength(v->type, what) != n || v->type.dtype != st.dtype)
        fail(what, " ", v->type.str(), " does not match starts ", st.str());
    }
  if (n > r)
    fail("slices ", n, " axes of a rank-", r, " input");
  Shape out = x.shape;
  std::vector<int64_t> axes(size_t(n), 0);
  if (const Value *a = op.operand(3)) {
    auto c = constantInts(a);
    if (!c) // computed axes: any dim may change
      return {TensorType{x.dtype, Shape(x.rank(), Dim::unknown())}};
    axes = *c;
  } else {
    for (int64_t i = 0; i < n; ++i)
      axes[i] = i;
  }
  std::vector<bool> seen(x.rank());
  for (int64_t &a : axes) {
    int64_t orig = a;
    a = normalizeAxis(a, r);
    if (seen[a])
      fail("axis ", orig, " is listed twice");
    seen[a] = true;
  }
  auto starts = constantInts(op.operand(1)), ends = constantInts(op.operand(2));
  std::optional<std::vector<int64_t>> steps = std::vector<int64_t>(size_t(n), 1);
  if (op.operand(4))
    steps = constantInts(op.operand(4));
  if (steps)
    for (int64_t s : *steps)
      if (s == 0)
        fail("steps must be nonzero");
  for (int64_t i = 0; i < n; ++i) {
    Dim &d = out[axes[i]];
    if (!starts || !ends || !steps) {
      d = Dim::unknown();
    } else if (d.isStatic()) {
      d = Dim::fixed(sliceRange(d.size, (*starts)[i], (*ends)[i], (*steps)[i]).count);
    } else if (!((*starts)[i] == 0 && (*steps)[i] == 1 && (*ends)[i] == INT64_MAX)) {
      d = Dim::unknown(); // [0:INT64_MAX:1] keeps the whole (symbolic) axis
    }
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferGather(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1);
  requireIndices(ind, "indices");
  if (x.rank() == 0)
    fail("data must have rank >= 1");
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferGatherElements(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1);
  requireIndices(ind, "indices");
  if (x.rank() == 0 || ind.rank() != x.rank())
    fail("data ", x.str(), " and indices ", ind.str(), " must have the same rank >= 1");
  normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  return {TensorType{x.dtype, ind.shape}};
}

std::vector<TensorType> inferGatherND(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1);
  requireIndices(ind, "indices");
  int64_t r = int64_t(x.rank()), q = int64_t(ind.rank()), b = op.getInt("batch_dims");
  if (r < 1 || q < 1)
    fail("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    fail("batch_dims ", b, " must be in [0, ", std::min(r, q), ")");
  for (int64_t i = 0; i < b; ++i)
    if (x.shape[i].isStatic() && ind.shape[i].isStatic() && x.shape[i].size != ind.shape[i].size)
      fail("batch dim ", i, " differs: data ", x.str(), ", indices ", ind.str());
  const Dim &k = ind.shape[q - 1];
  if (!k.isStatic())
    fail("the last dim of indices ", ind.str(), " must be static");
  if (k.size < 1 || k.size > r - b)
    fail("the last dim of indices ", ind.str(), " must be in [1, ", r - b, "]");
  Shape out(ind.shape.begin(), ind.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k.size, x.shape.end());
  return {TensorType{x.dtype, out}};
}

static void checkReduction(const Op &op) {
  const std::string &red = op.getString("reduction");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    fail("reduction must be none, add, mul, max or min, got \"", red, "\"");
}

static void checkSameDims(const Shape &a, const Shape &b, const char *what) {
  if (a.size() != b.size())
    fail(what);
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].isStatic() && b[i].isStatic() && a[i].size != b[i].size)
      fail(what);
}

std::vector<TensorType> inferScatterElements(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1), &upd = operandType(op, 2);
  requireIndices(ind, "indices");
  checkReduction(op);
  if (x.rank() == 0 || ind.rank() != x.rank())
    fail("data ", x.str(), " and indices ", ind.str(), " must have the same rank >= 1");
  if (upd.dtype != x.dtype)
    fail("updates ", upd.str(), " differs in type from data ", x.str());
  checkSameDims(upd.shape, ind.shape, "updates and indices must have the same shape");
  normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  return {x};
}

std::vector<TensorType> inferScatterND(const Op &op) {
  const TensorType &x = operandType(op, 0), &ind = operandType(op, 1), &upd = operandType(op, 2);
  requireIndices(ind, "indices");
  checkReduction(op);
  int64_t r = int64_t(x.rank()), q = int64_t(ind.rank());
  if (r < 1 || q < 1)
    fail("data and indices must have rank >= 1");
  if (upd.dtype != x.dtype)
    fail("updates ", upd.str(), " differs in type from data ", x.str());
  const Dim &k = ind.shape[q - 1];
  if (!k.isStatic())
    fail("the last dim of indices ", ind.str(), " must be static");
  if (k.size < 1 || k.size > r)
    fail("the last dim of indices ", ind.str(), " must be in [1, ", r, "]");
  Shape want(ind.shape.begin(), ind.shape.end() - 1);
  want.insert(want.end(), x.shape.begin() + k.size, x.shape.end());
  checkSameDims(upd.shape, want,
                "updates must have shape indices.shape[:-1] + data.shape[indices.shape[-1]:]");
  return {x};
}

std::vector<TensorType> inferExpand(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t n = vectorLength(operandType(op, 1), "shape", true);
  if (auto dims = constantInts(op.operand(1))) {
    for (int64_t d : *dims)
      if (d < 0)
        fail("shape has a negative dim ", d);
    return {TensorType{x.dtype, broadcast(x.shape, makeShape(*dims))}};
  }
  // Computed shape: a static input dim other than 1 survives the broadcast.
  size_t r = std::max(x.rank(), size_t(n));
  Shape out(r, Dim::unknown());
  for (size_t i = 0; i < x.rank(); ++i) {
    const Dim &d = x.shape[i];
    if (d.isStatic() && d.size != 1)
      out[r - x.rank() + i] = d;
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferShapeOf(const Op &op) {
  int64_t r = int64_t(operandType(op, 0).rank());
  auto clampAxis = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  int64_t start = clampAxis(op.getInt("start")), end = clampAxis(op.getInt("end"));
  return {TensorType{DType::I64, {Dim::fixed(std::max<int64_t>(0, end - start))}}};
}

std::vector<TensorType> inferSize(const Op &op) {
  operandType(op, 0);
  return {TensorType{DType::I64, {}}};
}

std::vector<TensorType> inferConstantOfShape(const Op &op) {
  int64_t n = vectorLength(operandType(op, 0), "input", true);
  DType dt = op.attr("dtype").type();
  double v = op.getFloat("value");
  if (isInteger(dt) && std::trunc(v) != v)
    fail("value ", v, " is not an integer, but the result is ", dtypeName(dt));
  auto dims = constantInts(op.operand(0));
  if (!dims)
    return {TensorType{dt, Shape(size_t(n), Dim::unknown())}};
  for (int64_t d : *dims)
    if (d < 0)
      fail("shape has a negative dim ", d);
  return {TensorType{dt, makeShape(*dims)}};
}

std::vector<TensorType> inferRange(const Op &op) {
  const TensorType &t = operandType(op, 0);
  const char *names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    const TensorType &o = operandType(op, i);
    requireScalar(o, names[i]);
    if (o.dtype != t.dtype)
      fail(names[i], " ", o.str(), " differs in type from start ", t.str());
  }
  if (t.dtype == DType::Bool)
    fail("expects numeric operands, got bool");
  const Value *s = constantScalar(op.operand(0)), *l = constantScalar(op.operand(1)),
              *d = constantScalar(op.operand(2));
  if (!s || !l || !d)
    return {TensorType{t.dtype, {Dim::unknown()}}};
  int64_t n;
  if (isInteger(t.dtype)) {
    __int128 start = elementAsInt(*s, 0), limit = elementAsInt(*l, 0), delta = elementAsInt(*d, 0);
    if (t.dtype == DType::U64) {
      start = uint64_t(start), limit = uint64_t(limit), delta = uint64_t(delta);
    }
    if (delta == 0)
      fail("delta must be nonzero");
    __int128 span = limit - start;
    __int128 c = delta > 0 ? (span > 0 ? (span + delta - 1) / delta : 0)
                           : (span < 0 ? (span + delta + 1) / delta : 0);
    if (c > INT64_MAX / 16)
      fail("range has ", int64_t(c >> 64 ? INT64_MAX : c), " elements, too many");
    n = int64_t(c);
  } else {
    double start = elementAsDouble(*s, 0), limit = elementAsDouble(*l, 0),
           delta = elementAsDouble(*d, 0), c;
    if (delta == 0)
      fail("delta must be nonzero");
    if (t.dtype == DType::F32) // ONNX computes the count in the operands' type
      c = std::ceil(double((float(limit) - float(start)) / float(delta)));
    else
      c = std::ceil((limit - start) / delta);
    if (std::isnan(c) || c >= 1e15)
      fail("range from ", start, " to ", limit, " by ", delta, " has no finite length");
    n = c > 0 ? int64_t(c) : 0;
  }
  return {TensorType{t.dtype, {Dim::fixed(n)}}};
}

std::vector<TensorType> inferTile(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t n = vectorLength(operandType(op, 1), "repeats", true);
  if (n != int64_t(x.rank()))
    fail("repeats has ", n, " entries for a rank-", x.rank(), " input");
  Shape out(x.rank(), Dim::unknown());
  if (auto reps = constantInts(op.operand(1))) {
    for (size_t i = 0; i < x.rank(); ++i) {
      int64_t k = (*reps)[i];
      if (k < 0)
        fail("repeats has a negative entry ", k);
      if (x.shape[i].isStatic())
        out[i] = Dim::fixed(checkedMul(x.shape[i].size, k));
      else if (k == 1)
        out[i] = x.shape[i];
      else if (k == 0)
        out[i] = Dim::fixed(0);
    }
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferTrilu(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.rank() < 2)
    fail("input must have rank >= 2, got ", x.str());
  if (const Value *k = op.operand(1)) {
    requireScalar(k->type, "k");
    if (k->type.dtype != DType::I64)
      fail("k must be i64, got ", k->type.str());
  }
  return {x};
}

std::vector<TensorType> inferOneHot(const Op &op) {
  const TensorType &ind = operandType(op, 0), &depth = operandType(op, 1),
                   &vals = operandType(op, 2);
  if (ind.dtype == DType::Bool || depth.dtype == DType::Bool)
    fail("indices and depth must be numeric");
  requireScalar(depth, "depth");
  if (vals.rank() != 1 || (vals.shape[0].isStatic() && vals.shape[0].size != 2))
    fail("values must be a 1-D tensor of two elements [off, on], got ", vals.str());
  int64_t r = int64_t(ind.rank()) + 1, axis = op.getInt("axis");
  if (axis < -r || axis >= r)
    fail("axis ", axis, " is out of range for the rank-", r, " result");
  if (axis < 0)
    axis += r;
  Dim d = Dim::unknown();
  if (const Value *c = constantScalar(op.operand(1))) {
    double v = std::trunc(elementAsDouble(*c, 0));
    if (!(v >= 0) || v > double(INT64_MAX / 16))
      fail("depth ", v, " is out of range");
    d = Dim::fixed(int64_t(v));
  }
  Shape out = ind.shape;
  out.insert(out.begin() + axis, d);
  return {TensorType{vals.dtype, out}};
}

static int64_t blocksize(const Op &op) {
  int64_t b = op.getInt("blocksize");
  if (b < 1)
    fail("blocksize must be >= 1, got ", b);
  return b;
}

static void require4D(const TensorType &x) {
  if (x.rank() != 4)
    fail("input must be 4-D (N, C, H, W), got ", x.str());
}

std::vector<TensorType> inferDepthToSpace(const Op &op) {
  const TensorType &x = operandType(op, 0);
  require4D(x);
  int64_t b = blocksize(op), bb = checkedMul(b, b);
  const std::string &mode = op.getString("mode");
  if (mode != "DCR" && mode != "CRD")
    fail("mode must be \"DCR\" or \"CRD\", got \"", mode, "\"");
  Shape out = x.shape;
  if (x.shape[1].isStatic()) {
    if (x.shape[1].size % bb != 0)
      fail("channels ", x.shape[1].size, " are not divisible by blocksize^2 = ", bb);
    out[1] = Dim::fixed(x.shape[1].size / bb);
  } else if (b != 1) {
    out[1] = Dim::unknown();
  }
  for (size_t i = 2; i < 4; ++i)
    if (x.shape[i].isStatic())
      out[i] = Dim::fixed(checkedMul(x.shape[i].size, b));
    else if (b != 1)
      out[i] = Dim::unknown();
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferSpaceToDepth(const Op &op) {
  const TensorType &x = operandType(op, 0);
  require4D(x);
  int64_t b = blocksize(op);
  Shape out = x.shape;
  if (x.shape[1].isStatic())
    out[1] = Dim::fixed(checkedMul(x.shape[1].size, checkedMul(b, b)));
  else if (b != 1)
    out[1] = Dim::unknown();
  for (size_t i = 2; i < 4; ++i) {
    if (x.shape[i].isStatic()) {
      if (x.shape[i].size % b != 0)
        fail("spatial dim ", x.shape[i].size, " is not divisible by blocksize ", b);
      out[i] = Dim::fixed(x.shape[i].size / b);
    } else if (b != 1) {
      out[i] = Dim::unknown();
    }
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferEyeLike(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.rank() != 2)
    fail("input must be 2-D, got ", x.str());
  return {TensorType{op.attr("dtype").type(), x.shape}};
}

} // namespace tc::infer
