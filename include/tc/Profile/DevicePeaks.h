// The roofline of the device a trace ran on: memory bandwidth and FLOP rate,
// to say how close each kernel came to what the hardware allows and whether
// memory or arithmetic limits it.
#pragma once
#include "tc/Runtime/Trace.h"
#include <string>

namespace tc {

struct DevicePeaks {
  double bytesPerSecond = 0; // DRAM bandwidth
  double matrixFlops = 0;    // per second: 16-bit MatMul/Conv on matrix units (tensor cores)
  double vectorFlops = 0;    // per second: f32 FMA pipes (everything else)
  std::string source;        // how the numbers were obtained, for the report

  double flopsFor(const StepInfo &s) const {
    return s.matrix && (s.matrixDType == "f16" || s.matrixDType == "bf16") ? matrixFlops
                                                                           : vectorFlops;
  }
  // Seconds the roofline allows one execution of `s` (0: nothing known).
  double limitSeconds(const StepInfo &s) const;
  // "memory" or "compute": which of the two roofline terms is larger.
  const char *limitOf(const StepInfo &s) const;
};

// An NVIDIA GPU from its attributes (compute capability, SMs, SM clock and
// memory clock in kHz, memory bus width in bits). Dense rates per SM per
// clock by architecture (Volta..Blackwell; unknown ones as Hopper).
DevicePeaks gpuPeaks(int ccMajor, int ccMinor, int sms, double smClockKHz, double memClockKHz,
                     int busBits);

// This machine's CPU over `threads` threads: bandwidth measured by a
// parallel copy of 64 MiB (read + write counted), FLOP rate estimated as
// threads x clock (/proc/cpuinfo) x FLOPs per cycle of its widest FMA.
DevicePeaks cpuPeaks(unsigned threads);

} // namespace tc
