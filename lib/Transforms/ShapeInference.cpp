// Shape inference over whole functions. The op table's rules see one op at
// a time and only constant data; this pass also tracks the *contents* of
// small i64 shape tensors symbolically (ShapeContents.h), so that a Reshape
// or Expand fed by such a computation keeps `batch` instead of `?`.
// Result types are then refined in order: a `?` becomes what the rules (or
// the tracked contents) prove, and symbols propagate downstream.
#include "tc/Transforms/ShapeInference.h"
#include "tc/IR/NNMath.h"
#include "tc/IR/Verifier.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeContents.h"
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

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
