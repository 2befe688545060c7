#include "tc/CodeGen/Codegen.h"
#include "Kernels/Families.h"
#include "tc/CodeGen/ShapeGuards.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/ElementMove.h"
#include "tc/IR/Verifier.h"
#include "tc/Transforms/Pass.h"
#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <sstream>

namespace tc {

namespace {

// Operand k of `op` only fixes positions or the result's shape (Slice's
// starts/ends/axes/steps, Expand's shape, Tile's repeats, Pad's pads): the
// emitter reads it at compile time, the kernel never loads it.
bool fixesPositions(const Op &op, size_t k) {
  return k > 0 && (op.is(OpKind::Slice) || op.is(OpKind::Expand) || op.is(OpKind::Tile) ||
                   op.is(OpKind::Pad));
}

// Operand k of `op` is data a data-movement kernel copies (Expand's input,
// Concat's parts): it reads a buffer, not a literal.
bool movesData(const Op &op, size_t k) {
  return isElementMove(op.kind) && !fixesPositions(op, k) && !(op.is(OpKind::Gather) && k == 1);
}

// The fuse pass copies small constants into a group; the emitter reads
// scalars as literals and everything else as a kernel argument, so a
// non-scalar constant (or a scalar that a move copies: `ones` is an Expand
// of 1) moves back out to be passed like a weight.
void passArrayConstantsAsArguments(Module &m, Function &caller) {
  for (auto &op : caller.ops) {
    if (!op->is(OpKind::Fused))
      continue;
    Function *callee = m.lookup(op->getString("callee"));
    std::vector<Value *> keep;
    for (Value *c : callee->constants) {
      auto n = staticNumElements(c->type.shape);
      bool positions = !callee->ops.empty(), moved = false;
      for (const auto &o : callee->ops)
        for (size_t k = 0; k < o->operands.size(); ++k) {
          positions &= o->operands[k] != c || fixesPositions(*o, k);
          moved |= o->operands[k] == c && movesData(*o, k);
        }
      if ((n && *n == 1 && !moved) || positions) {
        keep.push_back(c);
        continue;
      }
      Value *arg = callee->addArgument(callee->uniqueName(c->name + "_arg"), c->type);
      callee->replaceAllUsesWith(c, arg);
      op->operands.push_back(
          caller.addConstant(caller.uniqueName(c->name), c->type, *c->data, c->loc));
    }
    callee->constants = keep;
  }
}

// In every function a run walks (main, control-flow bodies).
void passArrayConstantsAsArguments(Module &m) {
  for (Function *caller : walkedFunctions(m))
    passArrayConstantsAsArguments(m, *caller);
}

// A group's result 0 is its iteration domain (the kernel's and the
// runtime's: KernelContext::domain, CpuModel::launch). Where result 0 has
// the shape of a reduction's result and a later one that of its input (an
// expanded LayerNorm's Mean beside its Y, batch norm's backward: values
// per row beside per-element ones), the per-element result goes first, in
// the callee and in every Fused op that calls it, so the Reduction family
// writes the row values once per row beside it.
void perElementResultFirst(Module &m) {
  std::vector<Function *> walked = walkedFunctions(m);
  std::set<std::string> done;
  for (Function *caller : walked)
    for (auto &op : caller->ops) {
      if (!op->is(OpKind::Fused) || !done.insert(op->getString("callee")).second)
        continue;
      Function &callee = *m.lookup(op->getString("callee"));
      std::vector<Value *> &rs = callee.results;
      size_t first = rs.size();
      for (const auto &o : callee.ops)
        if (first == rs.size() && kernels::isReduceAnchor(*o) &&
            o->result()->type.shape != o->operand(0)->type.shape &&
            rs[0]->type.shape == o->result()->type.shape)
          for (size_t k = 1; k < rs.size() && first == rs.size(); ++k)
            if (rs[k]->type.shape == o->operand(0)->type.shape)
              first = k;
      if (first == rs.size())
        continue;
      std::rotate(rs.begin(), rs.begin() + std::ptrdiff_t(first),
                  rs.begin() + std::ptrdiff_t(first) + 1);
      for (Function *f : walked)
        for (auto &call : f->ops) {
          if (!call->is(OpKind::Fused) || call->getString("callee") != callee.name)
            continue;
          std::vector<Value *> &vs = call->results;
          std::rotate(vs.begin(), vs.begin() + std::ptrdiff_t(first),
                      vs.begin() + std::ptrdiff_t(first) + 1);
          for (size_t k = 0; k < vs.size(); ++k)
            vs[k]->resultIndex = unsigned(k);
        }
    }
}

} // namespace

std::unique_ptr<Module> prepareForCodegen(const Module &input, bool outlineMoves,
                                          std::vector<StoredGuard> *guards) {
  // The module travels in the artifact, so it is copied here (its weights
  // shared, not copied).
  std::unique_ptr<Module> m = cloneModule(input);
  std::vector<StoredGuard> assumed = assumeSliceBounds(*m); // before the Slices are outlined
  if (guards)
    *guards = std::move(assumed);
  PassManager outline;
  outline.add(outlineLoneOpsPipeline(outlineMoves));
  outline.run(*m, std::cerr); // prints nothing: no print options
  passArrayConstantsAsArguments(*m);
  perElementResultFirst(*m);
  verifyModule(*m);
  return m;
}

std::string prepareStageName(bool outlineMoves) {
  return "outline lone ops (" + outlineLoneOpsPipeline(outlineMoves).spelling() + ")";
}

EmittedKernels emitKernels(const Module &m, KernelDialect dialect, bool variants) {
  EmittedKernels r;
  std::set<std::string> seen;
  for (const Function *caller : walkedFunctions(m))
    for (const auto &op : caller->ops) {
      if (!op->is(OpKind::Fused) || !seen.insert(op->getString("callee")).second)
        continue;
      std::string why;
      auto t0 = std::chrono::steady_clock::now();
      const Function &group = *m.lookup(op->getString("callee"));
      if (auto k = emitKernel(group, dialect, why)) {
        for (unsigned i = 1; variants && i < k->variantCount; ++i)
          if (auto v = emitKernelVariant(group, dialect, i, why))
            k->variants.push_back(std::move(*v));
        r.kernels.push_back(std::move(*k));
      } else
        r.fallback.push_back(why);
      r.perGroup.push_back(
          {"emit kernels/@" + op->getString("callee"),
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    }
  return r;
}

std::string artifactTimeline(const Module &input, const std::vector<CompileStage> &stages) {
  std::vector<TimelineEntry> all = readTimeline(input);
  for (const CompileStage &st : stages)
    all.push_back({"tc-codegen", st.name, st.seconds});
  return timelineJson(all);
}

} // namespace tc
