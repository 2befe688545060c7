// The reference kernels, one file per op family, and the helpers they share.
// Kernels get preallocated outputs whose types come from the op table's shape
// rules; they never compute a shape themselves, only check what they rely on.
// A kernel reports a bad input by throwing tc::Error (without the op's
// location: runReference adds it).
#pragma once
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace tc::ref {

using KernelTable = std::array<RefKernel, size_t(OpKind::NumOps)>;

void registerElementwiseKernels(KernelTable &t);
void registerReductionKernels(KernelTable &t);
void registerNNKernels(KernelTable &t);
// Called by registerNNKernels: pooling, normalization, Resize and Pad.
void registerPoolingKernels(KernelTable &t);
void registerNormalizationKernels(KernelTable &t);
void registerResampleKernels(KernelTable &t);
// tc's fused Attention (Attention.cpp), which registers its gradient's
// (AttentionGrad.cpp).
void registerAttentionKernels(KernelTable &t);
void registerAttentionGradKernel(KernelTable &t);
void registerTensorKernels(KernelTable &t);
// Losses, training-mode BatchNormalization and Dropout, optimizers.
void registerTrainingKernels(KernelTable &t);
// QuantizeLinear and friends; GridSample, RoiAlign, MaxUnpool, ReverseSequence, Det.
void registerQuantizeKernels(KernelTable &t);
void registerSpatialKernels(KernelTable &t);
// RNN, GRU, LSTM; DFT, STFT, the window functions, MelWeightMatrix.
void registerRecurrentKernels(KernelTable &t);
void registerSignalKernels(KernelTable &t);
// RankSlice and the collectives over the thread's rank group (Collectives.cpp).
void registerCollectiveKernels(KernelTable &t);

// The ops whose output sizes depend on operand values (NonZero, Compress,
// Unique, NonMaxSuppression; Ops.def): registered together with their
// kernels, which alone may replace an output with one of the final dims
// (the executor hands them the rule's `?` dims as 0 and then checks dtype,
// rank and the rule's known dims). Every other kernel keeps its outputs'
// shapes.
using SetsOutputDimsTable = std::array<bool, size_t(OpKind::NumOps)>;
void registerDataDependentKernels(KernelTable &t, SetsOutputDimsTable &setsDims);
// StringNormalizer (sets its output dims) and TfIdfVectorizer (Strings.cpp).
void registerStringKernels(KernelTable &t, SetsOutputDimsTable &setsDims);
// Cast between str and the other dtypes, elementwise (Strings.cpp): numbers
// spelled as NumPy's str() does, strings read as Python's float()/int() do.
void castStrings(const HostTensor &x, HostTensor &y);

// If, Loop and Scan (ControlFlow.cpp): run their callees, functions of `m`,
// through runReference; the executor calls this instead of a kernel.
std::vector<HostTensor> runControlFlow(const Module *m, const Op &op,
                                       const std::vector<const HostTensor *> &ins);

using Dims = std::vector<int64_t>;

int64_t numElements(const Dims &d);
// Row-major strides of `d`, in elements.
Dims stridesOf(const Dims &d);
// Normalizes axis into [0, rank); throws when out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

// Numpy broadcasting: walks every element of `out` in row-major order and
// hands `fn(outIndex, inIndex)` the matching element index of each input
// (inIndex[k] for ins[k]). Throws unless every input broadcasts to `out`.
class BroadcastWalk {
public:
  BroadcastWalk(const Dims &out, const std::vector<Dims> &ins);
  template <typename F> void run(F &&fn) {
    int64_t n = numElements(out_);
    if (n == 0)
      return;
    size_t r = out_.size(), k = strides_.size();
    std::vector<int64_t> idx(r, 0), off(k, 0);
    for (int64_t o = 0; o < n; ++o) {
      fn(o, off.data());
      // Increment the multi-index from the last axis, carrying over.
      for (size_t d = r; d-- > 0;) {
        if (++idx[d] < out_[d]) {
          for (size_t j = 0; j < k; ++j)
            off[j] += strides_[j][d];
          break;
        }
        for (size_t j = 0; j < k; ++j)
          off[j] -= strides_[j][d] * (idx[d] - 1);
        idx[d] = 0;
      }
    }
  }

private:
  Dims out_;
  std::vector<Dims> strides_; // per input, aligned to out's rank; 0 on broadcast axes
};

// All elements as doubles / int64 (see HostTensor::getDouble / getInt).
std::vector<double> loadDoubles(const HostTensor &t);
std::vector<int64_t> loadInts(const HostTensor &t);

// Wrapping integer arithmetic on the two's-complement bit patterns (the
// result is then truncated to the output's width by HostTensor::setInt).
inline int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
inline int64_t wrapNeg(int64_t a) { return int64_t(0 - uint64_t(a)); }

// Checks that a kernel got what the executor promises (internal errors).
void expectArity(const std::vector<const HostTensor *> &ins, size_t min,
                 const std::vector<HostTensor> &outs, size_t nOuts);

// An op with channels_last = 1 (the channels-last pass) run by its NCHW
// kernel: the first `layoutOperands` operands and the one result move
// channels first and back (obviously right, not fast).
void runChannelsFirst(RefKernel channelsFirst, const Op &op,
                      const std::vector<const HostTensor *> &ins, std::vector<HostTensor> &outs,
                      size_t layoutOperands);

} // namespace tc::ref
