#include "tc/CodeGen/CpuCodegen.h"
#include "tc/CodeGen/KernelTable.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/Config.h"
#include <chrono>
#include <map>
#include <sstream>

namespace tc {

std::string CpuBackend::libraryFor(const Function &group, bool hasKernel) const {
  // Pooling: oneDNN's NCHW pooling measured slower than the generated
  // kernel (docs/cpu-backend.md); it takes only what the emitter cannot,
  // and never NHWC (OneDnnCall describes NCHW pools only).
  const Op &anchor = *group.ops.front();
  bool pooling = anchor.is(OpKind::MaxPool) || anchor.is(OpKind::AveragePool);
  bool skip = pooling && (hasKernel || anchor.getInt("channels_last"));
  return library_ == CpuLibrary::OneDnn && isLibraryAnchored(group) && !skip ? "onednn" : "";
}

CodegenBackend::LibraryVerdict CpuBackend::libraryVerdict(const GroupCode &g) const {
  // The refusals of oneDNN's call (OneDnnCall::build, lib/Runtime/CPU) that
  // the static types already tell: a group without a kernel would run on
  // the reference kernels at run time with no warning (an i32 MatMul, a
  // ReduceSum whose axes are an input).
  if (g.library != "onednn")
    return {};
  const Op &anchor = *g.group->ops.front();
  if (anchor.name().rfind("Reduce", 0) == 0 && anchor.operands.size() > 1 && anchor.operand(1) &&
      !anchor.operand(1)->isConstant())
    return {"axes known only at run time", false, ""};
  for (const Value *v : g.call->operands)
    if (!v || v->type.dtype != DType::F32)
      return {"an operand that is not f32", false, ""};
  return {};
}

void CpuBackend::assemble(const std::vector<GroupCode> &groups, std::string &source,
                          std::string &table, std::string &) const {
  // Table line (format: CpuModel.cpp's parser): group, its kernel and kind,
  // then the library ("-": none) and the epilogue's kernel and kind. The
  // whole group's kernel stays as the fallback for sizes or attributes the
  // library turns down.
  std::ostringstream src, tab;
  src << kernelPrelude(KernelDialect::Cpu);
  // Groups whose kernels are equal up to the name share one: fewer for
  // clang to compile (an unrolled RNN's steps, every layer's LayerNorm).
  std::map<std::string, std::string> symbolOf;
  auto symbol = [&](const EmittedKernel *k) -> std::string {
    if (!k)
      return "-";
    auto [same, fresh] = symbolOf.emplace(anonymousSource(*k), k->symbol);
    if (fresh)
      src << k->source << "\n";
    return same->second;
  };
  std::vector<std::string> kernelSymbol;
  for (const GroupCode &g : groups)
    kernelSymbol.push_back(symbol(g.kernel ? &*g.kernel : nullptr));
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupCode &g = groups[i];
    std::string epilogue = symbol(g.epilogue ? &*g.epilogue : nullptr);
    if (g.kernel || !g.library.empty())
      tab << g.group->name << " " << kernelSymbol[i] << " "
          << kernelKindField(g.kernel ? &g.kernel->kind : nullptr) << " "
          << (g.library.empty() ? "-" : g.library) << " " << epilogue << " "
          << kernelKindField(g.epilogue ? &g.epilogue->kind : nullptr) << "\n";
  }
  source = src.str();
  table = tab.str();
}

void CpuBackend::compile(const std::string &source, Artifact &a,
                         std::vector<CompileStage> &timeline) const {
  auto t0 = std::chrono::steady_clock::now();
  CacheUse use;
  a.setSection(kSectionObject, compileSharedObject(source, target_, &use));
  timeline.push_back(
      {"compile kernels (clang -O3, " + target_.cpu + ")" + cacheNote(use),
       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
  a.built.tc = TC_VERSION;
  a.built.llvm = TC_LLVM_VERSION;
  a.target = name();
  a.cpu = target_.cpu;
  a.cpuFeatures = target_.features;
}

} // namespace tc
