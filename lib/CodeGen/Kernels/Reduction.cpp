// The Reduction family (CUDA): a Reduce* or global pool with a pointwise
// prologue over its input (reading arguments of the input's shape or
// scalars) and an epilogue over its result. Reduced axes that are the
// trailing ones make rows (one block per result element, a block
// reduction); any other set is a loop per result element (threads of a
// warp read neighbouring elements).
#include "Families.h"
#include <algorithm>
#include <sstream>

namespace tc::kernels {

std::optional<Reduction> reduction(const Op &op) {
  switch (op.kind) {
  case OpKind::ReduceSum: return Reduction{"x", "tc_add_op", "0", "acc"};
  case OpKind::ReduceMean:
  case OpKind::GlobalAveragePool: return Reduction{"x", "tc_add_op", "0", "acc / L"};
  case OpKind::ReduceProd: return Reduction{"x", "tc_mul_op", "1", "acc"};
  case OpKind::ReduceMax:
  case OpKind::GlobalMaxPool: return Reduction{"x", "tc_maxn_op", "-inf", "acc"};
  case OpKind::ReduceMin: return Reduction{"x", "tc_minn_op", "inf", "acc"};
  case OpKind::ReduceL1: return Reduction{"tc_abs(x)", "tc_add_op", "0", "acc"};
  case OpKind::ReduceL2: return Reduction{"x * x", "tc_add_op", "0", "tc_sqrt(acc)"};
  case OpKind::ReduceSumSquare: return Reduction{"x * x", "tc_add_op", "0", "acc"};
  case OpKind::ReduceLogSum: return Reduction{"x", "tc_add_op", "0", "tc_log(acc)"};
  default: return std::nullopt;
  }
}

namespace {

// What the check finds: the reduced axes of the input, an argument of the
// input's shape (dims[] has its dims), the arguments read per input element
// (prologue) and per result element (epilogue).
struct ReduceShape {
  std::vector<bool> reducedAxes;
  const Value *inputDims = nullptr;
  std::vector<size_t> proArgs, epiArgs;
};

bool checkReduce(const KernelContext &c, const Op &op, ReduceShape &s) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  if (op.operands.size() > 1 && op.operand(1))
    return c.noKernel(std::string(op.name()) + " with run-time axes");
  if (op.result()->type.shape != c.domain)
    return c.noKernel("an epilogue that changes the reduction's shape");
  bool global = op.is(OpKind::GlobalAveragePool) || op.is(OpKind::GlobalMaxPool);
  s.reducedAxes.assign(r, !global && op.getInts("axes").empty());
  if (global)
    for (size_t d = 2; d < r; ++d)
      s.reducedAxes[d] = true;
  else
    for (int64_t a : op.getInts("axes")) {
      if (a < -int64_t(r) || a >= int64_t(r))
        return c.noKernel(std::string(op.name()) + " over an axis out of range");
      s.reducedAxes[size_t(a < 0 ? a + int64_t(r) : a)] = true;
    }
  bool after = false;
  for (const auto &o : c.f.ops) {
    if (o.get() == &op) {
      after = true;
      if (size_t i = c.argIndex(x); i != SIZE_MAX)
        s.proArgs.push_back(i);
      continue;
    }
    const Shape &own = after ? c.domain : x->type.shape;
    if (o->result()->type.shape != own)
      return c.noKernel("an op over neither the reduction's input nor its result");
    for (const Value *v : o->operands)
      if (size_t i = c.argIndex(v); i != SIZE_MAX) {
        auto n = staticNumElements(v->type.shape);
        if (v->type.shape != own && !(n && *n == 1))
          return c.noKernel("a broadcast operand around a reduction");
        (after ? s.epiArgs : s.proArgs).push_back(i);
      }
  }
  for (size_t i = 0; i < c.f.args.size() && !s.inputDims; ++i)
    if (c.f.args[i]->type.shape == x->type.shape)
      s.inputDims = c.f.args[i];
  if (!s.inputDims)
    return c.noKernel(std::string(op.name()) + " whose input's dims no argument has");
  return true;
}

// `a<i> = in<i>[at]` for the given arguments (scalars: [0]).
void emitArgLoads(const KernelContext &c, std::ostream &os, std::vector<size_t> args,
                  const std::string &at) {
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  for (size_t i : args) {
    DType t = c.f.args[i]->type.dtype;
    auto n = staticNumElements(c.f.args[i]->type.shape);
    std::string ref = "in" + std::to_string(i) + "[" + (n && *n == 1 ? "0" : at) + "]";
    os << "      const " << c.ct(t) << " a" << i << " = " << c.load(t, ref) << ";\n";
  }
}

std::optional<EmittedKernel> emitCudaReduce(const KernelContext &c, const Op &op,
                                            const Expressions &ex, const ReduceShape &s,
                                            const std::string &pro, const std::string &body,
                                            const std::string &reducedInput) {
  const Reduction red = *reduction(op);
  const Value *x = s.inputDims;
  size_t r = x->type.rank();
  const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
  size_t firstReduced = r;
  while (firstReduced > 0 && s.reducedAxes[firstReduced - 1])
    --firstReduced;
  bool rows =
      std::count(s.reducedAxes.begin(), s.reducedAxes.end(), true) == long(r - firstReduced);
  // Rows: whole warps of about 4 elements each when the reduced count is
  // known now (batch sizes are not reduced), else 256 threads.
  unsigned block = kPointwiseBlock;
  std::optional<int64_t> reducedCount = 1;
  for (size_t d = firstReduced; d < r; ++d)
    reducedCount = x->type.shape[d].isStatic() && reducedCount
                       ? std::optional(*reducedCount * x->type.shape[d].size)
                       : std::nullopt;
  if (rows && reducedCount)
    block = unsigned(32 * std::clamp<int64_t>((*reducedCount + 127) / 128, 1, 32));
  std::ostringstream os;
  std::string symbol = c.emitStart(os, rows ? block : kPointwiseBlock);
  std::string L, nOut;
  for (size_t d = 0; d < r; ++d)
    if (s.reducedAxes[d])
      L += (L.empty() ? "" : " * ") + c.dim(x, d);
  for (size_t d = 0; d < c.rank; ++d)
    nOut += (nOut.empty() ? "" : " * ") + c.dim(c.f.results[0], d);
  std::string init = red.init == std::string("-inf")  ? "-" + std::string(c.info().inf)
                     : red.init == std::string("inf") ? c.info().inf
                                                      : red.init;
  os << "  const int64_t L = " << (L.empty() ? "1" : L)
     << ", nOut = " << (nOut.empty() ? "1" : nOut) << ";\n";
  // One input element into `acc`: the prologue's loads and ops at `i`.
  std::ostringstream element;
  emitArgLoads(c, element, s.proArgs, "i");
  element << pro << "      const " << A << " x = " << reducedInput << ";\n"
          << "      acc = " << red.combine << "()(acc, (" << A << ")(" << red.term << "));\n";
  // The result element `o`: finished, the epilogue, stored.
  std::ostringstream finish;
  finish << "      const " << A << " r = " << red.finish << ";\n";
  emitArgLoads(c, finish, s.epiArgs, "o");
  finish << body;
  ex.emitStores(finish, "o");
  if (rows) {
    os << "  __shared__ " << A << " tc_red[32];\n"
       << "  for (int64_t o = blockIdx.x; o < nOut; o += gridDim.x) {\n"
       << "    " << A << " acc = " << init << ";\n"
       << "    for (int64_t j = threadIdx.x; j < L; j += blockDim.x) {\n"
       << "      const int64_t i = o * L + j;\n"
       << element.str() << "    }\n"
       << "    acc = tc_block_reduce(acc, tc_red, " << red.combine << "());\n"
       << "    if (threadIdx.x == 0) {\n"
       << finish.str() << "    }\n  }\n}\n";
  } else {
    c.emitRowMajorStrides(os, "xst", x);
    os << kGridHead << "  for (int64_t o = tid; o < nOut; o += stride) {\n"
       << "    int64_t base = 0, rem = o;\n";
    for (size_t d = r; d-- > 0;)
      if (!s.reducedAxes[d])
        os << "    base += rem % " << c.dim(x, d) << " * xst[" << d << "]; rem /= " << c.dim(x, d)
           << ";\n";
    os << "    " << A << " acc = " << init << ";\n";
    std::string i = "base";
    for (size_t d = 0; d < r; ++d)
      if (s.reducedAxes[d]) {
        os << "    for (int64_t r" << d << " = 0; r" << d << " < " << c.dim(x, d) << "; ++r" << d
           << ")\n";
        i += " + r" + std::to_string(d) + " * xst[" + std::to_string(d) + "]";
      }
    os << "    {\n      const int64_t i = " << i << ";\n"
       << element.str() << "    }\n    {\n"
       << finish.str() << "    }\n  }\n}\n";
  }
  EmittedKernel k = c.kernel(symbol, os.str());
  k.launch = rows ? LaunchKind::Reduce : LaunchKind::Pointwise;
  k.block = rows ? block : kPointwiseBlock;
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace

std::optional<EmittedKernel> emitReduction(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  ReduceShape s;
  if (!checkReduce(c, op, s))
    return std::nullopt;
  Expressions ex(c);
  std::string reducedInput;
  // Its value is `r`, the finished reduction.
  auto anchor = [&](const Op &a, const char *, std::ostream &) {
    auto in = ex.operand(a.operand(0));
    if (!in)
      return c.noKernel(std::string(a.name()) + " of a constant");
    reducedInput = *in;
    ex.bind(a.result(), "r");
    return true;
  };
  std::ostringstream pro, body;
  if (!emitGroupOps(c, ex, &op, /*split=*/true, anchor, pro, body))
    return std::nullopt;
  return emitCudaReduce(c, op, ex, s, pro.str(), body.str(), reducedInput);
}

} // namespace tc::kernels
