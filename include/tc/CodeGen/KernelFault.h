// What a kernel records instead of trapping or writing a wrong value: an
// index out of range (CPU), an integer division by zero (both targets). The
// kernels' shared object (CPU) or cubin (CUDA, only when some kernel may
// fault) holds `tc_fault[4]` (Prelude.cpp: what, the faulting op's index in
// its group, two values: for a division, the group's tag). The CPU runtime
// reads and clears it after each kernel step, the CUDA runtime after each
// run it waits for, and fails with the reference executor's line for that
// op (CpuModel.cpp, CudaRun.cpp).
#pragma once
#include "tc/Support/Hash64.h"
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

namespace tc {

// RandomDropout: a Dropout whose training_mode and ratio, read at run time,
// ask for random drops (the reference's refusal; a: the ratio's bits).
enum class KernelFault : int64_t {
  None = 0,
  IndexOutOfRange = 1,
  DivisionByZero = 2,
  RandomDropout = 3
};

inline constexpr const char *kKernelFaultSymbol = "tc_fault";

// A division fault's group: a 62-bit tag of the group's name (a module's
// groups have distinct names), what the CUDA runtime matches, after a whole
// run, to find the op.
inline int64_t kernelFaultGroupTag(std::string_view group) { return int64_t(hash64(group) >> 2); }

// The reference kernels' message (lib/Runtime/Ref: checkIndex, integer Div).
inline std::string kernelFaultMessage(int64_t what, int64_t a, int64_t b) {
  switch (KernelFault(what)) {
  case KernelFault::IndexOutOfRange:
    return "index " + std::to_string(a) + " is out of range for an axis of size " +
           std::to_string(b);
  case KernelFault::DivisionByZero: return "integer division by zero";
  case KernelFault::RandomDropout: {
    double ratio = 0;
    std::memcpy(&ratio, &a, sizeof ratio);
    std::ostringstream os;
    os << "training Dropout with ratio " << ratio
       << " drops random elements; the reference executor runs it only with ratio 0 (tc-opt "
          "--train makes it a PhiloxDropout)";
    return os.str();
  }
  default: return "kernel fault " + std::to_string(what);
  }
}

} // namespace tc
