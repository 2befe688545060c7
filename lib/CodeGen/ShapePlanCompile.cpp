#include "tc/CodeGen/ShapePlanCompile.h"
#include "tc/Analysis/MemoryPlan.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/ShapeComputations.h"
#include <algorithm>
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
    e = e * (d.isStatic() ? DimExpr::constant(d.size) : DimExpr::symbol(d.symbol));
  }
  return e;
}

// "Reshape %x": an op as the messages name it.
std::string opNamed(const Op &op) {
  return std::string(op.info().name) + (op.results.empty() ? "" : " %" + op.results[0]->name);
}

// Why a plan cannot be decided from `main`'s types ("" when it can), and
// its symbolic dims.
std::string undecidable(const Function &main, std::vector<std::string> &symbols) {
  // "" when `v` has a size expression, else which dim lacks one.
  auto unsized = [&](const Value *v) -> std::string {
    const Shape &shape = v->type.shape;
    for (const Dim &d : shape)
      if (d.isSymbolic() && std::find(symbols.begin(), symbols.end(), d.symbol) == symbols.end())
        symbols.push_back(d.symbol);
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i].isUnknown())
        return "dim " + std::to_string(i) + " of %" + v->name + " (" + v->type.str() +
               ") is known only at run time";
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
  if (std::unordered_set<const Op *> folds = shapeComputations(main); !folds.empty()) {
    for (const auto &op : main.ops) // the first in program order, for a stable message
      if (folds.count(op.get()))
        return "shape computation " + opNamed(*op) + " folds only at the input sizes";
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
std::optional<StoredShapePlan>
storedPlan(const Function &main, const std::vector<std::string> &symbols, std::string &why) {
  std::map<std::string, int64_t> rep1, rep2;
  for (size_t i = 0; i < symbols.size(); ++i) {
    rep1[symbols[i]] = int64_t(61 + 2 * i);
    rep2[symbols[i]] = int64_t(97 + 2 * i);
  }
  MemoryPlan p = planMemory(main, rep1), p2 = planMemory(main, rep2);
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
    if (b.viewOffset != p2.buffers[i].viewOffset ||
        (b.viewOffset && !symbols.empty() &&
         !isStaticShape(b.value->def->operand(0)->type.shape))) {
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

} // namespace

std::optional<StoredShapePlan> compileShapePlan(const Function &main, std::string &why) {
  std::vector<std::string> symbols;
  why = undecidable(main, symbols);
  if (!why.empty())
    return std::nullopt;
  return storedPlan(main, symbols, why);
}

} // namespace tc
