// The Pointwise family: one loop nest over the group's domain (its first
// result's shape). Operands of the domain's shape are read contiguously,
// single-element operands as a scalar, and broadcast operands through
// strides (ElementAccess). Every op of the group is one expression over
// register values, so the group reads each operand once and writes each
// result once. The CPU row loop here also carries the row-reduction and
// contraction families' per-element code.
#include "Families.h"
#include <cstdlib>
#include <sstream>

namespace tc::kernels {

std::optional<EmittedKernel> emitCpuRows(const KernelContext &c, const ElementAccess &ea,
                                         const Expressions &ex, const std::string &pro,
                                         const std::string &body, const CpuRowParts &parts) {
  std::ostringstream os;
  std::string symbol = c.emitStart(os, 0);
  bool anyBroadcast = ea.readsBroadcast();
  if (anyBroadcast)
    ea.emitStrides(os);
  if (parts.setup)
    parts.setup(os);
  // Rows that every operand reads contiguously (or as a scalar) and that
  // need no per-row code are one run of memory: [begin, end) becomes one
  // loop from row `begin`. A short last axis (NCHW's W = 8 in a conv's
  // epilogue) then vectorizes, where the constant 8-trip inner loop was
  // unrolled into scalar code (a SiLU epilogue over [2,16,8,8]: 8 us).
  bool flat = !anyBroadcast && !parts.setup && !parts.row;
  if (flat)
    os << "  {\n    const int64_t row = begin;\n";
  else
    os << "  for (int64_t row = begin; row < end; ++row) {\n";
  if (anyBroadcast)
    ea.emitRowBases(os);
  if (parts.row)
    parts.row(os);
  // In-place plans make out0 == in0, which the vectorizer's overlap check
  // sends down the scalar loop; element j only reads position j, so the
  // hint is safe (and `__restrict` on locals is not honoured).
  os << "    " << (ex.mayFault() ? "" : "TC_SIMD_LOOP ") << "for (int64_t j = 0; j < "
     << (flat ? "(end - begin) * inner" : "inner") << "; ++j) {\n";
  ea.emitLoads(os);
  if (ex.usesIndex())
    os << "      const int64_t " << ex.indexName() << " = row * inner + j;\n";
  os << pro << body;
  ex.emitStores(os, "row * inner + j", parts.prologue, /*inPrologue=*/false);
  os << "    }\n  }\n";
  if (parts.setup && parts.row)
    os << "  free(acc);\n";
  os << "}\n";
  return c.kernel(symbol, os.str());
}

namespace {

// A masked update that may run in place: the group's one result is
// Where(cond, a, x) with x an argument of its type (a decode step's
// present = Where(slot, new, past), which the runtime writes over past's
// buffer: CudaRun.cpp inPlaceResults). Where the result IS x's buffer
// (checked at run time) and cond keeps x, the element is already there:
// the thread skips it, reading and writing nothing (a cache of 1096 slots
// gains one row a token, and the whole cache used to be read and written).
struct KeptInPlace {
  size_t cond, kept; // argument indices
};

std::optional<KeptInPlace> keptInPlace(const KernelContext &c, const ElementAccess &ea) {
  if (c.f.results.size() != 1)
    return std::nullopt;
  const Value *r = c.f.results[0];
  const Op *where = r->def;
  if (!where || !where->is(OpKind::Where))
    return std::nullopt;
  size_t cond = c.argIndex(where->operand(0)), kept = c.argIndex(where->operand(2));
  if (cond == SIZE_MAX || kept == SIZE_MAX || where->operand(2)->type != r->type ||
      !ea.elementwise(cond) || ea.access(kept) != ElementAccess::Access::Contiguous)
    return std::nullopt;
  return KeptInPlace{cond, kept};
}

// `continue` for an element (or vector) the in-place result already holds;
// cond's value is a<cond>. Test-only: TC_TEST_KEPT_IN_PLACE_INVERTED skips
// the elements cond replaces instead (the fake-driver decode test must
// catch it).
std::string skipKept(const KeptInPlace &k, const char *indent) {
  const char *keep = std::getenv("TC_TEST_KEPT_IN_PLACE_INVERTED") ? "" : "!";
  return std::string(indent) + "if (keptInPlace && " + keep + "a" + std::to_string(k.cond) +
         ") continue; // already there (in place)\n";
}

// One thread per element, grid-stride, after a 16-byte vectorized path:
// `vec` consecutive elements of the domain's trailing block (ElementAccess::
// vectorBlock, e.g. H x W of a BatchNorm's per-channel operands on NCHW)
// per thread, while every pointer is aligned and the block a multiple of
// `vec`. Contiguous arguments, and broadcast ones whole over the block,
// are read a vector at a time; broadcast ones constant over it one element
// per vector (its row bases are computed once per vector, not per
// element). The scalar loop takes the tail, or everything; broadcast
// operands need the element's row: its division runs in 32 bits when n
// allows.
std::optional<EmittedKernel> emitCudaPointwise(const KernelContext &c, const ElementAccess &ea,
                                               const Expressions &ex, const std::string &body) {
  std::ostringstream os;
  std::string symbol = c.emitStart(os, kPointwiseBlock);
  bool anyBroadcast = ea.readsBroadcast();
  size_t from = ea.vectorBlock();
  auto vectorRead = [&](size_t i) {
    ElementAccess::Access a = ea.access(i);
    return ea.elementwise(i) && (a == ElementAccess::Access::Contiguous ||
                                 (a == ElementAccess::Access::Broadcast && ea.whole(i, from)));
  };
  size_t widest = 1;
  for (size_t i = 0; i < c.f.args.size(); ++i)
    if (vectorRead(i))
      widest = std::max(widest, dtypeSize(c.f.args[i]->type.dtype));
  for (const Value *r : c.f.results)
    widest = std::max(widest, dtypeSize(r->type.dtype));
  unsigned vec = !anyBroadcast || from < c.rank ? unsigned(16 / widest) : 1;
  std::optional<KeptInPlace> kept = keptInPlace(c, ea);
  // The vector path skips whole vectors: cond must be one value a vector.
  bool keptVectors = kept && !vectorRead(kept->cond);
  if (anyBroadcast)
    ea.emitStrides(os);
  // The buffers as passed (in/out are __restrict: comparing them could
  // fold to false).
  if (kept)
    os << "  const bool keptInPlace = bufs[" << c.f.args.size() << "] == bufs[" << kept->kept
       << "];\n";
  os << "  const int64_t n = " << c.rowsExpr() << " * inner;\n" << c.gridHead();
  std::string vecEnd = "0";
  if (vec > 1) {
    std::string V = std::to_string(vec);
    // The type of `vec` elements of type t moved as one access.
    auto vt = [&](DType t) { return "tc_vec<" + std::string(c.st(t)) + ", " + V + ">"; };
    std::string aligned;
    auto check = [&](const std::string &ptr, DType t) {
      aligned +=
          (aligned.empty() ? "" : " && ") + ("tc_aligned(" + ptr + ", sizeof(" + vt(t) + "))");
    };
    for (size_t i = 0; i < c.f.args.size(); ++i)
      if (vectorRead(i))
        check("in" + std::to_string(i), c.f.args[i]->type.dtype);
    for (size_t i = 0; i < c.f.results.size(); ++i)
      check("out" + std::to_string(i), c.f.results[i]->type.dtype);
    if (anyBroadcast) { // vectors must not cross the block
      os << "  const int64_t vin = (int64_t)1";
      for (size_t d = from; d < c.rank; ++d)
        os << " * " << c.dim(c.f.results[0], d);
      os << ", vinV = vin / " << V << ";\n";
      aligned += " && vin % " + V + " == 0";
    }
    os << "  const int64_t nv = " << aligned << " ? n / " << V << " : 0;\n";
    c.emitGridLoops(
        os, "0", anyBroadcast,
        [&](const std::string &index) {
          os << "    const int64_t i = v * " << V << ";\n";
          if (anyBroadcast)
            ea.emitRowBases(os, index, from);
          // cond's one value first: a vector in place that keeps x loads
          // nothing else.
          std::vector<size_t> order;
          if (keptVectors)
            order.push_back(kept->cond);
          for (size_t i = 0; i < c.f.args.size(); ++i)
            if (!keptVectors || i != kept->cond)
              order.push_back(i);
          for (size_t i : order) {
            if (!ea.elementwise(i))
              continue;
            DType t = c.f.args[i]->type.dtype;
            std::string in = "in" + std::to_string(i), base = "base" + std::to_string(i);
            if (vectorRead(i))
              os << "    const " << vt(t) << " v" << i << " = *(const " << vt(t) << " *)(" << in
                 << " + "
                 << (ea.access(i) == ElementAccess::Access::Contiguous ? "i" : base + " + j * " + V)
                 << ");\n";
            else // one element for the whole vector
              os << "    const " << c.ct(t) << " a" << i << " = "
                 << c.load(t, in + "[" +
                                  (ea.access(i) == ElementAccess::Access::Scalar ? "0" : base) +
                                  "]")
                 << ";\n";
            if (keptVectors && i == kept->cond)
              os << skipKept(*kept, "    ");
          }
          for (size_t i = 0; i < c.f.results.size(); ++i)
            os << "    " << vt(c.f.results[i]->type.dtype) << " w" << i << ";\n";
          os << "#pragma unroll\n    for (int k = 0; k < " << V << "; ++k) {\n";
          for (size_t i = 0; i < c.f.args.size(); ++i)
            if (vectorRead(i)) {
              DType t = c.f.args[i]->type.dtype;
              os << "      const " << c.ct(t) << " a" << i << " = "
                 << c.load(t, "v" + std::to_string(i) + ".v[k]") << ";\n";
            }
          if (ex.usesIndex())
            os << "      const int64_t " << ex.indexName() << " = i + k;\n";
          os << body;
          for (size_t i = 0; i < c.f.results.size(); ++i)
            os << "      w" << i
               << ".v[k] = " << c.store(c.f.results[i]->type.dtype, ex.name(c.f.results[i]))
               << ";\n";
          os << "    }\n";
          for (size_t i = 0; i < c.f.results.size(); ++i)
            os << "    *(" << vt(c.f.results[i]->type.dtype) << " *)(out" << i << " + i) = w" << i
               << ";\n";
        },
        "v", "nv", "vinV");
    vecEnd = "nv * " + V;
  }
  // The scalar loop: its body once per index type when rows are divided.
  std::ostringstream scalar;
  ea.emitLoads(scalar, "i");
  if (kept)
    scalar << skipKept(*kept, "    ");
  if (ex.usesIndex())
    scalar << "    const int64_t " << ex.indexName() << " = i;\n";
  scalar << body;
  ex.emitStores(scalar, "i");
  c.emitGridLoops(os, vecEnd, anyBroadcast, [&](const std::string &index) {
    if (anyBroadcast)
      ea.emitRowBases(os, index);
    os << scalar.str();
  });
  os << "}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = kPointwiseBlock;
  k.vec = vec;
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace

std::optional<EmittedKernel> emitPointwise(const KernelContext &c, const KernelClass &) {
  if (inlinesMoves(c.f))
    return emitInlinedPointwise(c);
  ElementAccess ea(c, nullptr);
  Expressions ex(c);
  ex.setIndex("tc_e");
  std::ostringstream pro, body;
  if (!emitGroupOps(c, ex, nullptr, false, {}, pro, body))
    return std::nullopt;
  if (c.cuda())
    return emitCudaPointwise(c, ea, ex, body.str());
  return emitCpuRows(c, ea, ex, "", body.str(), {});
}

} // namespace tc::kernels
