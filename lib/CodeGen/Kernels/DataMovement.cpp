// The DataMovement family: a lone Gather, Concat, Slice, Split, Expand, Pad
// or Tile. CUDA: one thread per result element, which computes where in the
// input its element is. Gather, Concat and Split see tensors as [outer,
// axis, inner]; the others map each result coordinate (a Slice 16 bytes
// at a time where its rows allow). The CPU generates
// the coordinate moves Expand, Pad and Tile from the same index code, a row
// of the result at a time (its runtime copies the others: MoveStep.cpp).
#include "Families.h"
#include "IndexMoveParts.h"
#include "tc/IR/ElementMove.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <cstring>
#include <sstream>

namespace tc::kernels {

namespace {

// A Slice whose starts, axes or steps are computed at run time (ONNX's
// Slice tests feed them as inputs): each thread reads them from the device
// (constant ones are literals) into a start and a step per axis, clamped as
// ONNX says, before its coordinates. The ends only size the result, which
// the run-time planner knows. Invalid axes and steps 0 never get here: the
// planner's shape rule refuses them first.
bool runTimeSliceCoords(const KernelContext &c, std::ostream &os, const Op &op, const Value *x,
                        std::vector<std::string> &coord) {
  size_t r = x->type.rank();
  std::optional<int64_t> k = staticNumElements(op.operand(1)->type.shape);
  for (size_t i : {size_t(1), size_t(3), size_t(4)}) {
    const Value *v = op.operands.size() > i ? op.operand(i) : nullptr;
    if (v && !constantInts(v) &&
        (c.argIndex(v) == SIZE_MAX ||
         (v->type.dtype != DType::I64 && v->type.dtype != DType::I32) || v->type.rank() != 1 ||
         staticNumElements(v->type.shape) != k))
      return c.noKernel("a Slice whose run-time starts, axes or steps are not i32 or i64 "
                        "arguments of one length");
  }
  if (!c.cuda() || !k || r == 0)
    return c.noKernel("a Slice whose starts, axes or steps are computed at run time");
  // Operand i's element k: a literal array or the argument's buffer.
  auto element = [&](size_t i, const char *name) -> std::string {
    const Value *v = op.operands.size() > i ? op.operand(i) : nullptr;
    if (!v)
      return "";
    std::string a = std::string("sl_") + name;
    if (auto ints = constantInts(v)) {
      os << "  const int64_t " << a << "[] = {";
      for (size_t j = 0; j < ints->size(); ++j)
        os << (j ? ", " : "") << ints->at(j) << "LL";
      os << "};\n";
    } else {
      const char *T = c.st(v->type.dtype);
      os << "  const " << T << " *__restrict " << a << " = (const " << T << " *)bufs["
         << c.argIndex(v) << "];\n";
    }
    return "(int64_t)" + a + "[k]";
  };
  std::string starts = element(1, "starts"), axes = element(3, "axes"), steps = element(4, "steps");
  os << "  int64_t sl_st[" << r << "], sl_sp[" << r << "], sl_d[" << r << "];\n";
  for (size_t d = 0; d < r; ++d)
    os << "  sl_st[" << d << "] = 0; sl_sp[" << d << "] = 1; sl_d[" << d << "] = " << c.dim(x, d)
       << ";\n";
  os << "  for (int64_t k = 0; k < " << *k << "; ++k) {\n"
     << "    int64_t ax = " << (axes.empty() ? "k" : axes) << ";\n"
     << "    ax += ax < 0 ? " << r << " : 0;\n"
     << "    const int64_t step = " << (steps.empty() ? "1" : steps) << ";\n"
     << "    if (ax < 0 || ax >= " << r << " || step == 0) continue;\n"
     << "    const int64_t D = sl_d[ax], hi = step < 0 ? D - 1 : D;\n"
     << "    int64_t s = " << starts << ";\n"
     << "    s = s < 0 ? s + D : s;\n"
     << "    sl_st[ax] = s < 0 ? 0 : s > hi ? hi : s;\n"
     << "    sl_sp[ax] = step;\n  }\n";
  for (size_t d = 0; d < r; ++d)
    coord[d] = "src += (sl_st[" + std::to_string(d) + "] + c * sl_sp[" + std::to_string(d) +
               "]) * xst[" + std::to_string(d) + "];";
  return true;
}

// Slice, Expand, Tile, Pad: each result coordinate c of axis d gives the
// input coordinate, summed into `src` with the input's strides.
bool emitCoordinateMove(const KernelContext &c, std::ostream &os, const Op &op, const Value *x,
                        const Value *y, const char *T, unsigned vec) {
  size_t r = y->type.rank(), rx = x->type.rank();
  if (r == 0 || rx > r || (!op.is(OpKind::Expand) && rx != r))
    return c.noKernel(std::string(op.name()) + " of rank 0");
  std::vector<std::string> coord(r); // statements adding axis d's part to src
  for (size_t d = 0; d < r; ++d)
    if (d + rx >= r) {
      size_t xd = d + rx - r;
      coord[d] = "src += c * xst[" + std::to_string(xd) + "];";
      if (op.is(OpKind::Expand))
        coord[d] =
            "src += (" + c.extent(x, xd) + " == 1 ? 0 : c) * xst[" + std::to_string(xd) + "];";
      if (op.is(OpKind::Tile)) // c's own width: a 32-bit coordinate divides in 32 bits
        coord[d] = "src += (int64_t)(c % (decltype(c))" + c.extent(x, xd) + ") * xst[" +
                   std::to_string(xd) + "];";
    }
  c.emitRowMajorStrides(os, "xst", x);
  std::string value;     // Pad's constant: the fill's bits
  bool unitLast = false; // a Slice reading its last axis with step 1
  if (op.is(OpKind::Slice)) {
    unitLast = true;
    auto starts = constantInts(op.operand(1));
    auto axes = op.operands.size() > 3 && op.operand(3) ? constantInts(op.operand(3))
                                                        : std::optional<std::vector<int64_t>>();
    auto steps = op.operands.size() > 4 && op.operand(4) ? constantInts(op.operand(4))
                                                         : std::optional<std::vector<int64_t>>();
    if (!starts || (op.operands.size() > 3 && op.operand(3) && !axes) ||
        (op.operands.size() > 4 && op.operand(4) && !steps)) {
      if (!runTimeSliceCoords(c, os, op, x, coord))
        return false;
      unitLast = false;
      starts = std::vector<int64_t>{}; // the coordinates are set
    }
    for (size_t k = 0; k < starts->size(); ++k) {
      int64_t ax = axes ? axes->at(k) : int64_t(k), step = steps ? steps->at(k) : 1;
      ax += ax < 0 ? int64_t(r) : 0;
      if (ax < 0 || ax >= int64_t(r) || step == 0)
        return c.noKernel("a Slice over an axis out of range or with step 0");
      // ONNX's clamping: [0, D] walking forwards, [0, D - 1] backwards.
      std::string s = "s" + std::to_string(ax), D = c.dim(x, size_t(ax));
      // (Starts beyond +-2^62 clamp the same: no dim is that large.)
      int64_t start = std::clamp<int64_t>(starts->at(k), -(int64_t(1) << 62), int64_t(1) << 62);
      os << "  int64_t " << s << " = " << start << "LL;\n  " << s << " = " << s << " < 0 ? " << s
         << " + " << D << " : " << s << ";\n  " << s << " = " << s << " < 0 ? 0 : " << s << " > "
         << D << (step < 0 ? " - 1" : "") << " ? " << D << (step < 0 ? " - 1" : "") << " : " << s
         << ";\n";
      coord[size_t(ax)] = "src += (" + s + " + c * " + std::to_string(step) + "LL) * xst[" +
                          std::to_string(ax) + "];";
      unitLast &= size_t(ax) + 1 < r || step == 1;
    }
  } else if (op.is(OpKind::Pad)) {
    // Pads given as an operand are a run-time input (the importer folds
    // constant ones into the attribute, which is then absent here): the
    // kernel reads them (i64 [2 x rank], begins then ends) on each call.
    const Value *runPads = op.operands.size() > 1 ? op.operand(1) : nullptr;
    if (op.operands.size() > 3 && op.operand(3))
      return c.noKernel("a Pad with run-time axes");
    if (runPads) {
      if (c.argIndex(runPads) == SIZE_MAX || runPads->type.dtype != DType::I64 ||
          runPads->type.shape != makeShape({int64_t(2 * r)}))
        return c.noKernel("a Pad with run-time pads that are not i64[2 x rank]");
      os << "  const int64_t *__restrict pads = (const int64_t *)bufs[" << c.argIndex(runPads)
         << "];\n";
    } else if (op.getInts("pads").size() != 2 * r) {
      return c.noKernel("a Pad with pads not of 2 x rank values");
    }
    auto pad = [&](size_t k) {
      return runPads ? "pads[" + std::to_string(k) + "]"
                     : std::to_string(op.getInts("pads")[k]) + "LL";
    };
    std::string mode = op.getString("mode");
    double v = op.getFloat("value");
    const Value *fillV = op.operands.size() > 2 ? op.operand(2) : nullptr;
    std::optional<double> fill = fillV ? scalarConstant(fillV) : std::nullopt;
    if (fill)
      v = *fill;
    value = fillBits(v, x->type.dtype, T); // integers keep their value, not v != 0
    if (fillV && !fill) {                  // a run-time value: its bits, read on each call
      if (c.argIndex(fillV) == SIZE_MAX || fillV->type.dtype != x->type.dtype ||
          staticNumElements(fillV->type.shape) != std::optional<int64_t>(1))
        return c.noKernel("a Pad with a run-time value of another type or size");
      value =
          "((const " + std::string(T) + " *)bufs[" + std::to_string(c.argIndex(fillV)) + "])[0]";
    }
    for (size_t d = 0; d < r; ++d) {
      std::string D = c.dim(x, d);
      std::string fix = mode == "edge"      ? "p = p < 0 ? 0 : p >= " + D + " ? " + D + " - 1 : p; "
                        : mode == "reflect" ? "p = p < 0 ? -p : p; p = p >= " + D + " ? 2 * (" + D +
                                                  " - 1) - p : p; "
                        : mode == "wrap" ? "p = (p % " + D + " + " + D + ") % " + D + "; "
                                         : "inside &= p >= 0 && p < " + D + "; ";
      coord[d] =
          "int64_t p = c - " + pad(d) + "; " + fix + "src += p * xst[" + std::to_string(d) + "];";
    }
  }
  std::string X = "in" + std::to_string(c.argIndex(x)) + "[src]";
  std::string store = value.empty() ? X : "inside ? " + X + " : " + value;
  if (!c.cuda()) {
    // Rows [begin, end): the outer coordinates once per row, then the last
    // axis in a loop the compiler vectorizes where it reads contiguously.
    os << "  const int64_t inner = " << c.dim(y, r - 1) << ";\n"
       << "  for (int64_t row = begin; row < end; ++row) {\n"
       << "    int64_t src = 0;\n"
       << (value.empty() ? "" : "    bool inside = true;\n");
    if (r > 1)
      os << "    int64_t rem = row;\n";
    for (size_t d = r - 1; d-- > 0;) // the outermost is what is left (row < rows)
      os << "    { const int64_t c = "
         << (d ? "rem % " + c.dim(y, d) + "; rem /= " + c.dim(y, d) : std::string("rem")) << "; "
         << coord[d] << " }\n";
    os << "    const int64_t base = src;\n"
       << (value.empty() ? "" : "    const bool rowInside = inside;\n") << "    " << T
       << " *__restrict o = out0 + row * inner;\n"
       << "    for (int64_t j = 0; j < inner; ++j) {\n"
       << "      int64_t src = base;\n"
       << (value.empty() ? "" : "      bool inside = rowInside;\n")
       << "      { const int64_t c = j; " << coord[r - 1] << " }\n"
       << "      o[j] = " << store << ";\n    }\n  }\n";
    return true;
  }
  os << "  const int64_t inner = " << c.dim(y, r - 1) << ", n = " << c.rowsExpr() << " * inner;\n";
  // The input offset of a result row's first element, from its outer axes.
  auto rowStart = [&](const std::string &index) {
    std::string cast = index == "int64_t" ? "" : "(" + index + ")";
    os << "    int64_t src = 0;\n" << (value.empty() ? "" : "    bool inside = true;\n");
    if (r > 1)
      os << "    " << index << " rem = row;\n";
    for (size_t d = r - 1; d-- > 0;) // the outermost is what is left (row < rows)
      os << "    { const " << index << " c = "
         << (d ? "rem % " + cast + c.dim(y, d) + "; rem /= " + cast + c.dim(y, d)
               : std::string("rem"))
         << "; " << coord[d] << " }\n";
  };
  // Expand and Tile copy their trailing axes whole where the input's extent
  // is the result's (no broadcast, repeat 1): axes [k, r), `run` elements,
  // contiguous on both sides. Where run is a multiple of V = 16 bytes /
  // element, each thread moves a vector; only the row's axes [0, k) are
  // divided out, once per vector (DeBERTa's Tile repeating [12,512,64] over
  // the batch divided each f16 by 3 axes in 64 bits: 200 GB/s).
  std::string V = std::to_string(vec), vt = "tc_vec<" + std::string(T) + ", " + V + ">",
              in = "in" + std::to_string(c.argIndex(x));
  // A vector path's head: `cond` and both pointers 16-byte aligned, the
  // vector views in<a>V and out0V, `rowV` (a row's vectors) and `count`.
  auto openVectors = [&](const std::string &cond, const std::string &rowV) {
    os << "  if (" << cond << " && tc_aligned(" << in << ", 16) && tc_aligned(out0, 16)) {\n"
       << "  const " << vt << " *__restrict " << in << "V = (const " << vt << " *)" << in << ";\n"
       << "  " << vt << " *__restrict out0V = (" << vt << " *)out0;\n"
       << "  const int64_t rowV = " << rowV << ", count = n / " << V << ";\n";
  };
  // Pad the same where its trailing axes are not padded: maxvit's TF "same"
  // padding [32,112,112,256] -> [32,113,113,256] moved 2-byte elements at
  // 480 GB/s; each vector is 8 channels, in or out of the border as a whole.
  if ((op.is(OpKind::Expand) || op.is(OpKind::Tile) || op.is(OpKind::Pad)) && vec > 1 && r > 1) {
    auto whole = [&](size_t d) {
      if (op.is(OpKind::Pad) && op.operands.size() > 1 && op.operand(1)) // read at run time
        return "(pads[" + std::to_string(d) + "] == 0 && pads[" + std::to_string(r + d) + "] == 0)";
      if (op.is(OpKind::Pad)) // compile-time pads
        return std::string(op.getInts("pads")[d] == 0 && op.getInts("pads")[r + d] == 0 ? "true"
                                                                                        : "false");
      return d + rx >= r ? c.extent(x, d + rx - r) + " == " + c.extent(y, d)
                         : c.extent(y, d) + " == 1";
    };
    os << "  int64_t run = 1;\n  int k = " << r << ";\n";
    for (size_t d = r; d-- > 0;)
      os << "  if (k == " << d + 1 << " && " << whole(d) << ") { run *= " << c.extent(y, d)
         << "; k = " << d << "; }\n";
    openVectors("run % " + V + " == 0", "run / " + V);
    if (!value.empty())
      os << "  " << vt << " fillV;\n  for (int e = 0; e < " << V << "; ++e) fillV.v[e] = " << value
         << ";\n";
    c.emitGridLoops(
        os, "0", true,
        [&](const std::string &index) {
          std::string cast = index == "int64_t" ? "" : "(" + index + ")";
          os << "    int64_t src = 0;\n    " << index << " rem = row;\n"
             << (value.empty() ? "" : "    bool inside = true;\n");
          // row < the product of axes [0, k): axis 0 needs no division.
          for (size_t d = r - 1; d-- > 0;)
            os << "    if (" << d << " < k) { const " << index << " c = rem"
               << (d ? " % " + cast + c.extent(y, d) + "; rem /= " + cast + c.extent(y, d) : "")
               << "; " << coord[d] << " }\n";
          std::string load = in + "V[src / " + V + " + j]";
          os << "    out0V[i] = " << (value.empty() ? load : "inside ? " + load + " : fillV")
             << ";\n";
        },
        "i", "count", "rowV");
    os << "  return;\n  }\n";
  }
  // A Slice's result rows are runs of the input: where the run, the input's
  // rows and the run's start are multiples of V = 16 bytes / element (RoPE's
  // halves, Swin's shifted windows), each thread moves one 16-byte vector.
  if (unitLast && vec > 1) {
    os << "  int64_t first = 0;\n  { int64_t src = 0; const int64_t c = 0; " << coord[r - 1]
       << " first = src; }\n";
    openVectors("inner % " + V + " == 0 && " + c.dim(x, r - 1) + " % " + V + " == 0 && first % " +
                    V + " == 0",
                "inner / " + V);
    c.emitGridLoops(
        os, "0", true,
        [&](const std::string &index) {
          rowStart(index);
          os << "    out0V[i] = " << in << "V[(src + first) / " << V << " + j];\n";
        },
        "i", "count", "rowV");
    os << "  return;\n  }\n";
  }
  c.emitGridLoops(os, "0", true, [&](const std::string &index) {
    rowStart(index);
    os << "    { const " << index << " c = (" << index << ")j; " << coord[r - 1] << " }\n";
    os << "    out0[i] = " << store << ";\n";
  });
  return true;
}

} // namespace

std::optional<EmittedKernel> emitDataMovement(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  if (isIndexMove(op.kind) || isRuntimeAxesReduce(op) || isUnaryEinsum(op))
    return emitIndexMove(c, cls);
  const Value *x = op.operand(0);
  const char *T = movedType(x->type.dtype);
  size_t inputs = op.is(OpKind::Concat) ? op.operands.size() : 1;
  if (c.f.ops.size() != 1 || !T)
    return c.reject(std::string(op.name()) + " of " + x->type.str() + " with other ops");
  for (size_t k = 0; k < inputs; ++k)
    if (c.argIndex(op.operand(k)) == SIZE_MAX)
      return c.reject(std::string(op.name()) + " of a constant");
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  os << "// group @" << c.f.name << ": " << op.name() << "\n";
  c.emitSignature(os, symbol, kPointwiseBlock);
  std::vector<bool> declared(c.f.args.size()); // Concat(a, b, a) reads a twice
  for (size_t k = 0; k < inputs; ++k)
    if (size_t i = c.argIndex(op.operand(k)); !declared[i]) {
      declared[i] = true;
      os << "  const " << T << " *__restrict in" << i << " = (const " << T << " *)bufs[" << i
         << "];\n";
    }
  for (size_t k = 0; k < c.f.results.size(); ++k)
    os << "  " << T << " *__restrict out" << k << " = (" << T << " *)bufs[" << c.f.args.size() + k
       << "];\n";
  if (c.cuda())
    os << kGridHead;
  const Value *y = op.result();
  size_t r = y->type.rank(), rx = x->type.rank();
  if (!op.is(OpKind::Split) && c.f.results[0] != y)
    return c.reject("a data-movement group whose result is not its op's");
  auto product = [&](const Value *v, size_t from, size_t to) {
    std::string e;
    for (size_t d = from; d < to; ++d)
      e += (e.empty() ? "" : " * ") + c.extent(v, d);
    return e.empty() ? std::string("(int64_t)1") : e;
  };
  int64_t axis = 0;
  if (op.is(OpKind::Gather) || op.is(OpKind::Concat) || op.is(OpKind::Split)) {
    axis = op.getInt("axis");
    axis += axis < 0 ? int64_t(rx) : 0;
    if (axis < 0 || axis >= int64_t(rx))
      return c.reject(std::string(op.name()) + " over an axis out of range");
  }
  size_t a = size_t(axis);
  // The data: not always argument 0 (a small constant moves to the end).
  std::string X = "in" + std::to_string(c.argIndex(x));
  // [outer, axis, inner]: `row` (= i / inner) splits into o and c.
  auto split = [&](const std::string &index, const std::string &D) {
    std::string cast = index == "int64_t" ? "" : "(" + index + ")";
    os << "    const int64_t o = " << cast << "row / " << cast << "(" << D << "), c = row - o * ("
       << D << ");\n";
  };
  // Per outer index, Concat and Split move one contiguous run of each part
  // (its axis extent x inner elements: NHWC's channel Concat has inner 1).
  // When every run and offset is a multiple of V = 16 bytes / element and
  // every pointer is aligned, the kernel moves V-element vectors (one
  // 16-byte access, one division per vector), else single elements.
  size_t bytes = dtypeSize(x->type.dtype);
  unsigned vec = bytes && bytes < 16 ? unsigned(16 / bytes) : 1;
  std::string V = std::to_string(vec), vt = "tc_vec<" + std::string(T) + ", " + V + ">";
  // The vector path's head: `runs` must be multiples of V; in<i>V, out<k>V.
  auto openVector = [&](const std::vector<std::string> &runs) {
    os << "  if (true";
    for (const std::string &run : runs)
      os << " && (" << run << ") % " << V << " == 0";
    for (size_t i = 0; i < declared.size(); ++i)
      if (declared[i])
        os << " && tc_aligned(in" << i << ", 16)";
    for (size_t k = 0; k < c.f.results.size(); ++k)
      os << " && tc_aligned(out" << k << ", 16)";
    os << ") {\n";
    for (size_t i = 0; i < declared.size(); ++i)
      if (declared[i])
        os << "  const " << vt << " *__restrict in" << i << "V = (const " << vt << " *)in" << i
           << ";\n";
    for (size_t k = 0; k < c.f.results.size(); ++k)
      os << "  " << vt << " *__restrict out" << k << "V = (" << vt << " *)out" << k << ";\n";
  };
  auto runV = [&](const std::string &extent) { return "(" + extent + " * inner / " + V + ")"; };
  if (op.is(OpKind::Concat)) {
    os << "  const int64_t inner = " << product(y, a + 1, r) << ", n = " << product(y, 0, r)
       << ";\n";
    // The walk goes through the parts in order, each part's elements in
    // its order: part k covers [P<k>, P<k+1>), its element v lies in run
    // o = v / R<k> (R<k>: its axis extent x inner elements) and goes to
    // o * rowLen + off<k> + v % R<k>. Neighbouring threads take neighbouring
    // elements of one part, so the compares choosing it agree across a warp
    // (but at a part's end), reads are contiguous and writes runs of R<k>
    // (densenet's 13-input channel Concat: a chain of divergent compares
    // per element ran at 700 GB/s). Static extents make R<k> a constant.
    auto walk = [&](bool vectors) {
      std::string per = vectors ? " / " + V : "", sfx = vectors ? "V" : "";
      os << "  const int64_t rowLen = " << c.extent(y, a) << " * inner" << per << ", count = n"
         << per << ", outer = rowLen ? count / rowLen : 0;\n"
         << "  const int64_t P0 = 0, off0 = 0;\n";
      for (size_t k = 0; k < inputs; ++k) {
        std::string K = std::to_string(k), K1 = std::to_string(k + 1);
        os << "  const int64_t R" << K << " = " << c.extent(op.operand(k), a) << " * inner" << per;
        if (k + 1 < inputs)
          os << ", P" << K1 << " = P" << K << " + outer * R" << K << ", off" << K1 << " = off" << K
             << " + R" << K;
        os << ";\n";
      }
      for (std::string index : {"unsigned", "int64_t"}) { // 32-bit division where count allows
        os << (index == "unsigned" ? "  if (count <= 0x7fffffff) {\n" : "  } else {\n")
           << "  for (int64_t i = tid; i < count; i += stride) {\n";
        for (size_t k = 0; k < inputs; ++k) {
          std::string K = std::to_string(k), R = "(" + index + ")R" + K;
          os << (k == 0 ? "    " : " else ")
             << (k + 1 < inputs ? "if (i < P" + std::to_string(k + 1) + ") " : "") << "{\n"
             << "      const " << index << " v = (" << index << ")(i - P" << K << "), o = v / " << R
             << ";\n      out0" << sfx << "[o * rowLen + off" << K << " + (v - o * " << R
             << ")] = in" << c.argIndex(op.operand(k)) << sfx << "[v];\n    }";
        }
        os << "\n  }\n";
      }
      os << "  }\n";
    };
    if (vec > 1) {
      std::vector<std::string> runs;
      for (size_t k = 0; k < inputs; ++k)
        runs.push_back(c.extent(op.operand(k), a) + " * inner");
      openVector(runs);
      walk(true);
      os << "  return;\n  }\n";
    }
    walk(false);
  } else if (op.is(OpKind::Split)) {
    os << "  const int64_t inner = " << product(x, a + 1, rx) << ";\n";
    std::string offset = "0";
    std::vector<std::string> runs{c.dim(x, a) + " * inner"};
    for (const Value *part : op.results) {
      size_t k = std::find(c.f.results.begin(), c.f.results.end(), part) - c.f.results.begin();
      if (k >= c.f.results.size() && !part->type.shape[a].isStatic())
        return c.reject("a Split with an unread part of unknown size");
      if (k >= c.f.results.size()) { // results nobody reads are not written
        offset += " + " + std::to_string(part->type.shape[a].size);
        continue;
      }
      os << "  const int64_t off" << k << " = " << offset << ";\n";
      runs.push_back(c.dim(part, a) + " * inner");
      runs.push_back("off" + std::to_string(k) + " * inner");
      offset += " + " + c.dim(part, a);
    }
    // One grid-stride loop per written part, over vectors or elements.
    auto parts = [&](bool vectors) {
      for (const Value *part : op.results) {
        size_t k = std::find(c.f.results.begin(), c.f.results.end(), part) - c.f.results.begin();
        if (k >= c.f.results.size())
          continue;
        std::string K = std::to_string(k);
        os << "  {\n  const int64_t n = " << product(part, 0, r) << (vectors ? " / " + V : "")
           << ";\n";
        if (vectors)
          os << "  const int64_t runV = " << runV(c.dim(part, a))
             << ", offV = off" + K + " * inner / " << V << ";\n";
        c.emitGridLoops(
            os, "0", true,
            [&](const std::string &index) {
              if (vectors) {
                os << "    out" << K << "V[i] = " << X << "V[row * rowXV + offV + j];\n";
                return;
              }
              split(index, c.dim(part, a));
              os << "    out" << K << "[i] = " << X << "[(o * " << c.dim(x, a) << " + off" << K
                 << " + c) * inner + j];\n";
            },
            "i", "n", vectors ? "runV" : "inner");
        os << "  }\n";
      }
    };
    if (vec > 1) {
      openVector(runs);
      os << "  const int64_t rowXV = " << runV(c.dim(x, a)) << ";\n";
      parts(true);
      os << "  return;\n  }\n";
    }
    parts(false);
  } else if (op.is(OpKind::Gather)) {
    const Value *ind = op.operand(1);
    std::optional<std::vector<int64_t>> fixed = constantInts(ind);
    const char *I = ind->type.dtype == DType::I64   ? "int64_t"
                    : ind->type.dtype == DType::I32 ? "int"
                                                    : nullptr;
    if (!I || (c.argIndex(ind) == SIZE_MAX && !(fixed && fixed->size() == 1)))
      return c.reject("a Gather whose indices are not an i32/i64 argument or scalar");
    if (!fixed)
      os << "  const " << I << " *__restrict idx = (const " << I << " *)bufs[" << c.argIndex(ind)
         << "];\n";
    std::string count = fixed ? "(int64_t)1" : product(ind, 0, ind->type.rank());
    os << "  const int64_t inner = " << product(x, a + 1, rx) << ", D = " << c.dim(x, a)
       << ", n = " << product(y, 0, r) << ";\n";
    c.emitGridLoops(os, "0", true, [&](const std::string &index) {
      split(index, count);
      os << "    int64_t k = " << (fixed ? std::to_string(fixed->at(0)) : "idx[c]") << ";\n"
         << "    if (k < 0) k += D;\n"
         // A bad index is a launch failure (at the next synchronize), not a
         // read out of bounds; the host shim's __trap records and returns.
         << "    if (k < 0 || k >= D) { __trap(); continue; }\n"
         << "    out0[i] = " << X << "[(o * D + k) * inner + j];\n";
    });
  } else if (!emitCoordinateMove(c, os, op, x, y, T, vec)) {
    return std::nullopt;
  }
  os << "}\n";
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = c.cuda() ? kPointwiseBlock : 0;
  if (c.cuda() && (op.is(OpKind::Concat) || op.is(OpKind::Split) || op.is(OpKind::Slice) ||
                   op.is(OpKind::Expand) || op.is(OpKind::Tile)))
    k.vec = vec; // the grid the vector path needs
  return k;
}

} // namespace tc::kernels
