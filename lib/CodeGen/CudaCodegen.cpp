#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include <chrono>
#include <exception>
#include <map>
#include <sstream>
#include <thread>

namespace tc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A kernel's source without its name (and the comment naming its group):
// groups whose kernels are equal up to the name share one.
std::string anonymous(const EmittedKernel &k) {
  std::string s = k.source.substr(k.source.find('\n') + 1);
  for (size_t at = s.find(k.symbol); at != std::string::npos; at = s.find(k.symbol, at))
    s.replace(at, k.symbol.size(), "tc_");
  return s;
}

} // namespace

CudaCodegenResult compileForCuda(const Module &input, const std::vector<std::string> &arches,
                                 bool withCubin) {
  CudaCodegenResult r;
  auto t0 = Clock::now();
  std::unique_ptr<Module> owned = prepareForCodegen(input, /*outlineMoves=*/true);
  Module &m = *owned;
  r.timeline.push_back({"outline lone ops", since(t0)});
  t0 = Clock::now();
  EmittedKernels ks = emitKernels(m, KernelDialect::Cuda);
  std::ostringstream body, table;
  bool halfTypes = false;
  // Fusion makes many equal groups (every layer's LayerNorm, the attention
  // heads' transposes): one kernel each, fewer for NVRTC to compile.
  std::map<std::string, std::string> symbolOf;
  for (const EmittedKernel &k : ks.kernels) {
    auto [same, fresh] = symbolOf.emplace(anonymous(k), k.symbol);
    if (fresh)
      body << k.source << "\n";
    table << k.group << " " << same->second << " " << launchKindName(k.launch) << " " << k.block
          << " " << k.vec << "\n";
    r.kernels.push_back(k.group);
    halfTypes |= k.halfTypes;
  }
  r.fallback = ks.fallback;
  r.source = kernelPrelude(KernelDialect::Cuda, halfTypes) + body.str();
  r.timeline.push_back({"emit kernels", since(t0)});
  if (!withCubin)
    return r;

  // One NVRTC compilation per arch, the arches side by side.
  std::string version = cudaCompilerVersion();
  std::vector<std::string> cubins(arches.size());
  std::vector<double> seconds(arches.size());
  std::vector<std::exception_ptr> errors(arches.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < arches.size(); ++i)
    threads.emplace_back([&, i] {
      auto t = Clock::now();
      try {
        cubins[i] = compileCuda(r.source, arches[i], CudaOutput::Cubin);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      seconds[i] = since(t);
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
  for (size_t i = 0; i < arches.size(); ++i)
    r.timeline.push_back(
        {"compile kernels (NVRTC " + version + ", " + arches[i] + ")", seconds[i]});

  auto t2 = Clock::now();
  Artifact &a = r.artifact;
  a.toolchain = std::string("tc ") + TC_VERSION + " (NVRTC " + version + ")";
  a.target = "cuda";
  a.arches = arches;
  a.setSection(kSectionModule, writeBytecode(m));
  for (size_t i = 0; i < arches.size(); ++i)
    a.setSection(cubinSection(arches[i]), cubins[i]);
  a.setSection(kSectionKernels, table.str());
  a.setSection(kSectionSource, r.source);
  r.timeline.push_back({"write artifact", since(t2)});
  a.setSection(kSectionTimeline, artifactTimeline(input, r.timeline));
  return r;
}

} // namespace tc
