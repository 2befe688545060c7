#include "tc/CodeGen/CudaCompiler.h"
#include "tc/Config.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <sstream>
#if TC_HAVE_NVRTC
#include <cuda.h>
#include <nvrtc.h>
#if __has_include(<cudnn_version.h>)
#include <cudnn_version.h>
#endif
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#endif
#endif

namespace tc {

#if TC_HAVE_NVRTC

namespace {

void check(nvrtcResult r, const char *what) {
  if (r != NVRTC_SUCCESS)
    fail("NVRTC: ", what, ": ", nvrtcGetErrorString(r));
}

// The arch numbers NVRTC compiles for (75, 80, 86, 90, ...).
std::vector<int> supportedArchs() {
  int n = 0;
  check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(size_t(std::max(n, 0)));
  check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

// One program: destroyed on every path out.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p)
      nvrtcDestroyProgram(&p);
  }
};

} // namespace

std::string cudaCompilerVersion() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

BuildInfo cudaBuildInfo() {
  BuildInfo b;
  b.tc = TC_VERSION;
  b.nvrtc = cudaCompilerVersion();
  b.cudaToolkit =
      std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
#ifdef CUDNN_MAJOR
  b.cudnn = std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
            std::to_string(CUDNN_PATCHLEVEL);
#endif
#ifdef CUBLAS_VER_MAJOR
  b.cublasLt = std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
               std::to_string(CUBLAS_VER_PATCH);
#endif
  return b;
}

std::vector<std::string> parseCudaArchs(const std::string &list) {
  std::vector<int> known = supportedArchs();
  std::vector<std::string> archs;
  std::istringstream in(list);
  for (std::string a; std::getline(in, a, ',');) {
    if (a.empty())
      continue;
    bool digits = a.size() > 3 && a.size() < 8 &&
                  std::all_of(a.begin() + 3, a.end(), [](char c) { return std::isdigit(c); });
    if (a.rfind("sm_", 0) != 0 || !digits ||
        std::find(known.begin(), known.end(), std::stoi(a.substr(3))) == known.end()) {
      std::string names;
      for (int k : known)
        names += " sm_" + std::to_string(k);
      fail("unknown --arch '", a, "' (NVRTC ", cudaCompilerVersion(), " compiles for", names, ")");
    }
    if (std::find(archs.begin(), archs.end(), a) == archs.end())
      archs.push_back(a);
  }
  if (archs.empty())
    fail("--arch names no arch (e.g. --arch=sm_90 or --arch=sm_80,sm_90)");
  return archs;
}

namespace {

std::string runNvrtc(const std::string &source, const std::vector<std::string> &options,
                     const std::string &arch, CudaOutput out) {
  Program prog;
  check(nvrtcCreateProgram(&prog.p, source.c_str(), "tc-kernels.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::vector<const char *> opts;
  for (const std::string &o : options)
    opts.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog.p, int(opts.size()), opts.data());
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog.p, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog.p, log.data());
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    fail("internal error: the generated CUDA kernels do not compile for ", arch, ":\n", log);
  }
  size_t n = 0;
  std::string bytes;
  if (out == CudaOutput::Cubin) {
    check(nvrtcGetCUBINSize(prog.p, &n), "nvrtcGetCUBINSize");
    bytes.resize(n);
    check(nvrtcGetCUBIN(prog.p, bytes.data()), "nvrtcGetCUBIN");
  } else {
    check(nvrtcGetPTXSize(prog.p, &n), "nvrtcGetPTXSize");
    bytes.resize(n);
    check(nvrtcGetPTX(prog.p, bytes.data()), "nvrtcGetPTX");
    if (!bytes.empty() && bytes.back() == '\0')
      bytes.pop_back();
  }
  return bytes;
}

} // namespace

std::string compileCuda(const std::string &source, const std::string &arch, CudaOutput out,
                        CacheUse *use) {
  // PTX is for the virtual arch of the same number. No fast math: NaN and
  // infinity keep their IEEE meaning, as in the reference kernels. The
  // fp16/bf16 headers come from the toolkit tc was built with (NVRTC's
  // version names them in the cache key with the options).
  std::vector<std::string> options = {
      "--gpu-architecture=" + (out == CudaOutput::Ptx ? "compute_" + arch.substr(3) : arch),
      "--std=c++17", std::string("--include-path=") + TC_CUDA_INCLUDE_DIR};
  std::string compiler = "nvrtc " + cudaCompilerVersion();
  for (const std::string &o : options)
    compiler += " " + o;
  compiler += out == CudaOutput::Cubin ? " cubin" : " ptx";
  return cachedCompile(compiler, source, [&] { return runNvrtc(source, options, arch, out); }, use);
}

#else // built without the CUDA toolkit

namespace {
[[noreturn]] void notBuilt() {
  fail("CUDA code generation is not built (no CUDA toolkit when tc was configured)");
}
} // namespace

std::string cudaCompilerVersion() { return ""; }
BuildInfo cudaBuildInfo() { notBuilt(); }
std::vector<std::string> parseCudaArchs(const std::string &) { notBuilt(); }
std::string compileCuda(const std::string &, const std::string &, CudaOutput, CacheUse *) {
  notBuilt();
}

#endif

} // namespace tc
