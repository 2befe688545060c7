// Deciding a model's memory plan at compile time (the artifact's shape-plan
// section, ShapePlanSection.h), so that the runtime evaluates it per input
// shape with no pass, shape inference or planner.
#pragma once
#include "tc/CodeGen/ShapePlanSection.h"
#include "tc/IR/IR.h"
#include <optional>

namespace tc {

// The plan of `m`'s main (the optimized module's) for every size of its
// symbolic dims; nullopt, with `why`, where one cannot be decided now: a
// dim only shape inference at a given size knows (`?`), a shape computation
// left to fold, a data-dependent size or control flow, or a plan choice
// that depends on the sizes. Static shapes: exactly planMemory's plan.
// Symbolic dims: planMemory's sharing (in place, views) where it holds for
// every size, each block stacked above every block it overlaps in time.
// A shape computation whose contents are expressions of the input symbols
// is stored as a fold (ShapePlanSection.h) and the rest planned as if folded.
// `guards`: what `m`'s types assume about the sizes (ShapeGuards.h), stored
// for the runtime to check; no plan where one reads a dim no input has.
std::optional<StoredShapePlan> compileShapePlan(const Module &m, std::string &why,
                                                const std::vector<StoredGuard> &guards = {});

} // namespace tc
