#include "tc/CodeGen/CudaCodegen.h"
#include "tc/CodeGen/CudaCompiler.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/IR/ConvForms.h"
#include <algorithm>
#include <chrono>
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
                           std::string &table) const {
  std::ostringstream body, tab;
  bool halfTypes = false, faults = false;
  // Fusion makes many equal groups (every layer's LayerNorm, the attention
  // heads' transposes): one kernel each, fewer for NVRTC to compile.
  std::map<std::string, std::string> symbolOf;
  // A table line (format: include/tc/Runtime/CudaLaunch.h); the kernel's
  // source goes into the program unless an equal one is there.
  auto add = [&](const EmittedKernel &k, const std::string &group, const std::string &library) {
    auto [same, fresh] = symbolOf.emplace(anonymousSource(k), k.symbol);
    if (fresh)
      body << k.source << "\n";
    tab << group << " " << same->second << " " << kernelKindName(k.kind) << " "
        << launchKindName(k.launch) << " " << k.block << " " << k.vec
        << (library.empty() ? "" : " " + library) << "\n";
    halfTypes |= k.halfTypes;
    faults |= k.mayFault;
  };
  for (const GroupCode &g : groups)
    if (g.kernel)
      add(*g.kernel, g.group->name, "");
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
}

void CudaBackend::compile(const std::string &source, Artifact &a,
                          std::vector<CompileStage> &timeline) const {
  using Clock = std::chrono::steady_clock;
  // One NVRTC compilation per arch, the arches side by side.
  std::string version = cudaCompilerVersion();
  std::vector<std::string> cubins(arches_.size());
  std::vector<double> seconds(arches_.size());
  std::vector<std::exception_ptr> errors(arches_.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < arches_.size(); ++i)
    threads.emplace_back([&, i] {
      auto t = Clock::now();
      try {
        cubins[i] = compileCuda(source, arches_[i], CudaOutput::Cubin);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      seconds[i] = std::chrono::duration<double>(Clock::now() - t).count();
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
  for (size_t i = 0; i < arches_.size(); ++i) {
    timeline.push_back({"compile kernels (NVRTC " + version + ", " + arches_[i] + ")", seconds[i]});
    a.setSection(cubinSection(arches_[i]), cubins[i]);
  }
  a.built = cudaBuildInfo();
  a.target = name();
  a.arches = arches_;
}

} // namespace tc
