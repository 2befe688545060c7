// The compaction family, both dialects: a lone op whose result keeps the
// items of its input that pass a test, in order, so its size is known only
// from the data — NonZero (the nonzero elements' coordinates) and Compress
// (the slices, or elements, whose condition is true).
//
// Two passes of one kernel (the launch rule, tc/CodeGen/KernelEmitter.h):
// pass 0 counts the items and writes the count to the buffer after the
// results (-1: the inputs are invalid, and the runtime lets the reference
// kernel say why); the runtime reads it back, sizes the results (their `?`
// dims are the count) and runs pass 1, which writes each kept item at its
// place among the kept ones. The CPU walks the items in order; CUDA runs
// one block that takes the items a tile of blockDim at a time, each item's
// place the tile's base plus a block scan of the flags before it (order is
// the result: no atomics).
#include "Families.h"
#include <sstream>

namespace tc::kernels {

namespace {

constexpr unsigned kCompactBlock = 256;

// What an op compacts: `n` items, `invalid` (inputs the reference rejects:
// checked once, before counting), `kept` (item j stays) and `write` (the
// code storing item j at place `pos` of `count`).
struct Compaction {
  std::string setup, n, invalid = "false", kept, write;
};

// NonZero: the elements of x, row-major; result [rank, count].
std::optional<Compaction> nonZero(const KernelContext &c, const Op &op) {
  const Value *x = op.operand(0), *y = op.result();
  Compaction k;
  std::ostringstream setup, write;
  c.emitRowMajorStrides(setup, "xst", x);
  k.setup = setup.str();
  k.n = "(int64_t)1";
  for (size_t d = 0; d < x->type.rank(); ++d)
    k.n += " * " + c.dim(x, d);
  // A NaN is nonzero (as the reference: != 0 compares false only for 0).
  k.kept = "(" + c.load(x->type.dtype, "in0[j]") + " != 0)";
  std::string count = x->type.rank() ? c.dim(y, 1) : "0";
  for (size_t d = 0; d < x->type.rank(); ++d)
    write << "      out0[" << d << " * " << count << " + pos] = (j / xst[" << d << "]) % "
          << c.dim(x, d) << ";\n";
  k.write = write.str();
  return k;
}

// Compress: along `axis`, the slices whose condition is true (a condition
// shorter than the axis drops the rest); without one, x's elements
// flattened. The condition may not be longer than what it selects from.
std::optional<Compaction> compress(const KernelContext &c, const Op &op) {
  const Value *x = op.operand(0), *y = op.result();
  const std::vector<int64_t> &axes = op.attr("axis").ints();
  size_t r = x->type.rank();
  int64_t a = axes.empty() ? -1 : axes[0] < 0 ? axes[0] + int64_t(r) : axes[0];
  if (!axes.empty() && (a < 0 || a >= int64_t(r)))
    return c.reject("a Compress over an axis out of range");
  std::string outer = "(int64_t)1", size = "(int64_t)1", inner = "(int64_t)1";
  for (size_t d = 0; d < r; ++d)
    (a < 0 || int64_t(d) == a ? size : int64_t(d) < a ? outer : inner) += " * " + c.dim(x, d);
  Compaction k;
  k.setup = "  const int64_t outer = " + outer + ", size = " + size + ", tile = " + inner + ";\n";
  k.n = c.dim(op.operand(1), 0);
  k.invalid = k.n + " > size";
  k.kept = "(in1[j] != 0)";
  std::string count = c.dim(y, a < 0 ? 0 : size_t(a));
  k.write = "      for (int64_t o = 0; o < outer; ++o)\n"
            "        for (int64_t e = 0; e < tile; ++e)\n"
            "          out0[(o * " +
            count + " + pos) * tile + e] = in0[(o * size + j) * tile + e];\n";
  return k;
}

void emitCpu(std::ostream &os, const Compaction &k) {
  os << "  if (begin == 0) { // pass 0: the count\n"
     << "    if (" << k.invalid << ") { count[0] = -1; return; }\n"
     << "    int64_t kept = 0;\n"
     << "    for (int64_t j = 0; j < " << k.n << "; ++j) kept += " << k.kept << " ? 1 : 0;\n"
     << "    count[0] = kept;\n    return;\n  }\n"
     << "  (void)end;\n  int64_t pos = 0;\n"
     << "  for (int64_t j = 0; j < " << k.n << "; ++j) {\n"
     << "    if (!" << k.kept << ") continue;\n"
     << "    {\n"
     << k.write << "    }\n    ++pos;\n  }\n";
}

void emitCuda(std::ostream &os, const Compaction &k) {
  os << "  __shared__ int64_t tc_scan[" << kCompactBlock << "];\n"
     << "  const int64_t n = " << k.n << ";\n"
     << "  if (p.pass == 0) { // the count: a sum over the block\n"
     << "    if (" << k.invalid << ") { if (threadIdx.x == 0) count[0] = -1; return; }\n"
     << "    int64_t kept = 0;\n"
     << "    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) kept += " << k.kept
     << " ? 1 : 0;\n"
     << "    tc_scan[threadIdx.x] = kept;\n    __syncthreads();\n"
     << "    if (threadIdx.x == 0) {\n"
     << "      int64_t total = 0;\n"
     << "      for (unsigned t = 0; t < blockDim.x; ++t) total += tc_scan[t];\n"
     << "      count[0] = total;\n    }\n    return;\n  }\n"
     << "  int64_t base = 0; // kept items before this tile\n"
     << "  for (int64_t t0 = 0; t0 < n; t0 += blockDim.x) {\n"
     << "    const int64_t j = t0 + threadIdx.x;\n"
     << "    const int64_t flag = j < n && " << k.kept << " ? 1 : 0;\n"
     << "    tc_scan[threadIdx.x] = flag;\n    __syncthreads();\n"
     << "    for (unsigned o = 1; o < blockDim.x; o <<= 1) { // inclusive scan\n"
     << "      const int64_t before = threadIdx.x >= o ? tc_scan[threadIdx.x - o] : 0;\n"
     << "      __syncthreads();\n      tc_scan[threadIdx.x] += before;\n      __syncthreads();\n"
     << "    }\n"
     << "    if (flag) {\n      const int64_t pos = base + tc_scan[threadIdx.x] - 1;\n"
     << k.write << "    }\n"
     << "    base += tc_scan[blockDim.x - 1];\n    __syncthreads();\n  }\n";
}

} // namespace

std::optional<EmittedKernel> emitCompaction(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  if (c.f.ops.size() != 1 || c.f.results.size() != op.results.size())
    return c.reject(std::string(op.name()) + " with other ops in its group");
  for (const Value *v : op.operands)
    if (!v || c.argIndex(v) == SIZE_MAX)
      return c.reject(std::string(op.name()) + " reading a constant or absent operand");
  std::optional<Compaction> k = op.is(OpKind::NonZero) ? nonZero(c, op)
                                : op.is(OpKind::Compress)
                                    ? compress(c, op)
                                    : c.reject("no compaction code for " + std::string(op.name()));
  if (!k)
    return std::nullopt;
  std::string symbol;
  std::ostringstream os;
  os << c.head(symbol);
  // The count buffer is the one after the results (CUDA: the launch's
  // scratch slot, with the `pass` field after dims).
  c.emitSignature(os, symbol, kCompactBlock, /*scratch=*/c.cuda(), /*pass=*/c.cuda());
  c.emitPointers(os);
  os << "  int64_t *count = (int64_t *)bufs[" << c.f.args.size() + c.f.results.size() << "];\n"
     << k->setup;
  if (c.cuda())
    emitCuda(os, *k);
  else
    emitCpu(os, *k);
  os << "}\n";
  EmittedKernel e = c.kernel(symbol, os.str());
  e.block = c.cuda() ? kCompactBlock : 0;
  e.launch = LaunchKind::Compact;
  e.halfTypes = c.usesHalf();
  return e;
}

} // namespace tc::kernels
