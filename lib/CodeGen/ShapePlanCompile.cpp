#include "tc/CodeGen/ShapePlanCompile.h"
#include "tc/Analysis/MemoryPlan.h"
#include "tc/Analysis/Views.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/ShapeComputations.h"
#include "tc/Transforms/ShapeContents.h"
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// Bytes of `t` as an expression; nullopt for a `?` dim or no fixed size.
std::optional<DimExpr> bytesOf(const TensorType &t) {
  if (!dtypeSize(t.dtype))
    return std::nullopt;
  DimExpr e = DimExpr::constant(int64_t(dtypeSize(t.dtype)));
  for (const Dim &d : t.shape) {
    if (d.isUnknown())
      return std::nullopt;
    e = e * exprOf(d);
  }
  return e;
}

// "Reshape %x": an op as the messages name it.
std::string opNamed(const Op &op) {
  return std::string(op.info().name) + (op.results.empty() ? "" : " %" + op.results[0]->name);
}

// Why a plan cannot be decided from `main`'s types ("" when it can), its
// symbolic dims and its shape computations as expressions of them.
std::string undecidable(const Function &main, std::vector<std::string> &symbols,
                        std::vector<StoredFold> &folds) {
  // "" when `v` has a size expression, else which dim lacks one.
  auto unsized = [&](const Value *v) -> std::string {
    const Shape &shape = v->type.shape;
    for (size_t i = 0; i < shape.size(); ++i) {
      std::string dim = "dim " + std::to_string(i) + " of %" + v->name + " (" + v->type.str() + ")";
      if (shape[i].isUnknown())
        return dim + " is known only at run time";
      if (!shape[i].isSymbolic())
        continue;
      DimExpr e = exprOf(shape[i]);
      // Representative sizes (storedPlan) need not make a quotient whole.
      if (e.hasQuotient())
        return dim + " is whole only at some sizes";
      std::set<std::string> syms;
      e.symbols(syms);
      for (const std::string &s : syms)
        if (std::find(symbols.begin(), symbols.end(), s) == symbols.end())
          symbols.push_back(s);
    }
    return bytesOf(v->type) ? "" : "%" + v->name + " has no fixed size (" + v->type.str() + ")";
  };
  for (const auto *values : {&main.args, &main.results})
    for (const Value *v : *values)
      if (std::string why = unsized(v); !why.empty())
        return why;
  for (const auto &op : main.ops) {
    if (refKernelSetsOutputDims(op->kind) || isControlFlowOp(*op))
      return opNamed(*op) + " decides its sizes at run time";
    for (const Value *r : op->results)
      if (std::string why = unsized(r); !why.empty())
        return why;
  }
  // What the run-time planner folds at each shape, stored as expressions
  // where its contents are tracked (ShapeContents.h) in the input symbols.
  std::unordered_set<const Op *> computed = shapeComputations(main);
  ShapeTracker tracker;
  for (const auto &op : main.ops) {
    tracker.visit(*op);
    if (!computed.count(op.get()))
      continue;
    std::string why = "shape computation " + opNamed(*op) + " folds only at the input sizes";
    auto c = op->results.size() == 1 ? tracker.contents(op->result()) : std::nullopt;
    auto r = op->results.size() == 1 && !c ? tracker.range(op->result()) : std::nullopt;
    if (r) // a Range of symbolic length: its start and step
      c = ShapeContents{r->start, DimExpr::integer(r->step)};
    if (!c || op->result()->type.dtype != DType::I64)
      return why;
    StoredFold fold{op->result()->name, {}, r.has_value()};
    for (const ShapeEntry &e : *c) {
      std::set<std::string> syms;
      if (e)
        e->symbols(syms);
      if (!e || e->hasQuotient() || std::any_of(syms.begin(), syms.end(), [&](auto &s) {
            return std::find(symbols.begin(), symbols.end(), s) == symbols.end();
          }))
        return why;
      fold.elements.push_back(*e);
    }
    folds.push_back(std::move(fold));
  }
  for (const std::string &sym : symbols) { // a dim the section's text can name
    bool reads = false;
    try {
      DimExpr e = DimExpr::parse(sym);
      reads = e.kind() == DimExpr::Kind::Sym && e.str() == sym;
    } catch (const Error &) {
    }
    if (!reads)
      return "symbolic dim '" + sym + "' is no size expression symbol";
  }
  // The section names values: one field each, one value per name.
  std::set<std::string> names;
  auto named = [&](const Value *v) {
    return v->name.find_first_of(" \t\n") == std::string::npos && names.insert(v->name).second;
  };
  for (const auto *values : {&main.args, &main.constants})
    for (const Value *v : *values)
      if (!named(v))
        return "value name '" + v->name + "' is not one field or not unique";
  for (const auto &op : main.ops)
    for (const Value *r : op->results)
      if (!named(r))
        return "value name '" + r->name + "' is not one field or not unique";
  return "";
}

// planMemory's plan at representative sizes, its sharing kept where it
// holds at every size: views at an offset no size changes, in-place writes
// over an operand of the same size expression.
// `folded` at rep1 and rep2: main with its folds applied at those sizes.
std::optional<StoredShapePlan> storedPlan(const std::vector<std::string> &symbols,
                                          const std::function<const Function &(int)> &folded,
                                          std::string &why) {
  std::map<std::string, int64_t> rep1, rep2;
  for (size_t i = 0; i < symbols.size(); ++i) {
    rep1[symbols[i]] = int64_t(61 + 2 * i);
    rep2[symbols[i]] = int64_t(97 + 2 * i);
  }
  MemoryPlan p = planMemory(folded(1), rep1), p2 = planMemory(folded(2), rep2);
  StoredShapePlan s;
  std::unordered_map<const Value *, size_t> bufferOf;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer &b = p.buffers[i];
    bufferOf[b.value] = i;
    DimExpr bytes = *bytesOf(b.value->type);
    StoredBuffer sb{b.value->name,
                    b.base ? DimExpr() : bytes,
                    StoredBuffer::kNoBlock,
                    b.base ? b.base->name : "",
                    DimExpr::constant(int64_t(b.viewOffset)),
                    b.inPlaceOf ? b.inPlaceOf->name : ""};
    // A view's offset is a sum of (clamped) starts times strides, none
    // decreasing in any dim: equal at rep2 > rep1 in every symbol, it is
    // the same at every size from rep1 up (below, a clamped start can only
    // shrink it, which the runtime's bounds check refuses). Else its
    // expression, where it has one, plus its operand's (a view of a view).
    if (b.base && b.viewOffset != p2.buffers[i].viewOffset) {
      std::optional<DimExpr> at = viewByteOffsetExpr(*b.value->def);
      auto parent = bufferOf.find(b.value->def->operand(0));
      if (at && parent != bufferOf.end() && !s.buffers[parent->second].base.empty())
        at = *at + s.buffers[parent->second].viewOffset;
      if (at && !at->hasQuotient() && at->eval(rep1) == int64_t(b.viewOffset) &&
          at->eval(rep2) == int64_t(p2.buffers[i].viewOffset))
        sb.viewOffset = *at;
    }
    if (b.viewOffset != p2.buffers[i].viewOffset && sb.viewOffset.isConstant()) {
      why = "view %" + b.value->name + " starts at an offset that depends on the sizes";
      return std::nullopt;
    }
    // Storage: its own block, or the one of what it aliases or overwrites
    // (planMemory's blocks, in its order).
    const Value *joins = b.base ? b.base : b.inPlaceOf;
    auto it = joins ? bufferOf.find(joins) : bufferOf.end();
    if (it != bufferOf.end() && s.buffers[it->second].block != StoredBuffer::kNoBlock) {
      sb.block = s.buffers[it->second].block;
      StoredBlock &blk = s.blocks[sb.block];
      blk.end = std::max(blk.end, b.lastUse);
      if (b.inPlaceOf && !(DimExpr::alignUp(bytes, kArenaAlignment) == blk.bytes)) {
        why = "%" + b.value->name + " is written in place of an operand of another size";
        return std::nullopt;
      }
    } else if (!b.base) {
      sb.block = s.blocks.size();
      s.blocks.push_back({DimExpr::alignUp(bytes, kArenaAlignment), b.def, b.lastUse});
    }
    s.buffers.push_back(std::move(sb));
  }
  return s;
}

// The plan of main with `folds` applied: what runs at every size, the
// shape computations folded (applyFolds) as the runtime will.
std::optional<StoredShapePlan> foldedPlan(const Module &m, const std::vector<std::string> &symbols,
                                          std::vector<StoredFold> folds, std::string &why) {
  // The copies are planned, not stored.
  std::unique_ptr<Module> at[2];
  for (int i = 0; i < 2; ++i) {
    at[i] = cloneModule(m);
    std::map<std::string, int64_t> sizes;
    for (size_t s = 0; s < symbols.size(); ++s)
      sizes[symbols[s]] = int64_t((i ? 97 : 61) + 2 * s);
    applyFolds(at[i]->main(), folds, sizes);
  }
  std::optional<StoredShapePlan> s =
      storedPlan(symbols, [&](int i) -> const Function & { return at[i - 1]->main(); }, why);
  if (s)
    s->folds = std::move(folds);
  return s;
}
} // namespace

std::optional<StoredShapePlan> compileShapePlan(const Module &m, std::string &why,
                                                const std::vector<StoredGuard> &guards) {
  std::vector<std::string> symbols;
  std::vector<StoredFold> folds;
  why = undecidable(m.main(), symbols, folds);
  for (const StoredGuard &g : guards) {
    std::set<std::string> syms;
    g.bound.lhs.symbols(syms);
    g.bound.rhs.symbols(syms);
    for (const std::string &s : syms)
      if (why.empty() && std::find(symbols.begin(), symbols.end(), s) == symbols.end())
        why = "guard " + g.bound.str() + " reads '" + s + "', no input's dim";
  }
  if (!why.empty())
    return std::nullopt;
  std::optional<StoredShapePlan> s;
  if (folds.empty())
    s = storedPlan(symbols, [&](int) -> const Function & { return m.main(); }, why);
  else
    s = foldedPlan(m, symbols, folds, why);
  if (s)
    s->guards = guards;
  return s;
}

} // namespace tc
