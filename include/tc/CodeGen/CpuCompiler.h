// Compiling generated C++ in-process with clang (libclang-cpp 19): no
// compiler executable, no temporary files.
#pragma once
#include "tc/Support/CompileCache.h"
#include <string>
#include <vector>

namespace tc {

struct CpuTarget {
  std::string triple;                // the host's
  std::string cpu;                   // "x86-64-v3", "znver3", ... (resolved from "native")
  std::vector<std::string> features; // "+avx2", ...: what the code may use
};

// "native" (the host CPU and its features), or a CPU name LLVM knows
// (x86-64, x86-64-v2/v3/v4, skylake-avx512, ...). Throws tc::Error for an
// unknown one.
CpuTarget resolveCpuTarget(const std::string &cpu);

enum class CompileOutput { Object, Assembly };

// Compiles `source` (C++17, no includes) at -O3 for `target`. Throws
// tc::Error with clang's diagnostics when it does not compile.
std::string compileCpp(const std::string &source, const CpuTarget &target, CompileOutput out);

// The kernels as a CPU artifact stores them: `source` compiled to an object
// (compileCpp; the object read back from the compile cache when it holds
// it, `use` says) and linked into a shared object by the system linker `ld`
// (binutils), run as a subprocess, so the runtime can dlopen it without
// LLVM. Throws tc::Error when there is no `ld` or it fails.
std::string compileSharedObject(const std::string &source, const CpuTarget &target,
                                CacheUse *use = nullptr);

} // namespace tc
