#include "tc/CodeGen/CpuCodegen.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include <chrono>
#include <sstream>

namespace tc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

CpuCodegenResult compileForCpu(const Module &input, const CpuTarget &target, bool withObject) {
  CpuCodegenResult r;
  auto t0 = Clock::now();
  std::unique_ptr<Module> owned = prepareForCodegen(input);
  Module &m = *owned;
  r.timeline.push_back({"outline lone ops", since(t0)});
  t0 = Clock::now();
  std::ostringstream source, table;
  source << kernelPrelude(KernelDialect::Cpu);
  EmittedKernels ks = emitKernels(m, KernelDialect::Cpu);
  for (const EmittedKernel &k : ks.kernels) {
    source << k.source << "\n";
    table << k.group << " " << k.symbol << "\n";
    r.kernels.push_back(k.group);
  }
  r.fallback = ks.fallback;
  r.source = source.str();
  r.timeline.push_back({"emit kernels", since(t0)});
  if (!withObject)
    return r;

  auto t1 = Clock::now();
  std::string object = compileCpp(r.source, target, CompileOutput::Object);
  r.timeline.push_back({"compile kernels (clang -O3, " + target.cpu + ")", since(t1)});
  auto t2 = Clock::now();
  Artifact &a = r.artifact;
  a.toolchain = std::string("tc ") + TC_VERSION + " (LLVM " + TC_LLVM_VERSION + ")";
  a.target = "cpu";
  a.cpu = target.cpu;
  a.cpuFeatures = target.features;
  a.setSection(kSectionModule, writeBytecode(m));
  a.setSection(kSectionObject, object);
  a.setSection(kSectionKernels, table.str());
  a.setSection(kSectionSource, r.source);
  r.timeline.push_back({"write artifact", since(t2)});
  a.setSection(kSectionTimeline, timelineJson(r.timeline));
  return r;
}

} // namespace tc
