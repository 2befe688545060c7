// The contents of small i64 shape tensors, tracked symbolically: Shape(x) of
// f32[batch,16] holds [batch, 16], through Concat / Gather / Slice /
// Squeeze / Unsqueeze / Cast / Reshape, size arithmetic (Add, Sub, Mul, a
// whole Div) and Range of a static length. Shape inference reads it to type a Reshape or Expand fed
// by such a computation (`batch`, `(* 2 batch)` instead of `?`); codegen stores it so that the
// runtime folds the computation at each shape without a pass (ShapePlanSection.h's fold records).
#pragma once
#include "tc/IR/DimExpr.h"
#include "tc/IR/IR.h"
#include <optional>
#include <unordered_map>
#include <vector>

namespace tc {

// One element: an integer expression (negative constants too: a Reshape's
// -1), nullopt when unknown.
using ShapeEntry = std::optional<DimExpr>;
using ShapeContents = std::vector<ShapeEntry>;

// The values start, start + step, ... of a Range of symbolic length (the
// batch's indices) or of a view of one, as many as its type has elements.
struct ShapeRange {
  DimExpr start;
  int64_t step = 1;
};

class ShapeTracker {
public:
  // A constant's values or what visit() recorded; nullopt when untracked.
  std::optional<ShapeContents> contents(const Value *v) const;
  std::optional<ShapeRange> range(const Value *v) const;
  // Records what `op` computes into an i64 tensor, when it can be told.
  void visit(const Op &op);
  // A better result shape for Reshape / Expand / ConstantOfShape / Range /
  // Resize from tracked contents, or nullopt.
  std::optional<Shape> resultShape(const Op &op) const;

private:
  std::optional<ShapeContents> compute(const Op &op) const;
  std::optional<ShapeContents> arithmetic(const Op &op) const;
  std::optional<ShapeContents> slice(const Op &op) const;
  std::optional<ShapeContents> rangeValues(const Op &op) const;
  std::optional<Shape> range(const Op &op) const;
  std::optional<Shape> resize(const Op &op) const;
  std::optional<Shape> reshape(const Op &op) const;
  std::unordered_map<const Value *, ShapeContents> known_;
  std::unordered_map<const Value *, ShapeRange> ranges_;
};

} // namespace tc
