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
  // A broadcast argument that is the domain's trailing axes (a bias over
  // the last axis, leading 1s dropped): element i reads it at i % size, so
  // `vec` consecutive elements read `vec` consecutive ones when its size is
  // a multiple of `vec`.
  bool trailing(size_t arg) const;
  // Some argument is read per element through broadcast strides.
  bool readsBroadcast() const;
  // The element count of argument `arg` (a dims[] product).
  std::string sizeOf(size_t arg) const;

  // st<i>[d], step<i>: the strides of each broadcast argument over the
  // domain's axes.
  void emitStrides(std::ostream &os) const;
  // base<i>: where row `row` starts in each broadcast argument; `index`:
  // the type the row is divided in (CUDA: 32 bits where n allows).
  void emitRowBases(std::ostream &os, const std::string &index = "int64_t") const;
  // a<i>: each argument read per element; `contiguous`: the element's
  // offset in a tensor of the domain's shape.
  void emitLoads(std::ostream &os, const std::string &contiguous = "row * inner + j") const;

private:
  const KernelContext &c_;
  std::map<size_t, bool> elementwise_; // arguments read per element of the domain
};

} // namespace tc::kernels
