// Pointwise groups: one loop nest over the group's domain (its first
// result's shape). Operands of the domain's shape are read contiguously,
// single-element operands as a scalar, and broadcast operands through
// strides computed from their run-time dims (0 along broadcast axes).
// Every op of the group is one expression over register values, so the
// group reads each operand once and writes each result once.
#include "tc/CodeGen/KernelEmitter.h"
#include "tc/IR/ElementMove.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace tc {

namespace {

// What differs between the dialects, as data; the loop structure around
// the shared expressions is the only code per dialect (a CPU row loop, a
// CUDA grid-stride loop or one block per row).
struct HalfType {
  const char *type, *toFloat, *fromFloat; // nullptr: the dialect has none
};
struct DialectInfo {
  const char *kernelHead; // what precedes the symbol in a kernel definition
  const char *mathPrefix; // of libm's names (expf, ...) in the prelude
  HalfType f16, bf16;     // storage type and conversions (round to nearest even)
  const char *inf, *nan;  // double infinity and quiet NaN
};
constexpr DialectInfo kDialects[] = {
    {"extern \"C\" void ", "__builtin_", {}, {}, "__builtin_inf()", "__builtin_nan(\"\")"},
    {"extern \"C\" __global__ void ",
     "",
     {"__half", "__half2float", "__float2half_rn"},
     {"__nv_bfloat16", "__bfloat162float", "__float2bfloat16_rn"},
     "__longlong_as_double(0x7ff0000000000000LL)",
     "__longlong_as_double(0x7ff8000000000000LL)"},
};
const DialectInfo &info(KernelDialect d) { return kDialects[d == KernelDialect::Cuda]; }

// The element type tensors of `t` are stored as, or nullptr (no kernel).
const char *storageType(DType t, KernelDialect d) {
  switch (t) {
  case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  case DType::F16: return info(d).f16.type;
  case DType::BF16: return info(d).bf16.type;
  default: return nullptr;
  }
}
// The type values of `t` are computed in: half floats in float.
const char *computeType(DType t, KernelDialect d) {
  const char *s = storageType(t, d);
  return s && (t == DType::F16 || t == DType::BF16) ? "float" : s;
}
bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }
// Data movement copies elements as integers of their size.
const char *movedType(DType t) {
  switch (dtypeSize(t)) {
  case 8: return "int64_t";
  case 4: return "int";
  case 2: return "short";
  case 1: return "char";
  default: return nullptr;
  }
}

// A reduction the CUDA dialect generates: how each element enters the
// accumulator (`term` of x), how two accumulators combine (a functor of the
// prelude), the start value and how the result is finished (of acc and the
// reduced count L).
struct Reduction {
  const char *term, *combine, *init, *finish;
};
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

std::string floatLiteral(double v, DType t, KernelDialect d = KernelDialect::Cpu) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v); // exact
  std::string s = buf;
  if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan")
    s = std::string(s[0] == '-' ? "-" : "") +
        (s.find("inf") != std::string::npos ? info(d).inf : info(d).nan);
  return t == DType::F64 ? s : "(float)" + s;
}

class Emitter {
public:
  Emitter(const Function &f, KernelDialect d, std::string &why) : f_(f), d_(d), why_(why) {}

  std::optional<EmittedKernel> run() {
    if (f_.results.empty() || f_.ops.empty())
      return reject("an empty group");
    domain_ = f_.results[0]->type.shape;
    rank_ = domain_.size();
    // dims[] layout: every argument's dims, then every result's.
    size_t at = 0;
    for (const Value *a : f_.args) {
      dimAt_[a] = at;
      at += a->type.rank();
    }
    for (const Value *r : f_.results) {
      dimAt_[r] = at;
      at += r->type.rank();
    }
    numDims_ = at;
    // CUDA passes bufs and dims by value: kernel parameters hold 4 KB.
    if (cuda() && 8 * (f_.args.size() + f_.results.size() + std::max<size_t>(numDims_, 1)) > 4096)
      return reject("more arguments and dims than a CUDA kernel's 4 KB of parameters hold");
    // Data movement: any element type (bytes are moved), Split's results differ.
    const Op &first = *f_.ops.front();
    if (first.is(OpKind::Transpose))
      return emitTranspose(first);
    if (isElementMove(first.kind))
      return emitMove(first);
    for (const Value *r : f_.results)
      if (r->type.shape != domain_)
        return reject("results of different shapes");
    for (const Value *a : f_.args)
      if (!st(a->type.dtype))
        return reject("argument %" + a->name + " of type " + a->type.str());
    if (cuda())
      for (const auto &op : f_.ops)
        if (op->info().category == FusionCategory::Library)
          return reject(std::string(op->name()) + " is a library call on CUDA (cuBLASLt/cuDNN), "
                                                  "not a generated kernel");
    if (first.is(OpKind::MaxPool) || first.is(OpKind::AveragePool))
      return emitPool(first);
    if (first.is(OpKind::MatMul) || first.is(OpKind::Gemm)) {
      anchor_ = &first;
      if (!checkMatmul())
        return std::nullopt;
    } else if (first.is(OpKind::Conv)) {
      anchor_ = &first;
      if (!checkConv())
        return std::nullopt;
    }
    for (const auto &op : f_.ops)
      if (op->is(OpKind::Softmax) || op->is(OpKind::LogSoftmax) ||
          op->is(OpKind::LayerNormalization)) {
        if (anchor_)
          return reject("two anchors");
        anchor_ = rowReduction_ = op.get();
        if (!checkRowReduction())
          return std::nullopt;
      } else if (cuda() && reduction(*op)) {
        if (anchor_)
          return reject("two anchors");
        anchor_ = reduce_ = op.get();
        if (!checkReduce())
          return std::nullopt;
      } else if (op->info().category == FusionCategory::Reduction ||
                 (op->info().category == FusionCategory::Library && op.get() != anchor_)) {
        return reject("no code for " + std::string(op->name()));
      }
    for (const auto &op : f_.ops)
      for (size_t k = 0; k < op->operands.size(); ++k)
        if (op.get() != anchor_ || op.get() == rowReduction_ || (op->is(OpKind::Gemm) && k == 2))
          for (size_t i = 0; i < f_.args.size(); ++i)
            if (f_.args[i] == op->operands[k])
              elementwise_[i] = true;
    // Ops before a row reduction are its prologue (run in the first pass
    // over the row, and again in the second where the epilogue needs them).
    std::ostringstream pro, body;
    bool before = rowReduction_ || reduce_;
    for (const auto &op : f_.ops) {
      if (op.get() == rowReduction_ || op.get() == reduce_)
        before = false;
      if (!emitOp(*op, before ? pro : body))
        return std::nullopt;
    }
    for (const Value *r : f_.results)
      if (!names_.count(r))
        return reject("a result that is not computed in the group");
    if (cuda())
      return reduce_         ? emitCudaReduce(pro.str(), body.str())
             : rowReduction_ ? emitCudaRows(pro.str(), body.str())
                             : emitCudaPointwise(body.str());

    std::string symbol;
    std::ostringstream os;
    os << head(symbol);
    os << "extern \"C\" void " << symbol
       << "(void *const *bufs, const int64_t *dims, int64_t begin, int64_t end) {\n";
    emitPointers(os);
    bool anyBroadcast = readsBroadcast();
    if (anyBroadcast)
      emitStrides(os);
    if (anchor_ && anchor_->is(OpKind::Conv))
      emitConvSetup(os);
    else if (anchor_ && !rowReduction_)
      emitMatmulSetup(os);
    if (rowReduction_)
      os << "  " << ct(rowReduction_->result()->type.dtype) << " *acc = ("
         << ct(rowReduction_->result()->type.dtype)
         << " *)malloc(sizeof(double) * (inner ? inner : 1));\n";
    os << "  for (int64_t row = begin; row < end; ++row) {\n";
    if (anyBroadcast)
      emitRowBases(os);
    if (anchor_ && anchor_->is(OpKind::Conv))
      emitConvRow(os);
    else if (anchor_ && !rowReduction_)
      emitMatmulRow(os);
    if (rowReduction_) {
      // Pass 1: the prologue, the reduced input kept in `acc`, prologue results.
      os << "    TC_SIMD_LOOP for (int64_t j = 0; j < inner; ++j) {\n";
      emitLoads(os);
      os << pro.str() << "      acc[j] = " << reducedInput_ << ";\n";
      emitStores(os, "row * inner + j", /*prologue=*/true);
      os << "    }\n";
      emitRowStats(os);
    }
    // In-place plans make out0 == in0, which the vectorizer's overlap check
    // sends down the scalar loop; element j only reads position j, so the
    // hint is safe (and `__restrict` on locals is not honoured).
    os << "    TC_SIMD_LOOP for (int64_t j = 0; j < inner; ++j) {\n";
    emitLoads(os);
    os << pro.str() << body.str();
    emitStores(os, "row * inner + j", /*prologue=*/false);
    os << "    }\n  }\n";
    if (anchor_)
      os << "  free(acc);\n";
    os << "}\n";
    return EmittedKernel{f_.name, symbol, os.str()};
  }

private:
  enum class Access { Contiguous, Scalar, Broadcast };
  const Function &f_;
  KernelDialect d_;
  std::string &why_;
  Shape domain_;
  size_t rank_ = 0;
  std::unordered_map<const Value *, size_t> dimAt_;
  size_t numDims_ = 0; // entries of dims[]
  std::unordered_map<const Value *, std::string> names_;
  std::map<size_t, bool> elementwise_; // arguments read per element of the domain
  const Op *anchor_ = nullptr;         // the MatMul/Gemm of a library group
  size_t nextTemp_ = 0;

  const Op *reduce_ = nullptr;            // a Reduce* or global pool (CUDA)
  std::vector<bool> reducedAxes_;         // of its input
  const Value *inputDims_ = nullptr;      // an argument of its input's shape (dims[] has them)
  std::vector<size_t> proArgs_, epiArgs_; // arguments read per input / result element
  const Op *rowReduction_ = nullptr;      // Softmax/LogSoftmax/LayerNormalization
  std::string reducedInput_;              // its input's expression in pass 1
  std::unordered_map<const Value *, bool> prologue_; // values computed before it

  bool prologueValue(const Value *v) const { return prologue_.count(v) != 0; }
  bool cuda() const { return d_ == KernelDialect::Cuda; }
  const char *st(DType t) const { return storageType(t, d_); }
  const char *ct(DType t) const { return computeType(t, d_); }
  // A stored element as a computed value, and back.
  std::string load(DType t, const std::string &ref) const {
    const HalfType &h = t == DType::F16 ? info(d_).f16 : info(d_).bf16;
    return isHalf(t) ? h.toFloat + ("(" + ref + ")") : ref;
  }
  std::string store(DType t, const std::string &value) const {
    const HalfType &h = t == DType::F16 ? info(d_).f16 : info(d_).bf16;
    return isHalf(t) ? h.fromFloat + ("(" + value + ")") : value;
  }

  // Typed views of `bufs` and `inner`, the domain's last dim (from result 0).
  void emitPointers(std::ostringstream &os) {
    size_t r0 = dimAt_.at(f_.results[0]);
    os << "  const int64_t inner = "
       << (rank_ ? "dims[" + std::to_string(r0 + rank_ - 1) + "]" : "1") << ";\n";
    for (size_t i = 0; i < f_.args.size(); ++i)
      os << "  const " << st(f_.args[i]->type.dtype) << " *__restrict in" << i << " = (const "
         << st(f_.args[i]->type.dtype) << " *)bufs[" << i << "];\n";
    for (size_t i = 0; i < f_.results.size(); ++i)
      os << "  " << st(f_.results[i]->type.dtype) << " *__restrict out" << i << " = ("
         << st(f_.results[i]->type.dtype) << " *)bufs[" << f_.args.size() + i << "];\n";
  }

  // `contiguous`: the element's offset in a tensor of the domain's shape.
  void emitLoads(std::ostringstream &os, const std::string &contiguous = "row * inner + j") {
    for (size_t i = 0; i < f_.args.size(); ++i) {
      if (!elementwise_.count(i))
        continue;
      DType t = f_.args[i]->type.dtype;
      std::string ref = "in" + std::to_string(i);
      switch (access(i)) {
      case Access::Contiguous: ref += "[" + contiguous + "]"; break;
      case Access::Scalar: ref += "[0]"; break;
      case Access::Broadcast:
        ref += "[base" + std::to_string(i) + " + j * step" + std::to_string(i) + "]";
        break;
      }
      os << "      const " << ct(t) << " a" << i << " = " << load(t, ref) << ";\n";
    }
  }

  // The results computed in the prologue (`prologue`) or after it.
  void emitStores(std::ostringstream &os, const std::string &at, bool prologue) {
    for (size_t i = 0; i < f_.results.size(); ++i)
      if (prologueValue(f_.results[i]) == prologue)
        os << "      out" << i << "[" << at
           << "] = " << store(f_.results[i]->type.dtype, names_.at(f_.results[i])) << ";\n";
  }

  // Over the last axis only: the row is the kernel's inner loop.
  bool checkRowReduction() {
    const Op &op = *rowReduction_;
    const Value *x = op.operand(0);
    size_t r = x->type.rank();
    if (r == 0 || x->type.shape != domain_ || op.result()->type.shape != domain_)
      return noKernel(std::string(op.name()) + " whose result is not the group's domain");
    int64_t axis = op.getInt("axis");
    if (axis != -1 && axis != int64_t(r) - 1)
      return noKernel(std::string(op.name()) + " over an axis other than the last");
    if (op.results.size() != 1)
      return noKernel("LayerNormalization with Mean/InvStdDev results");
    if (op.is(OpKind::LayerNormalization))
      for (size_t k = 1; k < op.operands.size(); ++k)
        if (const Value *p = op.operand(k);
            p && argIndex(p) == SIZE_MAX &&
            !(p->isConstant() && staticNumElements(p->type.shape) == 1))
          return noKernel("LayerNormalization parameters computed in the group");
    for (const auto &o : f_.ops) {
      if (o.get() == rowReduction_)
        break;
      for (const Value *v : o->results)
        prologue_[v] = true;
    }
    return true;
  }

  // Row statistics in double, as the reference kernels compute them; the
  // sums vectorize (TC_REDUCE_LOOP lets them be reassociated: a different
  // rounding of a double sum of floats, far inside any tolerance).
  void emitRowStats(std::ostringstream &os) {
    const Op &op = *rowReduction_;
    const char *T = ct(op.result()->type.dtype);
    if (op.is(OpKind::LayerNormalization)) {
      os << "    double mean = 0, var = 0;\n"
         << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) mean += acc[j];\n"
         << "    mean /= (double)inner;\n"
         << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) { const double d = acc[j] - "
            "mean; var += d * d; }\n"
         << "    var /= (double)inner;\n"
         << "    const double rstd = 1.0 / __builtin_sqrt(var + "
         << floatLiteral(op.getFloat("epsilon"), DType::F64) << ");\n";
      return;
    }
    os << "    double shift = -__builtin_inf(), sum = 0;\n"
       << "    for (int64_t j = 0; j < inner; ++j) if (acc[j] > shift) shift = acc[j];\n"
       << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) sum += tc_exp(acc[j] - (" << T
       << ")shift);\n";
    if (op.is(OpKind::LogSoftmax))
      os << "    const double logsum = __builtin_log(sum);\n";
  }

  // The value of a one-element f32/f64 constant.
  static std::optional<double> scalarConstant(const Value *v) {
    if (!v || !v->isConstant())
      return std::nullopt;
    if (v->type.dtype == DType::F32 && v->data->size == 4)
      return double(*v->data->as<float>());
    if (v->type.dtype == DType::F64 && v->data->size == 8)
      return *v->data->as<double>();
    return std::nullopt;
  }

  size_t argIndex(const Value *v) const {
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (f_.args[i] == v)
        return i;
    return SIZE_MAX;
  }
  std::string dim(const Value *v, size_t d) const {
    return "dims[" + std::to_string(dimAt_.at(v) + d) + "]";
  }

  // MatMul: A [..., M, K] x B [..., K, N] with broadcast batch dims; Gemm:
  // op(A) [M, K] x op(B) [K, N] (+ C in the epilogue). Both operands must be
  // group arguments of rank >= 2 (1-D MatMul falls back).
  bool checkMatmul() {
    const Value *a = anchor_->operand(0), *b = anchor_->operand(1);
    if (argIndex(a) == SIZE_MAX || argIndex(b) == SIZE_MAX)
      return noKernel(std::string(anchor_->name()) + " on values computed in the group");
    if (a->type.rank() < 2 || b->type.rank() < 2 || rank_ < 2)
      return noKernel(std::string(anchor_->name()) + " with a 1-D operand");
    if (a->type.dtype != DType::F32 && a->type.dtype != DType::F64)
      return noKernel(std::string(anchor_->name()) + " on " + a->type.str());
    if (anchor_->result() != f_.ops.front()->result() || anchor_->result()->type.shape != domain_)
      return noKernel("an epilogue that changes the matmul's shape");
    return true;
  }

  // A lone Transpose: each output row reads the input with the stride of
  // the axis that became the last one; any element type (bytes are moved).
  std::optional<EmittedKernel> emitTranspose(const Op &op) {
    const Value *x = op.operand(0), *y = op.result();
    if (f_.ops.size() != 1 || f_.results.size() != 1 || f_.results[0] != y ||
        argIndex(x) == SIZE_MAX)
      return reject("a Transpose with other ops in its group");
    const char *T = movedType(x->type.dtype);
    if (!T)
      return reject("a Transpose of " + x->type.str());
    size_t r = x->type.rank();
    std::vector<int64_t> perm = op.getInts("perm");
    if (perm.empty())
      for (size_t i = 0; i < r; ++i)
        perm.push_back(int64_t(r - 1 - i));
    if (r == 0 || perm.size() != r)
      return reject("a Transpose of rank 0");
    std::string symbol = "tc_" + f_.name;
    std::ostringstream os;
    os << "// group @" << f_.name << ": Transpose, perm";
    for (int64_t p : perm)
      os << " " << p;
    os << "\n";
    if (cuda())
      emitCudaHead(os, symbol, kPointwiseBlock);
    else
      os << "extern \"C\" void " << symbol
         << "(void *const *bufs, const int64_t *dims, int64_t begin, int64_t end) {\n";
    os << "  const " << T << " *__restrict in = (const " << T << " *)bufs[0];\n  " << T
       << " *__restrict out = (" << T << " *)bufs[1];\n";
    emitRowMajorStrides(os, "st", x);
    os << "  const int64_t inner = " << dim(y, r - 1) << ", step = st[" << perm[r - 1] << "];\n";
    // The input offset of a row's first element.
    auto rowBase = [&](const std::string &index) {
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    int64_t base = 0"
         << (cast.empty() ? ", rem = row;\n" : ";\n    " + index + " rem = row;\n");
      for (size_t d = r - 1; d-- > 0;)
        os << "    { const " << index << " c = rem % " << cast << dim(y, d) << "; rem /= " << cast
           << dim(y, d) << "; base += c * st[" << perm[d] << "]; }\n";
    };
    if (cuda()) { // one thread per output element
      os << "  const int64_t n = " << rowsExpr() << " * inner;\n" << kGridHead;
      // The last axis stays last (attention's head permutes): 16 bytes per
      // thread, so the row's divisions are paid once per 16 bytes, not per
      // element (they, not memory, bound the scalar loop: 0.13 ms for vit's
      // qkv permute at batch 32). Row starts are multiples of `inner`.
      size_t bytes = dtypeSize(x->type.dtype);
      if (perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16) {
        std::string V = std::to_string(16 / bytes),
                    vt = "tc_vec<" + std::string(T) + ", " + V + ">";
        os << "  if (inner % " << V << " == 0 && tc_aligned(in, 16) && tc_aligned(out, 16)) {\n"
           << "    const int64_t innerV = inner / " << V << ", nv = n / " << V << ";\n";
        for (std::string index : {"unsigned", "int64_t"}) { // 32-bit division where nv allows
          std::string c = index == "unsigned" ? "(unsigned)" : "";
          os << (index == "unsigned" ? "    if (nv <= 0x7fffffff) {\n" : "    } else {\n")
             << "    for (int64_t v = tid; v < nv; v += stride) {\n"
             << "    const int64_t row = " << c << "v / " << c
             << "innerV, jv = v - row * innerV;\n";
          rowBase(index);
          os << "    ((" << vt << " *)out)[v] = *(const " << vt << " *)(in + base + jv * " << V
             << ");\n    }\n";
        }
        os << "    }\n    return;\n  }\n";
      }
      emitGridLoops(os, "0", true, [&](const std::string &index) {
        rowBase(index);
        os << "    out[i] = in[base + j * step];\n";
      });
      os << "}\n";
    } else {
      os << "  for (int64_t row = begin; row < end; ++row) {\n";
      rowBase("int64_t");
      os << "    for (int64_t j = 0; j < inner; ++j) out[row * inner + j] = in[base + j * step];\n"
         << "  }\n}\n";
    }
    EmittedKernel k{f_.name, symbol, os.str()};
    k.block = cuda() ? kPointwiseBlock : 0;
    size_t bytes = dtypeSize(x->type.dtype);
    if (cuda() && perm[r - 1] == int64_t(r - 1) && bytes && bytes < 16)
      k.vec = unsigned(16 / bytes); // the grid the 16-byte path needs
    return k;
  }

  // A lone 2-D NCHW MaxPool (no indices) or AveragePool: row (n, c, oh),
  // ow inner (CPU: a loop over ow per row; CUDA: one thread per element).
  // Windows are clipped to the input (ceil_mode's last window too);
  // AveragePool divides by the valid count, or with count_include_pad by
  // the window's extent inside the padded input, as onnxruntime does.
  std::optional<EmittedKernel> emitPool(const Op &op) {
    const Value *x = op.operand(0), *y = op.result();
    bool avg = op.is(OpKind::AveragePool);
    if (f_.ops.size() != 1 || f_.results.size() != 1 || op.results.size() != 1 ||
        argIndex(x) == SIZE_MAX || x->type.rank() != 4 || op.getString("auto_pad") != "NOTSET")
      return reject("pooling other than a lone 2-D NCHW op with explicit pads");
    DType t = x->type.dtype;
    if (!isFloat(t) || !st(t))
      return reject("pooling on " + x->type.str());
    auto attr = [&](const char *name, size_t i, int64_t dflt) {
      const std::vector<int64_t> &v = op.getInts(name);
      return std::to_string(v.empty() ? dflt : v.at(i));
    };
    if (avg && (attr("dilations", 0, 1) != "1" || attr("dilations", 1, 1) != "1"))
      return reject("a dilated AveragePool");
    const char *S = st(t), *T = ct(t);
    std::string symbol = "tc_" + f_.name;
    std::ostringstream os;
    os << "// group @" << f_.name << ": " << op.name() << "\n";
    if (cuda())
      emitCudaHead(os, symbol, kPointwiseBlock);
    else
      os << "extern \"C\" void " << symbol
         << "(void *const *bufs, const int64_t *dims, int64_t begin, int64_t end) {\n";
    os << "  const " << S << " *__restrict X = (const " << S << " *)bufs[0];\n  " << S
       << " *__restrict Y = (" << S << " *)bufs[1];\n";
    os << "  const int64_t H = " << dim(x, 2) << ", W = " << dim(x, 3) << ", OH = " << dim(y, 2)
       << ", OW = " << dim(y, 3) << ";\n";
    os << "  const int64_t KH = " << op.getInts("kernel_shape").at(0)
       << ", KW = " << op.getInts("kernel_shape").at(1) << ", SH = " << attr("strides", 0, 1)
       << ", SW = " << attr("strides", 1, 1) << ", DH = " << attr("dilations", 0, 1)
       << ", DW = " << attr("dilations", 1, 1) << ", PH = " << attr("pads", 0, 0)
       << ", PW = " << attr("pads", 1, 0) << ", PHE = " << attr("pads", 2, 0)
       << ", PWE = " << attr("pads", 3, 0) << ";\n";
    std::ostringstream row, win; // per row (n, c, oh); per result element (ow)
    row << "    const int64_t oh = row % OH;\n"
        << "    const " << S << " *__restrict xp = X + (row / OH) * H * W;\n";
    win << "      const int64_t h0 = oh * SH - PH, w0 = ow * SW - PW;\n";
    std::string xhw = load(t, "xp[h * W + w]");
    if (avg) {
      win << "      int64_t h1 = h0 + KH, w1 = w0 + KW;\n"
          << "      if (h1 > H + PHE) h1 = H + PHE;\n      if (w1 > W + PWE) w1 = W + PWE;\n"
          << "      const int64_t padded = (h1 - h0) * (w1 - w0);\n"
          << "      const int64_t ha = h0 < 0 ? 0 : h0, wa = w0 < 0 ? 0 : w0;\n"
          << "      const int64_t hb = h1 > H ? H : h1, wb = w1 > W ? W : w1;\n"
          << "      " << T << " acc = 0;\n"
          << "      for (int64_t h = ha; h < hb; ++h)\n"
          << "        for (int64_t w = wa; w < wb; ++w) acc += " << xhw << ";\n"
          << "      const int64_t count = "
          << (op.getInt("count_include_pad") ? "padded" : "(hb - ha) * (wb - wa)") << ";\n"
          << "      Y[row * OW + ow] = "
          << store(t, "acc / " + std::string(T) + "(count > 0 ? count : 1)") << ";\n";
    } else {
      win << "      " << T << " acc = " << floatLiteral(-INFINITY, t, d_) << ";\n"
          << "      for (int64_t kh = 0; kh < KH; ++kh) {\n"
          << "        const int64_t h = h0 + kh * DH;\n        if (h < 0 || h >= H) continue;\n"
          << "        for (int64_t kw = 0; kw < KW; ++kw) {\n"
          << "          const int64_t w = w0 + kw * DW;\n          if (w < 0 || w >= W) continue;\n"
          << "          acc = tc_max(acc, " << xhw << ");\n        }\n      }\n"
          << "      Y[row * OW + ow] = " << store(t, "acc") << ";\n";
    }
    if (cuda()) {
      os << "  const int64_t inner = OW, n = " << dim(y, 0) << " * " << dim(y, 1) << " * OH * OW;\n"
         << kGridHead;
      emitGridLoops(os, "0", true, [&](const std::string &) {
        os << row.str() << "    const int64_t ow = j;\n    {\n" << win.str() << "    }\n";
      });
      os << "}\n";
    } else {
      os << "  for (int64_t row = begin; row < end; ++row) {\n"
         << row.str() << "    for (int64_t ow = 0; ow < OW; ++ow) {\n"
         << win.str() << "    }\n  }\n}\n";
    }
    EmittedKernel k{f_.name, symbol, os.str()};
    k.block = cuda() ? kPointwiseBlock : 0;
    k.halfTypes = cuda() && usesHalf();
    return k;
  }

  // 2-D convolution in ONNX's NCHW layout with explicit pads (auto_pad
  // NOTSET): X, W (and B) must be group arguments.
  bool checkConv() {
    const Op &c = *anchor_;
    const Value *x = c.operand(0), *w = c.operand(1), *b = c.operand(2);
    if (x->type.rank() != 4 || c.getInt("channels_last") || c.getString("auto_pad") != "NOTSET")
      return noKernel("Conv other than 2-D NCHW with explicit pads");
    if (x->type.dtype != DType::F32 && x->type.dtype != DType::F64)
      return noKernel("Conv on " + x->type.str());
    if (argIndex(x) == SIZE_MAX || argIndex(w) == SIZE_MAX ||
        (b && argIndex(b) == SIZE_MAX && staticNumElements(b->type.shape) != 1))
      return noKernel("Conv on values computed in the group");
    if (c.result()->type.shape != domain_)
      return noKernel("an epilogue that changes the conv's shape");
    return true;
  }

  void emitConvSetup(std::ostringstream &os) {
    const Op &c = *anchor_;
    const Value *x = c.operand(0), *w = c.operand(1), *y = f_.results[0];
    const char *T = ct(c.result()->type.dtype);
    auto attr = [&](const char *name, size_t i, int64_t dflt) {
      const std::vector<int64_t> &v = c.getInts(name);
      return std::to_string(v.empty() ? dflt : v.at(i));
    };
    os << "  const int64_t C = " << dim(x, 1) << ", H = " << dim(x, 2) << ", W = " << dim(x, 3)
       << ", M = " << dim(y, 1) << ", OH = " << dim(y, 2) << ", OW = " << dim(y, 3)
       << ", KH = " << dim(w, 2) << ", KW = " << dim(w, 3) << ";\n";
    os << "  const int64_t G = " << c.getInt("group") << ", CG = C / G, MG = M / G;\n";
    os << "  const int64_t SH = " << attr("strides", 0, 1) << ", SW = " << attr("strides", 1, 1)
       << ", DH = " << attr("dilations", 0, 1) << ", DW = " << attr("dilations", 1, 1)
       << ", PH = " << attr("pads", 0, 0) << ", PW = " << attr("pads", 1, 0) << ";\n";
    os << "  const " << T << " *__restrict X = in" << argIndex(x) << ";\n  const " << T
       << " *__restrict Wt = in" << argIndex(w) << ";\n";
    os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(" << T << ") * (OW ? OW : 1));\n";
  }

  // Row (n, m, oh) of the result: acc[ow] = sum over c, kh, kw; the ow loop
  // is contiguous in X for stride 1, so it vectorizes.
  void emitConvRow(std::ostringstream &os) {
    os << "    const int64_t oh = row % OH, m = (row / OH) % M, n = row / (OH * M), g = m / MG;\n"
       << "    for (int64_t j = 0; j < OW; ++j) acc[j] = 0;\n"
       << "    for (int64_t c = 0; c < CG; ++c) {\n"
       << "      for (int64_t kh = 0; kh < KH; ++kh) {\n"
       << "        const int64_t ih = oh * SH - PH + kh * DH;\n"
       << "        if (ih < 0 || ih >= H) continue;\n"
       << "        const auto *__restrict xrow = X + ((n * C + g * CG + c) * H + ih) * W;\n"
       << "        for (int64_t kw = 0; kw < KW; ++kw) {\n"
       << "          const auto wv = Wt[((m * CG + c) * KH + kh) * KW + kw];\n"
       << "          const int64_t off = kw * DW - PW;\n"
       << "          int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;\n"
       << "          int64_t hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / SW + 1;\n"
       << "          if (hi > OW) hi = OW;\n"
       << "          if (SW == 1)\n"
       << "            for (int64_t j = lo; j < hi; ++j) acc[j] += wv * xrow[j + off];\n"
       << "          else\n"
       << "            for (int64_t j = lo; j < hi; ++j) acc[j] += wv * xrow[j * SW + off];\n"
       << "        }\n      }\n    }\n";
  }

  // Per call: sizes, batch strides (MatMul) and one accumulator row.
  void emitMatmulSetup(std::ostringstream &os) {
    const Value *a = anchor_->operand(0), *b = anchor_->operand(1), *y = f_.results[0];
    size_t ia = argIndex(a), ib = argIndex(b), ra = a->type.rank(), rb = b->type.rank();
    const char *T = ct(anchor_->result()->type.dtype);
    bool gemm = anchor_->is(OpKind::Gemm);
    bool ta = gemm && anchor_->getInt("transA");
    os << "  const int64_t M = " << dim(y, rank_ - 2) << ", N = " << dim(y, rank_ - 1)
       << ", K = " << dim(a, ta ? ra - 2 : ra - 1) << ";\n";
    os << "  const " << T << " *__restrict A = in" << ia << ";\n  const " << T
       << " *__restrict B = in" << ib << ";\n";
    os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(" << T << ") * (N ? N : 1));\n";
    size_t batch = rank_ - 2;
    if (batch == 0)
      return;
    // Batch strides over the result's batch axes (0 where broadcast).
    for (auto [name, v, rk, block] : {std::tuple{"sa", a, ra, std::string("M * K")},
                                      std::tuple{"sb", b, rb, std::string("K * N")}}) {
      os << "  int64_t " << name << "[" << batch << "];\n  { int64_t s = " << block << ";\n";
      for (size_t d = batch; d-- > 0;) {
        size_t vb = rk - 2; // the operand's batch axes, aligned right
        if (d + vb < batch) {
          os << "    " << name << "[" << d << "] = 0;\n";
          continue;
        }
        std::string vd = dim(v, d + vb - batch);
        os << "    " << name << "[" << d << "] = " << vd << " == 1 && " << dim(y, d)
           << " != 1 ? 0 : s; s *= " << vd << ";\n";
      }
      os << "  }\n";
    }
  }

  // Row `row` of the result: acc[j] = sum_k A[i,k] * B[k,j].
  void emitMatmulRow(std::ostringstream &os) {
    const Value *y = f_.results[0];
    bool gemm = anchor_->is(OpKind::Gemm);
    bool ta = gemm && anchor_->getInt("transA"), tb = gemm && anchor_->getInt("transB");
    size_t batch = rank_ - 2;
    os << "    const int64_t i = row % M;\n    int64_t offA = 0, offB = 0;\n";
    if (batch) {
      os << "    { int64_t rem = row / M;\n";
      for (size_t d = batch; d-- > 0;)
        os << "      { const int64_t c = rem % " << dim(y, d) << "; rem /= " << dim(y, d)
           << "; offA += c * sa[" << d << "]; offB += c * sb[" << d << "]; }\n";
      os << "    }\n";
    }
    os << "    for (int64_t j = 0; j < N; ++j) acc[j] = 0;\n";
    os << "    for (int64_t k = 0; k < K; ++k) {\n";
    os << "      const auto av = A[offA + " << (ta ? "k * M + i" : "i * K + k") << "];\n";
    if (tb)
      os << "      for (int64_t j = 0; j < N; ++j) acc[j] += av * B[offB + j * K + k];\n";
    else
      os << "      const auto *__restrict brow = B + offB + k * N;\n"
         << "      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];\n";
    os << "    }\n";
  }

  // ---- CUDA: the loops around the shared per-element code ----------------
  static constexpr unsigned kPointwiseBlock = 256, kRowsBlock = 1024, kRowCache = 8;
  static constexpr const char *kGridHead =
      "  const int64_t stride = (int64_t)gridDim.x * blockDim.x,\n"
      "                tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n";

  // The parameter struct, the kernel's head and the CPU ABI's two names.
  void emitCudaHead(std::ostringstream &os, const std::string &symbol, unsigned block) {
    size_t nb = f_.args.size() + f_.results.size();
    os << "struct " << symbol << "_params { void *bufs[" << nb << "]; int64_t dims["
       << (numDims_ ? numDims_ : 1) << "]; };\n"
       << info(d_).kernelHead << "__launch_bounds__(" << block << ") " << symbol << "(const "
       << "__grid_constant__ " << symbol << "_params p) {\n"
       << "  void *const *bufs = p.bufs;\n  const int64_t *dims = p.dims;\n";
  }

  // The grid-stride loop over elements [begin, n) of the domain. With
  // `divides` the element's row and j are needed: the loop is emitted twice,
  // dividing in 32 bits where n allows (a 64-bit division is far slower).
  void emitGridLoops(std::ostringstream &os, const std::string &begin, bool divides,
                     const std::function<void(const std::string &index)> &body) {
    auto loop = [&](const std::string &index) {
      os << "  for (int64_t i = " << begin << " + tid; i < n; i += stride) {\n";
      if (divides) {
        std::string cast = index == "int64_t" ? "" : "(" + index + ")";
        os << "    const int64_t row = " << cast << "i / " << cast
           << "inner, j = i - row * inner;\n";
      }
      body(index);
      os << "  }\n";
    };
    if (!divides)
      return loop("int64_t");
    os << "  if (n <= 0x7fffffff) {\n";
    loop("unsigned");
    os << "  } else {\n";
    loop("int64_t");
    os << "  }\n";
  }

  // The number of rows of the domain (all dims of result 0 but the last).
  std::string rowsExpr() const {
    std::string e;
    for (size_t d = 0; d + 1 < rank_; ++d)
      e += (e.empty() ? "" : " * ") + dim(f_.results[0], d);
    return e.empty() ? "(int64_t)1" : e;
  }

  // The kernel's symbol, and the comment line naming its group and domain.
  std::string head(std::string &symbol) {
    symbol = "tc_" + f_.name;
    return "// group @" + f_.name + ": domain " + TensorType{DType::F32, domain_}.str().substr(3) +
           "\n";
  }

  // One thread per element, grid-stride. Without broadcast operands, a
  // 16-byte vectorized path (every contiguous tensor read and written
  // `vec` elements at a time) runs while all pointers are aligned, the
  // scalar loop takes the tail. Broadcast operands need the element's row:
  // its division runs in 32 bits when n allows.
  std::optional<EmittedKernel> emitCudaPointwise(const std::string &body) {
    std::string symbol;
    std::ostringstream os;
    os << head(symbol);
    emitCudaHead(os, symbol, kPointwiseBlock);
    emitPointers(os);
    bool anyBroadcast = readsBroadcast();
    // Read a vector at a time: contiguous arguments, and trailing broadcasts
    // (a bias) at i % size; any other broadcast leaves only the scalar loop.
    auto vectorRead = [&](size_t i) {
      return elementwise_.count(i) && (access(i) == Access::Contiguous || trailing(i));
    };
    bool vectorizable = true;
    for (size_t i = 0; i < f_.args.size(); ++i)
      vectorizable &= !(elementwise_.count(i) && access(i) == Access::Broadcast && !trailing(i));
    size_t widest = 1;
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (vectorRead(i))
        widest = std::max(widest, dtypeSize(f_.args[i]->type.dtype));
    for (const Value *r : f_.results)
      widest = std::max(widest, dtypeSize(r->type.dtype));
    unsigned vec = vectorizable ? unsigned(16 / widest) : 1;
    if (anyBroadcast)
      emitStrides(os);
    os << "  const int64_t n = " << rowsExpr() << " * inner;\n" << kGridHead;
    std::string vecEnd = "0";
    if (vec > 1) {
      // The type of `vec` elements of type t moved as one access.
      auto vt = [&](DType t) {
        return "tc_vec<" + std::string(st(t)) + ", " + std::to_string(vec) + ">";
      };
      std::string aligned;
      auto check = [&](const std::string &ptr, DType t) {
        aligned +=
            (aligned.empty() ? "" : " && ") + ("tc_aligned(" + ptr + ", sizeof(" + vt(t) + "))");
      };
      for (size_t i = 0; i < f_.args.size(); ++i)
        if (vectorRead(i)) {
          check("in" + std::to_string(i), f_.args[i]->type.dtype);
          if (trailing(i)) {
            os << "  const int64_t size" << i << " = " << sizeOf(i) << ";\n";
            aligned += " && size" + std::to_string(i) + " % " + std::to_string(vec) + " == 0";
          }
        }
      for (size_t i = 0; i < f_.results.size(); ++i)
        check("out" + std::to_string(i), f_.results[i]->type.dtype);
      os << "  const int64_t nv = " << aligned << " ? n / " << vec << " : 0;\n";
      os << "  for (int64_t v = tid; v < nv; v += stride) {\n"
         << "    const int64_t i = v * " << vec << ";\n";
      for (size_t i = 0; i < f_.args.size(); ++i)
        if (vectorRead(i))
          os << "    const " << vt(f_.args[i]->type.dtype) << " v" << i << " = *(const "
             << vt(f_.args[i]->type.dtype) << " *)(in" << i << " + i"
             << (trailing(i) ? " % size" + std::to_string(i) : std::string()) << ");\n";
      for (size_t i = 0; i < f_.results.size(); ++i)
        os << "    " << vt(f_.results[i]->type.dtype) << " w" << i << ";\n";
      os << "#pragma unroll\n    for (int k = 0; k < " << vec << "; ++k) {\n";
      for (size_t i = 0; i < f_.args.size(); ++i)
        if (elementwise_.count(i)) {
          DType t = f_.args[i]->type.dtype;
          std::string ref =
              vectorRead(i) ? "v" + std::to_string(i) + ".v[k]" : "in" + std::to_string(i) + "[0]";
          os << "      const " << ct(t) << " a" << i << " = " << load(t, ref) << ";\n";
        }
      os << body;
      for (size_t i = 0; i < f_.results.size(); ++i)
        os << "      w" << i
           << ".v[k] = " << store(f_.results[i]->type.dtype, names_.at(f_.results[i])) << ";\n";
      os << "    }\n";
      for (size_t i = 0; i < f_.results.size(); ++i)
        os << "    *(" << vt(f_.results[i]->type.dtype) << " *)(out" << i << " + i) = w" << i
           << ";\n";
      os << "  }\n";
      vecEnd = "nv * " + std::to_string(vec);
    }
    // The scalar loop: its body once per index type when rows are divided.
    std::ostringstream scalar;
    emitLoads(scalar, "i");
    scalar << body;
    emitStores(scalar, "i", /*prologue=*/false);
    emitGridLoops(os, vecEnd, anyBroadcast, [&](const std::string &index) {
      if (anyBroadcast)
        emitRowBases(os, index);
      os << scalar.str();
    });
    os << "}\n";
    EmittedKernel k{f_.name, symbol, os.str()};
    k.block = kPointwiseBlock;
    k.vec = vec;
    k.halfTypes = usesHalf();
    return k;
  }

  // One block per row: pass 1 computes the prologue and keeps the reduced
  // input (up to kRowCache elements per thread in registers; longer rows
  // recompute the rest from memory), block reductions give the statistics
  // in float (double for f64), the last pass runs the epilogue.
  std::optional<EmittedKernel> emitCudaRows(const std::string &pro, const std::string &body) {
    const Op &op = *rowReduction_;
    const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
    bool layerNorm = op.is(OpKind::LayerNormalization);
    // The epilogue reads a prologue value other than through the reduction:
    // the last pass recomputes the prologue.
    bool rerunPrologue = false;
    bool after = false;
    for (const auto &o : f_.ops) {
      if (after)
        for (const Value *v : o->operands)
          rerunPrologue |= v && prologueValue(v);
      after |= o.get() == rowReduction_;
    }
    std::string symbol;
    std::ostringstream os;
    os << head(symbol);
    emitCudaHead(os, symbol, kRowsBlock);
    emitPointers(os);
    bool anyBroadcast = readsBroadcast();
    if (anyBroadcast)
      emitStrides(os);
    std::string K = std::to_string(kRowCache);
    os << "  const int64_t rows = " << rowsExpr() << ";\n"
       << "  __shared__ " << A << " tc_red[32];\n"
       << "  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {\n";
    if (anyBroadcast)
      emitRowBases(os);
    os << "    " << A << " cache[" << K << "];\n";
    // A pass over the row: `stmt` per element with x its reduced input.
    auto pass = [&](const std::string &stmt, bool first, bool last) {
      std::ostringstream el; // the element's x, recomputed from memory
      emitLoads(el);
      el << pro << "      const " << A << " x = " << reducedInput_ << ";\n";
      if (first)
        emitStores(el, "row * inner + j", /*prologue=*/true);
      std::ostringstream lastLoads;
      if (last) {
        emitLoads(lastLoads);
        if (rerunPrologue)
          lastLoads << pro;
      }
      os << "#pragma unroll\n    for (int k = 0; k < " << K << "; ++k) {\n"
         << "      const int64_t j = threadIdx.x + (int64_t)k * blockDim.x;\n"
         << "      if (j >= inner) break;\n";
      if (first)
        os << el.str() << "      cache[k] = x;\n";
      else
        os << lastLoads.str() << "      const " << A << " x = cache[k];\n";
      os << stmt << "    }\n";
      os << "    for (int64_t j = threadIdx.x + " << K << " * (int64_t)blockDim.x; j < inner; j += "
         << "blockDim.x) {\n"
         << el.str() << stmt << "    }\n";
    };
    std::ostringstream epilogue;
    epilogue << body;
    emitStores(epilogue, "row * inner + j", /*prologue=*/false);
    if (layerNorm) {
      os << "    " << A << " mean = 0;\n";
      pass("      mean += x;\n", true, false);
      os << "    mean = tc_block_sum(mean, tc_red) / (" << A << ")inner;\n"
         << "    " << A << " var = 0;\n";
      pass("      var += (x - mean) * (x - mean);\n", false, false);
      os << "    var = tc_block_sum(var, tc_red) / (" << A << ")inner;\n"
         << "    const " << A << " rstd = " << A << "(1) / tc_sqrt(var + "
         << floatLiteral(op.getFloat("epsilon"),
                         op.result()->type.dtype == DType::F64 ? DType::F64 : DType::F32, d_)
         << ");\n";
    } else {
      os << "    " << A << " shift = -" << info(d_).inf << ";\n";
      pass("      shift = tc_fmax(shift, x);\n", true, false);
      os << "    shift = tc_block_max(shift, tc_red);\n    " << A << " sum = 0;\n";
      pass("      sum += tc_exp(x - shift);\n", false, false);
      os << "    sum = tc_block_sum(sum, tc_red);\n";
      if (op.is(OpKind::LogSoftmax))
        os << "    const " << A << " logsum = tc_log(sum);\n";
    }
    pass(epilogue.str(), false, true);
    os << "  }\n}\n";
    EmittedKernel k{f_.name, symbol, os.str()};
    k.launch = LaunchKind::Rows;
    k.block = kRowsBlock;
    k.vec = kRowCache;
    k.halfTypes = usesHalf();
    return k;
  }

  // ---- CUDA: Reduce* and global pools -------------------------------------
  // The group: a prologue over the reduction's input (pointwise, reading
  // arguments of the input's shape or scalars), the reduction, an epilogue
  // over its result. Reduced axes that are the trailing ones make rows (one
  // block per result element, a block reduction); any other set is a loop
  // per result element (threads of a warp read neighbouring elements).
  bool checkReduce() {
    const Op &op = *reduce_;
    const Value *x = op.operand(0);
    size_t r = x->type.rank();
    if (op.operands.size() > 1 && op.operand(1))
      return noKernel(std::string(op.name()) + " with run-time axes");
    if (op.result()->type.shape != domain_)
      return noKernel("an epilogue that changes the reduction's shape");
    bool global = op.is(OpKind::GlobalAveragePool) || op.is(OpKind::GlobalMaxPool);
    reducedAxes_.assign(r, !global && op.getInts("axes").empty());
    if (global)
      for (size_t d = 2; d < r; ++d)
        reducedAxes_[d] = true;
    else
      for (int64_t a : op.getInts("axes")) {
        if (a < -int64_t(r) || a >= int64_t(r))
          return noKernel(std::string(op.name()) + " over an axis out of range");
        reducedAxes_[size_t(a < 0 ? a + int64_t(r) : a)] = true;
      }
    bool after = false;
    for (const auto &o : f_.ops) {
      if (o.get() == reduce_) {
        after = true;
        if (size_t i = argIndex(x); i != SIZE_MAX)
          proArgs_.push_back(i);
        continue;
      }
      const Shape &own = after ? domain_ : x->type.shape;
      if (o->result()->type.shape != own)
        return noKernel("an op over neither the reduction's input nor its result");
      for (const Value *v : o->operands)
        if (size_t i = argIndex(v); i != SIZE_MAX) {
          auto n = staticNumElements(v->type.shape);
          if (v->type.shape != own && !(n && *n == 1))
            return noKernel("a broadcast operand around a reduction");
          (after ? epiArgs_ : proArgs_).push_back(i);
        }
    }
    for (size_t i = 0; i < f_.args.size() && !inputDims_; ++i)
      if (f_.args[i]->type.shape == x->type.shape)
        inputDims_ = f_.args[i];
    if (!inputDims_)
      return noKernel(std::string(op.name()) + " whose input's dims no argument has");
    return true;
  }

  // `a<i> = in<i>[at]` for the given arguments (scalars: [0]).
  void emitArgLoads(std::ostringstream &os, std::vector<size_t> args, const std::string &at) {
    std::sort(args.begin(), args.end());
    args.erase(std::unique(args.begin(), args.end()), args.end());
    for (size_t i : args) {
      DType t = f_.args[i]->type.dtype;
      auto n = staticNumElements(f_.args[i]->type.shape);
      std::string ref = "in" + std::to_string(i) + "[" + (n && *n == 1 ? "0" : at) + "]";
      os << "      const " << ct(t) << " a" << i << " = " << load(t, ref) << ";\n";
    }
  }

  std::optional<EmittedKernel> emitCudaReduce(const std::string &pro, const std::string &body) {
    const Reduction red = *reduction(*reduce_);
    const Value *x = inputDims_;
    size_t r = x->type.rank();
    const char *A = reduce_->result()->type.dtype == DType::F64 ? "double" : "float";
    size_t firstReduced = r;
    while (firstReduced > 0 && reducedAxes_[firstReduced - 1])
      --firstReduced;
    bool rows =
        std::count(reducedAxes_.begin(), reducedAxes_.end(), true) == long(r - firstReduced);
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
    std::string symbol;
    std::ostringstream os;
    os << head(symbol);
    emitCudaHead(os, symbol, rows ? block : kPointwiseBlock);
    emitPointers(os);
    std::string L, nOut;
    for (size_t d = 0; d < r; ++d)
      if (reducedAxes_[d])
        L += (L.empty() ? "" : " * ") + dim(x, d);
    for (size_t d = 0; d < rank_; ++d)
      nOut += (nOut.empty() ? "" : " * ") + dim(f_.results[0], d);
    std::string init = red.init == std::string("-inf")  ? "-" + std::string(info(d_).inf)
                       : red.init == std::string("inf") ? info(d_).inf
                                                        : red.init;
    os << "  const int64_t L = " << (L.empty() ? "1" : L)
       << ", nOut = " << (nOut.empty() ? "1" : nOut) << ";\n";
    // One input element into `acc`: the prologue's loads and ops at `i`.
    std::ostringstream element;
    emitArgLoads(element, proArgs_, "i");
    element << pro << "      const " << A << " x = " << reducedInput_ << ";\n"
            << "      acc = " << red.combine << "()(acc, (" << A << ")(" << red.term << "));\n";
    // The result element `o`: finished, the epilogue, stored.
    std::ostringstream finish;
    finish << "      const " << A << " r = " << red.finish << ";\n";
    emitArgLoads(finish, epiArgs_, "o");
    finish << body;
    emitStores(finish, "o", /*prologue=*/false);
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
      emitRowMajorStrides(os, "xst", x);
      os << kGridHead << "  for (int64_t o = tid; o < nOut; o += stride) {\n"
         << "    int64_t base = 0, rem = o;\n";
      for (size_t d = r; d-- > 0;)
        if (!reducedAxes_[d])
          os << "    base += rem % " << dim(x, d) << " * xst[" << d << "]; rem /= " << dim(x, d)
             << ";\n";
      os << "    " << A << " acc = " << init << ";\n";
      std::string i = "base";
      for (size_t d = 0; d < r; ++d)
        if (reducedAxes_[d]) {
          os << "    for (int64_t r" << d << " = 0; r" << d << " < " << dim(x, d) << "; ++r" << d
             << ")\n";
          i += " + r" + std::to_string(d) + " * xst[" + std::to_string(d) + "]";
        }
      os << "    {\n      const int64_t i = " << i << ";\n"
         << element.str() << "    }\n    {\n"
         << finish.str() << "    }\n  }\n}\n";
    }
    EmittedKernel k{f_.name, symbol, os.str()};
    k.launch = rows ? LaunchKind::Reduce : LaunchKind::Pointwise;
    k.block = rows ? block : kPointwiseBlock;
    k.halfTypes = usesHalf();
    return k;
  }

  // ---- CUDA: data movement --------------------------------------------------
  // A lone Gather, Concat, Slice, Split, Expand, Pad or Tile (the CPU copies
  // them at run time): one thread per result element, which computes where
  // in the input its element is. Gather, Concat and Split see tensors as
  // [outer, axis, inner]; the others map each result coordinate.
  std::optional<EmittedKernel> emitMove(const Op &op) {
    if (!cuda())
      return reject(std::string(op.name()) + " is a run-time copy on CPU");
    const Value *x = op.operand(0);
    const char *T = movedType(x->type.dtype);
    size_t inputs = op.is(OpKind::Concat) ? op.operands.size() : 1;
    if (f_.ops.size() != 1 || !T)
      return reject(std::string(op.name()) + " of " + x->type.str() + " with other ops");
    for (size_t k = 0; k < inputs; ++k)
      if (argIndex(op.operand(k)) == SIZE_MAX)
        return reject(std::string(op.name()) + " of a constant");
    std::string symbol = "tc_" + f_.name;
    std::ostringstream os;
    os << "// group @" << f_.name << ": " << op.name() << "\n";
    emitCudaHead(os, symbol, kPointwiseBlock);
    std::vector<bool> declared(f_.args.size()); // Concat(a, b, a) reads a twice
    for (size_t k = 0; k < inputs; ++k)
      if (size_t i = argIndex(op.operand(k)); !declared[i]) {
        declared[i] = true;
        os << "  const " << T << " *__restrict in" << i << " = (const " << T << " *)bufs[" << i
           << "];\n";
      }
    for (size_t k = 0; k < f_.results.size(); ++k)
      os << "  " << T << " *__restrict out" << k << " = (" << T << " *)bufs[" << f_.args.size() + k
         << "];\n";
    os << kGridHead;
    const Value *y = op.result();
    size_t r = y->type.rank(), rx = x->type.rank();
    if (!op.is(OpKind::Split) && f_.results[0] != y)
      return reject("a data-movement group whose result is not its op's");
    auto product = [&](const Value *v, size_t from, size_t to) {
      std::string e;
      for (size_t d = from; d < to; ++d)
        e += (e.empty() ? "" : " * ") + dim(v, d);
      return e.empty() ? std::string("(int64_t)1") : e;
    };
    int64_t axis = 0;
    if (op.is(OpKind::Gather) || op.is(OpKind::Concat) || op.is(OpKind::Split)) {
      axis = op.getInt("axis");
      axis += axis < 0 ? int64_t(rx) : 0;
      if (axis < 0 || axis >= int64_t(rx))
        return reject(std::string(op.name()) + " over an axis out of range");
    }
    size_t a = size_t(axis);
    // The data: not always argument 0 (a small constant moves to the end).
    std::string X = "in" + std::to_string(argIndex(x));
    // [outer, axis, inner]: `row` (= i / inner) splits into o and c.
    auto split = [&](const std::string &index, const std::string &D) {
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    const int64_t o = " << cast << "row / " << cast << "(" << D << "), c = row - o * ("
         << D << ");\n";
    };
    if (op.is(OpKind::Concat)) {
      os << "  const int64_t inner = " << product(y, a + 1, r) << ", n = " << product(y, 0, r)
         << ";\n";
      emitGridLoops(os, "0", true, [&](const std::string &index) {
        split(index, dim(y, a));
        os << "    int64_t at = c;\n";
        for (size_t k = 0; k < inputs; ++k) {
          std::string D = dim(op.operand(k), a), copy = "out0[i] = in" +
                                                        std::to_string(argIndex(op.operand(k))) +
                                                        "[(o * " + D + " + at) * inner + j];";
          if (k + 1 == inputs)
            os << "    " << copy << "\n";
          else
            os << "    if (at < " << D << ") { " << copy << " continue; }\n    at -= " << D
               << ";\n";
        }
      });
    } else if (op.is(OpKind::Split)) {
      os << "  const int64_t inner = " << product(x, a + 1, rx) << ";\n";
      std::string offset = "0";
      for (const Value *part : op.results) {
        size_t k = std::find(f_.results.begin(), f_.results.end(), part) - f_.results.begin();
        if (k < f_.results.size()) { // results nobody reads are not written
          os << "  {\n  const int64_t n = " << product(part, 0, r) << ", off = " << offset << ";\n";
          emitGridLoops(os, "0", true, [&](const std::string &index) {
            split(index, dim(part, a));
            os << "    out" << k << "[i] = " << X << "[(o * " << dim(x, a)
               << " + off + c) * inner + j];\n";
          });
          os << "  }\n";
        }
        if (k < f_.results.size())
          offset += " + " + dim(part, a);
        else if (part->type.shape[a].isStatic())
          offset += " + " + std::to_string(part->type.shape[a].size);
        else
          return reject("a Split with an unread part of unknown size");
      }
    } else if (op.is(OpKind::Gather)) {
      const Value *ind = op.operand(1);
      std::optional<std::vector<int64_t>> fixed = constantInts(ind);
      const char *I = ind->type.dtype == DType::I64   ? "int64_t"
                      : ind->type.dtype == DType::I32 ? "int"
                                                      : nullptr;
      if (!I || (argIndex(ind) == SIZE_MAX && !(fixed && fixed->size() == 1)))
        return reject("a Gather whose indices are not an i32/i64 argument or scalar");
      if (!fixed)
        os << "  const " << I << " *__restrict idx = (const " << I << " *)bufs[" << argIndex(ind)
           << "];\n";
      std::string count = fixed ? "(int64_t)1" : product(ind, 0, ind->type.rank());
      os << "  const int64_t inner = " << product(x, a + 1, rx) << ", D = " << dim(x, a)
         << ", n = " << product(y, 0, r) << ";\n";
      emitGridLoops(os, "0", true, [&](const std::string &index) {
        split(index, count);
        os << "    int64_t k = " << (fixed ? std::to_string(fixed->at(0)) : "idx[c]") << ";\n"
           << "    if (k < 0) k += D;\n"
           // A bad index is a launch failure (at the next synchronize), not a
           // read out of bounds; the host shim's __trap records and returns.
           << "    if (k < 0 || k >= D) { __trap(); continue; }\n"
           << "    out0[i] = " << X << "[(o * D + k) * inner + j];\n";
      });
    } else if (!emitCoordinateMove(os, op, x, y, T)) {
      return std::nullopt;
    }
    os << "}\n";
    EmittedKernel k{f_.name, symbol, os.str()};
    k.block = kPointwiseBlock;
    return k;
  }

  // `name`[d]: the row-major strides of `v`, from its run-time dims.
  void emitRowMajorStrides(std::ostringstream &os, const std::string &name, const Value *v) {
    size_t r = v->type.rank();
    os << "  int64_t " << name << "[" << std::max<size_t>(r, 1) << "];\n  { int64_t s = 1;\n";
    for (size_t d = r; d-- > 0;)
      os << "    " << name << "[" << d << "] = s; s *= " << dim(v, d) << ";\n";
    os << "  }\n";
  }

  // The integers of constant `v` (i32/i64), if it is one.
  static std::optional<std::vector<int64_t>> constantInts(const Value *v) {
    if (!v || !v->isConstant() || (v->type.dtype != DType::I64 && v->type.dtype != DType::I32))
      return std::nullopt;
    std::vector<int64_t> out;
    bool wide = v->type.dtype == DType::I64;
    for (size_t i = 0; i < v->data->size / (wide ? 8 : 4); ++i)
      out.push_back(wide ? v->data->as<int64_t>()[i] : v->data->as<int32_t>()[i]);
    return out;
  }

  // Slice, Expand, Tile, Pad: each result coordinate c of axis d gives the
  // input coordinate, summed into `src` with the input's strides.
  bool emitCoordinateMove(std::ostringstream &os, const Op &op, const Value *x, const Value *y,
                          const char *T) {
    size_t r = y->type.rank(), rx = x->type.rank();
    if (r == 0 || rx > r || (!op.is(OpKind::Expand) && rx != r))
      return noKernel(std::string(op.name()) + " of rank 0");
    std::vector<std::string> coord(r); // statements adding axis d's part to src
    for (size_t d = 0; d < r; ++d)
      if (d + rx >= r) {
        size_t xd = d + rx - r;
        coord[d] = "src += c * xst[" + std::to_string(xd) + "];";
        if (op.is(OpKind::Expand))
          coord[d] = "src += (" + dim(x, xd) + " == 1 ? 0 : c) * xst[" + std::to_string(xd) + "];";
        if (op.is(OpKind::Tile))
          coord[d] = "src += c % " + dim(x, xd) + " * xst[" + std::to_string(xd) + "];";
      }
    emitRowMajorStrides(os, "xst", x);
    std::string value; // Pad's constant: the fill's bits
    if (op.is(OpKind::Slice)) {
      auto starts = constantInts(op.operand(1));
      auto axes = op.operands.size() > 3 && op.operand(3) ? constantInts(op.operand(3))
                                                          : std::optional<std::vector<int64_t>>();
      auto steps = op.operands.size() > 4 && op.operand(4) ? constantInts(op.operand(4))
                                                           : std::optional<std::vector<int64_t>>();
      if (!starts || (op.operands.size() > 3 && op.operand(3) && !axes) ||
          (op.operands.size() > 4 && op.operand(4) && !steps))
        return noKernel("a Slice whose starts, axes or steps are computed at run time");
      for (size_t k = 0; k < starts->size(); ++k) {
        int64_t ax = axes ? axes->at(k) : int64_t(k), step = steps ? steps->at(k) : 1;
        ax += ax < 0 ? int64_t(r) : 0;
        if (ax < 0 || ax >= int64_t(r) || step == 0)
          return noKernel("a Slice over an axis out of range or with step 0");
        // ONNX's clamping: [0, D] walking forwards, [0, D - 1] backwards.
        std::string s = "s" + std::to_string(ax), D = dim(x, size_t(ax));
        // (Starts beyond +-2^62 clamp the same: no dim is that large.)
        int64_t start = std::clamp<int64_t>(starts->at(k), -(int64_t(1) << 62), int64_t(1) << 62);
        os << "  int64_t " << s << " = " << start << "LL;\n  " << s << " = " << s << " < 0 ? " << s
           << " + " << D << " : " << s << ";\n  " << s << " = " << s << " < 0 ? 0 : " << s << " > "
           << D << (step < 0 ? " - 1" : "") << " ? " << D << (step < 0 ? " - 1" : "") << " : " << s
           << ";\n";
        coord[size_t(ax)] = "src += (" + s + " + c * " + std::to_string(step) + "LL) * xst[" +
                            std::to_string(ax) + "];";
      }
    } else if (op.is(OpKind::Pad)) {
      const std::vector<int64_t> &pads = op.getInts("pads");
      std::string mode = op.getString("mode");
      if (pads.size() != 2 * r || (op.operands.size() > 1 && op.operand(1)))
        return noKernel("a Pad with run-time pads");
      double v = op.getFloat("value");
      if (op.operands.size() > 2 && op.operand(2)) {
        std::optional<double> c = scalarConstant(op.operand(2));
        if (!c)
          return noKernel("a Pad with a run-time value");
        v = *c;
      }
      DType t = x->type.dtype;
      uint64_t bits = 0;
      if (t == DType::F32) {
        float f = float(v);
        std::memcpy(&bits, &f, 4);
      } else if (t == DType::F64) {
        std::memcpy(&bits, &v, 8);
      } else if (t == DType::F16) {
        bits = floatToHalf(float(v));
      } else if (t == DType::BF16) {
        bits = floatToBf16(float(v));
      } else {
        bits = v != 0;
      }
      value = "(" + std::string(T) + ")" + std::to_string(bits) + "ULL";
      for (size_t d = 0; d < r; ++d) {
        std::string D = dim(x, d);
        std::string fix = mode == "edge" ? "p = p < 0 ? 0 : p >= " + D + " ? " + D + " - 1 : p; "
                          : mode == "reflect" ? "p = p < 0 ? -p : p; p = p >= " + D + " ? 2 * (" +
                                                    D + " - 1) - p : p; "
                          : mode == "wrap" ? "p = (p % " + D + " + " + D + ") % " + D + "; "
                                           : "inside &= p >= 0 && p < " + D + "; ";
        coord[d] = "int64_t p = c - " + std::to_string(pads[d]) + "LL; " + fix + "src += p * xst[" +
                   std::to_string(d) + "];";
      }
    }
    os << "  const int64_t inner = " << dim(y, r - 1) << ", n = " << rowsExpr() << " * inner;\n";
    emitGridLoops(os, "0", true, [&](const std::string &index) {
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    int64_t src = 0;\n" << (value.empty() ? "" : "    bool inside = true;\n");
      if (r > 1)
        os << "    " << index << " rem = row;\n";
      for (size_t d = r - 1; d-- > 0;)
        os << "    { const int64_t c = (int64_t)(rem % " << cast << dim(y, d)
           << "); rem /= " << cast << dim(y, d) << "; " << coord[d] << " }\n";
      os << "    { const int64_t c = j; " << coord[r - 1] << " }\n";
      std::string X = "in" + std::to_string(argIndex(x)) + "[src]";
      os << "    out0[i] = " << (value.empty() ? X : "inside ? " + X + " : " + value) << ";\n";
    });
    return true;
  }

  bool usesHalf() const {
    for (const Value *v : f_.args)
      if (isHalf(v->type.dtype))
        return true;
    for (const auto &op : f_.ops)
      for (const Value *v : op->results)
        if (isHalf(v->type.dtype))
          return true;
    return false;
  }

  std::nullopt_t reject(const std::string &what) {
    noKernel(what);
    return std::nullopt;
  }
  // Records why the group gets no kernel; false stops emitting.
  bool noKernel(const std::string &what) {
    why_ = "@" + f_.name + ": " + what;
    return false;
  }

  // Some argument is read per element through broadcast strides.
  bool readsBroadcast() const {
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (elementwise_.count(i) && access(i) == Access::Broadcast)
        return true;
    return false;
  }

  Access access(size_t arg) const {
    const Shape &s = f_.args[arg]->type.shape;
    if (s == domain_)
      return Access::Contiguous;
    auto n = staticNumElements(s);
    if (n && *n == 1)
      return Access::Scalar;
    return Access::Broadcast;
  }

  // A broadcast argument that is the domain's trailing axes (a bias over
  // the last axis, leading 1s dropped): element i reads it at i % size, so
  // `vec` consecutive elements read `vec` consecutive ones when its size is
  // a multiple of `vec`.
  bool trailing(size_t arg) const {
    if (access(arg) != Access::Broadcast)
      return false;
    const Shape &s = f_.args[arg]->type.shape;
    size_t lead = 0;
    while (lead < s.size() && s[lead].isStatic() && s[lead].size == 1)
      ++lead;
    size_t k = s.size() - lead;
    if (k == 0 || k > domain_.size())
      return false;
    for (size_t d = 0; d < k; ++d) // '?' == '?' proves nothing
      if (s[lead + d].isUnknown() || !(s[lead + d] == domain_[domain_.size() - k + d]))
        return false;
    return true;
  }

  // The element count of argument `arg` (a dims[] product).
  std::string sizeOf(size_t arg) const {
    const Value *v = f_.args[arg];
    std::string e = "(int64_t)1";
    for (size_t d = 0; d < v->type.rank(); ++d)
      e += " * " + dim(v, d);
    return e;
  }

  // Row-major strides of each broadcast argument aligned to the domain's
  // axes (numpy: trailing axes line up), 0 where it has size 1 or no axis.
  void emitStrides(std::ostringstream &os) {
    size_t r0 = dimAt_.at(f_.results[0]);
    for (size_t i = 0; i < f_.args.size(); ++i) {
      if (access(i) != Access::Broadcast)
        continue;
      size_t rk = f_.args[i]->type.rank(), at = dimAt_.at(f_.args[i]);
      os << "  int64_t st" << i << "[" << (rank_ ? rank_ : 1) << "];\n";
      os << "  { int64_t s = 1;\n";
      for (size_t d = rank_; d-- > 0;) {
        if (d + rk < rank_) {
          os << "    st" << i << "[" << d << "] = 0;\n";
          continue;
        }
        std::string dim = "dims[" + std::to_string(at + d + rk - rank_) + "]";
        os << "    st" << i << "[" << d << "] = " << dim << " == 1 && dims[" << r0 + d
           << "] != 1 ? 0 : s; s *= " << dim << ";\n";
      }
      os << "  }\n";
      os << "  const int64_t step" << i << " = st" << i << "[" << (rank_ ? rank_ - 1 : 0) << "];\n";
    }
  }

  // `index`: the type the row is divided in (CUDA: 32 bits where n allows).
  void emitRowBases(std::ostringstream &os, const std::string &index = "int64_t") {
    size_t r0 = dimAt_.at(f_.results[0]);
    std::string cast = index == "int64_t" ? "" : "(" + index + ")";
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (access(i) == Access::Broadcast)
        os << "    int64_t base" << i << " = 0;\n";
    if (rank_ >= 2) {
      os << "    { " << index << " rem = row;\n";
      for (size_t d = rank_ - 1; d-- > 0;) {
        os << "      { const " << index << " c = rem % " << cast << "dims[" << r0 + d
           << "]; rem /= " << cast << "dims[" << r0 + d << "];";
        for (size_t i = 0; i < f_.args.size(); ++i)
          if (access(i) == Access::Broadcast)
            os << " base" << i << " += c * st" << i << "[" << d << "];";
        os << " }\n";
      }
      os << "    }\n";
    }
  }

  std::string temp() { return "t" + std::to_string(nextTemp_++); }

  std::optional<std::string> operandExpr(const Value *v) {
    if (auto it = names_.find(v); it != names_.end())
      return it->second;
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (f_.args[i] == v)
        return names_[v] = "a" + std::to_string(i);
    if (v->isConstant()) {
      auto n = staticNumElements(v->type.shape);
      if (!n || *n != 1 || !st(v->type.dtype))
        return std::nullopt;
      double x = 0;
      if (v->type.dtype == DType::F32)
        x = double(*v->data->as<float>());
      else if (v->type.dtype == DType::F64)
        x = *v->data->as<double>();
      else if (v->type.dtype == DType::F16)
        x = double(halfToFloat(*v->data->as<uint16_t>()));
      else if (v->type.dtype == DType::BF16)
        x = double(bf16ToFloat(*v->data->as<uint16_t>()));
      else
        x = v->data->ptr[0] ? 1 : 0;
      return names_[v] = v->type.dtype == DType::Bool ? (x != 0 ? "true" : "false")
                                                      : floatLiteral(x, v->type.dtype, d_);
    }
    return std::nullopt;
  }

  bool emitOp(const Op &op, std::ostringstream &os) {
    if (op.results.size() != 1)
      return noKernel(std::string(op.name()) + " with several results");
    const Value *res = op.result();
    const char *rt = ct(res->type.dtype);
    if (!rt)
      return noKernel(std::string(op.name()) + " producing " + res->type.str());
    if (&op == reduce_) { // its value is `r`, the finished reduction
      auto in = operandExpr(op.operand(0));
      if (!in)
        return noKernel(std::string(op.name()) + " of a constant");
      reducedInput_ = *in;
      names_[res] = "r";
      return true;
    }
    if (&op == rowReduction_) {
      auto in = operandExpr(op.operand(0));
      if (!in)
        return noKernel(std::string(op.name()) + " reading a non-scalar constant");
      reducedInput_ = *in;
      // The row's element: kept in `acc` (CPU) or `x` (CUDA).
      std::string e, xj = cuda() ? "x" : "acc[j]";
      if (op.is(OpKind::Softmax))
        e = std::string(rt) + "(tc_exp(" + xj + " - (" + rt + ")shift) / sum)";
      else if (op.is(OpKind::LogSoftmax))
        e = std::string(rt) + "(" + xj + " - shift - logsum)";
      else {
        e = std::string(rt) + "((" + xj + " - mean) * rstd)";
        std::vector<std::string> p;
        for (size_t k = 1; k < op.operands.size(); ++k)
          if (const Value *v = op.operand(k)) {
            auto pe = operandExpr(v);
            if (!pe)
              return noKernel("LayerNormalization with a non-scalar constant parameter");
            p.push_back(*pe);
          }
        e = e + " * " + p.at(0);
        if (p.size() > 1)
          e += " + " + p[1];
      }
      std::string t = temp();
      os << "      const " << rt << " " << t << " = " << e << ";\n";
      names_[res] = t;
      return true;
    }
    if (&op == anchor_ && op.is(OpKind::Conv)) {
      std::string e = "acc[j]";
      if (const Value *b = op.operand(2))
        e += " + " + (argIndex(b) != SIZE_MAX ? "in" + std::to_string(argIndex(b)) + "[m]"
                                              : *operandExpr(b));
      std::string t = temp();
      os << "      const " << rt << " " << t << " = " << e << ";\n";
      names_[res] = t;
      return true;
    }
    if (&op == anchor_) {
      std::string e = "acc[j]";
      if (op.is(OpKind::Gemm)) {
        e = floatLiteral(op.getFloat("alpha"), res->type.dtype) + " * acc[j]";
        if (const Value *c = op.operand(2)) {
          auto ce = operandExpr(c);
          if (!ce)
            return noKernel("Gemm's C is a non-scalar constant %" + c->name);
          e += " + " + floatLiteral(op.getFloat("beta"), res->type.dtype) + " * " + *ce;
        }
      }
      std::string t = temp();
      os << "      const " << rt << " " << t << " = " << e << ";\n";
      names_[res] = t;
      return true;
    }
    std::vector<std::string> a;
    for (const Value *v : op.operands) {
      if (!v) {
        a.push_back("");
        continue;
      }
      if (!st(v->type.dtype))
        return noKernel(std::string(op.name()) + " reading " + v->type.str());
      auto e = operandExpr(v);
      if (!e)
        return noKernel(std::string(op.name()) + " reading the non-scalar constant %" + v->name);
      a.push_back(*e);
    }
    bool isFloat = res->type.dtype != DType::Bool;
    std::string T = rt, x = a.empty() ? "" : a[0];
    auto call = [&](const char *fn) { return std::string(fn) + "(" + x + ")"; };
    auto lit = [&](double v) { return floatLiteral(v, res->type.dtype, d_); };
    std::string e;
    switch (op.kind) {
    case OpKind::Neg: e = "-(" + x + ")"; break;
    case OpKind::Abs: e = call("tc_abs"); break;
    case OpKind::Relu: e = x + " < 0 ? " + T + "(0) : " + x; break; // NaN stays NaN
    case OpKind::Sigmoid: e = T + "(1) / (" + T + "(1) + tc_exp(-" + x + "))"; break;
    case OpKind::Tanh: e = call("tc_tanh"); break;
    case OpKind::Exp: e = call("tc_exp"); break;
    case OpKind::Log: e = call("tc_log"); break;
    case OpKind::Sqrt: e = call("tc_sqrt"); break;
    case OpKind::Reciprocal: e = T + "(1) / " + x; break;
    case OpKind::Cos: e = call("tc_cos"); break;
    case OpKind::Sin: e = call("tc_sin"); break;
    case OpKind::Erf: e = call("tc_erf"); break;
    case OpKind::Floor: e = call("tc_floor"); break;
    case OpKind::Ceil: e = call("tc_ceil"); break;
    case OpKind::HardSwish:
      e = x + " * tc_clamp01(" + x + " / " + T + "(6) + " + T + "(0.5))";
      break;
    case OpKind::HardSigmoid:
      e = "tc_clamp01(" + lit(op.getFloat("alpha")) + " * " + x + " + " + lit(op.getFloat("beta")) +
          ")";
      break;
    case OpKind::LeakyRelu:
      e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * " + x + " : " + x;
      break;
    case OpKind::Elu:
      e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * (tc_exp(" + x + ") - " + T +
          "(1)) : " + x;
      break;
    case OpKind::Gelu:
      if (op.getString("approximate") == "tanh")
        e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_tanh(" + lit(0.7978845608028654) + " * (" +
            x + " + " + lit(0.044715) + " * " + x + " * " + x + " * " + x + ")))";
      else
        e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_erf(" + x + " * " +
            lit(0.7071067811865476) + "))";
      break;
    case OpKind::Add: e = a[0] + " + " + a[1]; break;
    case OpKind::Sub: e = a[0] + " - " + a[1]; break;
    case OpKind::Mul: e = a[0] + " * " + a[1]; break;
    case OpKind::Div: e = a[0] + " / " + a[1]; break;
    case OpKind::Pow: {
      // Small constant exponents (GPT-2's x^3, variance's x^2) without powf.
      std::optional<double> k = scalarConstant(op.operand(1));
      if (k == 1.0)
        e = a[0];
      else if (k == 2.0)
        e = "(" + a[0] + " * " + a[0] + ")";
      else if (k == 3.0)
        e = "(" + a[0] + " * " + a[0] + " * " + a[0] + ")";
      else if (k == 0.5)
        e = "tc_sqrt(" + a[0] + ")";
      else
        e = "tc_pow(" + a[0] + ", " + a[1] + ")";
      break;
    }
    case OpKind::Min:
    case OpKind::Max: {
      const char *fn = op.is(OpKind::Min) ? "tc_min" : "tc_max";
      e = a[0];
      for (size_t i = 1; i < a.size(); ++i)
        e = std::string(fn) + "(" + e + ", " + a[i] + ")";
      break;
    }
    case OpKind::Where: e = a[0] + " ? " + a[1] + " : " + a[2]; break;
    case OpKind::Equal: e = a[0] + " == " + a[1]; break;
    case OpKind::Less: e = a[0] + " < " + a[1]; break;
    case OpKind::Greater: e = a[0] + " > " + a[1]; break;
    case OpKind::LessOrEqual: e = a[0] + " <= " + a[1]; break;
    case OpKind::GreaterOrEqual: e = a[0] + " >= " + a[1]; break;
    case OpKind::Not: e = "!" + x; break;
    case OpKind::IsNaN: e = x + " != " + x; break;
    case OpKind::And: e = a[0] + " && " + a[1]; break;
    case OpKind::Or: e = a[0] + " || " + a[1]; break;
    case OpKind::Xor: e = a[0] + " != " + a[1]; break;
    case OpKind::Clip: {
      // min(max(x, lo), hi) with NaN kept, absent bounds skipped.
      e = x;
      if (a.size() > 1 && !a[1].empty())
        e = "tc_max(" + e + ", " + a[1] + ")";
      if (a.size() > 2 && !a[2].empty())
        e = "tc_min(" + e + ", " + a[2] + ")";
      break;
    }
    case OpKind::Cast:
      if (!isFloat && op.operand(0)->type.dtype != DType::Bool)
        e = x + " != 0";
      else if (isHalf(res->type.dtype)) // rounded to the half type, computed in float
        e = load(res->type.dtype, store(res->type.dtype, T + "(" + x + ")"));
      else
        e = T + "(" + x + ")";
      break;
    default: return noKernel("no code for " + std::string(op.name()));
    }
    std::string t = temp();
    os << "      const " << T << " " << t << " = " << e << ";\n";
    names_[res] = t;
    return true;
  }
};

} // namespace

std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect dialect,
                                        std::string &why) {
  return Emitter(callee, dialect, why).run();
}

namespace {

// f32 exp, tanh and erf without libm calls, so loops over them vectorize
// (libm's scalar expf/tanhf/erff were the hot spots of GELU and sigmoid
// kernels). Branch-free: every path is computed and selected. Accuracy:
// exp within 2 ulp, tanh 1e-6 relative, erf 1.5e-7 absolute; NaN and
// infinities as libm (test/CodeGen/cpu-math.test checks both).
constexpr const char *kCpuFloatMath = R"(
TC_INLINE float tc_exp(float x) {
  // e^x = 2^n e^r, n = rint(x / ln 2), |r| <= ln2 / 2 (ln 2 split in two
  // parts so r is exact), e^r by its Taylor series to r^7.
  const float xc = x > 88.7f ? 88.7f : x < -87.4f ? -87.4f : x;
  const float n = __builtin_rintf(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.f / 5040.f;
  p = p * r + 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  // 2^n as two factors: n reaches 128 just below overflow.
  const int half = int(n) > 0 ? int(n) - 1 : int(n);
  const float y = p * __builtin_bit_cast(float, (half + 127) << 23) * (int(n) > 0 ? 2.f : 1.f);
  return x != x ? x : x > 88.72283935546875f ? __builtin_inff() : x < -87.33654475f ? 0.f : y;
}
TC_INLINE float tc_tanh(float x) {
  const float a = __builtin_fabsf(x), z = x * x;
  // Near 0 the Taylor series (error below x^9 / 45), else 1 - 2 / (e^2a + 1).
  const float small = x + x * z * (-1.f / 3.f + z * (2.f / 15.f + z * (-17.f / 315.f)));
  const float big = 1.f - 2.f / (tc_exp(2.f * a) + 1.f);
  return a < 0.1f ? small : __builtin_copysignf(big, x);
}
TC_INLINE float tc_erf(float x) {
  const float a = __builtin_fabsf(x), z = x * x;
  // Near 0 the Taylor series, else Abramowitz and Stegun 7.1.26.
  const float small = 1.12837916709551257f * x *
      (1.f + z * (-1.f / 3.f + z * (1.f / 10.f + z * (-1.f / 42.f + z * (1.f / 216.f + z * (-1.f / 1320.f))))));
  const float t = 1.f / (1.f + 0.3275911f * a);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float big = 1.f - poly * tc_exp(-z);
  return a < 0.5f ? small : __builtin_copysignf(big, x);
}
)";

} // namespace

const char *launchKindName(LaunchKind k) {
  return k == LaunchKind::Rows ? "rows" : k == LaunchKind::Reduce ? "reduce" : "pointwise";
}

std::string kernelPrelude(KernelDialect dialect, bool halfTypes) {
  bool cuda = dialect == KernelDialect::Cuda;
  std::string p = "// Generated by tc-codegen. Kernel ABI: include/tc/CodeGen/KernelEmitter.h\n";
  if (cuda && halfTypes)
    p += "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  p +=
      cuda
          ? "#define TC_INLINE static __device__ __forceinline__\n#define TC_SIMD_LOOP\n"
            "#define TC_REDUCE_LOOP\n"
          : "#define TC_INLINE static inline\n"
            "#define TC_SIMD_LOOP _Pragma(\"clang loop vectorize(assume_safety)\")\n"
            "#define TC_REDUCE_LOOP _Pragma(\"clang loop vectorize(enable) interleave(enable)\")\n";
  p += "typedef long int64_t;\n";
  if (!cuda)
    p += "extern \"C\" void *malloc(unsigned long);\nextern \"C\" void free(void *);\n";
  p += R"(// NaN-propagating min/max (ONNX Min/Max/Clip): a NaN operand wins.
template <class T> TC_INLINE T tc_min(T a, T b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
template <class T> TC_INLINE T tc_max(T a, T b) { return a != a ? a : b != b ? b : (b > a ? b : a); }
template <class T> TC_INLINE T tc_clamp01(T x) { return x < T(0) ? T(0) : x > T(1) ? T(1) : x; }
#define TC_MATH1(name, f32, f64) \
  TC_INLINE float name(float x) { return f32(x); } \
  TC_INLINE double name(double x) { return f64(x); }
)";
  std::string m = info(dialect).mathPrefix;
  for (std::string f :
       {"abs", "exp", "log", "sqrt", "tanh", "cos", "sin", "erf", "floor", "ceil"}) {
    std::string lib = m + (f == "abs" ? "fabs" : f);
    if (!cuda && (f == "exp" || f == "tanh" || f == "erf")) // f32 ones: kCpuFloatMath
      p += "TC_INLINE double tc_" + f + "(double x) { return " + lib + "(x); }\n";
    else
      p += "TC_MATH1(tc_" + f + ", " + lib + "f, " + lib + ")\n";
  }
  p += "TC_INLINE float tc_pow(float a, float b) { return " + m + "powf(a, b); }\n";
  p += "TC_INLINE double tc_pow(double a, double b) { return " + m + "pow(a, b); }\n";
  if (!cuda)
    p += kCpuFloatMath;
  if (cuda)
    p += R"(// `V` elements moved as one access of sizeof(T) * V bytes (16: LDG.128).
template <class T, int V> struct alignas(sizeof(T) * V) tc_vec { T v[V]; };
TC_INLINE bool tc_aligned(const void *p, unsigned long long bytes) {
  return ((unsigned long long)p & (bytes - 1)) == 0;
}
// Max that skips NaN, as the CPU kernels' `>` scan over a row.
template <class T> TC_INLINE T tc_fmax(T a, T b) { return a != a || b > a ? b : a; }
// Block-wide reduction (blockDim.x a multiple of 32): warp shuffles, then one
// value per warp through `sh` (32 entries); every thread gets the result.
template <class T, class F> TC_INLINE T tc_block_reduce(T v, T *sh, F f) {
  for (int o = 16; o > 0; o >>= 1)
    v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads(); // the previous reduction may still read `sh`
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sh[0];
  for (unsigned w = 1; w < blockDim.x >> 5; ++w)
    v = f(v, sh[w]);
  return v;
}
struct tc_add_op { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };
struct tc_max_op { template <class T> __device__ T operator()(T a, T b) const { return tc_fmax(a, b); } };
// Reduce*'s: NaN-propagating max/min (as the reference), product.
struct tc_maxn_op { template <class T> __device__ T operator()(T a, T b) const { return tc_max(a, b); } };
struct tc_minn_op { template <class T> __device__ T operator()(T a, T b) const { return tc_min(a, b); } };
struct tc_mul_op { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };
template <class T> TC_INLINE T tc_block_sum(T v, T *sh) { return tc_block_reduce(v, sh, tc_add_op()); }
template <class T> TC_INLINE T tc_block_max(T v, T *sh) { return tc_block_reduce(v, sh, tc_max_op()); }
)";
  return p + "\n";
}

} // namespace tc
