// Pointwise kernels that read through inlined moves (the fuse pass's
// inlineMoves; tc/IR/MoveMap.h): no copy kernel writes the moved tensor.
// Each result element is evaluated at its index: a value at an index of its
// own shape, an op's operands at the indices its map gives (a broadcast
// operand 0 on its size-1 axes, Slice start + c * step, Transpose permuted,
// Tile modulo, Concat an if/else on the joined axis that evaluates only the
// selected part), an argument loaded through its row-major strides. An
// index keeps its leading axes as one row number while no map needs them
// (an NHWC channel Concat, RoPE's last-axis halves): most loads cost no
// division beyond the element's row. CUDA adds a 16-byte vector path where
// no vector can straddle a Concat boundary, a Slice's start or step, or a
// broadcast along the last axis (vectorizable): `lanes` consecutive
// elements of a row take one index computation, the values that vary along
// them are per-lane arrays (`name[k]`), the others one scalar.
#include "Families.h"
#include "tc/IR/MoveMap.h"
#include <cstdlib>
#include <map>
#include <sstream>

namespace tc::kernels {

bool inlinesMoves(const Function &f) {
  if (f.ops.size() < 2)
    return false;
  for (const auto &op : f.ops)
    if (moveMap(*op))
      return true;
  return false;
}

namespace {

// A position in a value of rank r: axes [0, lead) as their row-major row
// number `row`, axes [lead, r) as coordinates.
struct Index {
  std::string row;
  size_t lead = 0;
  std::vector<std::string> coords; // of axes [lead, r)
  bool identity = false;           // the element's own position in the domain
  std::string key() const {
    std::string k = row + "|" + std::to_string(lead);
    for (const std::string &c : coords)
      k += "|" + c;
    return k;
  }
};

// Lanes of a vector never straddle a boundary the group's maps draw along
// the last axis, nor a broadcast there other than whole or constant.
bool vectorizable(const Function &f, unsigned lanes) {
  auto lastAxis = [](const Value *o, const Value *res) { // whole or constant along it
    if (!o || o->isConstant() || o->type.rank() == 0)
      return true;
    const Dim &a = o->type.shape.back(), &D = res->type.shape.back();
    return (a == D && !a.isUnknown()) || (a.isStatic() && a.size == 1);
  };
  for (const auto &op : f.ops) {
    const Value *res = op->results.empty() ? nullptr : op->results[0];
    if (!res || res->type.rank() == 0)
      continue;
    size_t last = res->type.rank() - 1;
    auto m = moveMap(*op);
    bool ok = true;
    if (m && op->is(OpKind::Slice))
      ok = m->step[last] == 1 && m->start[last] % lanes == 0;
    else if (m && op->is(OpKind::Concat))
      for (int64_t o : m->offsets)
        ok &= m->axis != last || o % lanes == 0;
    else if (m && op->is(OpKind::Pad)) // no border along the last axis
      ok = m->before[last] == 0 && op->operand(0)->type.shape[last] == res->type.shape[last];
    else if (m && op->is(OpKind::Tile))
      ok = op->operand(0)->type.shape.back() == res->type.shape.back() &&
           !res->type.shape.back().isUnknown();
    else if (!m || op->is(OpKind::Expand))
      for (const Value *o : op->operands)
        ok &= lastAxis(o, res) || (m && o != op->operand(0));
    if (!ok)
      return false;
  }
  return true;
}

class Evaluator {
public:
  // `flat`: the element's offset in a tensor of the domain's shape; with
  // `lanes` > 1, of the first of `lanes` elements computed together.
  Evaluator(const KernelContext &c, std::string flat, unsigned lanes = 1)
      : c_(c), ex_(c), flat_(std::move(flat)), lanes_(lanes) {}

  // The expression of `v` at `idx`, its statements written to `os`;
  // nullopt (why set) when there is no code for it.
  std::optional<std::string> value(const Value *v, const Index &idx, std::ostream &os);
  // The run-time size of axis d of `v`; nullopt when nothing gives it.
  std::optional<std::string> dim(const Value *v, size_t d) const;

private:
  // `idx` with every axis a coordinate.
  std::optional<Index> full(const Value *v, const Index &idx, std::ostream &os);
  // The index of operand `o` (broadcast to `res`'s shape) read at `idx`.
  std::optional<Index> broadcast(const Value *o, const Value *res, const Index &idx,
                                 std::ostream &os);
  std::optional<std::string> load(const Value *arg, const Index &idx, std::ostream &os);
  std::optional<std::string> move(const Op &op, const MoveMap &m, const Index &idx,
                                  std::ostream &os);
  std::optional<std::string> pad(const Op &op, const MoveMap &m, const Index &in, std::ostream &os,
                                 const char *T);
  std::string temp(const char *prefix) { return prefix + std::to_string(next_++); }
  // A move's value chosen in branches (Concat's part, Pad's inside or
  // zero): declared first (an array of the lanes), assigned in each.
  std::string declare(const char *T, std::ostream &os) {
    std::string name = temp("m");
    os << "      " << T << " " << name << (lanes_ > 1 ? "[" + std::to_string(lanes_) + "]" : "")
       << ";\n";
    return name;
  }
  void assign(const std::string &name, const std::string &v, std::ostream &os) const {
    if (lanes_ > 1)
      os << unrolled() << "      " << name << "[k] = " << v << ";\n      }\n";
    else
      os << "      " << name << " = " << v << ";\n";
  }
  // A per-lane expression (an array element or a vector's lane).
  static bool perLane(const std::string &e) { return e.find("[k]") != std::string::npos; }
  std::string unrolled() const {
    return "#pragma unroll\n      for (int k = 0; k < " + std::to_string(lanes_) + "; ++k) {\n";
  }

public:
  // The arguments read a vector at a time (their rows must be whole vectors).
  std::vector<size_t> vectorArgs;

private:
  const KernelContext &c_;
  Expressions ex_;
  std::string flat_; // the element's offset in a tensor of the domain's shape
  unsigned lanes_;
  // Values and coordinates computed in the current scope (a Concat branch
  // forgets what it computed when it closes).
  std::map<std::pair<const Value *, std::string>, std::string> memo_;
  std::map<std::string, std::vector<std::string>> coordsOf_;
  size_t next_ = 0;
};

std::optional<std::string> Evaluator::dim(const Value *v, size_t d) const {
  const Dim &D = v->type.shape[d];
  if (D.isStatic())
    return "(int64_t)" + std::to_string(D.size);
  if (c_.dimAt.count(v))
    return c_.dim(v, d);
  for (const auto *values : {&c_.f.args, &c_.f.results})
    for (const Value *w : *values)
      for (size_t k = 0; k < w->type.rank(); ++k)
        if (D.isSymbolic() && w->type.shape[k] == D)
          return c_.dim(w, k);
  const Op *op = v->def;
  if (!op)
    return std::nullopt;
  if (auto m = moveMap(*op)) {
    if (op->is(OpKind::Transpose))
      return dim(op->operand(0), size_t(m->perm[d]));
    if (op->is(OpKind::Slice) || op->is(OpKind::Pad) || (op->is(OpKind::Concat) && d != m->axis))
      return dim(op->operand(0), d); // the sliced and padded axes are static
    if (op->is(OpKind::Tile)) {
      auto x = dim(op->operand(0), d);
      return x ? "(" + *x + " * " + std::to_string(m->repeats[d]) + "LL)" : x;
    }
  }
  // Expand and pointwise results: the largest of the operands' sizes (1
  // broadcasts; moveMap leaves Expand no '?' dim its operand lacks).
  std::optional<std::string> e;
  size_t r = v->type.rank();
  for (const Value *o :
       op->is(OpKind::Expand) ? std::vector<Value *>{op->operand(0)} : op->operands) {
    if (!o || o->type.rank() + d < r)
      continue;
    const Dim &od = o->type.shape[d + o->type.rank() - r];
    if (od.isStatic() && od.size == 1)
      continue;
    auto x = dim(o, d + o->type.rank() - r);
    if (!x)
      return std::nullopt;
    e = e ? "tc_max(" + *e + ", " + *x + ")" : *x;
  }
  if (!e && op->is(OpKind::Expand))
    return std::nullopt; // the size is the shape operand's
  return e ? e : std::optional<std::string>("(int64_t)1");
}

std::optional<Index> Evaluator::full(const Value *v, const Index &idx, std::ostream &os) {
  if (idx.lead == 0)
    return idx;
  Index out;
  std::string key = idx.row + "|" + std::to_string(idx.lead);
  auto it = coordsOf_.find(key);
  if (it == coordsOf_.end()) {
    std::vector<std::string> lead(idx.lead);
    std::string q = temp("q");
    os << "      int64_t " << q << " = " << idx.row << ";\n";
    for (size_t d = idx.lead; d-- > 0;) {
      lead[d] = temp("c");
      if (d == 0) {
        os << "      const int64_t " << lead[d] << " = " << q << ";\n";
        break;
      }
      auto D = dim(v, d);
      if (!D)
        return c_.reject("no size for axis " + std::to_string(d) + " of %" + v->name);
      os << "      const int64_t " << lead[d] << " = " << q << " % " << *D << "; " << q
         << " /= " << *D << ";\n";
    }
    it = coordsOf_.emplace(key, std::move(lead)).first;
  }
  out.coords = it->second;
  out.coords.insert(out.coords.end(), idx.coords.begin(), idx.coords.end());
  return out;
}

std::optional<Index> Evaluator::broadcast(const Value *o, const Value *res, const Index &idx,
                                          std::ostream &os) {
  if (o->type.shape == res->type.shape && std::none_of(o->type.shape.begin(), o->type.shape.end(),
                                                       [](const Dim &d) { return d.isUnknown(); }))
    return idx;
  size_t r = res->type.rank(), ro = o->type.rank(), skip = r - ro;
  enum class Along { Same, Zero, Runtime };
  std::vector<Along> along(r, Along::Zero); // axes before `skip` are not o's
  for (size_t d = skip; d < r; ++d) {
    const Dim &a = o->type.shape[d - skip], &D = res->type.shape[d];
    bool one = a.isStatic() && a.size == 1, dOne = D.isStatic() && D.size == 1;
    along[d] = (a == D && !a.isUnknown()) || dOne ? Along::Same
               : one                              ? Along::Zero
                                                  : Along::Runtime;
  }
  bool leadSame = ro == r, leadZero = true;
  for (size_t d = 0; d < idx.lead; ++d) {
    leadSame &= along[d] == Along::Same;
    leadZero &= along[d] == Along::Zero;
  }
  Index in = idx;
  in.identity = false;
  if (!leadSame && !leadZero) {
    auto f = full(res, idx, os);
    if (!f)
      return std::nullopt;
    in = *f;
  }
  Index out;
  if (leadSame) {
    out.row = in.row;
    out.lead = in.lead;
  }
  for (size_t d = std::max(skip, out.lead); d < r; ++d) {
    const std::string &c = d < in.lead ? std::string("0") : in.coords[d - in.lead];
    if (along[d] == Along::Same)
      out.coords.push_back(c);
    else if (along[d] == Along::Zero)
      out.coords.push_back("0");
    else if (auto D = dim(o, d - skip))
      out.coords.push_back("(" + *D + " == 1 ? 0 : " + c + ")");
    else
      return c_.reject("no size for axis " + std::to_string(d - skip) + " of %" + o->name);
  }
  return out;
}

std::optional<std::string> Evaluator::load(const Value *arg, const Index &idx, std::ostream &os) {
  size_t i = c_.argIndex(arg), r = arg->type.rank();
  std::string at;
  auto n = staticNumElements(arg->type.shape);
  if (n && *n == 1) {
    at = "0";
  } else if (idx.identity && arg->type.shape == c_.domain) {
    at = flat_;
  } else {
    std::string sa = "sa" + std::to_string(i);
    if (idx.lead)
      at = "(" + idx.row + ") * " + sa + "[" + std::to_string(idx.lead - 1) + "]";
    for (size_t d = idx.lead; d < r; ++d)
      at += (at.empty() ? "" : " + ") + idx.coords[d - idx.lead] + " * " + sa + "[" +
            std::to_string(d) + "]";
    if (at.empty())
      at = "0";
  }
  DType t = arg->type.dtype;
  std::string name = temp("l"), in = "in" + std::to_string(i);
  // The last coordinate follows the lanes: one vector from lane 0's position.
  if (lanes_ > 1 && r && idx.lead < r && idx.coords.back().find("j0") != std::string::npos) {
    std::string vt = "tc_vec<" + std::string(c_.st(t)) + ", " + std::to_string(lanes_) + ">";
    os << "      const " << vt << " " << name << " = *(const " << vt << " *)(" << in << " + " << at
       << ");\n";
    if (std::find(vectorArgs.begin(), vectorArgs.end(), i) == vectorArgs.end())
      vectorArgs.push_back(i);
    return c_.load(t, name + ".v[k]");
  }
  os << "      const " << c_.ct(t) << " " << name << " = " << c_.load(t, in + "[" + at + "]")
     << ";\n";
  return name;
}

std::optional<std::string> Evaluator::move(const Op &op, const MoveMap &m, const Index &idx,
                                           std::ostream &os) {
  const Value *res = op.result(), *x = op.operand(0);
  size_t r = res->type.rank();
  if (op.is(OpKind::Expand))
    return [&]() -> std::optional<std::string> {
      auto in = broadcast(x, res, idx, os);
      return in ? value(x, *in, os) : std::nullopt;
    }();
  // The maps below move axis coordinates: a row spanning a moved axis is
  // split first.
  size_t keep = r; // leading axes the map leaves alone
  // A Slice leaves an axis alone only where it keeps its extent too: the row
  // index flattens the leading axes by the RESULT's extents (a head slice
  // [0, 4) of 8 starts at 0 but makes the rows of [2, 4, ...] land 8 heads
  // apart in X).
  if (op.is(OpKind::Slice))
    for (size_t d = 0; d < r && keep == r; ++d)
      keep = m.start[d] != 0 || m.step[d] != 1 || !(res->type.shape[d] == x->type.shape[d]) ? d : r;
  else if (op.is(OpKind::Concat))
    keep = m.axis;
  else if (op.is(OpKind::Pad))
    for (size_t d = 0; d < r && keep == r; ++d)
      keep = m.before[d] != 0 || !(res->type.shape[d] == x->type.shape[d]) ? d : r;
  else
    keep = 0;
  Index in = idx;
  in.identity = false;
  if (idx.lead > keep) {
    auto f = full(res, idx, os);
    if (!f)
      return std::nullopt;
    in = *f;
  }
  auto coord = [&](size_t d) -> std::string & { return in.coords[d - in.lead]; };
  if (op.is(OpKind::Slice)) {
    for (size_t d = in.lead; d < r; ++d)
      if (m.start[d] != 0 || m.step[d] != 1)
        coord(d) = "(" + std::to_string(m.start[d]) + "LL + " + coord(d) + " * " +
                   std::to_string(m.step[d]) + "LL)";
    return value(x, in, os);
  }
  if (op.is(OpKind::Transpose)) {
    Index t = in;
    for (size_t d = 0; d < r; ++d)
      t.coords[size_t(m.perm[d])] = in.coords[d];
    return value(x, t, os);
  }
  if (op.is(OpKind::Tile)) {
    for (size_t d = 0; d < r; ++d) {
      if (x->type.shape[d] == res->type.shape[d] && !x->type.shape[d].isUnknown())
        continue;
      auto D = dim(x, d);
      if (!D)
        return c_.reject("no size for axis " + std::to_string(d) + " of %" + x->name);
      coord(d) = "(" + coord(d) + " % " + *D + ")";
    }
    return value(x, in, os);
  }
  const char *T = c_.ct(res->type.dtype);
  if (!T)
    return c_.reject(std::string(op.name()) + " of " + res->type.str());
  if (op.is(OpKind::Pad)) // the operand where the coordinates fall inside it, else zero
    return pad(op, m, in, os, T);
  // Concat: the part the coordinate along the axis falls in.
  std::string name = declare(T, os), c = coord(m.axis);
  // Test-only: each part read one element off along the axis (wrapping
  // inside the part: a wrong offset the numerics tests must catch).
  bool skew = std::getenv("TC_TEST_INLINED_CONCAT_SKEW") != nullptr;
  auto savedMemo = memo_;
  auto savedCoords = coordsOf_;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    bool last = k + 1 == op.operands.size();
    os << "      " << (k ? "} else " : "") << (last ? "{\n" : "")
       << (last ? "" : "if (" + c + " < " + std::to_string(m.offsets[k + 1]) + "LL) {\n");
    Index part = in;
    std::string pc = m.offsets[k] ? "(" + c + " - " + std::to_string(m.offsets[k]) + "LL)" : c;
    if (skew)
      pc = "((" + pc + " + 1) % " + std::to_string(m.offsets[k + 1] - m.offsets[k]) + "LL)";
    part.coords[m.axis - in.lead] = pc;
    auto e = value(op.operand(k), part, os);
    if (!e)
      return std::nullopt;
    assign(name, *e, os);
    memo_ = savedMemo;
    coordsOf_ = savedCoords;
  }
  os << "      }\n";
  return lanes_ > 1 ? name + "[k]" : name;
}

// Pad with zeros: X's element at the coordinates less the borders where all
// fall inside X (a branch, whose values are forgotten when it closes), else 0.
std::optional<std::string> Evaluator::pad(const Op &op, const MoveMap &m, const Index &in,
                                          std::ostream &os, const char *T) {
  const Value *res = op.result(), *x = op.operand(0);
  // Test-only: the border shifted by one (the numerics tests must catch it).
  int64_t shift = std::getenv("TC_TEST_INLINED_PAD_SHIFT") ? 1 : 0;
  Index part = in;
  std::string inside;
  for (size_t d = in.lead; d < res->type.rank(); ++d) {
    if (m.before[d] == 0 && res->type.shape[d] == x->type.shape[d])
      continue;
    std::string &c = part.coords[d - in.lead];
    if (m.before[d] + shift)
      c = "(" + c + " - " + std::to_string(m.before[d] + shift) + "LL)";
    inside += (inside.empty() ? "" : " && ") + c + " >= 0 && " + c + " < " +
              std::to_string(x->type.shape[d].size) + "LL";
  }
  std::string name = declare(T, os);
  os << "      if (" << (inside.empty() ? "true" : inside) << ") {\n";
  auto savedMemo = memo_;
  auto savedCoords = coordsOf_;
  auto e = value(x, part, os);
  if (!e)
    return std::nullopt;
  memo_ = savedMemo;
  coordsOf_ = savedCoords;
  assign(name, *e, os);
  os << "      } else {\n";
  assign(name, "(" + std::string(T) + ")0", os);
  os << "      }\n";
  return lanes_ > 1 ? name + "[k]" : name;
}

std::optional<std::string> Evaluator::value(const Value *v, const Index &idx, std::ostream &os) {
  auto key = std::make_pair(v, idx.key());
  if (auto it = memo_.find(key); it != memo_.end())
    return it->second;
  std::optional<std::string> e;
  if (c_.argIndex(v) != SIZE_MAX) {
    e = load(v, idx, os);
  } else if (v->isConstant() || !v->def) {
    e = ex_.operand(v);
    if (!e)
      return c_.reject("the non-scalar constant %" + v->name);
  } else if (auto m = moveMap(*v->def)) {
    e = move(*v->def, *m, idx, os);
  } else {
    const Op &op = *v->def;
    for (const Value *o : op.operands) {
      if (!o || o->isConstant())
        continue;
      auto in = broadcast(o, v, idx, os);
      auto oe = in ? value(o, *in, os) : std::nullopt;
      if (!oe)
        return std::nullopt;
      ex_.bind(o, *oe);
    }
    bool lanes = false;
    for (const Value *o : op.operands)
      lanes |= o && ex_.computed(o) && perLane(ex_.name(o));
    std::ostringstream one;
    if (!ex_.emit(op, lanes ? one : os))
      return std::nullopt;
    e = ex_.name(v);
    if (lanes) { // the op once per lane, into an array
      os << "      " << c_.ct(v->type.dtype) << " " << *e << "v[" << lanes_ << "];\n"
         << unrolled() << one.str() << "      " << *e << "v[k] = " << *e << ";\n      }\n";
      e = *e + "v[k]";
    }
  }
  if (e)
    memo_[key] = *e;
  return e;
}

} // namespace

namespace {

// The element's index: axes but the last as the row, the last `j`.
Index elementIndex(const KernelContext &c, const std::string &j) {
  Index at;
  at.identity = true;
  if (c.rank) {
    at.row = "row";
    at.lead = c.rank - 1;
    at.coords = {j};
  }
  return at;
}

// CUDA: the vector loop over `lanes` elements at a time, or "" when the
// group has no vector path; `cond` gets what it needs at run time.
std::string vectorBody(const KernelContext &c, unsigned lanes, std::string &cond) {
  if (lanes < 2 || c.rank == 0 || !vectorizable(c.f, lanes))
    return "";
  std::string why = c.why; // a group without a vector path still has the scalar one
  Evaluator ev(c, "i", lanes);
  std::ostringstream body;
  std::string V = std::to_string(lanes);
  body << "    const int64_t i = v * " << V << ", j0 = j * " << V << ";\n";
  cond = "inner % " + V + " == 0";
  for (size_t r = 0; r < c.f.results.size(); ++r) {
    auto e = ev.value(c.f.results[r], elementIndex(c, "j0"), body);
    if (!e) {
      c.why = why;
      return "";
    }
    DType t = c.f.results[r]->type.dtype;
    std::string vt = "tc_vec<" + std::string(c.st(t)) + ", " + V + ">", w = "w" + std::to_string(r),
                out = "out" + std::to_string(r);
    body << "      " << vt << " " << w << ";\n#pragma unroll\n      for (int k = 0; k < " << V
         << "; ++k)\n        " << w << ".v[k] = " << c.store(t, *e) << ";\n      *(" << vt << " *)("
         << out << " + i) = " << w << ";\n";
    cond += " && tc_aligned(" + out + ", sizeof(" + vt + "))";
  }
  for (size_t i : ev.vectorArgs) {
    const Value *a = c.f.args[i];
    cond += " && " + c.dim(a, a->type.rank() - 1) + " % " + V + " == 0 && tc_aligned(in" +
            std::to_string(i) + ", sizeof(tc_vec<" + c.st(a->type.dtype) + ", " + V + ">))";
  }
  return body.str();
}

} // namespace

std::optional<EmittedKernel> emitInlinedPointwise(const KernelContext &c) {
  const Function &f = c.f;
  std::ostringstream os, body;
  std::string symbol = c.emitStart(os, c.cuda() ? kPointwiseBlock : 0);
  for (size_t i = 0; i < f.args.size(); ++i)
    c.emitRowMajorStrides(os, "sa" + std::to_string(i), f.args[i]);
  Evaluator ev(c, "i");
  for (size_t i = 0; i < f.results.size(); ++i) {
    auto e = ev.value(f.results[i], elementIndex(c, "j"), body);
    if (!e)
      return std::nullopt;
    body << "      out" << i << "[i] = " << c.store(f.results[i]->type.dtype, *e) << ";\n";
  }
  unsigned lanes = 1;
  if (c.cuda()) {
    size_t widest = 1;
    for (const auto *values : {&f.args, &f.results})
      for (const Value *v : *values)
        widest = std::max(widest, dtypeSize(v->type.dtype));
    std::string cond, vbody = vectorBody(c, unsigned(16 / widest), cond);
    os << "  const int64_t n = " << c.rowsExpr() << " * inner;\n" << kGridHead;
    std::string begin = "0";
    if (!vbody.empty()) {
      lanes = unsigned(16 / widest);
      std::string V = std::to_string(lanes);
      os << "  const int64_t nv = " << cond << " ? n / " << V << " : 0, innerV = inner / " << V
         << ";\n";
      c.emitGridLoops(
          os, "0", true, [&](const std::string &) { os << vbody; }, "v", "nv", "innerV");
      begin = "nv * " + V;
    }
    c.emitGridLoops(os, begin, true, [&](const std::string &) { os << body.str(); });
  } else {
    os << "  for (int64_t row = begin; row < end; ++row) {\n"
       << "    for (int64_t j = 0; j < inner; ++j) {\n"
       << "      const int64_t i = row * inner + j;\n"
       << body.str() << "    }\n  }\n";
  }
  os << "}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  if (c.cuda()) {
    k.block = kPointwiseBlock;
    k.vec = lanes;
    k.halfTypes = c.usesHalf();
  }
  return k;
}

} // namespace tc::kernels
