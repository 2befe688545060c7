// The channels-last pass's walk (ChannelsLast.cpp) and the ops that follow
// their data operand's layout (ChannelsLastOps.cpp). Internal to the pass.
#pragma once
#include "tc/IR/IR.h"
#include <unordered_map>
#include <unordered_set>

namespace tc::channels_last {

// Walks the entry function's ops in order, keeping for each NCHW value its
// NHWC twin (see ChannelsLast.cpp's file comment).
class Walk {
public:
  Walk(Function &f, bool convTranspose) : f_(f), convTranspose_(convTranspose) {}
  bool run();

  // For the op rewrites:
  Function &f() { return f_; }
  bool isTwin(const Value *v) const { return isTwinValue_.count(v) != 0; }
  bool hasTwin(const Value *v) const { return twin_.count(v) != 0; }
  // v's NHWC form: itself if it is one, a cached twin, a permuted constant,
  // a Reshape (when only size-1 axes move) or a Transpose.
  Value *toLast(Value *v);
  // A twin's NCHW form: cached, a Reshape or a Transpose.
  Value *toFirst(Value *v);
  // A new i64 constant named after `base`.
  Value *ints(const std::string &base, const std::vector<int64_t> &values, Location loc);
  // Re-infers op's result types after a rewrite and marks them NHWC.
  void retypeAsTwins(Op &op);
  void markChanged() { changed_ = true; }

  // A Reshape of v to `out` by the shape constant `dims`.
  Value *reshape(Value *v, const std::vector<int64_t> &dims, const Shape &out,
                 const std::string &suffix);

private:
  Function &f_;
  bool convTranspose_; // ConvTransposes to NHWC as well (the pass's option)
  bool changed_ = false;
  std::unordered_map<const Value *, Value *> twin_;           // NCHW value -> NHWC value
  std::unordered_map<const Value *, Value *> first_;          // NHWC value -> NCHW value
  std::unordered_map<const Value *, bool> isTwinValue_;       // values produced in NHWC
  std::unordered_map<const Value *, Value *> weightsLast_;    // conv weights -> channels last
  std::unordered_set<const Value *> weightGradDy_;            // ConvWeightGrad's dY operands
  std::unordered_map<const Value *, Value *> weightGradNchw_; // NHWC dW -> its OIHW form
  // Values of an NCHW tensor flattened per sample ([N, 1, C*H*W]) that hold
  // its twin's elements (flattened in NHWC order) -> that twin's NCHW shape
  // (ChannelsLastFlat.cpp).
  std::unordered_map<const Value *, Shape> flat_;
  std::unordered_map<const Value *, Value *> restored_; // flat value -> in NCHW order

  Value *transpose(Value *v, const std::vector<int64_t> &perm, const std::string &suffix);
  Value *constant(const Value *v, const std::vector<int64_t> &perm, const std::string &suffix);
  Value *reshapeIfTrivial(Value *v, const std::vector<int64_t> &perm, const std::string &suffix);
  void rewrite(Op &op); // one op, in order (the file comment's cases)
  // Conv or ConvTranspose weights with their channels last (toChannelsLastPerm),
  // made once per W: a Conv and its gradient's ConvTranspose share them.
  Value *weightsLast(Value *w);
  void convert(Op &op);
  void convertWeightGrad(Op &op);
  void noteModelTranspose(Op &op);
  // True when op was handled as a GroupNorm step; otherwise its flattened
  // operands are back in NCHW order.
  bool followFlat(Op &op);
  Value *restoreFlat(Value *v);
  bool readsTwin(const Op &op) const;
  bool isAnchor(const Value *v) const;
  bool runsOnTwins(const Op &op) const;
  const Op *freeExpand(const Value *v) const;
  void retypePointwise(Op &op);
};

// NCHW axis `a` (in [-rank, rank)) as an NHWC axis.
int64_t lastAxis(int64_t a, size_t rank);

// An op whose data operand (operand 0; for Concat any) is a twin, rewritten to read and
// produce NHWC: pools (channels_last), global pools (as Reduce* over the
// spatial axes), Reduce* (axes remapped), Concat / Split (axis), Slice
// (axes), Resize (scales / sizes / axes), Pad (pads), Shape (its dims
// gathered). False: the op is left alone (it will read NCHW).
bool followLayout(Walk &w, Op &op);

} // namespace tc::channels_last
