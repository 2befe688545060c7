#include "tc/CodeGen/CpuCodegen.h"
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/Config.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/IR/Verifier.h"
#include "tc/Transforms/Pass.h"
#include <chrono>
#include <set>
#include <sstream>

namespace tc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The fuse pass copies small constants into a group; the emitter reads
// scalars as literals and everything else as a kernel argument, so a
// non-scalar constant moves back out to be passed like a weight.
void passArrayConstantsAsArguments(Module &m) {
  Function &main = m.main();
  for (auto &op : main.ops) {
    if (!op->is(OpKind::Fused))
      continue;
    Function *callee = m.lookup(op->getString("callee"));
    std::vector<Value *> keep;
    for (Value *c : callee->constants) {
      auto n = staticNumElements(c->type.shape);
      if (n && *n == 1) {
        keep.push_back(c);
        continue;
      }
      Value *arg = callee->addArgument(callee->uniqueName(c->name + "_arg"), c->type);
      callee->replaceAllUsesWith(c, arg);
      op->operands.push_back(main.addConstant(main.uniqueName(c->name), c->type, *c->data, c->loc));
    }
    callee->constants = keep;
  }
}

} // namespace

CpuCodegenResult compileForCpu(const Module &input, const CpuTarget &target, bool withObject,
                               CpuLibrary library) {
  CpuCodegenResult r;
  auto t0 = Clock::now();
  // Every kernel is a Fused op: lone ops the fuse pass left become groups of
  // one (the module travels in the artifact, so it is copied here).
  std::unique_ptr<Module> owned =
      readBytecode(MemoryBuffer::copy(writeBytecode(input), "<codegen>"));
  Module &m = *owned;
  runFusePass(m, parsePipeline("fuse{singles=1}").front().options);
  passArrayConstantsAsArguments(m);
  verifyModule(m);
  r.timeline.push_back({"outline lone ops", since(t0)});
  t0 = Clock::now();
  std::ostringstream source, table;
  source << kernelPrelude(KernelDialect::Cpu);
  std::set<std::string> seen;
  for (const auto &op : m.main().ops) {
    if (!op->is(OpKind::Fused) || !seen.insert(op->getString("callee")).second)
      continue;
    const Function *callee = m.lookup(op->getString("callee"));
    // Table line: group, its kernel, then for a library call the library and
    // the epilogue's kernel ("-": none). The whole group's kernel stays as
    // the fallback for sizes or attributes the library turns down.
    std::string why, symbol = "-", lib = "-", epilogue = "-";
    if (auto k = emitKernel(*callee, KernelDialect::Cpu, why)) {
      source << k->source << "\n";
      symbol = k->symbol;
      r.kernels.push_back(k->group);
    }
    // Pooling: oneDNN's NCHW pooling measured slower than the generated
    // kernel (docs/cpu-backend.md); it takes only what the emitter cannot.
    bool pooling =
        callee->ops.front()->is(OpKind::MaxPool) || callee->ops.front()->is(OpKind::AveragePool);
    if (library == CpuLibrary::OneDnn && isLibraryAnchored(*callee) &&
        !(pooling && symbol != "-")) {
      std::string epiWhy;
      std::unique_ptr<Function> e = epilogueGroup(*callee);
      std::optional<EmittedKernel> ek;
      // Without an epilogue kernel oneDNN takes the group only where its
      // post-ops cover the whole epilogue.
      if (e && (ek = emitKernel(*e, KernelDialect::Cpu, epiWhy))) {
        source << ek->source << "\n";
        epilogue = ek->symbol;
      }
      lib = "onednn";
      r.library.push_back(callee->name);
    }
    if (symbol == "-" && lib == "-")
      r.fallback.push_back(why);
    else
      table << callee->name << " " << symbol << " " << lib << " " << epilogue << "\n";
  }
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
  // The whole compile: the tools before this one (module metadata), then ours.
  std::vector<TimelineEntry> all = readTimeline(input);
  for (const CompileStage &st : r.timeline)
    all.push_back({"tc-codegen", st.name, st.seconds});
  a.setSection(kSectionTimeline, timelineJson(all));
  return r;
}

} // namespace tc
