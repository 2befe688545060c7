// What the CUDA runtime decides about a library group (tc/CodeGen/
// LibraryCall.h) without a GPU, from its ops and the Fused op's static
// operand types: an ONNX MatMul/Gemm as ONE (strided batched) GEMM for
// cuBLASLt, a Conv as cuDNN's descriptor numbers, which epilogue ops the
// library applies itself, or why the group stays on the host.
//
// Epilogues fold all or nothing: the generated epilogue kernel computes the
// whole epilogue, and once it runs, a bias in it costs no extra pass.
#pragma once
#include "tc/IR/IR.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tc {

// Row-major: for b < batch,
//   D[b] (m x n, ld n) = alpha * opA(A[b]) * opB(B[b]) + beta * C[b] (+ bias per column)
// opA(A) is m x k (A stored k x m when transA), opB(B) k x n (B stored n x k
// when transB). Batch strides in elements; 0: one matrix for every batch.
struct GemmDesc {
  DType dtype = DType::F32; // A's, B's and (unless `castF32`) D's
  // D is f32 from f16/bf16 operands (a group `MatMul` then `Cast to f32`
  // alone: a weight gradient of an AMP step, the f32 copy the optimizer
  // reads): cuBLASLt writes the sums in f32, no f16 result and no cast kernel.
  bool castF32 = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transA = false, transB = false;
  int64_t strideA = 0, strideB = 0, strideD = 0;
  float alpha = 1, beta = 0;
  // Group argument indices; -1: none. `c`: a full m x n C (Gemm), scaled by
  // beta; `bias`: a per-column vector of n (Gemm's C or a folded Add).
  int a = -1, b = -1, c = -1, bias = -1;
  bool residual = false;               // `c` is a folded residual Add (beta 1)
  bool relu = false, geluTanh = false; // the folded activation
  bool epilogueFolded = false;         // nothing left for the epilogue kernel

  // "bias,residual,relu" or "cast_f32": the folded epilogue ("" for none).
  std::string epilogueText() const;
  // "gemm m=8 n=16 k=32 batch=1 epilogue=bias,relu"
  std::string describe() const;
};

// The GEMM of MatMul/Gemm group `group`; `args` are the static types of its
// arguments (the Fused op's operands), `result` the anchor's result (the
// Fused op's shape, the MatMul's dtype). nullopt with `why` for
// what cuBLASLt is not given: a batch broadcast other than equal dims or one side shared, a C
// broadcast along rows, an empty K, a dtype other than f32/f16/bf16.
// `fold` false: the anchor's GEMM alone, the epilogue left to the group's
// epilogue kernel (the runtime's fallback where cuBLASLt refuses the fold).
std::optional<GemmDesc> describeGemm(const Function &group, const std::vector<TensorType> &args,
                                     const TensorType &result, std::string &why, bool fold = true);

// A convolution for cuDNN's Nd descriptors: dims in cuDNN's order (N, C,
// spatial...; filters K, C/groups, k...), 1-D convs as 2-D with H = 1, so
// x/w/y have 4 or 5 dims. Pads are symmetric (cuDNN's legacy API).
// `channelsLast` (the channels_last of Conv, ConvTranspose or ConvWeightGrad,
// what the channels-last pass makes on --target=cuda for cuDNN's tensor-core
// kernels): the bytes are N, spatial..., C and filters K, k..., C/groups.
// One pointwise op of the epilogue cuDNN's graph API is asked to fuse after
// the convolution: chain = op(chain) or op(chain, operand).
struct ConvPointwise {
  enum class Mode { Add, Mul, Relu, Sigmoid, Tanh, Gelu, GeluTanh };
  Mode mode = Mode::Add;
  int operand = -1;        // a binary op's other operand: a group argument index
  bool perChannel = false; // that operand has one value per channel (else the result's shape)
  // "bias" (per-channel Add), "add", "scale" (per-channel Mul), "mul", "relu", "gelu_tanh" ...
  std::string name() const;
};

// `pass`: which of the convolution's three passes the group is. x, w and y
// are always the forward convolution's (y = conv(x, w)); the pass says which
// is the call's result: Forward y (Conv), BackwardData x (ConvTranspose:
// its input is dy, its weights w, its result dx), BackwardFilter w
// (ConvWeightGrad: its operands x and dy).
struct ConvDesc {
  enum class Pass { Forward, BackwardData, BackwardFilter };
  Pass pass = Pass::Forward;
  DType dtype = DType::F32;
  bool channelsLast = false;
  std::vector<int> x, w, y; // dims, cuDNN's order
  std::vector<int> pads, strides, dilations;
  int groups = 1;
  // The Conv's `exact` (lower-quantize: integer operands whose sums must
  // come out exact): only algorithms that sum the products themselves, no
  // Winograd or FFT transforms; the legacy API (describe(): " exact").
  bool exact = false;
  // Group argument indices (-1: the result, or none): x, w, dy (the
  // backward passes' y), bias (Conv's B or a folded Add; ConvTranspose's B,
  // added to dx).
  int input = -1, weights = -1, grad = -1, bias = -1;
  // The legacy API's fold: `bias` (cudnnAddTensor) is the whole epilogue.
  bool epilogueFolded = false;
  // The whole epilogue as pointwise ops after `bias`, for the graph API
  // (half types: runtime fusion engines); empty when some op is not one or
  // when epilogueFolded already covers it. All or nothing, like the fold.
  std::vector<ConvPointwise> fused;

  // What the graph API is asked to take of the epilogue (bias included).
  bool graphTakesEpilogue() const { return epilogueFolded || !fused.empty(); }
  // "bias,add,relu": `bias` and the fused ops ("" without either).
  std::string fusedText() const;
  // "conv f32 nhwc x=1x16x8x8 w=16x16x3x3 pads=1,1 strides=1,1 dilations=1,1 groups=1 bias"
  // (without " bias" when `withBias` is false); "conv-bwd-data ..." and
  // "conv-bwd-filter ..." for the backward passes.
  std::string describe(bool withBias = true) const;
};

// One Attention op (Ops.def) for cuDNN's fused flash attention (SDPA,
// CudnnAttention.h): every tensor as a 4-D [B, H, S, D] view with element
// strides and an element offset (the op's layouts, AttentionLayout.h: a
// [B, S, H, D] tensor or a part of a packed qkv projection is a strided
// view, not a copy). What cuDNN's engines take and tc offers: f16/bf16,
// d_qk = d_v a multiple of 8 up to 256, q, k and v of one batch, k and v
// with kv_heads heads dividing H (grouped-query), causal only where it is
// the same as cuDNN's top-left diagonal (Sq = Skv), an additive mask whose
// batch and heads are 1 or B/H and whose query axis is 1 or Sq.
struct AttentionDesc {
  struct View {
    int arg = -1;                       // group argument index (-1: the result)
    std::vector<int64_t> dims, strides; // [B, H, S, D] and their element strides
    int64_t offset = 0;                 // elements from the buffer's start
  };
  DType dtype = DType::F16;
  int64_t batch = 0, heads = 0, kvHeads = 0, sq = 0, skv = 0, dim = 0;
  bool causal = false;
  float scale = 0;          // resolved: never 0
  View q, k, v, o;          // k as [B, Hkv, Skv, D] (the graph transposes it)
  std::optional<View> mask; // [1|B, 1|H, 1|Sq, Skv]
  DType maskType = DType::F32;
  // "attention f16 b=4 h=16/16 sq=1024 skv=1024 d=64 causal scale=0.125 mask=[1,1,1,1024]
  // strides 1048576,65536,64,1 ..." -- with `strides`, all a plan depends
  // on (the tuning and plan key); without, the step report's words.
  std::string describe(bool strides = true) const;
};

// The cuDNN SDPA of Attention group `group` (one Attention op whose
// operands are the group's arguments: no prologue or epilogue), or nullopt
// with `why` (what cuDNN is not offered).
std::optional<AttentionDesc> describeAttention(const Function &group,
                                               const std::vector<TensorType> &args,
                                               const TensorType &result, std::string &why);

// A Conv, ConvTranspose or ConvWeightGrad group (its pass), or nullopt
// with `why`. The backward passes are lone ops (window ops: no epilogue)
// and go to the legacy API; their pads must be a form cuDNN's symmetric
// ones state (the size the forward convolution with the leading pads on
// both sides gives is dy's).
std::optional<ConvDesc> describeConv(const Function &group, const std::vector<TensorType> &args,
                                     const TensorType &result, std::string &why);

} // namespace tc
