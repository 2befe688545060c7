#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/IR/ConvForms.h"
#include "tc/Support/EnvNumber.h"
#include "tc/Support/Error.h"
#include "tc/Support/Hash64.h"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <sstream>
#include <thread>

namespace tc {

namespace {

// Where cuDNN measured faster than the generated kernel (H100, fp16 NHWC,
// batch 32, utils/dwconv-bench.py; docs/cuda-bench.md): 5x5 windows (1.4-1.9x)
// and strided 3x3 (1.1x). The kernel wins 2.6-9x at 7x7 and 1.05-1.5x at
// 3x3 stride 1. Only where cuDNN takes the conv (explicit symmetric pads),
// and only in f16/bf16: in f32 cuDNN's depthwise convs ran at 285-360 GB/s
// (mobilenet_v2 batch 32, H200, session 25: its four strided 3x3 ones took
// 1.0 of 2.1 ms) where the kernel ran the stride-1 ones at 2250 GB/s.
bool cudnnMeasuredFaster(const Op &conv) {
  if (conv.result()->type.dtype == DType::F32)
    return false;
  const Value *w = conv.operand(1); // [M, 1, k...] or OHWI [M, k..., 1]
  size_t sp = w->type.rank() - 2, first = conv.getInt("channels_last") ? 1 : 2;
  int64_t k = 0;
  for (size_t d = 0; d < sp; ++d) {
    const Dim &dim = w->type.shape[first + d];
    if (!dim.isStatic())
      return false;
    k = std::max(k, dim.size);
  }
  // Dilated: cuDNN's legacy engines ran deeplabv3's 5x5 dilation-2 depthwise
  // convs at 71 GB/s, 3.8 ms each (zoo profile, session 18).
  const std::vector<int64_t> &dilations = conv.getInts("dilations");
  if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d > 1; }))
    return false;
  const std::vector<int64_t> &strides = conv.getInts("strides");
  bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  if (k != 5 && !(k <= 3 && strided))
    return false;
  const std::string &autoPad = conv.getString("auto_pad");
  const std::vector<int64_t> &pads = conv.getInts("pads");
  bool symmetric = pads.empty() || std::equal(pads.begin(), pads.begin() + std::ptrdiff_t(sp),
                                              pads.begin() + std::ptrdiff_t(sp));
  return (autoPad.empty() || autoPad == "NOTSET") && symmetric;
}

// Each kernel's source starts with this line in the program (a comment to
// NVRTC, a heading to a reader), which compile() splits it at.
constexpr std::string_view kKernelMark = "// tc kernel ";
constexpr std::string_view kMayFault = " (may fault)";

// About this much kernel source per program: NVRTC's optimizer and ptxas
// run one thread per program (~1.7 s for 16 KB of reductions on this CI
// box), and each program parses the prelude and the half-float headers
// again (~0.2 s).
// TC_CUDA_PROGRAM_KB overrides it (0: one program, the A/B of the split).
size_t programBytes() {
  uint64_t kb = envNumber("TC_CUDA_PROGRAM_KB").value_or(16);
  return kb ? size_t(kb) << 10 : SIZE_MAX;
}

// The program split at its kernels' marks into programs of about
// programBytes() of kernels, each with the whole prelude, so they compile
// side by side and the compile cache keeps each apart. The split depends
// only on the source, never on the machine. The kernels that may fault go
// first: the fault record the runtime reads is the first program's.
std::vector<std::string> splitProgram(const std::string &source) {
  size_t first = source.find(kKernelMark);
  if (first == std::string::npos)
    return {source};
  std::string_view prelude(source.data(), first);
  std::vector<std::string_view> faulting, others;
  for (size_t at = first; at < source.size();) {
    size_t next = source.find(kKernelMark, at + kKernelMark.size());
    if (next == std::string::npos)
      next = source.size();
    std::string_view kernel(source.data() + at, next - at);
    std::string_view mark = kernel.substr(0, kernel.find('\n'));
    bool faults =
        mark.size() >= kMayFault.size() && mark.substr(mark.size() - kMayFault.size()) == kMayFault;
    (faults ? faulting : others).push_back(kernel);
    at = next;
  }
  size_t limit = programBytes();
  std::vector<std::string> programs;
  std::string current(prelude);
  auto close = [&] {
    programs.push_back(std::move(current));
    current.assign(prelude);
  };
  for (std::string_view k : faulting)
    current += k;
  for (std::string_view k : others) {
    if (current.size() - prelude.size() >= limit)
      close();
    current += k;
  }
  close();
  return programs;
}

// "tc_fused_a_0, tc_fused_b_1": the kernels a program holds (its marks).
std::string kernelsOf(const std::string &program) {
  std::string names;
  for (size_t at = program.find(kKernelMark); at != std::string::npos;
       at = program.find(kKernelMark, at + 1)) {
    size_t from = at + kKernelMark.size();
    size_t to = program.find_first_of(" \n", from);
    names += (names.empty() ? "" : ", ") + program.substr(from, to - from);
  }
  return names;
}

} // namespace

// cuDNN runs convnext's 7x7 depthwise convs at ~1% of the memory roofline
// (docs/profiles/zoo-h200): the generated kernel takes depthwise convs (one
// input channel per group: group == C_in > 1, any channel multiplier) but
// the shapes cuDNN measured faster at. Grouped convs with several channels
// per group (regnet, resnext: 4..32) stay on cuDNN unless asked (`grouped`,
// which also takes every depthwise conv).
bool convTakesKernel(const Op &conv, ConvKernels mode) {
  if (mode == ConvKernels::Cudnn || conv.getInt("group") <= 1)
    return false;
  if (mode == ConvKernels::Grouped)
    return true;
  return isDepthwiseConv(conv) && !cudnnMeasuredFaster(conv);
}

// cuDNN runs a grouped backward-data pass as one call per group: resnet50's
// MaxPool gradient (a ConvTranspose of 64 groups, 9 one-hot channels into
// one: Gradients/NN.cpp) took 64 calls and 8.5 ms of a 28 ms AMP train step
// on the H200 (session 37). The generated gather kernel takes a
// ConvTranspose whose result has one channel per group (a depthwise conv's
// data gradient, any multiplier); its weight gradient (a sum over N*H*W per
// weight, which the gather form does serially) stays on cuDNN.
bool convBackwardTakesKernel(const Op &op, ConvBackward mode) {
  if (mode != ConvBackward::Auto)
    return mode == ConvBackward::Kernel;
  if (!op.is(OpKind::ConvTranspose) || op.getInt("group") <= 1)
    return false;
  const Value *y = op.result();
  size_t ch = op.getInt("channels_last") ? y->type.rank() - 1 : 1;
  return y->type.rank() >= 3 && y->type.shape[ch].size == op.getInt("group");
}

// MatMul/Gemm through cuBLASLt, Conv through cuDNN unless its generated
// kernel takes it, ConvTranspose and ConvWeightGrad through cuDNN's backward
// passes ("" for the rest: Reduce*/pooling have no CUDA library path). The
// epilogue may change the dtype (the runtime then gives the anchor a buffer
// of its own).
std::string CudaBackend::libraryFor(const Function &group, bool hasKernel) const {
  if (!isLibraryAnchored(group, /*anyDType=*/true))
    return "";
  const Op &anchor = *group.ops.front();
  if (anchor.is(OpKind::MatMul) || anchor.is(OpKind::Gemm))
    return "cublaslt";
  if (anchor.is(OpKind::ConvTranspose) || anchor.is(OpKind::ConvWeightGrad))
    return hasKernel && convBackwardTakesKernel(anchor, convBackward_) ? "" : "cudnn";
  if (!anchor.is(OpKind::Conv))
    return "";
  return hasKernel && convTakesKernel(anchor, convKernels_) ? "" : "cudnn";
}

void CudaBackend::prepareLibraryGroup(Function &group, const std::string &library) const {
  if (library == "cudnn")
    moveConvBiasToEpilogue(group);
}

void CudaBackend::assemble(const std::vector<GroupCode> &groups, std::string &source,
                           std::string &table, std::string &variants) const {
  std::ostringstream body, tab, var;
  bool halfTypes = false, faults = false;
  // Fusion makes many equal groups (every layer's LayerNorm, the attention
  // heads' transposes): one kernel each, fewer for NVRTC to compile.
  std::map<std::string, std::string> symbolOf;
  // The kernel's symbol: its source goes into the program unless an equal
  // one is there.
  auto symbol = [&](const EmittedKernel &k) {
    auto [same, fresh] = symbolOf.emplace(anonymousSource(k), k.symbol);
    if (fresh) {
      body << kKernelMark << k.symbol << (k.mayFault ? kMayFault : "") << "\n";
      // Test-only: TC_TEST_NVRTC_ERROR=<symbol> makes that kernel's source
      // not compile (the error names its program; cuda-programs.test).
      if (const char *broken = std::getenv("TC_TEST_NVRTC_ERROR"); broken && k.symbol == broken)
        body << "#error the kernel TC_TEST_NVRTC_ERROR names\n";
      body << k.source << "\n";
    }
    halfTypes |= k.halfTypes;
    faults |= k.mayFault;
    return same->second;
  };
  // A kernel table line's fields from the symbol on (format:
  // include/tc/Runtime/CudaLaunch.h).
  auto fields = [&](const EmittedKernel &k) {
    return symbol(k) + " " + kernelKindName(k.kind) + " " + launchKindName(k.launch) + " " +
           std::to_string(k.block) + " " + std::to_string(k.vec);
  };
  auto add = [&](const EmittedKernel &k, const std::string &group, const std::string &library) {
    tab << group << " " << fields(k) << (library.empty() ? "" : " " + library) << "\n";
  };
  for (const GroupCode &g : groups)
    if (g.kernel) {
      add(*g.kernel, g.group->name, "");
      if (g.kernel->variants.empty())
        continue;
      // The key: the family and the default's source (its op, dtypes and
      // code), which the runtime completes with the step's shapes.
      char hash[17];
      std::snprintf(hash, sizeof hash, "%016llx",
                    (unsigned long long)hash64(anonymousSource(*g.kernel)));
      std::string key = std::string(kernelKindName(g.kernel->kind)) + ":" + hash;
      for (size_t i = 0; i <= g.kernel->variants.size(); ++i) {
        const EmittedKernel &v = i ? g.kernel->variants[i - 1] : *g.kernel;
        var << key << " " << i << " " << v.variant << " " << g.group->name << " " << fields(v)
            << "\n";
      }
    }
  // Library groups: the call, then the epilogue's kernel in place over the
  // result (the runtime may fold the epilogue into the call instead). Their
  // line comes after the whole group's kernel's: the runtime keeps the last.
  for (const GroupCode &g : groups) {
    if (g.library.empty())
      continue;
    if (g.epilogue)
      add(*g.epilogue, g.group->name, g.library);
    else
      tab << g.group->name << " - - - 0 0 " << g.library << "\n";
  }
  source = kernelPrelude(KernelDialect::Cuda, halfTypes, faults) + body.str();
  table = tab.str();
  variants = var.str();
}

void CudaBackend::compile(const std::string &source, Artifact &a,
                          std::vector<CompileStage> &timeline) const {
  using Clock = std::chrono::steady_clock;
  // Every program for every arch, on the machine's cores.
  std::string version = cudaCompilerVersion();
  std::vector<std::string> programs = splitProgram(source);
  size_t jobs = arches_.size() * programs.size();
  std::vector<std::string> cubins(jobs);
  std::vector<CacheUse> uses(jobs);
  std::vector<std::exception_ptr> errors(jobs);
  std::vector<Clock::time_point> done(jobs);
  std::atomic<size_t> next{0};
  auto start = Clock::now();
  auto work = [&] {
    for (size_t j; (j = next++) < jobs;) {
      try {
        cubins[j] = compileCuda(programs[j % programs.size()], arches_[j / programs.size()],
                                CudaOutput::Cubin, &uses[j]);
      } catch (...) {
        errors[j] = std::current_exception();
      }
      done[j] = Clock::now();
    }
  };
  // At most 16: each NVRTC compile holds a few hundred MB at its peak.
  size_t threads =
      std::min<size_t>({jobs, std::max(1u, std::thread::hardware_concurrency()), size_t(16)});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  for (size_t j = 0; j < jobs; ++j) {
    if (!errors[j])
      continue;
    if (programs.size() == 1)
      std::rethrow_exception(errors[j]);
    // NVRTC's log numbers the lines of that program, not of the whole
    // source: name the kernels it held.
    try {
      std::rethrow_exception(errors[j]);
    } catch (const Error &e) {
      size_t k = j % programs.size();
      fail("program ", k + 1, " of ", programs.size(), " (", kernelsOf(programs[k]),
           "): ", e.what());
    }
  }
  for (size_t i = 0; i < arches_.size(); ++i) {
    // An arch's stage: from the start until its last program was done.
    Clock::time_point last = start;
    size_t hits = 0;
    for (size_t k = 0; k < programs.size(); ++k) {
      size_t j = i * programs.size() + k;
      last = std::max(last, done[j]);
      hits += uses[j] == CacheUse::Hit;
      a.setSection(cubinSection(arches_[i], k), cubins[j]);
    }
    std::string name = "compile kernels (NVRTC " + version + ", " + arches_[i] + ")";
    if (programs.size() > 1)
      name += " [" + std::to_string(programs.size()) + " programs]";
    if (hits == programs.size())
      name += cacheNote(CacheUse::Hit);
    else if (hits)
      name += " (" + std::to_string(hits) + " cached)";
    timeline.push_back({name, std::chrono::duration<double>(last - start).count()});
  }
  a.built = cudaBuildInfo();
  a.target = name();
  a.arches = arches_;
}

} // namespace tc
