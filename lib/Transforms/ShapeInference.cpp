// Shape inference over whole functions. The op table's rules see one op at
// a time and only constant data; this pass also tracks the *contents* of
// small i64 shape tensors symbolically (Shape(x) of f32[batch,16] holds
// [batch, 16]) through Concat/Gather/Slice/Squeeze/Unsqueeze/Cast, so that a
// Reshape or Expand fed by such a computation keeps `batch` instead of `?`.
// Result types are then refined in order: a `?` becomes what the rules (or
// the tracked contents) prove, and symbols propagate downstream.
#include "tc/Transforms/ShapeInference.h"
#include "tc/IR/NNMath.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

using Contents = std::vector<Dim>; // known entries of a 1-D (or scalar) i64 tensor

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

// A product of dims as a static factor times a multiset of symbols; nullopt
// for unknown dims.
struct Product {
  int64_t factor = 1;
  std::multiset<std::string> symbols;
};

std::optional<Product> productOf(const std::vector<Dim> &dims) {
  Product p;
  for (const Dim &d : dims) {
    if (d.isUnknown())
      return std::nullopt;
    if (d.isSymbolic())
      p.symbols.insert(d.symbol);
    else if (__builtin_mul_overflow(p.factor, d.size, &p.factor))
      return std::nullopt;
  }
  return p;
}

class ShapeTracker {
public:
  std::optional<Contents> contents(const Value *v) const {
    if (auto c = constInts(v)) {
      Contents out;
      for (int64_t x : *c)
        out.push_back(Dim::fixed(x));
      return out;
    }
    auto it = known_.find(v);
    return it == known_.end() ? std::nullopt : std::optional(it->second);
  }

  // Records what `op` computes into a shape tensor, when it can be told.
  void visit(const Op &op) {
    if (op.results.size() != 1 || op.result()->type.dtype != DType::I64)
      return;
    if (auto c = compute(op))
      known_[op.result()] = std::move(*c);
  }

  // A better result shape for Reshape/Expand/ConstantOfShape from tracked
  // contents, or nullopt.
  std::optional<Shape> resultShape(const Op &op) const {
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
        Dim b = i + c->size() >= r ? (*c)[i + c->size() - r] : Dim::fixed(1);
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
      return c ? std::optional<Shape>(*c) : std::nullopt;
    }
    case OpKind::Range: return range(op);
    case OpKind::Resize: return resize(op);
    default: return std::nullopt;
    }
  }

private:
  std::unordered_map<const Value *, Contents> known_;

  std::optional<Contents> compute(const Op &op) const {
    switch (op.kind) {
    case OpKind::Shape: {
      const Shape &s = op.operand(0)->type.shape;
      int64_t r = int64_t(s.size());
      auto clamp = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
      int64_t b = clamp(op.getInt("start"));
      int64_t e = op.findAttr("end") ? clamp(op.getInt("end")) : r;
      return Contents(s.begin() + b, s.begin() + std::max(b, e));
    }
    case OpKind::Concat: {
      Contents out;
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
      Contents out;
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
    case OpKind::Reshape: return contents(op.operand(0));
    case OpKind::Cast: return contents(op.operand(0));
    default: return std::nullopt;
    }
  }

  // A Slice of tracked contents with constant starts, ends and steps (axis 0).
  std::optional<Contents> slice(const Op &op) const {
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
    Contents out;
    for (int64_t b = clamp((*starts)[0]), e = clamp((*ends)[0]); step > 0 ? b < e : b > e;
         b += step)
      out.push_back((*data)[size_t(b)]);
    return out;
  }

  // Range(start, limit, delta) with constant start and delta and a tracked
  // limit: ceil((limit - start) / delta) elements; a symbolic limit only for
  // start 0 and delta 1 (positions 0 .. n - 1).
  std::optional<Shape> range(const Op &op) const {
    auto start = constInts(op.operand(0)), delta = constInts(op.operand(2));
    auto limit = contents(op.operand(1));
    if (!start || !delta || !limit || start->size() != 1 || delta->size() != 1 ||
        limit->size() != 1 || (*delta)[0] == 0)
      return std::nullopt;
    int64_t s = (*start)[0], d = (*delta)[0];
    const Dim &l = (*limit)[0];
    if (l.isStatic()) {
      __int128 span = __int128(l.size) - s;
      __int128 c =
          d > 0 ? (span > 0 ? (span + d - 1) / d : 0) : (span < 0 ? (span + d + 1) / d : 0);
      return Shape{Dim::fixed(int64_t(c))};
    }
    if (l.isSymbolic() && s == 0 && d == 1)
      return Shape{l};
    return std::nullopt;
  }

  // Resize to tracked sizes (DeepLab's Concat(Shape(x)[0:2], [8, 8])): with
  // the stretch policy the sizes are the resized axes' dims.
  std::optional<Shape> resize(const Op &op) const {
    auto c = op.operands.size() > 3 ? contents(op.operand(3)) : std::nullopt;
    const Shape &in = op.operand(0)->type.shape;
    if (!c || op.getString("keep_aspect_ratio_policy") != "stretch")
      return std::nullopt;
    std::vector<int64_t> axes = nn::resizeAxes(op.getInts("axes"), in.size());
    if (axes.size() != c->size())
      return std::nullopt;
    Shape out = in;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < 0 || axes[i] >= int64_t(in.size()) || ((*c)[i].isStatic() && (*c)[i].size < 0))
        return std::nullopt;
      out[size_t(axes[i])] = (*c)[i];
    }
    return out;
  }

  std::optional<Shape> reshape(const Op &op) const {
    auto c = contents(op.operand(1));
    if (!c)
      return std::nullopt;
    const Shape &in = op.operand(0)->type.shape;
    bool allowZero = op.getInt("allowzero") != 0;
    Shape out = *c;
    int inferAt = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == Dim::fixed(0) && !allowZero) {
        if (i >= in.size())
          return std::nullopt;
        out[i] = in[i];
      } else if (out[i] == Dim::fixed(-1)) {
        if (inferAt >= 0)
          return std::nullopt;
        inferAt = int(i);
      } else if (out[i].isStatic() && out[i].size < 0) {
        return std::nullopt;
      }
    }
    if (inferAt < 0)
      return out;
    // -1 = numel(in) / product(other dims), as a symbol or a size.
    Shape rest = out;
    rest.erase(rest.begin() + inferAt);
    auto total = productOf(in), part = productOf(rest);
    if (!total || !part || part->factor == 0 || total->factor % part->factor != 0)
      return std::nullopt;
    for (const std::string &s : part->symbols) {
      auto it = total->symbols.find(s);
      if (it == total->symbols.end())
        return std::nullopt;
      total->symbols.erase(it);
    }
    int64_t f = total->factor / part->factor;
    if (total->symbols.empty())
      out[size_t(inferAt)] = Dim::fixed(f);
    else if (total->symbols.size() == 1 && f == 1)
      out[size_t(inferAt)] = Dim::sym(*total->symbols.begin());
    else
      out[size_t(inferAt)] = Dim::unknown();
    return out;
  }
};

// Whether `better` says more than `declared` and agrees with it.
bool refines(const TensorType &declared, const TensorType &better) {
  if (declared.dtype != better.dtype || declared.rank() != better.rank())
    return false;
  bool more = false;
  for (size_t i = 0; i < declared.rank(); ++i) {
    const Dim &d = declared.shape[i], &b = better.shape[i];
    if (d == b || b.isUnknown())
      continue;
    if (!d.isUnknown())
      return false; // a conflict: leave it to the verifier
    more = true;
  }
  return more;
}

TensorType merged(const TensorType &declared, const TensorType &better) {
  TensorType t = declared;
  for (size_t i = 0; i < t.rank(); ++i)
    if (t.shape[i].isUnknown())
      t.shape[i] = better.shape[i];
  return t;
}

bool refineFunction(Module *m, Function &f);

// A Fused op's callee sees its operands' types; its results come back.
bool refineFused(Module *m, Op &op) {
  Function *callee = m ? m->lookup(op.getString("callee")) : nullptr;
  if (!callee || callee->args.size() != op.operands.size())
    return false;
  bool changed = false;
  for (size_t i = 0; i < callee->args.size(); ++i)
    if (callee->args[i]->type != op.operands[i]->type) {
      callee->args[i]->type = op.operands[i]->type;
      changed = true;
    }
  // A constant operand (a shape that folded once the sizes were known: the
  // runtime's per-shape plan) is lent to its argument while the callee is
  // refined, so an Expand or Reshape outlined alone reads its shape.
  std::vector<Value *> lent;
  for (size_t i = 0; i < callee->args.size(); ++i)
    if (op.operands[i] && op.operands[i]->isConstant() && !callee->args[i]->data) {
      callee->args[i]->data = op.operands[i]->data;
      lent.push_back(callee->args[i]);
    }
  changed |= refineFunction(m, *callee);
  for (Value *a : lent)
    a->data.reset();
  for (size_t i = 0; i < op.results.size() && i < callee->results.size(); ++i)
    if (op.results[i]->type != callee->results[i]->type) {
      op.results[i]->type = callee->results[i]->type;
      changed = true;
    }
  return changed;
}

bool refineFunction(Module *m, Function &f) {
  ShapeTracker tracker;
  bool changed = false;
  for (auto &p : f.ops) {
    Op &op = *p;
    if (op.is(OpKind::Fused)) {
      changed |= refineFused(m, op);
      continue;
    }
    std::vector<TensorType> inferred;
    try {
      inferred = inferResultTypes(op);
    } catch (const Error &) {
      continue; // the verifier reports it with context
    }
    if (auto s = tracker.resultShape(op); s && !inferred.empty())
      for (size_t i = 0; i < s->size() && i < inferred[0].rank(); ++i)
        if (inferred[0].shape[i].isUnknown())
          inferred[0].shape[i] = (*s)[i];
    for (size_t i = 0; i < inferred.size() && i < op.results.size(); ++i) {
      Value *r = op.results[i];
      if (refines(r->type, inferred[i])) {
        r->type = merged(r->type, inferred[i]);
        changed = true;
      }
    }
    tracker.visit(op);
  }
  return changed;
}

} // namespace

bool inferShapes(Module &m) {
  bool changed = false;
  std::vector<Function *> roots;
  std::set<std::string> callees;
  for (const auto &f : m.functions)
    for (const auto &op : f->ops)
      if (op->is(OpKind::Fused))
        callees.insert(op->getString("callee"));
  for (const auto &f : m.functions)
    if (!callees.count(f->name))
      changed |= refineFunction(&m, *f);
  return changed;
}

void specializeDims(Module &m, const std::map<std::string, int64_t> &dims) {
  if (dims.empty())
    return;
  std::set<std::string> used;
  for (const auto &f : m.functions) {
    for (Value *a : f->args)
      for (const Dim &d : a->type.shape)
        if (d.isSymbolic())
          used.insert(d.symbol);
  }
  for (const auto &[name, n] : dims)
    if (!used.count(name))
      fail("--dim ", name, "=", n, ": the model has no symbolic dim '", name, "'");
  substituteDims(m, dims);
  inferShapes(m);
  verifyModule(m);
}

bool runInferShapesPass(Module &m, const PassOptions &) { return inferShapes(m); }

} // namespace tc
