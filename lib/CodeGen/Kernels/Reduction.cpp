// The Reduction family (CPU and CUDA): an anchor of ReducePlans.cpp (a
// Reduce*, global pool, ArgMax/ArgMin, or a normalization over any axes)
// with a pointwise prologue over its input X and an epilogue over its
// result, or back over X reading the reduced values (RMSNorm's x * rstd).
// A row is the elements of X that share their index over the kept axes:
// one pass over the row per statistic, then the results, per row or (over
// X) in a last pass. Rows whose reduced axes are X's trailing ones are
// contiguous: CUDA gives each a block (a block reduction per statistic);
// other rows are a loop per row (CUDA: a thread per row, neighbouring
// threads reading neighbouring elements), except on CUDA one statistic
// per row over one run of axes before kept inner ones (NHWC's ReduceMean
// over H, W): `columns`, whose blocks and further blocks split the rows'
// extent (Columns.cpp), and long contiguous rows `split` across blocks, a
// launch per statistic (SplitRows.cpp; a row is one block's work no
// longer: bert's loss, a sum over 31M elements, took one block 11 ms). The CPU
// accumulates in double, as the reference kernels do; CUDA in float
// (double for f64).
#include "ReductionEmitter.h"
#include <algorithm>
#include <sstream>

namespace tc::kernels {

namespace reduce {

bool analyze(const KernelContext &c, const Op &anchor, Layout &l) {
  l.anchor = &anchor;
  l.x = anchor.operand(0);
  const Shape &xs = l.x->type.shape, &rs = anchor.result()->type.shape;
  size_t r = xs.size();
  auto plan = reducePlan(c, anchor);
  if (!plan)
    return false;
  l.plan = std::move(*plan);
  for (const Value *a : c.f.args)
    if (a->type.shape == xs && !l.xDims)
      l.xDims = a;
  if (!l.xDims && c.domain == xs)
    l.xDims = c.f.results[0];
  // X made in the group from broadcast operands (a loss's class compare of
  // [1, C, 1] and [N, 1, D]): each dim from an operand that has it.
  if (!l.xDims && c.hasDims(l.x))
    l.xDims = l.x;
  if (!l.xDims)
    return c.noKernel(std::string(anchor.name()) + " whose input's dims no argument has");
  l.viewDims = l.plan.viewDims;
  if (l.viewDims.empty())
    for (size_t d = 0; d < r; ++d)
      l.viewDims.push_back(c.dim(l.xDims, d));
  const std::vector<bool> &red = l.plan.reduced;
  size_t k = red.size();
  while (k > 0 && red[k - 1])
    --k;
  l.contiguous = std::count(red.begin(), red.end(), true) == long(red.size() - k);
  l.perElementResults = c.domain == xs && (l.plan.perElement || rs != xs);
  if (!l.perElementResults && c.domain != rs)
    return c.noKernel("results of neither the reduction's input nor its result shape");
  if (l.plan.arg && c.f.ops.back().get() != &anchor)
    return c.noKernel(std::string(anchor.name()) + " with an epilogue");
  bool after = false;
  std::map<size_t, Where> reads;
  for (const auto &o : c.f.ops) {
    Where w = Where::Prologue;
    if (o.get() == &anchor) {
      after = true;
      w = l.plan.perElement ? Where::Element : Where::Row;
    } else if (after) {
      const Shape &s = o->result()->type.shape;
      if (s == xs && (l.plan.perElement || rs != xs))
        w = Where::Element;
      else if (s == rs && !l.plan.perElement)
        w = Where::Row;
      else
        return c.noKernel("an op over neither the reduction's input nor its result");
    } else if (o->result()->type.shape != xs) {
      return c.noKernel("a prologue op over other than the reduction's input");
    }
    l.where[o.get()] = w;
    for (size_t n = 0; n < o->operands.size(); ++n) {
      size_t i = c.argIndex(o->operands[n]);
      if (i == SIZE_MAX || (o.get() == &anchor && n > 0)) // parameters: ReducePlan::params
        continue;
      const Shape &s = c.f.args[i]->type.shape;
      auto cnt = staticNumElements(s);
      bool scalar = cnt && *cnt == 1;
      if (w == Where::Row && o.get() != &anchor) {
        if (s != rs && !scalar)
          return c.noKernel("a broadcast operand of a reduction's epilogue");
        l.rowArgs.push_back(i);
      } else if (s == xs || scalar) {
        l.elementArgs.push_back(i);
      } else {
        if (s.size() > r)
          return c.noKernel("an operand of more dims than the reduction's input");
        l.broadcastArgs.push_back(i);
      }
    }
  }
  for (auto *v : {&l.elementArgs, &l.broadcastArgs, &l.rowArgs}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  // Codegen passes non-scalar constants as arguments (Codegen.cpp).
  // (A one-element constant stays in the group: its value is a literal.)
  for (auto &[v, at] : l.plan.params)
    if (c.argIndex(v) == SIZE_MAX && !scalarConstant(v))
      return c.noKernel(std::string(anchor.name()) + " parameters computed in the group");
  l.redBegin = size_t(std::find(red.begin(), red.end(), true) - red.begin());
  l.redEnd = l.redBegin;
  while (l.redEnd < red.size() && red[l.redEnd])
    ++l.redEnd;
  l.columns = c.cuda() && !l.contiguous && !l.plan.arg && l.plan.stats.size() == 1 &&
              !l.perElementResults && l.plan.viewDims.empty() &&
              std::count(red.begin(), red.end(), true) == long(l.redEnd - l.redBegin);
  // Row statistics (LayerNorm's Mean / InvStdDev) go beside per-element
  // results, stored once per row: a block or a thread per row, not split.
  if (!l.plan.topK && anchor.results.size() > 1) {
    if (!l.perElementResults)
      return c.noKernel(std::string(anchor.name()) + "'s Mean / InvStdDev without its Y");
    for (const auto &o : c.f.ops)
      for (const Value *v : o->operands)
        if (v && v->def == &anchor && v->resultIndex > 0)
          return c.noKernel(std::string(anchor.name()) + "'s Mean / InvStdDev read in the group");
  }
  // Results of the reduction's result shape beside per-element ones (an
  // expanded LayerNorm's Mean / InvStdDev, batch norm's backward): computed
  // in the row's epilogue, stored once per row like the row statistics.
  for (const Value *v : c.f.results) {
    if (v->type.shape == c.domain || (v->def == &anchor && v->resultIndex > 0))
      continue;
    if (l.plan.topK || l.plan.arg) // rowBody/topK store their own results
      return c.noKernel(std::string(anchor.name()) + " beside results of its input's shape");
    if (!v->def || !l.where.count(v->def) || l.where.at(v->def) != Where::Row)
      return c.noKernel("a result of the reduction's result shape not computed per row");
    l.rowResults = true;
  }
  l.split = takesSplit(c, l) && (l.plan.topK || anchor.results.size() == 1);
  return true;
}

bool Emitter::emitOps() {
  std::ostringstream p, row, elem;
  for (const auto &o : c.f.ops) {
    Where w = l.where.at(o.get());
    std::ostream &os = w == Where::Prologue ? p : w == Where::Row ? row : elem;
    if (o.get() != l.anchor) {
      if (!ex.emit(*o, os))
        return false;
      continue;
    }
    auto in = ex.operand(l.x);
    if (!in)
      return c.noKernel(std::string(o->name()) + " of a constant");
    reducedInput = *in;
    if (l.plan.topK) { // stored by rowBody
      ex.bind(o->results[0], "tv");
      ex.bind(o->results[1], "ti");
      continue;
    }
    if (l.plan.arg) {
      ex.bind(o->result(), "bi");
      continue;
    }
    size_t stats = o->results.size() - 1; // row statistics beside the result (rowValues)
    if (stats > l.plan.rowValues.size())
      return c.noKernel(std::string(o->name()) + " with several results");
    const char *T = stats ? c.ct(o->result()->type.dtype) : ex.resultType(*o);
    if (!T)
      return false;
    ex.define(o->result(), T, std::string(T) + "(" + l.plan.value + ")", os);
    for (size_t k = 1; k <= stats; ++k) {
      const char *S = c.ct(o->results[k]->type.dtype);
      ex.define(o->results[k], S, std::string(S) + "(" + l.plan.rowValues[k - 1] + ")", row);
      rowStats.insert(o->results[k]);
    }
  }
  for (const Value *r : c.f.results) {
    if (!ex.computed(r))
      return c.noKernel("a result that is not computed in the group");
    if (l.rowResults && r->type.shape != c.domain) // per row (analyze)
      rowStats.insert(r);
  }
  pro = p.str();
  rowCode = row.str();
  elemCode = elem.str();
  return true;
}

std::string Emitter::initOf(const ReduceStat &s) const {
  return s.init == "-inf"  ? "-" + std::string(c.info().inf)
         : s.init == "inf" ? c.info().inf
                           : "(A)" + s.init; // setup's typedef
}

void Emitter::setup(std::ostream &os) {
  const std::vector<bool> &red = l.plan.reduced;
  size_t q = l.viewDims.size(), r = l.x->type.rank();
  os << "  typedef " << A << " A; // the accumulators' type\n";
  for (size_t d = 0; d < q; ++d)
    os << "  const int64_t v" << d << " = " << l.viewDims[d] << ";\n";
  std::string L = "(int64_t)1", rows = "(int64_t)1";
  for (size_t d = 0; d < q; ++d)
    (red[d] ? L : rows) += " * v" + std::to_string(d);
  os << "  const int64_t L = " << L << ", rows = " << rows << ";\n";
  // Row-major strides of the view.
  for (size_t d = q; d-- > 0;)
    os << "  const int64_t vs" << d << " = "
       << (d + 1 == q ? std::string("1")
                      : "vs" + std::to_string(d + 1) + " * v" + std::to_string(d + 1))
       << ";\n";
  for (size_t i : l.broadcastArgs) {
    const Value *a = c.f.args[i];
    size_t ra = a->type.rank();
    os << "  int64_t bs" << i << "[" << std::max<size_t>(r, 1) << "];\n  { int64_t s = 1;\n";
    for (size_t d = r; d-- > 0;) {
      if (d + ra < r) {
        os << "    bs" << i << "[" << d << "] = 0;\n";
        continue;
      }
      std::string dim = c.dim(a, d + ra - r);
      os << "    bs" << i << "[" << d << "] = " << dim << " == 1 ? 0 : s; s *= " << dim << ";\n";
    }
    os << "  }\n";
  }
}

// The element's loads, prologue and reduced input x; in the last pass also
// the parameters, the element ops and the stores.
std::string Emitter::loads(bool final, const char *vector, const std::vector<size_t> &lanes,
                           const char *laneAt) const {
  std::ostringstream os;
  size_t r = l.x->type.rank();
  auto inLanes = [&](size_t i) {
    return vector && std::find(lanes.begin(), lanes.end(), i) != lanes.end();
  };
  // Element i's place in each broadcast argument, by the axes it varies
  // along (a per-channel [C] on NHWC: one modulo), static dims as literals
  // (the compiler multiplies instead of dividing).
  for (size_t i : l.broadcastArgs) {
    if (inLanes(i))
      continue;
    const Shape &as = c.f.args[i]->type.shape;
    auto varies = [&](size_t d) {
      return d + as.size() >= r && as[d + as.size() - r] != Dim::fixed(1);
    };
    size_t top = 0;
    while (top < r && !varies(top))
      ++top;
    os << "      int64_t b" << i << " = 0;\n      { int64_t rem = i;\n";
    for (size_t d = r; d-- > top;) {
      const std::string e = c.extent(l.xDims, d), b = "b" + std::to_string(i);
      if (!varies(d))
        os << "        rem /= " << e << ";\n";
      else if (d == top)
        os << "        " << b << " += rem % " << e << " * bs" << i << "[" << d << "];\n";
      else
        os << "        { const int64_t q = rem % " << e << "; rem /= " << e << "; " << b
           << " += q * bs" << i << "[" << d << "]; }\n";
    }
    os << "      }\n";
  }
  auto load = [&](size_t i, const std::string &at) {
    DType t = c.f.args[i]->type.dtype;
    os << "      const " << c.ct(t) << " a" << i << " = "
       << c.load(t, "in" + std::to_string(i) + "[" + at + "]") << ";\n";
  };
  for (size_t i : l.elementArgs) {
    DType t = c.f.args[i]->type.dtype;
    if (vector && c.f.args[i]->type.shape == l.x->type.shape)
      os << "      const " << c.ct(t) << " a" << i << " = "
         << c.load(t, "v" + std::to_string(i) + vector) << ";\n";
    else
      load(i, c.f.args[i]->type.shape == l.x->type.shape ? "i" : "0");
  }
  for (size_t i : l.broadcastArgs) {
    DType t = c.f.args[i]->type.dtype;
    if (inLanes(i))
      os << "      const " << c.ct(t) << " a" << i << " = "
         << c.load(t, "c" + std::to_string(i) + (laneAt ? laneAt : vector)) << ";\n";
    else
      load(i, "b" + std::to_string(i));
  }
  os << pro << "      const " << A << " x = (" << A << ")(" << reducedInput << ");\n";
  if (!final)
    return os.str();
  for (size_t k = 0; k < l.plan.params.size(); ++k) {
    auto [v, at] = l.plan.params[k];
    std::string value =
        c.argIndex(v) == SIZE_MAX
            ? floatLiteral(*scalarConstant(v), DType::F64, c.dialect)
            : c.load(v->type.dtype, "in" + std::to_string(c.argIndex(v)) + "[" + at + "]");
    os << "      const " << A << " p" << k << " = (" << A << ")" << value << ";\n";
  }
  os << elemCode;
  if (!vector) {
    ex.emitStores(os, "i", rowStats, /*inPrologue=*/false);
    return os.str();
  }
  for (size_t r = 0; r < c.f.results.size(); ++r)
    if (!rowStats.count(c.f.results[r])) // stored per row
      os << "      w" << r << vector << " = "
         << c.store(c.f.results[r]->type.dtype, ex.name(c.f.results[r])) << ";\n";
  return os.str();
}

// `code` for each element i of row o (and j, its place in the row).
void Emitter::elementLoop(std::ostream &os, const std::string &code) const {
  if (l.contiguous) {
    os << "    for (int64_t j = " << (block ? "threadIdx.x" : "0")
       << "; j < L; j += " << (block ? "blockDim.x" : "1")
       << ") {\n      const int64_t i = o * L + j;\n"
       << code << "    }\n";
    return;
  }
  std::string i = "base", j = "(int64_t)0";
  for (size_t d = 0; d < l.viewDims.size(); ++d)
    if (l.plan.reduced[d]) {
      std::string rd = "r" + std::to_string(d), v = "v" + std::to_string(d);
      os << "    for (int64_t " << rd << " = 0; " << rd << " < " << v << "; ++" << rd << ")\n";
      i += " + " + rd + " * vs" + std::to_string(d);
      j = "(" + j + ") * " + v + " + " + rd;
    }
  os << "    {\n      const int64_t i = " << i << ", j = " << j << ";\n"
     << "      (void)j;\n"
     << code << "    }\n";
}

void Emitter::rowBody(std::ostream &os) {
  if (!l.contiguous) {
    os << "    int64_t base = 0;\n    { int64_t rem = o;\n";
    for (size_t d = l.viewDims.size(); d-- > 0;)
      if (!l.plan.reduced[d])
        os << "      base += rem % v" << d << " * vs" << d << "; rem /= v" << d << ";\n";
    os << "    }\n";
  }
  for (size_t k = 0; k < l.plan.stats.size(); ++k) {
    const ReduceStat &s = l.plan.stats[k];
    os << "    " << A << " acc = " << initOf(s) << ";\n";
    elementLoop(os, loads(false) + "      acc = " + s.combine + "()(acc, (" + A + ")(" + s.term +
                        "));\n");
    if (block)
      os << "    acc = tc_block_reduce(acc, tc_red, " << s.combine << "());\n";
    os << "    const " << A << " s" << k << " = " << s.finish << ";\n";
    if (k + 1 < l.plan.stats.size())
      os << "    {\n";
  }
  if (l.plan.topK) {
    topK(os);
    return;
  }
  if (l.plan.arg) {
    const char *cmp = l.plan.arg > 0 ? ">" : "<";
    os << "    " << A << " best = 0;\n    int64_t bi = -1;\n";
    elementLoop(os, loads(false) + "      if (bi < 0 || x " + cmp + " best" +
                        (l.plan.selectLast ? " || x == best" : "") + ") { best = x; bi = j; }\n");
  }
  rowLoads(os);
  os << rowCode;
  if (l.perElementResults) {
    elementLoop(os, loads(true));
    if (!rowStats.empty()) { // at row o of the statistics' [kept dims..., 1...]
      std::ostringstream st;
      ex.emitStores(st, "o", rowStats, /*inPrologue=*/true);
      os << (block ? "    if (threadIdx.x == 0) {\n" : "    {\n") << st.str() << "    }\n";
    }
  } else {
    std::ostringstream st;
    ex.emitStores(st, "o");
    os << (block ? "    if (threadIdx.x == 0) {\n" : "    {\n") << st.str() << "    }\n";
  }
  for (size_t k = 0; k + 1 < l.plan.stats.size(); ++k)
    os << "    }\n";
}

// The epilogue's arguments of row o.
void Emitter::rowLoads(std::ostream &os) const {
  for (size_t i : l.rowArgs) {
    DType t = c.f.args[i]->type.dtype;
    auto n = staticNumElements(c.f.args[i]->type.shape);
    os << "      const " << c.ct(t) << " a" << i << " = "
       << c.load(t, "in" + std::to_string(i) + "[" + (n && *n == 1 ? "0" : "o") + "]") << ";\n";
  }
}

// TopK: the row's k best in registers, kept sorted by insertion; only a
// strictly better value moves ahead, so equal values keep index order. NaN
// ranks above every number (as the reference's sort).
void Emitter::topK(std::ostream &os) const {
  const Op &op = *l.anchor;
  // Registers for topK values; a run-time k is the result's extent along
  // the axis, at most that.
  std::string K = std::to_string(l.plan.topK), N = K;
  const Value *y = op.results[0];
  size_t r = y->type.rank(), axis = 0;
  while (!l.plan.reduced[axis])
    ++axis;
  if (l.plan.runTimeK)
    K = c.dim(y, axis);
  auto better = [&](const std::string &a, const std::string &b) {
    return l.plan.arg > 0
               ? "(" + a + " > " + b + " || (" + a + " != " + a + " && " + b + " == " + b + "))"
               : "(" + a + " < " + b + " || (" + a + " == " + a + " && " + b + " != " + b + "))";
  };
  os << "    " << A << " tv[" << N << "];\n    int64_t ti[" << N << "], n = 0;\n";
  elementLoop(os, loads(false) + "      if (n < " + K + " || " + better("x", "tv[" + K + " - 1]") +
                      ") {\n        int64_t q = n < " + K + " ? n++ : " + K + " - 1;\n" +
                      "        while (q > 0 && " + better("x", "tv[q - 1]") +
                      ") { tv[q] = tv[q - 1]; ti[q] = ti[q - 1]; --q; }\n" +
                      "        tv[q] = x; ti[q] = j;\n      }\n");
  // Where the row's results start: o over the kept axes, the result's strides.
  os << "    int64_t ob = 0;\n    { int64_t rem = o;\n";
  for (size_t d = r; d-- > 0;)
    if (d != axis)
      os << "      ob += rem % " << c.dim(l.xDims, d) << " * yst[" << d
         << "]; rem /= " << c.dim(l.xDims, d) << ";\n";
  os << "    }\n    for (int64_t t = 0; t < n; ++t) {\n"
     << "      const int64_t at = ob + t * yst[" << axis << "];\n";
  for (size_t i = 0; i < c.f.results.size(); ++i) {
    const Value *res = c.f.results[i];
    os << "      out" << i
       << "[at] = " << (res == op.results[1] ? "ti[t]" : c.store(res->type.dtype, "tv[t]"))
       << ";\n";
  }
  os << "    }\n";
}

std::optional<EmittedKernel> Emitter::emit() {
  if (c.multiTensor && !takesMultiTensorSplit(l))
    return c.reject("a multi-tensor reduction is a full split one of one statistic");
  if (!emitOps())
    return std::nullopt;
  block = c.cuda() && l.contiguous && !l.plan.arg;
  // A block per row: whole warps of about 4 elements each when the row
  // length is known now, else 256 threads (rows over X: its launch rule).
  unsigned threads = kPointwiseBlock, vec = 1;
  LaunchKind launch = LaunchKind::Pointwise;
  const ColumnsGeometry &geo = columnsVariants()[l.columns ? c.variant : 0];
  if (l.columns) {
    threads = geo.block;
    launch = LaunchKind::Columns;
    vec = geo.grid;
  } else if (l.split) {
    threads = kSplitBlock;
    launch = LaunchKind::Split;
    vec = splitLaunches(l); // the passes
  } else if (block && l.perElementResults) {
    threads = kRowsBlock;
    launch = LaunchKind::Rows;
  } else if (block) {
    launch = LaunchKind::Reduce;
    std::optional<int64_t> n = 1;
    const Shape &xs = l.x->type.shape;
    for (size_t d = 0; d < l.plan.reduced.size() && l.plan.viewDims.empty(); ++d)
      if (l.plan.reduced[d])
        n = xs[d].isStatic() && n ? std::optional(*n * xs[d].size) : std::nullopt;
    if (n && l.plan.viewDims.empty())
      threads = unsigned(32 * std::clamp<int64_t>((*n + 127) / 128, 1, 32));
  }
  std::ostringstream os;
  // Columns and split kernels at <= 128 registers (2 blocks an SM; split
  // kernels of one vector a trip at 64: splitMinBlocks): with no cap ptxas
  // put each load right before its sum (one load in flight a thread),
  // under it the unrolled trip's loads issue first.
  const bool multiBlock = l.columns || l.split; // rows split across blocks: a scratch
  std::string symbol = c.emitStart(os, threads, /*scratch=*/multiBlock, l.split,
                                   l.split      ? splitMinBlocks(l)
                                   : multiBlock ? geo.blocks
                                                : 0);
  setup(os);
  if (l.plan.topK)
    c.emitRowMajorStrides(os, "yst", l.anchor->results[0]);
  if (l.columns) {
    columnsLoop(os);
  } else if (l.split) {
    splitLoop(os);
  } else {
    if (!c.cuda()) {
      // The runtime splits the domain's rows; ours are split in proportion.
      os << "  const int64_t D = " << c.rowsExpr() << ";\n"
         << "  const int64_t ob = (int64_t)((__int128)begin * rows / D), oe = "
            "(int64_t)((__int128)end * rows / D);\n"
         << "  for (int64_t o = ob; o < oe; ++o) {\n";
    } else if (block) {
      os << "  __shared__ " << A << " tc_red[32];\n"
         << "  for (int64_t o = blockIdx.x; o < rows; o += gridDim.x) {\n";
    } else {
      os << kGridHead << "  for (int64_t o = tid; o < rows; o += stride) {\n";
    }
    rowBody(os);
    os << "  }\n";
  }
  os << "}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.launch = launch;
  k.block = threads;
  k.vec = vec;
  k.halfTypes = c.usesHalf();
  if (l.columns) {
    k.variant = geo.name();
    k.variantCount = unsigned(columnsVariants().size());
  }
  return k;
}

} // namespace reduce

std::optional<EmittedKernel> emitReduction(const KernelContext &c, const KernelClass &cls) {
  reduce::Layout l;
  if (!reduce::analyze(c, *cls.anchor, l))
    return std::nullopt;
  return reduce::Emitter(c, l).emit();
}

} // namespace tc::kernels
