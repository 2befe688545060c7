#include "tc/CodeGen/CpuCodegen.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>

namespace tc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

CpuCodegenResult compileForCpu(const Module &input, const CpuTarget &target, bool withObject,
                               CpuLibrary library) {
  CpuCodegenResult r;
  auto t0 = Clock::now();
  std::unique_ptr<Module> owned = prepareForCodegen(input);
  Module &m = *owned;
  r.timeline.push_back({"outline lone ops", since(t0)});
  t0 = Clock::now();
  std::ostringstream source, table;
  source << kernelPrelude(KernelDialect::Cpu);
  EmittedKernels ks = emitKernels(m, KernelDialect::Cpu);
  std::map<std::string, std::string> symbolOf; // group -> its whole kernel
  for (const EmittedKernel &k : ks.kernels) {
    source << k.source << "\n";
    symbolOf[k.group] = k.symbol;
    r.kernels.push_back(k.group);
  }
  // Table line: group, its kernel, then for a library call the library and
  // the epilogue's kernel ("-": none). The whole group's kernel stays as the
  // fallback for sizes or attributes the library turns down.
  std::set<std::string> seen;
  for (const auto &op : m.main().ops) {
    if (!op->is(OpKind::Fused) || !seen.insert(op->getString("callee")).second)
      continue;
    const Function *callee = m.lookup(op->getString("callee"));
    auto k = symbolOf.find(callee->name);
    std::string symbol = k == symbolOf.end() ? "-" : k->second, lib = "-", epilogue = "-";
    // Pooling: oneDNN's NCHW pooling measured slower than the generated
    // kernel (docs/cpu-backend.md); it takes only what the emitter cannot.
    bool pooling =
        callee->ops.front()->is(OpKind::MaxPool) || callee->ops.front()->is(OpKind::AveragePool);
    if (library == CpuLibrary::OneDnn && isLibraryAnchored(*callee) &&
        !(pooling && symbol != "-")) {
      // Without an epilogue kernel oneDNN takes the group only where its
      // post-ops cover the whole epilogue.
      std::string why;
      if (std::unique_ptr<Function> e = epilogueGroup(*callee))
        if (auto ek = emitKernel(*e, KernelDialect::Cpu, why)) {
          source << ek->source << "\n";
          epilogue = ek->symbol;
        }
      lib = "onednn";
      r.library.push_back(callee->name);
    }
    if (symbol != "-" || lib != "-")
      table << callee->name << " " << symbol << " " << lib << " " << epilogue << "\n";
  }
  for (const std::string &why : ks.fallback) // "@group: why"
    if (std::find(r.library.begin(), r.library.end(), why.substr(1, why.find(':') - 1)) ==
        r.library.end())
      r.fallback.push_back(why);
  r.source = source.str();
  r.timeline.push_back({"emit kernels", since(t0)});
  r.timeline.insert(r.timeline.end(), ks.perGroup.begin(), ks.perGroup.end());
  if (!withObject)
    return r;

  auto t1 = Clock::now();
  std::string object = compileSharedObject(r.source, target);
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
  a.setSection(kSectionTimeline, artifactTimeline(input, r.timeline));
  return r;
}

} // namespace tc
