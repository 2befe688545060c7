#include "tc/Transforms/ShapeContents.h"
#include "tc/IR/NNMath.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstring>

namespace tc {

namespace {

std::optional<std::vector<int64_t>> constInts(const Value *v) {
  if (!v || !v->isConstant() || (v->type.dtype != DType::I64 && v->type.dtype != DType::I32))
    return std::nullopt;
  auto n = staticNumElements(v->type.shape);
  if (!n || *n > 1024)
    return std::nullopt;
  std::vector<int64_t> r(static_cast<size_t>(*n));
  for (size_t i = 0; i < r.size(); ++i) {
    if (v->type.dtype == DType::I64) {
      std::memcpy(&r[i], v->data->ptr + i * 8, 8);
    } else {
      int32_t x;
      std::memcpy(&x, v->data->ptr + i * 4, 4);
      r[i] = x;
    }
  }
  return r;
}

ShapeEntry entryOf(const Dim &d) { return d.isUnknown() ? std::nullopt : ShapeEntry(exprOf(d)); }

// The dim an element gives a shape: `?` for an unknown or negative one.
Dim dimOfEntry(const ShapeEntry &e) {
  if (!e || (e->isConstant() && e->constantValue() < 0))
    return Dim::unknown();
  return dimOf(*e);
}

bool isInt(const ShapeEntry &e, int64_t n) {
  return e && e->isConstant() && e->constantValue() == n;
}

} // namespace

std::optional<ShapeContents> ShapeTracker::contents(const Value *v) const {
  if (auto c = constInts(v)) {
    ShapeContents out;
    for (int64_t x : *c)
      out.push_back(DimExpr::integer(x));
    return out;
  }
  auto it = known_.find(v);
  return it == known_.end() ? std::nullopt : std::optional(it->second);
}

std::optional<ShapeRange> ShapeTracker::range(const Value *v) const {
  auto it = ranges_.find(v);
  return it == ranges_.end() ? std::nullopt : std::optional(it->second);
}

void ShapeTracker::visit(const Op &op) {
  if (op.results.size() != 1 || op.result()->type.dtype != DType::I64)
    return;
  if (auto c = compute(op)) {
    known_[op.result()] = std::move(*c);
    return;
  }
  switch (op.kind) {
  case OpKind::Range: {
    auto start = contents(op.operand(0)), step = contents(op.operand(2));
    if (start && step && start->size() == 1 && step->size() == 1 && (*start)[0] && (*step)[0] &&
        (*step)[0]->isConstant() && (*step)[0]->constantValue() != 0)
      ranges_[op.result()] = {*(*start)[0], (*step)[0]->constantValue()};
    break;
  }
  case OpKind::Squeeze: // views: the same elements in the same order
  case OpKind::Unsqueeze:
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Flatten:
    if (auto r = range(op.operand(0)))
      ranges_[op.result()] = *r;
    break;
  case OpKind::Add: // a range plus or times a one-element constant: a range
  case OpKind::Mul:
    for (size_t i = 0; i < 2; ++i) {
      auto r = range(op.operand(i));
      auto c = constInts(op.operand(1 - i));
      if (!r || !c || c->size() != 1 || op.result()->type != op.operand(i)->type)
        continue;
      try {
        ranges_[op.result()] =
            op.is(OpKind::Add)
                ? ShapeRange{r->start + DimExpr::integer((*c)[0]), r->step}
                : ShapeRange{
                      r->start * DimExpr::integer((*c)[0]),
                      (DimExpr::integer(r->step) * DimExpr::integer((*c)[0])).constantValue()};
      } catch (const Error &) { // overflow
      }
      break;
    }
    break;
  default: break;
  }
}

std::optional<Shape> ShapeTracker::resultShape(const Op &op) const {
  switch (op.kind) {
  case OpKind::Reshape: return reshape(op);
  case OpKind::Expand: {
    auto c = contents(op.operand(1));
    if (!c)
      return std::nullopt;
    const Shape &in = op.operand(0)->type.shape;
    size_t r = std::max(in.size(), c->size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
      Dim a = i + in.size() >= r ? in[i + in.size() - r] : Dim::fixed(1);
      Dim b = i + c->size() >= r ? dimOfEntry((*c)[i + c->size() - r]) : Dim::fixed(1);
      if (a == Dim::fixed(1))
        out[i] = b;
      else if (b == Dim::fixed(1) || a == b)
        out[i] = a;
      else
        out[i] = Dim::unknown();
    }
    return out;
  }
  case OpKind::ConstantOfShape: {
    auto c = contents(op.operand(0));
    if (!c)
      return std::nullopt;
    Shape out;
    for (const ShapeEntry &e : *c)
      out.push_back(dimOfEntry(e));
    return out;
  }
  case OpKind::Range: return range(op);
  case OpKind::Resize: return resize(op);
  case OpKind::Tile: { // each dim times its repeat
    auto c = contents(op.operand(1));
    const Shape &in = op.operand(0)->type.shape;
    if (!c || c->size() != in.size())
      return std::nullopt;
    Shape out;
    for (size_t i = 0; i < in.size(); ++i)
      out.push_back(dimProduct({in[i], dimOfEntry((*c)[i])}));
    return out;
  }
  default: return std::nullopt;
  }
}

std::optional<ShapeContents> ShapeTracker::compute(const Op &op) const {
  switch (op.kind) {
  case OpKind::Shape: {
    const Shape &s = op.operand(0)->type.shape;
    int64_t r = int64_t(s.size());
    auto clamp = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
    int64_t b = clamp(op.getInt("start"));
    int64_t e = op.findAttr("end") ? clamp(op.getInt("end")) : r;
    ShapeContents out;
    for (int64_t i = b; i < e; ++i)
      out.push_back(entryOf(s[size_t(i)]));
    return out;
  }
  case OpKind::Concat: {
    ShapeContents out;
    for (const Value *v : op.operands) {
      auto c = contents(v);
      if (!c)
        return std::nullopt;
      out.insert(out.end(), c->begin(), c->end());
    }
    return out;
  }
  case OpKind::Gather: {
    auto data = contents(op.operand(0));
    auto idx = constInts(op.operand(1));
    if (!data || !idx || op.getInt("axis") != 0)
      return std::nullopt;
    ShapeContents out;
    for (int64_t i : *idx) {
      int64_t j = i < 0 ? i + int64_t(data->size()) : i;
      if (j < 0 || j >= int64_t(data->size()))
        return std::nullopt;
      out.push_back((*data)[size_t(j)]);
    }
    return out;
  }
  case OpKind::Slice: return slice(op);
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Cast: return contents(op.operand(0));
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: return arithmetic(op);
  case OpKind::Range: return rangeValues(op);
  default: return std::nullopt;
  }
}

// Range's values where its length is static (positions past .. past + 15):
// start, start + delta, ...
std::optional<ShapeContents> ShapeTracker::rangeValues(const Op &op) const {
  auto start = contents(op.operand(0)), limit = contents(op.operand(1)),
       delta = contents(op.operand(2));
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || !(*start)[0] || !(*limit)[0] || !(*delta)[0] ||
      !(*delta)[0]->isConstant() || (*delta)[0]->constantValue() == 0)
    return std::nullopt;
  DimExpr span = *(*limit)[0] - *(*start)[0];
  int64_t d = (*delta)[0]->constantValue();
  if (!span.isConstant())
    return std::nullopt;
  __int128 s = span.constantValue();
  __int128 n = d > 0 ? (s > 0 ? (s + d - 1) / d : 0) : (s < 0 ? (s + d + 1) / d : 0);
  if (n > 1024)
    return std::nullopt;
  ShapeContents out;
  for (int64_t i = 0; i < int64_t(n); ++i)
    out.push_back(*(*start)[0] + DimExpr::integer(i * d));
  return out;
}

// Elementwise, a one-element operand broadcast. An integer Div truncates:
// a symbolic quotient is kept only where it is whole at every size.
std::optional<ShapeContents> ShapeTracker::arithmetic(const Op &op) const {
  auto a = contents(op.operand(0)), b = contents(op.operand(1));
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
    return std::nullopt;
  ShapeContents out;
  for (size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
    const ShapeEntry &x = (*a)[a->size() == 1 ? 0 : i], &y = (*b)[b->size() == 1 ? 0 : i];
    ShapeEntry r;
    try {
      if (!x || !y) {
      } else if (op.is(OpKind::Add)) {
        r = *x + *y;
      } else if (op.is(OpKind::Sub)) {
        r = *x - *y;
      } else if (op.is(OpKind::Mul)) {
        r = *x * *y;
      } else if (x->isConstant() && y->isConstant()) {
        if (y->constantValue() != 0)
          r = DimExpr::integer(x->constantValue() / y->constantValue());
      } else if (!isInt(y, 0)) {
        r = DimExpr::exactDiv(*x, *y);
        if (r->hasQuotient())
          r.reset();
      }
    } catch (const Error &) { // overflow
      r.reset();
    }
    out.push_back(std::move(r));
  }
  return out;
}

// A Slice of tracked contents with constant starts, ends and steps (axis 0).
std::optional<ShapeContents> ShapeTracker::slice(const Op &op) const {
  auto data = contents(op.operand(0));
  auto starts = constInts(op.operand(1)), ends = constInts(op.operand(2));
  const Value *ax = op.operands.size() > 3 ? op.operand(3) : nullptr;
  const Value *st = op.operands.size() > 4 ? op.operand(4) : nullptr;
  auto axes = constInts(ax), steps = constInts(st);
  if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1 ||
      (ax && (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) ||
      (st && (!steps || steps->size() != 1 || (*steps)[0] == 0)))
    return std::nullopt;
  int64_t n = int64_t(data->size()), step = st ? (*steps)[0] : 1;
  // ONNX's clamping: [0, n] walking forwards, [-1, n - 1] backwards.
  auto clamp = [&](int64_t v) {
    v = v < 0 ? std::max<int64_t>(v, -n) + n : v;
    return step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
  };
  ShapeContents out;
  for (int64_t b = clamp((*starts)[0]), e = clamp((*ends)[0]); step > 0 ? b < e : b > e; b += step)
    out.push_back((*data)[size_t(b)]);
  return out;
}

// Range(start, limit, delta) with constant start and delta and a tracked
// limit: ceil((limit - start) / delta) elements; a symbolic limit only for
// delta 1.
std::optional<Shape> ShapeTracker::range(const Op &op) const {
  auto start = constInts(op.operand(0)), delta = constInts(op.operand(2));
  auto limit = contents(op.operand(1));
  if (!start || !delta || !limit || start->size() != 1 || delta->size() != 1 ||
      limit->size() != 1 || (*delta)[0] == 0 || !(*limit)[0])
    return std::nullopt;
  int64_t s = (*start)[0], d = (*delta)[0];
  const DimExpr &l = *(*limit)[0];
  if (l.isConstant()) {
    __int128 span = __int128(l.constantValue()) - s;
    __int128 c = d > 0 ? (span > 0 ? (span + d - 1) / d : 0) : (span < 0 ? (span + d + 1) / d : 0);
    return Shape{Dim::fixed(int64_t(c))};
  }
  if (d == 1 && s >= 0) // positions s .. limit - 1
    return Shape{dimDifference(dimOf(l), Dim::fixed(s))};
  return std::nullopt;
}

// Resize to tracked sizes (DeepLab's Concat(Shape(x)[0:2], [8, 8])): with
// the stretch policy the sizes are the resized axes' dims.
std::optional<Shape> ShapeTracker::resize(const Op &op) const {
  auto c = op.operands.size() > 3 ? contents(op.operand(3)) : std::nullopt;
  const Shape &in = op.operand(0)->type.shape;
  if (!c || op.getString("keep_aspect_ratio_policy") != "stretch")
    return std::nullopt;
  std::vector<int64_t> axes = nn::resizeAxes(op.getInts("axes"), in.size());
  if (axes.size() != c->size())
    return std::nullopt;
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    Dim d = dimOfEntry((*c)[i]);
    if (axes[i] < 0 || axes[i] >= int64_t(in.size()) || ((*c)[i] && d.isUnknown()))
      return std::nullopt;
    out[size_t(axes[i])] = d;
  }
  return out;
}

std::optional<Shape> ShapeTracker::reshape(const Op &op) const {
  auto c = contents(op.operand(1));
  if (!c)
    return std::nullopt;
  const Shape &in = op.operand(0)->type.shape;
  bool allowZero = op.getInt("allowzero") != 0;
  Shape out;
  int inferAt = -1;
  for (size_t i = 0; i < c->size(); ++i) {
    const ShapeEntry &e = (*c)[i];
    if (isInt(e, 0) && !allowZero) {
      if (i >= in.size())
        return std::nullopt;
      out.push_back(in[i]);
    } else if (!e || isInt(e, -1)) { // an unknown one is what the others leave too
      if (inferAt >= 0)
        return std::nullopt;
      inferAt = int(i);
      out.push_back(Dim::unknown());
    } else if (e->isConstant() && e->constantValue() < 0) {
      return std::nullopt;
    } else {
      out.push_back(dimOf(*e));
    }
  }
  if (inferAt < 0)
    return out;
  // -1 = numel(in) / product(other dims), a size or an expression.
  Shape rest = out;
  rest.erase(rest.begin() + inferAt);
  out[size_t(inferAt)] = dimQuotient(dimProduct(in), dimProduct(rest));
  return out;
}

} // namespace tc
