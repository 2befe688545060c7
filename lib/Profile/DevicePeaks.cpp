#include "tc/Profile/DevicePeaks.h"
#include "tc/Runtime/ThreadPool.h"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace tc {

// The roofline's two terms for one execution of `s`: seconds to move its
// bytes and seconds to do its FLOPs (0 where the peak is unknown).
static std::pair<double, double> rooflineTerms(const DevicePeaks &p, const StepInfo &s) {
  double f = p.flopsFor(s);
  return {p.bytesPerSecond > 0 ? double(s.bytes) / p.bytesPerSecond : 0, f > 0 ? s.flops / f : 0};
}

double DevicePeaks::limitSeconds(const StepInfo &s) const {
  auto [memory, math] = rooflineTerms(*this, s);
  return std::max(memory, math);
}

const char *DevicePeaks::limitOf(const StepInfo &s) const {
  auto [memory, math] = rooflineTerms(*this, s);
  return math > memory ? "compute" : "memory";
}

DevicePeaks gpuPeaks(int ccMajor, int ccMinor, int sms, double smClockKHz, double memClockKHz,
                     int busBits) {
  // Dense FLOPs per SM per clock: f32 FMA (2 per lane) and 16-bit tensor
  // cores, from NVIDIA's architecture whitepapers (V100, A100, L40, H100, B200).
  double vector = 128, matrix = 1024; // Volta
  int cc = ccMajor * 10 + ccMinor;
  if (cc >= 80)
    vector = 128, matrix = 2048; // Ampere A100 (GA10x: 256 f32 but 1024 tensor)
  if (cc == 86 || cc == 87 || cc == 89)
    vector = 256, matrix = 1024;
  if (cc >= 90)
    vector = 256, matrix = 4096; // Hopper
  if (cc >= 100)
    vector = 256, matrix = 8192; // Blackwell
  DevicePeaks p;
  double hz = smClockKHz * 1e3;
  p.vectorFlops = double(sms) * hz * vector;
  p.matrixFlops = double(sms) * hz * matrix;
  // DDR: two transfers per memory clock.
  p.bytesPerSecond = 2 * memClockKHz * 1e3 * double(busBits) / 8;
  std::ostringstream os;
  os << "sm_" << cc << ", " << sms << " SMs at " << smClockKHz / 1e3 << " MHz, " << busBits
     << "-bit memory at " << memClockKHz / 1e3 << " MHz (device attributes)";
  p.source = os.str();
  return p;
}

namespace {

// The fastest clock /proc/cpuinfo reports, in GHz (2.5 when it says none),
// and FLOPs per cycle per core of the widest FMA its flags list.
std::pair<double, double> cpuClockAndWidth(std::string &isa) {
  std::ifstream in("/proc/cpuinfo");
  double mhz = 0;
  bool avx512 = false, fma = false, avx = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) == 0)
      mhz = std::max(mhz, std::atof(line.substr(line.find(':') + 1).c_str()));
    if (line.rfind("flags", 0) == 0) {
      std::istringstream fl(line.substr(line.find(':') + 1));
      for (std::string f; fl >> f;) {
        avx512 |= f == "avx512f";
        fma |= f == "fma";
        avx |= f == "avx";
      }
    }
  }
  // Two FMA pipes, 2 FLOPs per lane: f32 lanes 16 (AVX-512), 8 (AVX2), 4.
  double perCycle = avx512 ? 64 : fma ? 32 : avx ? 16 : 8;
  isa = avx512 ? "avx512 fma" : fma ? "avx2 fma" : avx ? "avx" : "sse";
  return {mhz > 0 ? mhz / 1e3 : 2.5, perCycle};
}

} // namespace

DevicePeaks cpuPeaks(unsigned threads) {
  threads = std::max(1u, threads);
  const size_t bytes = size_t(64) << 20;
  std::unique_ptr<char[]> src(new char[bytes]), dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 0, bytes); // touch every page before timing
  ThreadPool pool(threads);
  const int64_t chunks = 256;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
      size_t per = bytes / size_t(chunks);
      std::memcpy(dst.get() + size_t(b) * per, src.get() + size_t(b) * per, size_t(e - b) * per);
    });
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  DevicePeaks p;
  p.bytesPerSecond = 2.0 * double(bytes) / best;
  std::string isa;
  auto [ghz, perCycle] = cpuClockAndWidth(isa);
  p.vectorFlops = p.matrixFlops = double(threads) * ghz * 1e9 * perCycle;
  std::ostringstream os;
  os << "bandwidth measured (64 MiB copy, " << threads << " threads); FLOP/s = " << threads
     << " threads x " << ghz << " GHz x " << perCycle << " (" << isa << ")";
  p.source = os.str();
  return p;
}

} // namespace tc
