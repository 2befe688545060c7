// What a CPU kernel records instead of trapping or writing a wrong value:
// an index out of range, an integer division by zero. The kernels' shared
// object holds `int64_t tc_fault[4]` (Prelude.cpp: what, the faulting op's
// index in its group, two values); the runtime reads and clears it after
// each kernel step and fails with the reference executor's line for that
// op (CpuModel.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace tc {

enum class KernelFault : int64_t { None = 0, IndexOutOfRange = 1, DivisionByZero = 2 };

inline constexpr const char *kKernelFaultSymbol = "tc_fault";

// The reference kernels' message (lib/Runtime/Ref: checkIndex, integer Div).
inline std::string kernelFaultMessage(int64_t what, int64_t a, int64_t b) {
  switch (KernelFault(what)) {
  case KernelFault::IndexOutOfRange:
    return "index " + std::to_string(a) + " is out of range for an axis of size " +
           std::to_string(b);
  case KernelFault::DivisionByZero: return "integer division by zero";
  default: return "kernel fault " + std::to_string(what);
  }
}

} // namespace tc
