// What differs between the kernel dialects (CPU C++ and CUDA C++), as data;
// the loop structure around the shared per-element expressions is the only
// code per dialect (a CPU row loop, a CUDA grid-stride loop or one block
// per row), in the family emitters.
#pragma once
#include "tc/CodeGen/KernelEmitter.h"

namespace tc::kernels {

struct HalfType {
  const char *type, *toFloat, *fromFloat; // nullptr: the dialect has none
};
struct DialectInfo {
  const char *kernelHead; // what precedes the symbol in a kernel definition
  const char *mathPrefix; // of libm's names (expf, ...) in the prelude
  HalfType f16, bf16;     // storage type and conversions (round to nearest even)
  const char *inf, *nan;  // double infinity and quiet NaN
};
const DialectInfo &dialectInfo(KernelDialect d);

// The element type tensors of `t` are stored as, or nullptr (no kernel).
const char *storageType(DType t, KernelDialect d);
// The type values of `t` are computed in: half floats in float.
const char *computeType(DType t, KernelDialect d);
bool isHalf(DType t);
// Data movement copies elements as integers of their size.
const char *movedType(DType t);
// `v` exactly (hex float), as a `t` (f64: double, else float) in dialect `d`.
std::string floatLiteral(double v, DType t, KernelDialect d = KernelDialect::Cpu);

} // namespace tc::kernels
