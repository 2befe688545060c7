// A 1x1 convolution in NHWC (stride 1, no padding, no dilation, one group)
// is a GEMM: y[n,h,w,:] = x[n,h,w,:] W'  with W' [Cin, Cout]. cuDNN ran
// poolformer_s12's 1x1 convs + bias (PyTorch, H100, fp16, batch 32,
// channels_last) in 1.4-3x the time cuBLAS takes for the same GEMM
// ([32,64,56,56] -> 256: 105 us vs 35 us; tc's cuDNN runtime-fusion graph
// with its Gelu, 93.7 us, against 75 us for the GEMM and a Gelu). This
// pass (CUDA's pre-fusion pipeline, AFTER channels-last: the input is
// already NHWC, so unlike patch-convs no Transpose is needed) rewrites
//   Conv(x [N,H,W,Cin], w [Cout,1,1,Cin] constant, b) {channels_last = 1}
//   -> MatMul(x, W' [Cin,Cout] constant) (+ Add(., b))
// keeping the conv's result (name, loc, users). The runtime plans a MatMul
// of a rank-4 A and a 2-D B as ONE GEMM of M = N*H*W rows (B shared by
// every batch: CudaLibraryPlan.cpp, from the sizes of each planned shape, so
// a symbolic batch stays symbolic); canonicalize then folds a layer scale
// after it into W' (foldScaleIntoMatMul), and cuBLASLt takes bias, a
// residual Add and Relu as its epilogue (foldEpilogue); any other epilogue
// (exact Gelu, Clip, x*sigmoid(x)) runs as the group's epilogue kernel.
#include "tc/Transforms/ConvGemms.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <unordered_map>

namespace tc {

std::optional<ConvGemmMode> parseConvGemmMode(std::string_view s) {
  if (s == "auto")
    return ConvGemmMode::Auto;
  if (s == "always")
    return ConvGemmMode::Always;
  if (s == "never")
    return ConvGemmMode::Never;
  return std::nullopt;
}

namespace {

// The GEMM a 1x1 conv is: M = N*H*W rows (N may be symbolic), K = Cin, N = Cout.
struct ConvGemm {
  int64_t cin, cout;
  DType dtype;
};

bool allEqual(const std::vector<int64_t> &v, int64_t x) {
  for (int64_t e : v)
    if (e != x)
      return false;
  return true;
}

// What cuBLASLt is given (f64 convs stay convs).
bool gemmDType(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// Whether `conv` is a 1x1 NHWC conv that is exactly a GEMM with a constant B.
std::optional<ConvGemm> gemmOf(const Op &conv) {
  if (!conv.is(OpKind::Conv) || conv.getInt("channels_last") != 1 || conv.getInt("group") != 1)
    return std::nullopt;
  const Value *x = conv.operand(0), *w = conv.operand(1), *b = conv.operand(2);
  const std::string &autoPad = conv.getString("auto_pad");
  if (x->type.rank() != 4 || !w->isConstant() || w->type.rank() != 4 ||
      !isStaticShape(w->type.shape) || !gemmDType(x->type.dtype) ||
      w->type.dtype != x->type.dtype || (b && b->type.rank() != 1) ||
      (autoPad != "NOTSET" && autoPad != "VALID"))
    return std::nullopt;
  const Shape &ws = w->type.shape; // OHWI
  const std::vector<int64_t> &kernel = conv.getInts("kernel_shape");
  if (ws[1].size != 1 || ws[2].size != 1 || !(kernel.empty() || allEqual(kernel, 1)) ||
      !allEqual(conv.getInts("strides"), 1) || !allEqual(conv.getInts("pads"), 0) ||
      !allEqual(conv.getInts("dilations"), 1) || x->type.shape[3] != ws[3])
    return std::nullopt;
  return ConvGemm{ws[3].size, ws[0].size, x->type.dtype};
}

// THE rule of --conv-gemm=auto: which eligible 1x1 convs become GEMMs.
// In f16/bf16 every one: on the H100 (session 24, docs/cuda-bench.md;
// --conv-gemm=always vs never from one build) resnet50 ran 1.036x / 1.026x
// (batch 32 / 1), mobilenet_v2 1.006x / 1.067x, efficientnet_b0 1.084x /
// 1.226x, and poolformer_s12's 1x1 convs took 1/1.4 to 1/3 of cuDNN's time
// as cuBLAS GEMMs (the header's numbers), Clip and SiLU epilogues included.
// In f32 none (unless mixed precision will make it f16/bf16:
// `lowPrecision`): tc-codegen --allow-tf32 (conv by default, as PyTorch)
// lets cuDNN's convs round through TF32 and not cuBLASLt's GEMMs; even as
// TF32 GEMMs (--allow-tf32=all) mobilenet_v2's 1x1 convs ran 0.959x / 1.031x
// (batch 32 / 1, H200, session 25).
bool gemmByDefault(const ConvGemm &g, bool lowPrecision) {
  return lowPrecision || g.dtype != DType::F32;
}

// W [Cout,1,1,Cin] (OHWI) as the GEMM's B: its [Cout, Cin] view transposed.
Value *gemmWeight(Function &f, const Value &w, const ConvGemm &g) {
  HostTensor wt = constantTensor(w);
  HostTensor wk = permuteAxes(
      HostTensor::fromBytes(wt.dtype(), {g.cout, g.cin}, wt.bytes(), wt.byteSize()), {1, 0});
  return f.addConstant(f.uniqueName(w.name + "_kxn"), wk.type(),
                       TensorData::copyOf(wk.bytes(), wk.byteSize()), w.loc);
}

// Turns `conv` into MatMul(x, wm) (+ Add of its bias); ops it adds land
// before it, and it keeps its result.
void rewrite(Function &f, Op &conv, Value *wm) {
  Value *x = conv.operand(0), *b = conv.operand(2);
  conv.attrs.clear();
  if (!b) {
    conv.kind = OpKind::MatMul;
    conv.operands = {x, wm};
    return;
  }
  Value *y = conv.result();
  Op *mm = f.addOp(OpKind::MatMul, {x, wm}, {f.uniqueName(y->name + "_gemm")}, {y->type}, conv.loc);
  conv.kind = OpKind::Add;
  conv.operands = {mm->result(), b};
}

} // namespace

bool runConvGemmsPass(Module &m, const PassOptions &opts) {
  std::optional<ConvGemmMode> mode = parseConvGemmMode(opts.get("mode"));
  if (!mode)
    fail("conv-gemms: mode is auto, always or never, not '", opts.get("mode"), "'");
  if (*mode == ConvGemmMode::Never)
    return false;
  // One B per weight, however many convs share it.
  std::unordered_map<const Value *, Value *> weights;
  return rewriteOpsInPlace(m, [&](Function &f, Op &op) {
    std::optional<ConvGemm> g = gemmOf(op);
    bool take =
        g && (*mode == ConvGemmMode::Always || gemmByDefault(*g, opts.getBool("low-precision")));
    if (take) {
      Value *&wm = weights[op.operand(1)];
      if (!wm)
        wm = gemmWeight(f, *op.operand(1), *g);
      rewrite(f, op, wm);
    }
    return take;
  });
}

} // namespace tc
