#include "HostFeatures.h"
#include <cpuid.h>
#include <cstdint>
#include <string_view>

namespace tc {

namespace {

enum Reg { EAX, EBX, ECX, EDX };
// Register state the OS must save for a feature's instructions (XCR0).
enum class State { None, Avx, Avx512, Amx, Apx };

struct Feature {
  std::string_view name; // LLVM's
  unsigned leaf, subleaf;
  Reg reg;
  unsigned bit;
  State state = State::None;
};

// LLVM 19's x86 feature names (llvm/TargetParser/X86TargetParser.def) with
// the cpuid bit that reports each (Intel SDM vol. 2, CPUID; AMD APM vol. 3).
constexpr Feature kFeatures[] = {
    {"x87", 1, 0, EDX, 0},
    {"cx8", 1, 0, EDX, 8},
    {"cmov", 1, 0, EDX, 15},
    {"mmx", 1, 0, EDX, 23},
    {"fxsr", 1, 0, EDX, 24},
    {"sse", 1, 0, EDX, 25},
    {"sse2", 1, 0, EDX, 26},
    {"sse3", 1, 0, ECX, 0},
    {"pclmul", 1, 0, ECX, 1},
    {"ssse3", 1, 0, ECX, 9},
    {"fma", 1, 0, ECX, 12, State::Avx},
    {"cx16", 1, 0, ECX, 13},
    {"sse4.1", 1, 0, ECX, 19},
    {"sse4.2", 1, 0, ECX, 20},
    {"crc32", 1, 0, ECX, 20}, // LLVM: part of SSE4.2
    {"movbe", 1, 0, ECX, 22},
    {"popcnt", 1, 0, ECX, 23},
    {"aes", 1, 0, ECX, 25},
    {"xsave", 1, 0, ECX, 26},
    {"avx", 1, 0, ECX, 28, State::Avx},
    {"f16c", 1, 0, ECX, 29, State::Avx},
    {"rdrnd", 1, 0, ECX, 30},
    {"fsgsbase", 7, 0, EBX, 0},
    {"sgx", 7, 0, EBX, 2},
    {"bmi", 7, 0, EBX, 3},
    {"avx2", 7, 0, EBX, 5, State::Avx},
    {"bmi2", 7, 0, EBX, 8},
    {"invpcid", 7, 0, EBX, 10},
    {"rtm", 7, 0, EBX, 11},
    {"avx512f", 7, 0, EBX, 16, State::Avx512},
    {"evex512", 7, 0, EBX, 16, State::Avx512}, // 512-bit AVX-512: with avx512f
    {"avx512dq", 7, 0, EBX, 17, State::Avx512},
    {"rdseed", 7, 0, EBX, 18},
    {"adx", 7, 0, EBX, 19},
    {"avx512ifma", 7, 0, EBX, 21, State::Avx512},
    {"clflushopt", 7, 0, EBX, 23},
    {"clwb", 7, 0, EBX, 24},
    {"avx512cd", 7, 0, EBX, 28, State::Avx512},
    {"sha", 7, 0, EBX, 29},
    {"avx512bw", 7, 0, EBX, 30, State::Avx512},
    {"avx512vl", 7, 0, EBX, 31, State::Avx512},
    {"avx512vbmi", 7, 0, ECX, 1, State::Avx512},
    {"pku", 7, 0, ECX, 4}, // OSPKE: enabled by the OS
    {"waitpkg", 7, 0, ECX, 5},
    {"avx512vbmi2", 7, 0, ECX, 6, State::Avx512},
    {"shstk", 7, 0, ECX, 7},
    {"gfni", 7, 0, ECX, 8},
    {"vaes", 7, 0, ECX, 9, State::Avx},
    {"vpclmulqdq", 7, 0, ECX, 10, State::Avx},
    {"avx512vnni", 7, 0, ECX, 11, State::Avx512},
    {"avx512bitalg", 7, 0, ECX, 12, State::Avx512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, State::Avx512},
    {"rdpid", 7, 0, ECX, 22},
    {"kl", 7, 0, ECX, 23},
    {"cldemote", 7, 0, ECX, 25},
    {"movdiri", 7, 0, ECX, 27},
    {"movdir64b", 7, 0, ECX, 28},
    {"enqcmd", 7, 0, ECX, 29},
    {"uintr", 7, 0, EDX, 5},
    {"avx512vp2intersect", 7, 0, EDX, 8, State::Avx512},
    {"serialize", 7, 0, EDX, 14},
    {"tsxldtrk", 7, 0, EDX, 16},
    {"pconfig", 7, 0, EDX, 18},
    {"amx-bf16", 7, 0, EDX, 22, State::Amx},
    {"avx512fp16", 7, 0, EDX, 23, State::Avx512},
    {"amx-tile", 7, 0, EDX, 24, State::Amx},
    {"amx-int8", 7, 0, EDX, 25, State::Amx},
    {"sha512", 7, 1, EAX, 0, State::Avx},
    {"sm3", 7, 1, EAX, 1, State::Avx},
    {"sm4", 7, 1, EAX, 2, State::Avx},
    {"raoint", 7, 1, EAX, 3},
    {"avxvnni", 7, 1, EAX, 4, State::Avx},
    {"avx512bf16", 7, 1, EAX, 5, State::Avx512},
    {"cmpccxadd", 7, 1, EAX, 7},
    {"amx-fp16", 7, 1, EAX, 21, State::Amx},
    {"hreset", 7, 1, EAX, 22},
    {"avxifma", 7, 1, EAX, 23, State::Avx},
    {"avxvnniint8", 7, 1, EDX, 4, State::Avx},
    {"avxneconvert", 7, 1, EDX, 5, State::Avx},
    {"amx-complex", 7, 1, EDX, 8, State::Amx},
    {"avxvnniint16", 7, 1, EDX, 10, State::Avx},
    {"prefetchi", 7, 1, EDX, 14},
    {"usermsr", 7, 1, EDX, 15},
    {"avx10.1-256", 7, 1, EDX, 19, State::Avx512}, // AVX10 (version 1 is the first)
    {"avx10.1-512", 7, 1, EDX, 19, State::Avx512},
    {"egpr", 7, 1, EDX, 21, State::Apx}, // APX: these six come together
    {"push2pop2", 7, 1, EDX, 21, State::Apx},
    {"ppx", 7, 1, EDX, 21, State::Apx},
    {"ndd", 7, 1, EDX, 21, State::Apx},
    {"ccmp", 7, 1, EDX, 21, State::Apx},
    {"cf", 7, 1, EDX, 21, State::Apx},
    {"xsaveopt", 0xd, 1, EAX, 0},
    {"xsavec", 0xd, 1, EAX, 1},
    {"xsaves", 0xd, 1, EAX, 3},
    {"ptwrite", 0x14, 0, EBX, 4},
    {"widekl", 0x19, 0, EBX, 2},
    {"sahf", 0x80000001, 0, ECX, 0},
    {"lzcnt", 0x80000001, 0, ECX, 5},
    {"sse4a", 0x80000001, 0, ECX, 6},
    {"prfchw", 0x80000001, 0, ECX, 8},
    {"xop", 0x80000001, 0, ECX, 11, State::Avx},
    {"lwp", 0x80000001, 0, ECX, 15},
    {"fma4", 0x80000001, 0, ECX, 16, State::Avx},
    {"tbm", 0x80000001, 0, ECX, 21},
    {"mwaitx", 0x80000001, 0, ECX, 29},
    {"64bit", 0x80000001, 0, EDX, 29},
    {"clzero", 0x80000008, 0, EBX, 0},
    {"rdpru", 0x80000008, 0, EBX, 4},
    {"wbnoinvd", 0x80000008, 0, EBX, 9},
};

bool cpuidBit(unsigned leaf, unsigned subleaf, Reg reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};
  // __get_cpuid_count checks the leaf against the highest one of its range.
  if (!__get_cpuid_count(leaf, subleaf, &r[EAX], &r[EBX], &r[ECX], &r[EDX]))
    return false;
  return (r[reg] >> bit) & 1;
}

// The register state the OS saves on a context switch (XCR0), or 0 when it
// does not enable XSAVE for programs.
uint64_t savedState() {
  if (!cpuidBit(1, 0, ECX, 27)) // OSXSAVE
    return 0;
  uint32_t lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool stateSaved(State s, uint64_t xcr0) {
  constexpr uint64_t kAvx = 0x6, kAvx512 = 0xe0 | kAvx, kAmx = 0x60000, kApx = 0x80000;
  switch (s) {
  case State::None: return true;
  case State::Avx: return (xcr0 & kAvx) == kAvx;
  case State::Avx512: return (xcr0 & kAvx512) == kAvx512;
  case State::Amx: return (xcr0 & kAmx) == kAmx;
  case State::Apx: return (xcr0 & kApx) == kApx;
  }
  return false;
}

bool hostHas(std::string_view name, uint64_t xcr0) {
  for (const Feature &f : kFeatures)
    if (f.name == name)
      return cpuidBit(f.leaf, f.subleaf, f.reg, f.bit) && stateSaved(f.state, xcr0);
  return false;
}

} // namespace

std::vector<std::string> missingHostFeatures(const std::vector<std::string> &required) {
  uint64_t xcr0 = savedState();
  std::vector<std::string> missing;
  for (const std::string &f : required)
    if (f.size() >= 2 && f[0] == '+' && !hostHas(std::string_view(f).substr(1), xcr0))
      missing.push_back(f);
  return missing;
}

} // namespace tc
