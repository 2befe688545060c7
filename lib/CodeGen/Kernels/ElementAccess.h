// The broadcast analysis of a group's per-element code: which arguments
// are read per element of the domain, and how (contiguously, as a scalar,
// or through strides computed from their run-time dims: 0 along broadcast
// axes, numpy's trailing alignment).
#pragma once
#include "KernelContext.h"
#include <map>

namespace tc::kernels {

class ElementAccess {
public:
  enum class Access { Contiguous, Scalar, Broadcast };

  // Every op's operands are read per element, except those of
  // `contraction` (a MatMul/Gemm/Conv reads its own; Gemm's C is read per
  // element of the epilogue).
  ElementAccess(const KernelContext &c, const Op *contraction);

  bool elementwise(size_t arg) const { return elementwise_.count(arg) != 0; }
  Access access(size_t arg) const;
  // The first axis of the widest trailing block of the domain over which
  // every broadcast argument is either whole (its dims are the domain's:
  // read contiguously, see whole()) or constant (dims 1 or absent): `vec`
  // elements of the block read a vector or one element. At most rank - 1;
  // rank when not even the last axis is (a '?' dim).
  size_t vectorBlock() const;
  // Broadcast argument `arg` is whole over the domain's axes [from, rank).
  bool whole(size_t arg, size_t from) const;
  // Some argument is read per element through broadcast strides.
  bool readsBroadcast() const;
  // st<i>[d], step<i>: the strides of each broadcast argument over the
  // domain's axes.
  void emitStrides(std::ostream &os) const;
  // base<i>: where row `row` starts in each broadcast argument; `index`:
  // the type the row is divided in (CUDA: 32 bits where n allows).
  // `axes`: how many leading axes `row` spans (default: all but the last).
  void emitRowBases(std::ostream &os, const std::string &index = "int64_t",
                    size_t axes = SIZE_MAX) const;
  // a<i>: each argument read per element; `contiguous`: the element's
  // offset in a tensor of the domain's shape.
  void emitLoads(std::ostream &os, const std::string &contiguous = "row * inner + j") const;

private:
  // How broadcast argument `arg` is read along domain axis `d`.
  enum class Along { Whole, Constant, Either, Unknown };
  Along along(size_t arg, size_t d) const;
  // Argument `arg` is whole or constant over the axes [from, rank).
  bool uniform(size_t arg, size_t from) const;

  const KernelContext &c_;
  std::map<size_t, bool> elementwise_; // arguments read per element of the domain
};

} // namespace tc::kernels
