// The RowReduction family: Softmax, LogSoftmax, LayerNormalization or
// LayerNormalizationGrad over the last axis, with a pointwise prologue (the
// ops before it, feeding its input) and epilogue. LayerNormalizationGrad
// reads two rows, X (the reduced input x) and g = dY * Scale, both kept.
// CPU: the row loop of Pointwise.cpp, with a first pass over the row keeping
// the reduced input in `acc` and the row's statistics in double. CUDA: short static rows a group of
// lanes each, several rows a block (laneRows decides); other rows a block each.
#include "Families.h"
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace tc::kernels {

namespace {

// The group's code around the reduction: the prologue and epilogue
// expressions, the reduced input's expression and the values computed
// before the reduction.
struct RowCode {
  std::string pro, body, reducedInput;
  std::string second; // LayerNormalizationGrad's g per element
  std::unordered_set<const Value *> prologue;
};

// Over the last axis only: the row is the kernel's inner loop.
bool checkRowReduction(const KernelContext &c, const Op &op,
                       std::unordered_set<const Value *> &prologue) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  if (r == 0 || x->type.shape != c.domain || op.result()->type.shape != c.domain)
    return c.noKernel(std::string(op.name()) + " whose result is not the group's domain");
  int64_t axis = op.getInt("axis");
  if (axis != -1 && axis != int64_t(r) - 1)
    return c.noKernel(std::string(op.name()) + " over an axis other than the last");
  if (op.results.size() != 1 && !op.is(OpKind::LayerNormalizationGrad))
    return c.noKernel("LayerNormalization with Mean/InvStdDev results");
  // The parameters (Scale, B; not LayerNormalizationGrad's dY, operand 2)
  // from memory or a scalar constant.
  size_t params = op.is(OpKind::LayerNormalization)       ? op.operands.size()
                  : op.is(OpKind::LayerNormalizationGrad) ? 2
                                                          : 1;
  for (size_t k = 1; k < params; ++k)
    if (const Value *p = op.operand(k); p && c.argIndex(p) == SIZE_MAX &&
                                        !(p->isConstant() && staticNumElements(p->type.shape) == 1))
      return c.noKernel("LayerNormalization parameters computed in the group");
  for (const auto &o : c.f.ops) {
    if (o.get() == &op)
      break;
    for (const Value *v : o->results)
      prologue.insert(v);
  }
  return true;
}

// Row statistics in double, as the reference kernels compute them; the
// sums vectorize (TC_REDUCE_LOOP lets them be reassociated: a different
// rounding of a double sum of floats, far inside any tolerance).
void emitRowStats(const KernelContext &c, const Op &op, std::ostream &os) {
  const char *T = c.ct(op.result()->type.dtype);
  if (op.is(OpKind::LayerNormalization) || op.is(OpKind::LayerNormalizationGrad)) {
    os << "    double mean = 0, var = 0;\n"
       << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) mean += acc[j];\n"
       << "    mean /= (double)inner;\n"
       << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) { const double d = acc[j] - "
          "mean; var += d * d; }\n"
       << "    var /= (double)inner;\n"
       << "    const double rstd = 1.0 / __builtin_sqrt(var + "
       << floatLiteral(op.getFloat("epsilon"), DType::F64) << ");\n";
    // mean(g) and mean(g * xhat), g kept after x in `acc`.
    if (op.is(OpKind::LayerNormalizationGrad))
      os << "    double s1 = 0, s2 = 0;\n"
         << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) { s1 += acc[inner + j]; s2 += "
            "acc[inner + j] * (acc[j] - mean); }\n"
         << "    s1 /= (double)inner;\n    s2 *= rstd / (double)inner;\n";
    return;
  }
  os << "    double shift = -__builtin_inf(), sum = 0;\n"
     << "    for (int64_t j = 0; j < inner; ++j) if (acc[j] > shift) shift = acc[j];\n"
     << "    TC_REDUCE_LOOP for (int64_t j = 0; j < inner; ++j) sum += tc_exp(acc[j] - (" << T
     << ")shift);\n";
  if (op.is(OpKind::LogSoftmax))
    os << "    const double logsum = __builtin_log(sum);\n";
}

// The reduction's value per element: kept in `acc` (CPU) or `x` (CUDA).
bool emitAnchor(const KernelContext &c, Expressions &ex, const Op &op, const char *rt,
                RowCode &code, std::ostream &os) {
  auto in = ex.operand(op.operand(0));
  if (!in)
    return c.noKernel(std::string(op.name()) + " reading a non-scalar constant");
  code.reducedInput = *in;
  std::string e, xj = c.cuda() ? "x" : "acc[j]";
  if (op.is(OpKind::LayerNormalizationGrad)) {
    auto dy = ex.operand(op.operand(2)), scale = ex.operand(op.operand(1));
    if (!dy || !scale)
      return c.noKernel("LayerNormalizationGrad reading a non-scalar constant");
    const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
    code.second = "(" + std::string(A) + ")(" + *dy + ") * (" + A + ")(" + *scale + ")";
    std::string gj = c.cuda() ? "g" : "acc[inner + j]";
    e = std::string(rt) + "(rstd * (" + gj + " - s1 - (" + xj + " - mean) * rstd * s2))";
    ex.define(op.result(), rt, e, os);
    // dY * xhat: dY read again in the epilogue (a prologue value reruns
    // the prologue there: epilogueRerunsPrologue).
    if (op.results.size() > 1)
      ex.define(op.result(1), rt,
                std::string(rt) + "((" + A + ")(" + *dy + ") * (" + xj + " - mean) * rstd)", os);
    return true;
  }
  if (op.is(OpKind::Softmax))
    e = std::string(rt) + "(tc_exp(" + xj + " - (" + rt + ")shift) / sum)";
  else if (op.is(OpKind::LogSoftmax))
    e = std::string(rt) + "(" + xj + " - shift - logsum)";
  else {
    e = std::string(rt) + "((" + xj + " - mean) * rstd)";
    std::vector<std::string> p;
    for (size_t k = 1; k < op.operands.size(); ++k)
      if (const Value *v = op.operand(k)) {
        auto pe = ex.operand(v);
        if (!pe)
          return c.noKernel("LayerNormalization with a non-scalar constant parameter");
        p.push_back(*pe);
      }
    e = e + " * " + p.at(0);
    if (p.size() > 1)
      e += " + " + p[1];
  }
  ex.define(op.result(), rt, e, os);
  return true;
}

// What both CUDA geometries share: `pass` emits a loop over the row's
// elements running `stmt` with x the element's reduced input (the first
// pass computes it with the prologue and stores the prologue's results, the
// last runs the epilogue and stores the other results); `reduce` combines a
// statistic over the row's threads.
struct CudaRowLoop {
  std::function<void(const std::string &stmt, bool first, bool last)> pass;
  std::function<std::string(const std::string &v, const char *op)> reduce;
};

// The epilogue reads a prologue value other than through the reduction:
// the last pass recomputes the prologue.
bool epilogueRerunsPrologue(const KernelContext &c, const Op &op, const RowCode &code) {
  // LayerNormalizationGrad's dY * xhat reads dY in the epilogue.
  bool rerun = op.is(OpKind::LayerNormalizationGrad) && op.results.size() > 1 &&
               code.prologue.count(op.operand(2)) != 0;
  bool after = false;
  for (const auto &o : c.f.ops) {
    if (after)
      for (const Value *v : o->operands)
        rerun |= v && code.prologue.count(v);
    after |= o.get() == &op;
  }
  return rerun;
}

// The statistics in float (double for f64), then the last pass. `broken`
// (the test-only variant of TC_TEST_BROKEN_VARIANT): every sum halved.
void emitCudaRowBody(const KernelContext &c, const Op &op, const char *A, CudaRowLoop l,
                     const std::string &epilogue, bool broken, std::ostream &os) {
  if (broken)
    l.reduce = [reduce = l.reduce](const std::string &v, const char *f) {
      std::string r = reduce(v, f);
      return std::string_view(f) == "tc_add_op" ? "(" + r + " * 0.5f)" : r;
    };
  if (op.is(OpKind::LayerNormalization) || op.is(OpKind::LayerNormalizationGrad)) {
    os << "    " << A << " mean = 0;\n";
    l.pass("      mean += x;\n", true, false);
    os << "    mean = " << l.reduce("mean", "tc_add_op") << " / (" << A << ")inner;\n"
       << "    " << A << " var = 0;\n";
    l.pass("      var += (x - mean) * (x - mean);\n", false, false);
    os << "    var = " << l.reduce("var", "tc_add_op") << " / (" << A << ")inner;\n"
       << "    const " << A << " rstd = " << A << "(1) / tc_sqrt(var + "
       << floatLiteral(op.getFloat("epsilon"),
                       op.result()->type.dtype == DType::F64 ? DType::F64 : DType::F32, c.dialect)
       << ");\n";
    if (op.is(OpKind::LayerNormalizationGrad)) { // mean(g), mean(g * xhat)
      os << "    " << A << " s1 = 0, s2 = 0;\n";
      l.pass("      s1 += g;\n      s2 += g * (x - mean);\n", false, false);
      os << "    s1 = " << l.reduce("s1", "tc_add_op") << " / (" << A << ")inner;\n"
         << "    s2 = " << l.reduce("s2", "tc_add_op") << " * rstd / (" << A << ")inner;\n";
    }
  } else {
    os << "    " << A << " shift = -" << c.info().inf << ";\n";
    l.pass("      shift = tc_fmax(shift, x);\n", true, false);
    os << "    shift = " << l.reduce("shift", "tc_max_op") << ";\n    " << A << " sum = 0;\n";
    l.pass("      sum += tc_exp(x - shift);\n", false, false);
    os << "    sum = " << l.reduce("sum", "tc_add_op") << ";\n";
    if (op.is(OpKind::LogSoftmax))
      os << "    const " << A << " logsum = tc_log(sum);\n";
  }
  l.pass(epilogue, false, true);
}

// Short rows: `lanes` lanes per row (a power of two up to a warp), each
// keeping `vectors` runs of `width` consecutive elements in registers.
struct LaneRows {
  unsigned lanes = 1, width = 1, vectors = 1;
};

// A CUDA row reduction's geometry: `lanes` (several rows a block of
// `block` threads) or, without, a block of up to `block` threads a row.
// `broken`: test-only (emitCudaRowBody).
struct RowGeometry {
  std::optional<LaneRows> lanes;
  unsigned block = kRowsBlock;
  bool broken = false;
  // The tuning record's name: "lanes=4,width=8,block=128", "rows,block=1024".
  std::string name() const {
    if (broken)
      return "broken";
    if (!lanes)
      return "rows,block=" + std::to_string(block);
    return "lanes=" + std::to_string(lanes->lanes) + ",width=" + std::to_string(lanes->width) +
           ",block=" + std::to_string(block);
  }
};
// One block per row: pass 1 computes the prologue and keeps the reduced
// input (up to kRowCache elements per thread in registers; longer rows
// recompute the rest from memory), block reductions give the statistics,
// the last pass runs the epilogue.
std::optional<EmittedKernel> emitCudaBlockRows(const KernelContext &c, const Op &op,
                                               const ElementAccess &ea, const Expressions &ex,
                                               const RowCode &code, const RowGeometry &geo) {
  const std::string &pro = code.pro;
  const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
  bool rerunPrologue = epilogueRerunsPrologue(c, op, code);
  std::ostringstream os;
  std::string symbol = c.emitStart(os, geo.block);
  bool anyBroadcast = ea.readsBroadcast();
  if (anyBroadcast)
    ea.emitStrides(os);
  std::string K = std::to_string(kRowCache);
  os << "  const int64_t rows = " << c.rowsExpr() << ";\n"
     << "  __shared__ " << A << " tc_red[32];\n"
     << "  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {\n";
  if (anyBroadcast)
    ea.emitRowBases(os);
  bool two = !code.second.empty(); // g kept beside x
  os << "    " << A << " cache[" << K << "];\n";
  if (two)
    os << "    " << A << " gcache[" << K << "];\n";
  CudaRowLoop l;
  l.pass = [&](const std::string &stmt, bool first, bool last) {
    std::ostringstream el; // the element's x (and g), recomputed from memory
    ea.emitLoads(el);
    el << pro << "      const " << A << " x = " << code.reducedInput << ";\n";
    if (two)
      el << "      const " << A << " g = " << code.second << ";\n";
    if (first)
      ex.emitStores(el, "row * inner + j", code.prologue, /*inPrologue=*/true);
    std::ostringstream lastLoads, stores;
    if (last) {
      ea.emitLoads(lastLoads);
      if (rerunPrologue)
        lastLoads << pro;
      ex.emitStores(stores, "row * inner + j", code.prologue, /*inPrologue=*/false);
    }
    os << "#pragma unroll\n    for (int k = 0; k < " << K << "; ++k) {\n"
       << "      const int64_t j = threadIdx.x + (int64_t)k * blockDim.x;\n"
       << "      if (j >= inner) break;\n";
    if (first)
      os << el.str() << "      cache[k] = x;\n" << (two ? "      gcache[k] = g;\n" : "");
    else
      os << lastLoads.str() << "      const " << A << " x = cache[k];\n"
         << (two ? "      const " + std::string(A) + " g = gcache[k];\n" : "");
    os << stmt << stores.str() << "    }\n";
    os << "    for (int64_t j = threadIdx.x + " << K << " * (int64_t)blockDim.x; j < inner; j += "
       << "blockDim.x) {\n"
       << el.str() << stmt << stores.str() << "    }\n";
  };
  l.reduce = [](const std::string &v, const char *f) {
    return "tc_block_reduce(" + v + ", tc_red, " + f + "())";
  };
  emitCudaRowBody(c, op, A, l, code.body, geo.broken, os);
  os << "  }\n}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.launch = LaunchKind::Rows;
  k.block = geo.block;
  k.vec = kRowCache;
  k.halfTypes = c.usesHalf();
  return k;
}

// `lanes` kernels: threads per block, the most elements a lane keeps and
// the fewest lanes' vectors that make a lane's share.
constexpr unsigned kLanesBlock = 128, kLaneCache = 32, kLaneVectors = 4;

// Read a vector at a time: contiguous arguments and broadcast ones whole
// along the row (LayerNorm's scale and bias: the row's stride is 1).
bool laneVectorRead(const KernelContext &c, const ElementAccess &ea, size_t i) {
  return ea.elementwise(i) &&
         (ea.access(i) == ElementAccess::Access::Contiguous ||
          (ea.access(i) == ElementAccess::Access::Broadcast && ea.whole(i, c.rank - 1)));
}

// The row's vector width: 16 bytes of the widest of its tensors, halved
// until it divides the static row.
unsigned rowVectorWidth(const KernelContext &c, const ElementAccess &ea) {
  size_t widest = 1; // of the row's tensors (the parameters' vectors may take two accesses)
  for (size_t i = 0; i < c.f.args.size(); ++i)
    if (ea.elementwise(i) && ea.access(i) == ElementAccess::Access::Contiguous)
      widest = std::max(widest, dtypeSize(c.f.args[i]->type.dtype));
  for (const Value *r : c.f.results)
    widest = std::max(widest, dtypeSize(r->type.dtype));
  unsigned width = unsigned(16 / widest);
  while (width > 1 && c.domain.back().size % width)
    width /= 2;
  return width;
}

// THE choice of a CUDA row-reduction's geometry, from the static row
// length: a row that fits a warp at kLaneCache elements a lane gets the
// fewest lanes (a power of two) holding at most kLaneVectors vectors each,
// so a block of kLanesBlock threads runs several rows and a row's
// statistics are warp shuffles only; a longer or dynamic row (or
// TC_CUDA_ROW_BLOCKS set, for comparisons) a block (emitCudaBlockRows).
// Vectors are 16 bytes of the widest type of the row's tensors, narrowed
// until they divide the static row (1000 f16: 8; 49: 1): rowVectorWidth.
std::optional<LaneRows> laneRows(const KernelContext &c, const ElementAccess &ea) {
  const Dim &d = c.domain.back();
  if (!d.isStatic() || d.size <= 0 || std::getenv("TC_CUDA_ROW_BLOCKS"))
    return std::nullopt;
  LaneRows g;
  g.width = rowVectorWidth(c, ea);
  int64_t vectors = d.size / g.width;
  while (g.lanes < 32 && (vectors + g.lanes - 1) / g.lanes > kLaneVectors)
    g.lanes *= 2;
  int64_t per = (vectors + g.lanes - 1) / g.lanes;
  if (per * g.width > kLaneCache)
    return std::nullopt;
  g.vectors = unsigned(per);
  return g;
}

// The geometry variants (tc-codegen --tune), the default first (laneRows'
// choice, else a block a row): for `lanes`, twice and half the lanes a
// row (a lane then keeps up to 2 * kLaneCache elements), 256-thread blocks
// (twice the rows a block) and a block a row; for a block a row, at most
// 256 threads (rows over 1024 elements: more elements a thread) and a warp
// a row where a lane keeps at most 2 * kLaneCache elements. With
// TC_TEST_BROKEN_VARIANT set, a last one named "broken" (wrong sums).
std::vector<RowGeometry> rowVariants(const KernelContext &c, const ElementAccess &ea) {
  std::vector<RowGeometry> v;
  const Dim &d = c.domain.back();
  auto withLanes = [&](LaneRows g, unsigned lanes, unsigned block) {
    int64_t vectors = d.size / g.width;
    g.lanes = lanes;
    g.vectors = unsigned((vectors + lanes - 1) / lanes);
    if (lanes >= 1 && lanes <= 32 && g.vectors * g.width <= 2 * kLaneCache)
      v.push_back({g, block});
  };
  if (std::optional<LaneRows> g = laneRows(c, ea)) {
    v.push_back({g, kLanesBlock});
    if (g->lanes < 32)
      withLanes(*g, g->lanes * 2, kLanesBlock);
    if (g->lanes > 1)
      withLanes(*g, g->lanes / 2, kLanesBlock);
    v.push_back({g, 2 * kLanesBlock});
    v.push_back({std::nullopt, kRowsBlock});
  } else {
    v.push_back({std::nullopt, kRowsBlock});
    if (!d.isStatic() || d.size > 1024)
      v.push_back({std::nullopt, 256});
    if (d.isStatic() && d.size > 0 && !std::getenv("TC_CUDA_ROW_BLOCKS")) {
      LaneRows w;
      w.width = rowVectorWidth(c, ea);
      withLanes(w, 32, kLanesBlock);
    }
  }
  if (std::getenv("TC_TEST_BROKEN_VARIANT")) {
    v.push_back(v.front());
    v.back().broken = true;
  }
  return v;
}

// Several rows per block, `lanes` lanes a row: each lane's vectors of the
// row (vector v of lane l at elements (v * lanes + l) * width ...) are read
// once, 16 bytes at a time where every pointer is aligned, kept in
// registers for the statistics' passes and the epilogue, whose results are
// written a vector at a time. Every lane runs every pass and shuffle (rows
// past the last are computed on nothing and not stored).
std::optional<EmittedKernel> emitCudaLaneRows(const KernelContext &c, const Op &op,
                                              const ElementAccess &ea, const Expressions &ex,
                                              const RowCode &code, const RowGeometry &geo) {
  const LaneRows &g = *geo.lanes;
  const unsigned block = geo.block;
  const char *A = op.result()->type.dtype == DType::F64 ? "double" : "float";
  bool rerunPrologue = epilogueRerunsPrologue(c, op, code);
  std::string W = std::to_string(g.width);
  auto vt = [&](DType t) { return "tc_vec<" + std::string(c.st(t)) + ", " + W + ">"; };
  std::ostringstream os;
  std::string symbol = c.emitStart(os, block);
  bool anyBroadcast = ea.readsBroadcast();
  if (anyBroadcast)
    ea.emitStrides(os);
  std::string aligned;
  auto check = [&](const std::string &ptr, DType t) {
    aligned += (aligned.empty() ? "" : " && ") + ("tc_aligned(" + ptr + ", sizeof(" + vt(t) + "))");
  };
  for (size_t i = 0; i < c.f.args.size(); ++i)
    if (laneVectorRead(c, ea, i))
      check("in" + std::to_string(i), c.f.args[i]->type.dtype);
  for (size_t i = 0; i < c.f.results.size(); ++i)
    check("out" + std::to_string(i), c.f.results[i]->type.dtype);
  os << "  constexpr int L = " << g.lanes << ", W = " << W << ", K = " << g.vectors << ";\n"
     << "  const int64_t rows = " << c.rowsExpr() << ", per = blockDim.x / L;\n"
     << "  const int lane = threadIdx.x % L;\n"
     << "  const bool vec = " << (g.width == 1 ? "true" : aligned) << ";\n"
     << "  for (int64_t r0 = (int64_t)blockIdx.x * per; r0 < rows; r0 += (int64_t)gridDim.x * "
        "per) {\n"
     << "    const int64_t row = r0 + threadIdx.x / L;\n"
     << "    const bool live = row < rows;\n";
  if (anyBroadcast)
    ea.emitRowBases(os);
  bool two = !code.second.empty(); // g kept beside x
  os << "    " << A << " cache[K * W];\n";
  if (two)
    os << "    " << A << " gcache[K * W];\n";
  // Argument i is read by `code` (its a<i>): a pass loads only those.
  auto reads = [](const std::string &code, size_t i) {
    std::string a = "a" + std::to_string(i);
    for (size_t at = code.find(a); at != std::string::npos; at = code.find(a, at + 1))
      if ((at == 0 || !std::isalnum((unsigned char)code[at - 1])) &&
          (at + a.size() == code.size() || !std::isalnum((unsigned char)code[at + a.size()])))
        return true;
    return false;
  };
  // A vector of argument i at the lane's j0 (one access when `vec`).
  auto vectorLoads = [&](std::ostream &o, const std::string &use) {
    for (size_t i = 0; i < c.f.args.size(); ++i) {
      if (!laneVectorRead(c, ea, i) || !reads(use, i))
        continue;
      std::string n = std::to_string(i), t = vt(c.f.args[i]->type.dtype);
      std::string at =
          "in" + n + " + " +
          (ea.access(i) == ElementAccess::Access::Contiguous ? "row * inner" : "base" + n) +
          " + j0";
      o << "      " << t << " v" << n << ";\n      if (vec) v" << n << " = *(const " << t << " *)("
        << at << ");\n      else for (int t = 0; t < W; ++t) v" << n << ".v[t] = (" << at
        << ")[t];\n";
    }
  };
  auto elementLoads = [&](std::ostream &o, const std::string &use) {
    for (size_t i = 0; i < c.f.args.size(); ++i) {
      if (!ea.elementwise(i) || !reads(use, i))
        continue;
      DType t = c.f.args[i]->type.dtype;
      std::string n = std::to_string(i);
      std::string ref = laneVectorRead(c, ea, i) ? "v" + n + ".v[t]"
                        : ea.access(i) == ElementAccess::Access::Scalar
                            ? "in" + n + "[0]"
                            : "in" + n + "[base" + n + " + j * step" + n + "]";
      o << "        const " << c.ct(t) << " a" << n << " = " << c.load(t, ref) << ";\n";
    }
  };
  // The results a pass stores: the prologue's in the first, the rest in the last.
  auto stored = [&](bool first) {
    std::vector<size_t> r;
    for (size_t i = 0; i < c.f.results.size(); ++i)
      if ((code.prologue.count(c.f.results[i]) != 0) == first)
        r.push_back(i);
    return r;
  };
  CudaRowLoop l;
  l.pass = [&](const std::string &stmt, bool first, bool last) {
    std::vector<size_t> outs = first || last ? stored(first) : std::vector<size_t>{};
    os << "#pragma unroll\n    for (int k = 0; k < K; ++k) {\n"
       << "      const int64_t j0 = ((int64_t)k * L + lane) * W;\n"
       << "      if (!live || j0 >= inner) break;\n";
    bool loads = first || (last && rerunPrologue);
    // What the pass's element code reads.
    std::string use =
        (loads ? code.pro : "") + (first ? code.reducedInput + code.second : "") + stmt;
    vectorLoads(os, use);
    for (size_t i : outs)
      os << "      " << vt(c.f.results[i]->type.dtype) << " w" << i << ";\n";
    os << "#pragma unroll\n      for (int t = 0; t < W; ++t) {\n"
       << "        const int64_t j = j0 + t;\n        (void)j;\n";
    elementLoads(os, use);
    if (loads)
      os << code.pro;
    if (first)
      os << "        const " << A << " x = " << code.reducedInput << ";\n"
         << "        cache[k * W + t] = x;\n";
    else
      os << "        const " << A << " x = cache[k * W + t];\n";
    if (two && first)
      os << "        const " << A << " g = " << code.second << ";\n"
         << "        gcache[k * W + t] = g;\n";
    else if (two)
      os << "        const " << A << " g = gcache[k * W + t];\n";
    os << stmt;
    for (size_t i : outs)
      os << "        w" << i
         << ".v[t] = " << c.store(c.f.results[i]->type.dtype, ex.name(c.f.results[i])) << ";\n";
    os << "      }\n";
    for (size_t i : outs) {
      std::string n = std::to_string(i), at = "out" + n + " + row * inner + j0";
      os << "      if (vec) *(" << vt(c.f.results[i]->type.dtype) << " *)(" << at << ") = w" << n
         << ";\n      else for (int t = 0; t < W; ++t) (" << at << ")[t] = w" << n << ".v[t];\n";
    }
    os << "    }\n";
  };
  // Test-only: the statistics over half the lanes (a wrong row the
  // host-emulation tests must catch).
  unsigned over = std::getenv("TC_TEST_LANES_HALF_REDUCE") && g.lanes > 1 ? g.lanes / 2 : g.lanes;
  l.reduce = [&](const std::string &v, const char *f) {
    return "tc_lanes_reduce<" + std::to_string(over) + ">(" + v + ", " + f + "())";
  };
  emitCudaRowBody(c, op, A, l, code.body, geo.broken, os);
  os << "  }\n}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.launch = LaunchKind::Lanes;
  k.block = block;
  k.vec = g.lanes;
  k.halfTypes = c.usesHalf();
  return k;
}

} // namespace

std::optional<EmittedKernel> emitRowReduction(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  RowCode code;
  if (!checkRowReduction(c, op, code.prologue))
    return std::nullopt;
  ElementAccess ea(c, nullptr);
  Expressions ex(c);
  // Ops before the reduction are its prologue (run in the first pass over
  // the row, and again in the second where the epilogue needs them).
  std::ostringstream pro, body;
  auto anchor = [&](const Op &a, const char *rt, std::ostream &os) {
    return emitAnchor(c, ex, a, rt, code, os);
  };
  if (!emitGroupOps(c, ex, &op, /*split=*/true, anchor, pro, body))
    return std::nullopt;
  code.pro = pro.str();
  code.body = body.str();
  if (c.cuda()) {
    std::vector<RowGeometry> variants = rowVariants(c, ea);
    const RowGeometry &geo = variants[c.variant];
    std::optional<EmittedKernel> k = geo.lanes ? emitCudaLaneRows(c, op, ea, ex, code, geo)
                                               : emitCudaBlockRows(c, op, ea, ex, code, geo);
    if (k) {
      k->variant = geo.name();
      k->variantCount = unsigned(variants.size());
    }
    return k;
  }
  CpuRowParts parts;
  parts.prologue = code.prologue;
  bool two = !code.second.empty(); // g kept after x: acc[inner + j]
  parts.setup = [&](std::ostream &os) {
    const char *T = c.ct(op.result()->type.dtype);
    os << "  " << T << " *acc = (" << T << " *)malloc(sizeof(double) * (inner ? inner : 1)"
       << (two ? " * 2" : "") << ");\n";
  };
  parts.row = [&](std::ostream &os) {
    // Pass 1: the prologue, the reduced input kept in `acc`, prologue results.
    os << "    TC_SIMD_LOOP for (int64_t j = 0; j < inner; ++j) {\n";
    ea.emitLoads(os);
    os << code.pro << "      acc[j] = " << code.reducedInput << ";\n";
    if (two)
      os << "      acc[inner + j] = " << code.second << ";\n";
    ex.emitStores(os, "row * inner + j", code.prologue, /*inPrologue=*/true);
    os << "    }\n";
    emitRowStats(c, op, os);
  };
  return emitCpuRows(c, ea, ex, code.pro, code.body, parts);
}

} // namespace tc::kernels
