// StridedView.h's algebra on small chains parsed from tcir: a value as
// (sizes, strides, offset) of the buffer its data-movement ops started from,
// and where the chain stops being one (splitting a merged axis across the
// axes it was merged from).
#include "../../lib/Transforms/StridedView.h" // private to the passes
#include "tc/IR/Parser.h"
#include <gtest/gtest.h>

using namespace tc;

namespace {

// The view of `name` through the ops of @f from its first argument, or
// nullopt where one step is no strided view.
std::optional<StridedView> viewOf(const std::string &text, const std::string &name) {
  static std::vector<std::unique_ptr<Module>> keep; // values outlive the call
  keep.push_back(parseModule(text, "t.tcir"));
  Function &f = *keep.back()->functions[0];
  StridedView v = StridedView::rowMajor(f.args[0]->type.shape);
  for (auto &op : f.ops) {
    for (Value *r : op->results)
      if (r->name == name)
        return applyViewOp(v, *op, r);
    std::optional<StridedView> next = applyViewOp(v, *op, op->result());
    if (!next)
      return std::nullopt;
    v = *next;
  }
  return std::nullopt;
}

} // namespace

// CoAtNet's q: a channels-last conv output, to NCHW, heads, part 1, [B, H, S, D].
TEST(StridedView, CoatnetPartIsHeadMajorPacked) {
  std::optional<StridedView> v = viewOf(R"(module @m {
  func @f(%c: f32[N,4,4,48]) -> (f32[N,2,8,16]) {
    %s = const i64[4] [0, 2, 24, 16]
    %t = Transpose(%c) {perm = [0, 3, 1, 2]} : f32[N,48,4,4]
    %h = Reshape(%t, %s) : f32[N,2,24,16]
    %a, %b, %d = Split(%h) {axis = 2} : f32[N,2,8,16], f32[N,2,8,16], f32[N,2,8,16]
    return %b
  }
})",
                                        "b");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->strides, (std::vector<int64_t>{768, 24, 1, 48}));
  EXPECT_EQ(v->offset, 8);
  EXPECT_FALSE(v->isRowMajor());
}

// Merging two axes that are not adjacent in memory keeps them as sub-axes
// (no single stride); a Reshape splitting the merged axis along them gives
// plain strides again; one splitting it across them is no view (a copy).
TEST(StridedView, MergeOfTransposedAxesKeepsSubAxes) {
  const char *text = R"(module @m {
  func @f(%x: f32[2,3,4]) -> (f32[4,3,2], f32[6,2,2]) {
    %s = const i64[2] [12, 2]
    %s3 = const i64[3] [4, 3, 2]
    %s6 = const i64[3] [6, 2, 2]
    %t = Transpose(%x) {perm = [2, 1, 0]} : f32[4,3,2]
    %y = Reshape(%t, %s) : f32[12,2]
    %back = Reshape(%y, %s3) : f32[4,3,2]
    %across = Reshape(%y, %s6) : f32[6,2,2]
    return %back, %across
  }
})";
  std::optional<StridedView> y = viewOf(text, "y");
  ASSERT_TRUE(y);
  EXPECT_EQ(y->strides, (std::vector<int64_t>{-1, 12}));
  ASSERT_EQ(y->merged.size(), 2u);
  EXPECT_EQ(y->merged[0], (std::vector<std::pair<int64_t, int64_t>>{{4, 1}, {3, 4}}));
  EXPECT_FALSE(y->isRowMajor());
  std::optional<StridedView> back = viewOf(text, "back");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->strides, (std::vector<int64_t>{1, 4, 12}));
  // viewOf follows every op before the named one: %back, then %across of
  // %back's view, which is no longer %y's; ask the module without %back.
  EXPECT_FALSE(viewOf(R"(module @m {
  func @f(%x: f32[2,3,4]) -> (f32[6,2,2]) {
    %s = const i64[2] [12, 2]
    %s6 = const i64[3] [6, 2, 2]
    %t = Transpose(%x) {perm = [2, 1, 0]} : f32[4,3,2]
    %y = Reshape(%t, %s) : f32[12,2]
    %across = Reshape(%y, %s6) : f32[6,2,2]
    return %across
  }
})",
                      "across"));
}

// torchvision's sequence-first q: part 1 of a packed [S, B, 3E] (S 5, B 2,
// E 32 = 2 heads of 16) viewed as [S, B * H, D] (B and H merged though 96
// apart), transposed and split into [B, H, S, D]: strides (3E, D, B * 3E).
TEST(StridedView, SequenceFirstHeadsThroughMergedAxis) {
  std::optional<StridedView> v = viewOf(R"(module @m {
  func @f(%p: f32[5,2,96]) -> (f32[2,2,5,16]) {
    %s4 = const i64[4] [5, 2, 3, 32]
    %i = const i64[] [1]
    %sh = const i64[3] [5, 4, 16]
    %sb = const i64[4] [2, 2, 5, 16]
    %r = Reshape(%p, %s4) : f32[5,2,3,32]
    %g = Gather(%r, %i) {axis = 2} : f32[5,2,32]
    %m = Reshape(%g, %sh) : f32[5,4,16]
    %t = Transpose(%m) {perm = [1, 0, 2]} : f32[4,5,16]
    %q = Reshape(%t, %sb) : f32[2,2,5,16]
    return %q
  }
})",
                                        "q");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->strides, (std::vector<int64_t>{96, 16, 192, 1}));
  EXPECT_EQ(v->offset, 32);
}

// A Transpose and its inverse, with a unit axis and a one-index Gather: back
// to row-major at the Gather's offset.
TEST(StridedView, InverseTransposeAndGather) {
  std::optional<StridedView> v = viewOf(R"(module @m {
  func @f(%x: f32[3,5,4]) -> (f32[5,4]) {
    %i = const i64[] [2]
    %t = Transpose(%x) {perm = [1, 2, 0]} : f32[5,4,3]
    %u = Unsqueeze(%t) {axes = [0]} : f32[1,5,4,3]
    %b = Transpose(%u) {perm = [0, 3, 1, 2]} : f32[1,3,5,4]
    %q = Squeeze(%b) {axes = [0]} : f32[3,5,4]
    %g = Gather(%q, %i) {axis = 0} : f32[5,4]
    return %g
  }
})",
                                        "g");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->offset, 40);
  EXPECT_EQ(v->strides, (std::vector<int64_t>{4, 1}));
}
