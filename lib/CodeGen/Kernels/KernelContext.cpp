#include "KernelContext.h"
#include "tc/Support/Error.h"

namespace tc::kernels {

KernelContext::KernelContext(const Function &f, KernelDialect d, std::string &why, bool multiTensor)
    : f(f), dialect(d), multiTensor(multiTensor && d == KernelDialect::Cuda), why(why) {
  if (!f.results.empty())
    domain = f.results[0]->type.shape;
  rank = domain.size();
  // dims[] layout: every argument's dims, then every result's.
  size_t at = 0;
  for (const Value *a : f.args) {
    dimAt[a] = at;
    at += a->type.rank();
  }
  for (const Value *r : f.results) {
    dimAt[r] = at;
    at += r->type.rank();
  }
  numDims = at;
}

std::string KernelContext::load(DType t, const std::string &ref) const {
  const HalfType &h = t == DType::F16 ? info().f16 : info().bf16;
  return isHalf(t) ? h.toFloat + ("(" + ref + ")") : ref;
}

std::string KernelContext::store(DType t, const std::string &value) const {
  const HalfType &h = t == DType::F16 ? info().f16 : info().bf16;
  return isHalf(t) ? h.fromFloat + ("(" + value + ")") : value;
}

bool KernelContext::noKernel(const std::string &what) const {
  why = "@" + f.name + ": " + what;
  return false;
}

size_t KernelContext::argIndex(const Value *v) const {
  for (size_t i = 0; i < f.args.size(); ++i)
    if (f.args[i] == v)
      return i;
  return SIZE_MAX;
}

std::string KernelContext::dim(const Value *v, size_t d) const {
  // A static dim is a literal: index math divides by constants, which the
  // compiler turns into multiplies (a 64-bit division by a run-time value
  // is dozens of instructions: deberta's gathers and transposes at a
  // symbolic batch spent most of their time in them).
  if (d < v->type.rank() && v->type.shape[d].isStatic())
    return "(int64_t)" + std::to_string(v->type.shape[d].size);
  auto at = dimAt.find(v);
  // A value inside the group (a prologue's Cast): the first argument or
  // result of its shape has its dims.
  for (const auto *values : {&f.args, &f.results})
    for (const Value *w : *values)
      if (at == dimAt.end() && w->type.shape == v->type.shape)
        at = dimAt.find(w);
  if (at != dimAt.end())
    return "dims[" + std::to_string(at->second + d) + "]";
  if (auto k = broadcastDim(v, d))
    return "dims[" + std::to_string(*k) + "]";
  throw Error("internal: no dims for %" + v->name + " in @" + f.name);
}

std::optional<size_t> KernelContext::broadcastDim(const Value *v, size_t d) const {
  size_t r = v->type.rank();
  for (const auto *values : {&f.args, &f.results})
    for (const Value *w : *values) {
      size_t rw = w->type.rank();
      if (d < r && d + rw >= r && w->type.shape[d + rw - r] == v->type.shape[d])
        return dimAt.at(w) + d + rw - r;
    }
  return std::nullopt;
}

bool KernelContext::hasDims(const Value *v) const {
  if (dimAt.count(v))
    return true;
  for (const auto *values : {&f.args, &f.results})
    for (const Value *w : *values)
      if (w->type.shape == v->type.shape)
        return true;
  for (size_t d = 0; d < v->type.rank(); ++d)
    if (!v->type.shape[d].isStatic() && !broadcastDim(v, d))
      return false;
  return true;
}

std::string KernelContext::extent(const Value *v, size_t d) const {
  const Dim &e = v->type.shape[d];
  return e.isStatic() ? "(int64_t)" + std::to_string(e.size) : dim(v, d);
}

std::string KernelContext::rowsExpr() const {
  std::string e;
  for (size_t d = 0; d + 1 < rank; ++d)
    e += (e.empty() ? "" : " * ") + dim(f.results[0], d);
  return e.empty() ? "(int64_t)1" : e;
}

std::string KernelContext::head(std::string &symbol) const {
  symbol = "tc_" + f.name + (variant ? "__v" + std::to_string(variant) : "");
  return "// group @" + f.name + ": domain " + TensorType{DType::F32, domain}.str().substr(3) +
         "\n";
}

bool KernelContext::usesHalf() const {
  for (const Value *v : f.args)
    if (isHalf(v->type.dtype))
      return true;
  for (const auto &op : f.ops)
    for (const Value *v : op->results)
      if (isHalf(v->type.dtype))
        return true;
  return false;
}

void KernelContext::emitPointers(std::ostream &os) const {
  os << "  const int64_t inner = " << (rank ? dim(f.results[0], rank - 1) : "1") << ";\n";
  for (size_t i = 0; i < f.args.size(); ++i)
    os << "  const " << st(f.args[i]->type.dtype) << " *__restrict in" << i << " = (const "
       << st(f.args[i]->type.dtype) << " *)bufs[" << i << "];\n";
  for (size_t i = 0; i < f.results.size(); ++i) {
    DType t = f.results[i]->type.dtype; // i64: ArgMax's indices
    const char *rt = t == DType::I64 ? "int64_t" : st(t);
    os << "  " << rt << " *__restrict out" << i << " = (" << rt << " *)bufs[" << f.args.size() + i
       << "];\n";
  }
}

void KernelContext::emitRowMajorStrides(std::ostream &os, const std::string &name,
                                        const Value *v) const {
  size_t r = v->type.rank();
  os << "  int64_t " << name << "[" << std::max<size_t>(r, 1) << "];\n  { int64_t s = 1;\n";
  for (size_t d = r; d-- > 0;)
    os << "    " << name << "[" << d << "] = s; s *= " << dim(v, d) << ";\n";
  os << "  }\n";
}

void KernelContext::emitSignature(std::ostream &os, const std::string &symbol, unsigned cudaBlock,
                                  bool scratch, bool pass, unsigned minBlocks) const {
  if (!cuda()) {
    os << "extern \"C\" void " << symbol
       << "(void *const *bufs, const int64_t *dims, int64_t begin, int64_t end) {\n";
    return;
  }
  size_t nb = f.args.size() + f.results.size() + scratch;
  os << "struct " << symbol << "_params { void *bufs[" << nb << "]; int64_t dims["
     << (numDims ? numDims : 1) << "];" << (pass ? " int64_t pass;" : "") << " };\n";
  if (multiTensor) {
    // A member's parameter, its first block and block count. Each block
    // walks the run's blocks from its own by the grid (any grid is correct,
    // as for every kernel): the member of block vb is the last entry whose
    // first block is at most vb. The loop stays open: emitMultiTensorKernel
    // closes the function after the family's last brace.
    os << "struct " << symbol << "_entry { " << symbol
       << "_params p; int64_t first, blocks; };\n"
          "struct "
       << symbol << "_tensors { const " << symbol << "_entry *table; int64_t count; };\n"
       << info().kernelHead << "__launch_bounds__(" << cudaBlock
       << (minBlocks ? ", " + std::to_string(minBlocks) : "") << ") " << symbol
       << "(const __grid_constant__ " << symbol << "_tensors mt) {\n"
       << "  const int64_t tc_mt_total = mt.table[mt.count - 1].first + "
          "mt.table[mt.count - 1].blocks;\n"
          "  for (int64_t vb = blockIdx.x; vb < tc_mt_total; vb += gridDim.x) {\n"
          "  int64_t lo = 0, hi = mt.count - 1;\n"
          "  while (lo < hi) {\n"
          "    const int64_t mid = (lo + hi + 1) / 2;\n"
          "    if (mt.table[mid].first <= vb) lo = mid; else hi = mid - 1;\n"
          "  }\n"
          "  const "
       << symbol
       << "_params &p = mt.table[lo].p;\n"
          "  const int64_t tc_mt_block = vb - mt.table[lo].first,\n"
          "                tc_mt_blocks = mt.table[lo].blocks;\n"
          "  void *const *bufs = p.bufs;\n  const int64_t *dims = p.dims;\n";
    if (scratch) // the member's own (a multi-tensor reduction's)
      os << "  char *__restrict scratch = (char *)bufs[" << f.args.size() + f.results.size()
         << "];\n";
    return;
  }
  os << info().kernelHead << "__launch_bounds__(" << cudaBlock
     << (minBlocks ? ", " + std::to_string(minBlocks) : "") << ") " << symbol << "(const "
     << "__grid_constant__ " << symbol << "_params p) {\n"
     << "  void *const *bufs = p.bufs;\n  const int64_t *dims = p.dims;\n";
  if (scratch)
    os << "  char *__restrict scratch = (char *)bufs[" << f.args.size() + f.results.size()
       << "];\n";
}

std::string KernelContext::emitStart(std::ostream &os, unsigned cudaBlock, bool scratch, bool pass,
                                     unsigned minBlocks) const {
  std::string symbol;
  os << head(symbol);
  emitSignature(os, symbol, cudaBlock, scratch, pass, minBlocks);
  emitPointers(os);
  return symbol;
}

void KernelContext::emitGridLoops(std::ostream &os, const std::string &begin, bool divides,
                                  const std::function<void(const std::string &index)> &body,
                                  const std::string &var, const std::string &count,
                                  const std::string &per) const {
  auto loop = [&](const std::string &index) {
    os << "  for (int64_t " << var << " = " << begin << " + tid; " << var << " < " << count << "; "
       << var << " += stride) {\n";
    if (divides) {
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    const int64_t row = " << cast << var << " / " << cast << per << ", j = " << var
         << " - row * " << per << ";\n";
    }
    body(index);
    os << "  }\n";
  };
  if (!divides)
    return loop("int64_t");
  os << "  if (" << count << " <= 0x7fffffff) {\n";
  loop("unsigned");
  os << "  } else {\n";
  loop("int64_t");
  os << "  }\n";
}

std::optional<double> scalarConstant(const Value *v) {
  if (!v || !v->isConstant())
    return std::nullopt;
  if (v->type.dtype == DType::F32 && v->data->size == 4)
    return double(*v->data->as<float>());
  if (v->type.dtype == DType::F64 && v->data->size == 8)
    return *v->data->as<double>();
  return std::nullopt;
}

std::string gridSplits(const std::string &items, const std::string &most, const std::string &cap,
                       const std::string &grid) {
  return "  int64_t S = " + items + " > 0 && " + items + " < " + grid + " ? (int64_t)" + grid +
         " / " + items + " : 1;\n  { const int64_t most = " + most +
         ";\n    S = S < most ? S : most;" +
         (cap.empty() ? "" : " S = S < " + cap + " ? S : " + cap + ";") + " S = S > 1 ? S : 1; }\n";
}

std::string lastBlockOf(const std::string &item, const std::string &indent) {
  return indent + "__threadfence();\n" + indent + "__syncthreads();\n" + indent +
         "if (threadIdx.x == 0) tc_last = atomicAdd(&count[" + item +
         "], 1u) == (unsigned)(S - 1);\n" + indent + "__syncthreads();\n" + indent +
         "if (!tc_last) continue;\n" + indent + "__threadfence();\n";
}

} // namespace tc::kernels
