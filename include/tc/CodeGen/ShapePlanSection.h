// The artifact's shape-plan section: the memory plan the compiler decided,
// sizes as expressions of the symbolic dims (DimExpr.h): which buffers
// share storage (views, in-place writes), each storage block's size and
// lifetime. A runtime evaluates the sizes for a new input shape and packs
// the blocks (ArenaPacking.h, the planner's own packing), with no pass,
// shape inference or IR analysis. Codegen writes it where the plan can be
// decided at compile time (ShapePlanCompile.h says when); else the section
// says why not (an `unplanned` record), so that a runtime without the tools'
// run-time planner (libtcrt) refuses the artifact at load naming the value or
// dim, instead of running it op by op on the host.
//
// Text, one record a line, fields tab-separated:
//   tc-shape-plan 1            (2 when it holds a guard)
//   guard  <lhs> <= <rhs> <where the limit comes from>
//   block  <aligned bytes> <first step> <last step>
//   buffer <value> <bytes> <block|-> <base|-> <view offset> <in place of|->
//   fold   <value> <element>...
//   range  <value> <start> <step>
// or, with no plan, one record after the header:
//   unplanned <why>
// Blocks in the planner's order (it breaks ties by it); buffers in the
// memory plan's (main's op results in order, the folded ones left out). A
// view's bytes are 0. A fold is a shape computation's i64 result (Shape ->
// Slice -> Concat -> a Reshape's shape), its elements as expressions of the
// symbolic dims: the runtime makes it a constant at each shape and drops the
// ops that computed it, as the run-time planner's fold-constants would. A
// range is such a fold of a Range of symbolic length (or a view of one):
// start, start + step, ..., as many as its type has elements at the sizes.
// A guard (DimGuard.h) is an assumption the plan makes about the sizes (a
// Slice's end within its axis: `seq <= 512`): the runtime refuses a shape
// that violates one, naming the dim, its value, the limit and the op. A
// plan with guards is version 2, so that a runtime that checks none refuses
// it at load; one without stays version 1, as older runtimes read it.
#pragma once
#include "tc/IR/DimExpr.h"
#include "tc/IR/DimGuard.h"
#include "tc/IR/IR.h"
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

inline constexpr const char *kSectionShapePlan = "shape-plan";

struct StoredBlock {
  DimExpr bytes; // aligned to kArenaAlignment
  size_t start = 0, end = 0;
};

struct StoredBuffer {
  std::string value;
  DimExpr bytes;
  size_t block = kNoBlock; // its storage (a view of an argument or constant: none)
  std::string base;        // a view: the value it aliases ("" for none)
  DimExpr viewOffset;
  std::string inPlaceOf; // "" for none
  static constexpr size_t kNoBlock = SIZE_MAX;
};

struct StoredFold {
  std::string value;
  std::vector<DimExpr> elements; // a range: {start, step}
  bool range = false;
};

struct StoredGuard {
  DimGuard bound;
  std::string origin; // the op whose size assumes it, and its operand
};

struct StoredShapePlan {
  std::vector<StoredGuard> guards;
  std::vector<StoredFold> folds; // in program order
  std::vector<StoredBlock> blocks;
  std::vector<StoredBuffer> buffers;
  std::string unplanned; // why codegen stored no plan ("" when it did)
};

std::string writeShapePlan(const StoredShapePlan &plan);

// Makes each fold of `folds` a constant at `sizes` (main's types already
// substituted) and drops the ops that computed them: what the runtime does
// per shape, and codegen to plan the rest. Throws tc::Error for a fold that
// does not fit `f`.
void applyFolds(Function &f, const std::vector<StoredFold> &folds,
                const std::map<std::string, int64_t> &sizes);
// Throws tc::Error naming `file` and the first guard `sizes` violate: "m.tcx:
// seq = 600 exceeds 512, the largest this model supports (Slice ...)".
void checkGuards(const std::vector<StoredGuard> &guards,
                 const std::map<std::string, int64_t> &sizes, const std::string &file);
// Throws tc::Error naming `file` and the bad line.
StoredShapePlan readShapePlan(std::string_view text, const std::string &file);

} // namespace tc
