// What every family emitter shares about one group: the group, the
// dialect, the dims[] layout of the kernel ABI (tc/CodeGen/KernelEmitter.h)
// and the few code pieces every kernel has (its head, typed buffer views,
// the CUDA grid-stride loop). Built once per group; the families add
// their own state locally.
#pragma once
#include "Dialect.h"
#include "tc/IR/ConstantInts.h"
#include <functional>
#include <optional>
#include <ostream>
#include <unordered_map>

namespace tc::kernels {

// CUDA block sizes: pointwise kernels, rows (one block per row) and the
// row elements each thread keeps in registers.
inline constexpr unsigned kPointwiseBlock = 256, kRowsBlock = 1024, kRowCache = 8;
// The grid-stride loop's start and step.
inline constexpr const char *kGridHead =
    "  const int64_t stride = (int64_t)gridDim.x * blockDim.x,\n"
    "                tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n";

// The same in a multi-tensor kernel (tc/CodeGen/MultiTensor.h): its
// member's share of the grid.
inline constexpr const char *kMultiTensorGridHead =
    "  const int64_t stride = tc_mt_blocks * blockDim.x,\n"
    "                tid = tc_mt_block * (int64_t)blockDim.x + threadIdx.x;\n";

struct KernelContext {
  KernelContext(const Function &f, KernelDialect d, std::string &why, bool multiTensor = false);

  const Function &f;
  const KernelDialect dialect;
  // CUDA: the kernel walks a table of members (tc/CodeGen/MultiTensor.h);
  // the signature finds the block's member, gridHead() its share.
  const bool multiTensor;
  std::string &why; // the reason when the group gets no kernel
  // A kernel that is correct but whose work grows faster than its data
  // ("a ScatterND of 39M tuples compares them pairwise"): tc-codegen says so
  // (a slow path is never silent).
  mutable std::string slowPath;
  Shape domain;                                    // result 0's shape: the iteration domain
  size_t rank = 0;                                 // of the domain
  std::unordered_map<const Value *, size_t> dimAt; // first dims[] entry of each arg/result
  size_t numDims = 0;                              // entries of dims[]
  // Which of its family's geometry variants to emit (0: the default;
  // tc/CodeGen/KernelEmitter.h, emitKernelVariant). The symbol says it.
  unsigned variant = 0;

  bool cuda() const { return dialect == KernelDialect::Cuda; }
  const char *gridHead() const { return multiTensor ? kMultiTensorGridHead : kGridHead; }
  const DialectInfo &info() const { return dialectInfo(dialect); }
  const char *st(DType t) const { return storageType(t, dialect); }
  const char *ct(DType t) const { return computeType(t, dialect); }
  // A stored element as a computed value, and back.
  std::string load(DType t, const std::string &ref) const;
  std::string store(DType t, const std::string &value) const;

  // Records why the group gets no kernel; false stops emitting.
  bool noKernel(const std::string &what) const;
  std::nullopt_t reject(const std::string &what) const {
    noKernel(what);
    return std::nullopt;
  }

  // The argument index of `v`, SIZE_MAX when it is none.
  size_t argIndex(const Value *v) const;
  // `dims[k]`: dim `d` of argument/result `v`. A value inside the group
  // takes the dims of an argument or result of its shape, else each dim
  // from one that has it in the same place counted from the last axis (a
  // broadcast of [N, 1, D] and [1, C, 1]).
  std::string dim(const Value *v, size_t d) const;
  // Whether dim() finds every dim of `v`.
  bool hasDims(const Value *v) const;
  // dims[] index of an argument's or result's dim in v's dim d's place
  // (counted from the last axis) and equal to it.
  std::optional<size_t> broadcastDim(const Value *v, size_t d) const;
  // Dim `d` of `v` as a literal where its type fixes it (the compiler then
  // divides by a constant), else dim(v, d).
  std::string extent(const Value *v, size_t d) const;
  // The number of rows of the domain (all dims of result 0 but the last).
  std::string rowsExpr() const;
  // The kernel's symbol, and the comment line naming its group and domain.
  std::string head(std::string &symbol) const;
  // Some argument or op result is a half float (CUDA: the prelude includes
  // the fp16/bf16 headers).
  bool usesHalf() const;
  // The kernel around `source`, named for the group.
  EmittedKernel kernel(const std::string &symbol, const std::string &source) const {
    return EmittedKernel{f.name, symbol, source};
  }

  // Typed views of `bufs` (in<i>, out<i>) and `inner`, the domain's last dim.
  void emitPointers(std::ostream &os) const;
  // `name`[d]: the row-major strides of `v`, from its run-time dims.
  void emitRowMajorStrides(std::ostream &os, const std::string &name, const Value *v) const;
  // The kernel's signature. CPU: the ABI's bufs, dims, begin, end. CUDA:
  // the parameter struct, the kernel's head (launch bounds `cudaBlock`)
  // and the CPU ABI's two names. `scratch` (CUDA `columns` and `split`
  // launches): one more buffer after the results, the runtime's scratch
  // (declared as `char *scratch`); `pass` (`split`): the parameter's field after dims.
  // `minBlocks` (> 0): launch bounds' blocks per SM, which cap registers.
  void emitSignature(std::ostream &os, const std::string &symbol, unsigned cudaBlock,
                     bool scratch = false, bool pass = false, unsigned minBlocks = 0) const;
  // The comment line, the signature and the typed buffer views of a kernel
  // over the group's domain; returns its symbol.
  std::string emitStart(std::ostream &os, unsigned cudaBlock, bool scratch = false,
                        bool pass = false, unsigned minBlocks = 0) const;
  // CUDA: the grid-stride loop over elements [begin, n) of the domain. With
  // `divides` the element's row and j are needed: the loop is emitted twice,
  // dividing in 32 bits where n allows (a 64-bit division is far slower).
  // `var`, `count`, `per`: the loop's index, its end and the row length
  // (a vector loop walks vectors).
  void emitGridLoops(std::ostream &os, const std::string &begin, bool divides,
                     const std::function<void(const std::string &index)> &body,
                     const std::string &var = "i", const std::string &count = "n",
                     const std::string &per = "inner") const;
};

// Emitted code of the kernels over a fixed grid that split work items
// across blocks through the runtime's scratch (`columns` and `split`
// launches; its layout: columnsScratchBytes, tc/Runtime/CudaLaunch.h).
// `int64_t S`: blocks per item, what fills the grid (`grid` blocks) for
// `items` items, at most `most` (and `cap`, when given), at least 1.
std::string gridSplits(const std::string &items, const std::string &most,
                       const std::string &cap = "", const std::string &grid = "gridDim.x");
// `unsigned *count`: the scratch's counters, after the grid's partials.
inline constexpr const char *kScratchCounters =
    "  unsigned *count = (unsigned *)(scratch + (size_t)gridDim.x * blockDim.x * 8);\n";
// After a block wrote its partial of item `item` to the scratch: fences,
// counts it, and `continue`s unless the block is the item's last, which
// then reads every partial (`__shared__ int tc_last` declared).
std::string lastBlockOf(const std::string &item, const std::string &indent);

// The value of a one-element f32/f64 constant.
std::optional<double> scalarConstant(const Value *v);
// The integers of constant `v` (i32/i64), if it is one: the shape rules' reader.
using infer::constantInts;

} // namespace tc::kernels
