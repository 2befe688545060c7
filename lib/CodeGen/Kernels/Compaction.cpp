// The compaction family, both dialects: a lone op whose result keeps the
// items of its input that pass a test, in order, so its size is known only
// from the data — NonZero (the nonzero elements' coordinates), Compress
// (the slices, or elements, whose condition is true), NonMaxSuppression
// (the boxes greedy suppression keeps, per batch and class) and Unique (the
// distinct slices, their first indices, counts, and each slice's group).
//
// Two passes of one kernel (the launch rule, tc/CodeGen/KernelEmitter.h):
// pass 0 counts the items and writes the count to the buffer after the
// results (-1: the inputs are invalid, and the runtime lets the reference
// kernel say why); the runtime reads it back, sizes the results (their `?`
// dims are the count) and runs pass 1, which writes each kept item at its
// place among the kept ones. The CPU walks the items in order; CUDA runs
// one block that takes the items a tile of blockDim at a time, each item's
// place the tile's base plus a block scan of the flags before it (order is
// the result: no atomics). NonMaxSuppression's greedy order and Unique's
// groups are one loop each, the same in both dialects, on one thread (a
// CUDA block per class pair, a sort, are the next steps), their flags in
// the bytes after the count.
#include "Families.h"
#include <sstream>

namespace tc::kernels {

namespace {

constexpr unsigned kCompactBlock = 256;

// What an op compacts: `n` items, `invalid` (inputs the reference rejects:
// checked once, before counting), `kept` (item j stays) and `write` (the
// code storing item j at place `pos` of `count`); or `serial`, code that
// walks the kept items itself, advancing `pos` and writing when `pass` is 1.
struct Compaction {
  std::string setup, n, invalid = "false", kept, write, serial;
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

// A scalar operand of NonMaxSuppression as a double: absent (`fallback`),
// a constant, or its argument's one element.
std::optional<std::string> scalarOperand(const KernelContext &c, const Op &op, size_t i,
                                         const std::string &fallback) {
  const Value *v = i < op.operands.size() ? op.operand(i) : nullptr;
  if (!v)
    return fallback;
  if (std::optional<double> x = scalarConstant(v)) {
    std::ostringstream s;
    s.precision(17);
    s << "(double)" << *x;
    return s.str();
  }
  if (auto ints = constantInts(v); ints && ints->size() == 1)
    return "(double)" + std::to_string(ints->at(0)) + "LL";
  size_t a = c.argIndex(v);
  if (a == SIZE_MAX)
    return c.reject("a NonMaxSuppression whose operand " + std::to_string(i) +
                    " is neither an argument nor a constant");
  return "(double)" + c.load(v->type.dtype, "in" + std::to_string(a) + "[0]");
}

// NonMaxSuppression as the reference runs it: per (batch, class), the
// candidates (score above score_threshold, when given) in order of score,
// equal scores by box index, found one at a time after the last (no sort,
// no buffer); one kept unless it overlaps (IoU > iou_threshold, in double)
// a box kept before, until max_output_boxes_per_class. Result [count, 3].
std::optional<Compaction> nonMaxSuppression(const KernelContext &c, const Op &op) {
  const Value *boxes = op.operand(0), *scores = op.operand(1);
  size_t bi = c.argIndex(boxes), si = c.argIndex(scores);
  if (bi == SIZE_MAX || si == SIZE_MAX)
    return c.reject("a NonMaxSuppression whose boxes or scores are constants");
  std::optional<std::string> maxOut = scalarOperand(c, op, 2, "(double)0"),
                             iou = scalarOperand(c, op, 3, "(double)0"),
                             thr = scalarOperand(c, op, 4, "");
  if (!maxOut || !iou || !thr)
    return std::nullopt;
  std::string bx = "in" + std::to_string(bi), sc = "in" + std::to_string(si);
  DType t = boxes->type.dtype;
  Compaction k;
  std::ostringstream setup, s;
  setup << "  const int64_t B = " << c.dim(boxes, 0) << ", N = " << c.dim(boxes, 1)
        << ", C = " << c.dim(scores, 1) << ";\n"
        << "  const int64_t maxOut = (int64_t)" << *maxOut << " > 0 ? (int64_t)" << *maxOut
        << " : 0;\n"
        << "  const double iou = " << *iou << ";\n";
  k.setup = setup.str();
  k.invalid =
      "!(iou >= 0 && iou <= 1) || " + c.dim(scores, 0) + " != B || " + c.dim(scores, 2) + " != N";
  // A box as (y1, x1, y2, x2), y1 <= y2 and x1 <= x2 (std::min / max's
  // choices: equal values pick the reference's).
  s << "  for (int64_t b = 0; b < B; ++b)\n"
    << "  for (int64_t c = 0; c < C; ++c) {\n"
    << "    const int64_t sBase = (b * C + c) * N;\n"
    << "    unsigned char *kept = flags + sBase;\n"
    << "    auto box = [&](int64_t i, double *r) {\n"
    << "      double v[4];\n"
    << "      for (int q = 0; q < 4; ++q) v[q] = (double)"
    << c.load(t, bx + "[(b * N + i) * 4 + q]") << ";\n";
  if (op.getInt("center_point_box") == 1)
    s << "      r[0] = v[1] - v[3] / 2; r[1] = v[0] - v[2] / 2;\n"
      << "      r[2] = v[1] + v[3] / 2; r[3] = v[0] + v[2] / 2;\n";
  else
    s << "      r[0] = v[2] < v[0] ? v[2] : v[0]; r[1] = v[3] < v[1] ? v[3] : v[1];\n"
      << "      r[2] = v[0] < v[2] ? v[2] : v[0]; r[3] = v[1] < v[3] ? v[3] : v[1];\n";
  s << "    };\n"
    << "    for (int64_t i = 0; i < N; ++i) kept[i] = 0;\n"
    << "    double ps = 0;\n"
    << "    int64_t pi = -1, taken = 0;\n"
    << "    while (taken < maxOut) { // the next candidate after (ps, pi)\n"
    << "      int64_t next = -1;\n"
    << "      double ns = 0;\n"
    << "      for (int64_t i = 0; i < N; ++i) {\n"
    << "        const double si = (double)" << c.load(t, sc + "[sBase + i]") << ";\n";
  if (!thr->empty())
    s << "        if (!(si > " << *thr << ")) continue;\n";
  s << "        if (pi >= 0 && !(si < ps || (si == ps && i > pi))) continue;\n"
    << "        if (next < 0 || si > ns) { next = i; ns = si; }\n"
    << "      }\n"
    << "      if (next < 0) break;\n"
    << "      ps = ns;\n"
    << "      pi = next;\n"
    << "      double a[4];\n"
    << "      box(next, a);\n"
    << "      const double aa = (a[2] - a[0]) * (a[3] - a[1]);\n"
    << "      bool suppressed = false;\n"
    << "      for (int64_t j = 0; j < N && !suppressed; ++j) { // against the kept boxes\n"
    << "        if (!kept[j]) continue;\n"
    << "        double o[4];\n"
    << "        box(j, o);\n"
    << "        const double h = (a[2] < o[2] ? a[2] : o[2]) - (o[0] < a[0] ? a[0] : o[0]);\n"
    << "        const double w = (a[3] < o[3] ? a[3] : o[3]) - (o[1] < a[1] ? a[1] : o[1]);\n"
    << "        const double ao = (o[2] - o[0]) * (o[3] - o[1]);\n"
    << "        if (h <= 0 || w <= 0 || ao <= 0 || aa <= 0) continue;\n"
    << "        const double inter = h * w, uni = ao + aa - inter;\n"
    << "        suppressed = uni > 0 && inter / uni > iou;\n"
    << "      }\n"
    << "      if (suppressed) continue;\n"
    << "      kept[next] = 1;\n"
    << "      ++taken;\n"
    << "      if (pass == 1) {\n"
    << "        out0[pos * 3] = b;\n"
    << "        out0[pos * 3 + 1] = c;\n"
    << "        out0[pos * 3 + 2] = next;\n"
    << "      }\n"
    << "      ++pos;\n"
    << "    }\n"
    << "  }\n";
  k.serial = s.str();
  return k;
}

// Unique as the reference defines it, without sorting: slice k (the
// elements at index k of `axis`, or element k) leads its group when no
// slice before it is equal (its flag); a leader's place is the number of
// leaders before it (sorted = 0) or below it (sorted = 1: groups are
// distinct, so no ties). Slices compare element by element in row-major
// order, NaNs equal to each other and after every number.
std::optional<Compaction> unique(const KernelContext &c, const Op &op) {
  const Value *x = op.operand(0);
  if (op.results.size() != 4)
    return c.reject("a Unique of other than 4 results");
  // The group has the results something reads: out<k> of each, or none.
  auto out = [&](size_t r) -> std::string {
    for (size_t g = 0; g < c.f.results.size(); ++g)
      if (c.f.results[g] == op.results[r])
        return "out" + std::to_string(g);
    return "";
  };
  const std::vector<int64_t> &axes = op.attr("axis").ints();
  size_t r = x->type.rank();
  int64_t a = axes.empty() ? -1 : axes[0] < 0 ? axes[0] + int64_t(r) : axes[0];
  if (!axes.empty() && (a < 0 || a >= int64_t(r)))
    return c.reject("a Unique over an axis out of range");
  std::string outer = "(int64_t)1", size = "(int64_t)1", inner = "(int64_t)1";
  for (size_t d = 0; d < r; ++d)
    (a < 0 || int64_t(d) == a ? size : int64_t(d) < a ? outer : inner) += " * " + c.dim(x, d);
  DType t = x->type.dtype;
  // Y's rows along the axis: the count (only Y's writes need it).
  std::string count = out(0).empty() ? "0" : c.dim(op.results[0], a < 0 ? 0 : size_t(a));
  auto write = [&](size_t result, const std::string &code) {
    return out(result).empty() ? std::string() : code;
  };
  std::string nan = isFloat(t) ? "          const bool nx = u != u, ny = v != v;\n"
                                 "          if (nx || ny) { if (nx != ny) return nx ? 1 : -1; "
                                 "continue; }\n"
                               : "";
  Compaction k;
  k.setup = "  const int64_t outer = " + outer + ", size = " + size + ", tile = " + inner + ";\n";
  std::ostringstream s;
  s << "  auto cmp = [&](int64_t p, int64_t q) -> int {\n"
    << "    for (int64_t o = 0; o < outer; ++o)\n"
    << "      for (int64_t e = 0; e < tile; ++e) {\n"
    << "          const auto u = " << c.load(t, "in0[(o * size + p) * tile + e]")
    << ", v = " << c.load(t, "in0[(o * size + q) * tile + e]") << ";\n"
    << nan << "          if (u < v) return -1;\n          if (v < u) return 1;\n"
    << "      }\n    return 0;\n  };\n"
    << "  auto place = [&](int64_t q) { // of leader q\n"
    << "    int64_t n = 0;\n"
    << "    for (int64_t i = 0; i < size; ++i)\n"
    << "      n += flags[i] && " << (op.getInt("sorted") == 1 ? "cmp(i, q) < 0" : "i < q")
    << " ? 1 : 0;\n"
    << "    return n;\n  };\n"
    << "  for (int64_t q = 0; q < size; ++q) {\n"
    << "    unsigned char leads = 1;\n"
    << "    for (int64_t i = 0; i < q && leads; ++i) leads = cmp(i, q) != 0;\n"
    << "    flags[q] = leads;\n"
    << "    pos += leads;\n  }\n"
    << "  if (pass == 1) {\n"
    << "    for (int64_t q = 0; q < size; ++q) {\n"
    << "      if (!flags[q]) continue;\n"
    << "      const int64_t at = place(q);\n"
    << write(0, "      for (int64_t o = 0; o < outer; ++o)\n"
                "        for (int64_t e = 0; e < tile; ++e)\n"
                "          " +
                    out(0) + "[(o * " + count +
                    " + at) * tile + e] = in0[(o * size + q) * tile + e];\n")
    << write(1, "      " + out(1) + "[at] = q;\n")
    << write(3, "      int64_t n = 0;\n"
                "      for (int64_t i = q; i < size; ++i) n += cmp(i, q) == 0 ? 1 : 0;\n"
                "      " +
                    out(3) + "[at] = n;\n")
    << "    }\n"
    << write(2, "    for (int64_t j = 0; j < size; ++j) {\n"
                "      int64_t lead = j;\n"
                "      for (int64_t i = 0; i < j; ++i)\n"
                "        if (flags[i] && cmp(i, j) == 0) { lead = i; break; }\n"
                "      " +
                    out(2) + "[j] = place(lead);\n    }\n")
    << "  }\n";
  k.serial = s.str();
  return k;
}

// Both dialects: one thread walks the kept items (CUDA: the block's first).
void emitSerial(std::ostream &os, const KernelContext &c, const Compaction &k) {
  os << (c.cuda() ? "  const int64_t pass = p.pass;\n  if (threadIdx.x != 0) return;\n"
                  : "  const int64_t pass = begin;\n  (void)end;\n")
     << "  if (" << k.invalid << ") { if (pass == 0) count[0] = -1; return; }\n"
     << "  unsigned char *flags = (unsigned char *)(count + 1);\n"
     << "  int64_t pos = 0;\n"
     << k.serial << "  if (pass == 0) count[0] = pos;\n";
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
  if (c.f.ops.size() != 1)
    return c.reject(std::string(op.name()) + " with other ops in its group");
  // Unique's group may drop results nothing reads; the others have one.
  if (c.f.results.size() != op.results.size() && !op.is(OpKind::Unique))
    return c.reject(std::string(op.name()) + " whose result is not the group's");
  for (const auto *values : {&c.f.args, &c.f.results})
    for (const Value *v : *values)
      if (!c.st(v->type.dtype)) // strings stay on the host
        return c.reject(std::string(op.name()) + " of " + v->type.str());
  bool nms = op.is(OpKind::NonMaxSuppression);
  for (const Value *v : op.operands)
    if (!nms && (!v || c.argIndex(v) == SIZE_MAX))
      return c.reject(std::string(op.name()) + " reading a constant or absent operand");
  std::optional<Compaction> k;
  if (op.is(OpKind::NonZero))
    k = nonZero(c, op);
  else if (op.is(OpKind::Compress))
    k = compress(c, op);
  else if (op.is(OpKind::Unique))
    k = unique(c, op);
  else if (nms)
    k = nonMaxSuppression(c, op);
  else
    return c.reject("no compaction code for " + std::string(op.name()));
  if (!k)
    return std::nullopt;
  unsigned block = k->serial.empty() ? kCompactBlock : 32; // serial: one warp, one thread
  std::string symbol;
  std::ostringstream os;
  os << c.head(symbol);
  // The count buffer is the one after the results (CUDA: the launch's
  // scratch slot, with the `pass` field after dims).
  c.emitSignature(os, symbol, block, /*scratch=*/c.cuda(), /*pass=*/c.cuda());
  c.emitPointers(os);
  os << "  int64_t *count = (int64_t *)bufs[" << c.f.args.size() + c.f.results.size() << "];\n"
     << k->setup;
  if (!k->serial.empty())
    emitSerial(os, c, *k);
  else if (c.cuda())
    emitCuda(os, *k);
  else
    emitCpu(os, *k);
  os << "}\n";
  EmittedKernel e = c.kernel(symbol, os.str());
  e.block = c.cuda() ? block : 0;
  e.launch = LaunchKind::Compact;
  e.halfTypes = c.usesHalf();
  return e;
}

} // namespace tc::kernels
