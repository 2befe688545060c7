// A sliding-window op's per-axis sizes and padding as kernel constants,
// shared by the Pool family (pools, ConvTranspose) and the DepthwiseConv
// family: padding is computed from the run-time sizes as the reference does
// (nn::poolWindow, nn::convTransposeWindow, Conv's auto_pad).
#pragma once
#include "KernelContext.h"
#include <ostream>

namespace tc::kernels {

// Per spatial axis d: In<d>, On<d> (result), K<d>, S<d>, D<d>, the leading
// padding P<d> and (all but ConvTranspose) the trailing padding E<d>.
struct Window {
  const KernelContext &c;
  const Op &op;
  size_t sp;
  bool transposed;
  size_t at = 2; // the first spatial axis of X and Y (1: channels-last)
  // The windows' value, whose dims are O<d>: the op's result, or
  // MaxPoolGrad's dY (its result has X's shape).
  const Value *windows = nullptr;

  // Attribute `name`'s value i, or `dflt` when the attribute is absent.
  std::string ints(const char *name, size_t i, int64_t dflt) const;
  // The window's size along axis d: the weights' (Conv, ConvTranspose;
  // a literal when static) or kernel_shape (pools).
  std::string kernel(size_t d) const;
  void emitSetup(std::ostream &os) const;
  // Row-major offset of spatial position pos<0..sp-1> in a [.., size0, size1, ..] block.
  std::string offset(const std::string &base, const char *pos, const char *size) const;
};

} // namespace tc::kernels
