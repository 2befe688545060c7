#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include <chrono>
#include <exception>
#include <map>
#include <set>
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

// The library a group calls on CUDA: MatMul/Gemm through cuBLASLt, Conv
// through cuDNN ("" for the rest: Reduce*/pooling have no CUDA library path).
// The epilogue may change the dtype (the runtime then gives the anchor a
// buffer of its own).
std::string cudaLibraryOf(const Function &group) {
  if (!isLibraryAnchored(group, /*anyDType=*/true))
    return "";
  const Op &anchor = *group.ops.front();
  if (anchor.is(OpKind::MatMul) || anchor.is(OpKind::Gemm))
    return "cublaslt";
  return anchor.is(OpKind::Conv) ? "cudnn" : "";
}

} // namespace

CudaCodegenResult compileForCuda(const Module &input, const std::vector<std::string> &arches,
                                 bool withCubin) {
  CudaCodegenResult r;
  auto t0 = Clock::now();
  std::unique_ptr<Module> owned = prepareForCodegen(input, /*outlineMoves=*/true);
  Module &m = *owned;
  r.timeline.push_back({prepareStageName(/*outlineMoves=*/true), since(t0)});
  t0 = Clock::now();
  EmittedKernels ks = emitKernels(m, KernelDialect::Cuda);
  std::ostringstream body, table;
  bool halfTypes = false;
  // Fusion makes many equal groups (every layer's LayerNorm, the attention
  // heads' transposes): one kernel each, fewer for NVRTC to compile.
  std::map<std::string, std::string> symbolOf;
  // A table line (format: include/tc/Runtime/CudaLaunch.h); the kernel's
  // source goes into the program unless an equal one is there.
  auto add = [&](const EmittedKernel &k, const std::string &group, const std::string &library) {
    auto [same, fresh] = symbolOf.emplace(anonymous(k), k.symbol);
    if (fresh)
      body << k.source << "\n";
    table << group << " " << same->second << " " << kernelKindName(k.kind) << " "
          << launchKindName(k.launch) << " " << k.block << " " << k.vec
          << (library.empty() ? "" : " " + library) << "\n";
    r.kernels.push_back(k.group);
    halfTypes |= k.halfTypes;
  };
  for (const EmittedKernel &k : ks.kernels)
    add(k, k.group, "");
  // MatMul/Gemm/Conv groups: a library call, then the epilogue's kernel in
  // place over the result (the runtime may fold the epilogue into the call
  // instead). An epilogue without a kernel leaves the group to the host
  // unless the library takes the whole epilogue.
  std::set<std::string> library;
  for (const auto &op : m.main().ops) {
    if (!op->is(OpKind::Fused))
      continue;
    const Function &group = *m.lookup(op->getString("callee"));
    std::string lib = cudaLibraryOf(group);
    if (lib.empty() || !library.insert(group.name).second)
      continue;
    std::string why, epilogue = "no epilogue";
    std::optional<EmittedKernel> ek;
    if (std::unique_ptr<Function> e = epilogueGroup(group)) {
      ek = emitKernel(*e, KernelDialect::Cuda, why);
      epilogue = ek ? "epilogue kernel " + ek->symbol : "epilogue without a kernel: " + why;
    }
    if (ek)
      add(*ek, group.name, lib);
    else
      table << group.name << " - - - 0 0 " << lib << "\n";
    r.library.push_back("@" + group.name + ": " + lib + ", " + epilogue);
  }
  for (const std::string &why : ks.fallback) // "@group: why"
    if (!library.count(why.substr(1, why.find(':') - 1)))
      r.fallback.push_back(why);
  r.source = kernelPrelude(KernelDialect::Cuda, halfTypes) + body.str();
  r.timeline.push_back({"emit kernels", since(t0)});
  r.timeline.insert(r.timeline.end(), ks.perGroup.begin(), ks.perGroup.end());
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
