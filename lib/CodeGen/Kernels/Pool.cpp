// The Pool family: a lone sliding-window op over N-D data ([N, C,
// spatial...], 1-D to any rank, or [N, spatial..., C] with channels_last):
// MaxPool (with its Indices and on integers: NCHW) and its gradient
// MaxPoolGrad (in gather form: each X tap finds the windows whose first
// maximum it is), AveragePool, LpPool,
// and ConvTranspose in gather form (each result element sums the taps that
// reach it). One result element per thread (CUDA) or per inner iteration of
// the row loop (CPU); in NHWC the inner axis is C, so neighbouring threads
// read neighbouring channels. Padding is computed from the run-time
// sizes as the reference does (nn::poolWindow, nn::convTransposeWindow):
// explicit pads, auto_pad SAME_UPPER / SAME_LOWER / VALID, ceil_mode (the
// result's size says how many windows there are), dilations, ConvTranspose's
// output_padding / output_shape and groups; and ConvWeightGrad (NCHW) in
// gather form, each weight element summing its taps over the batch.
#include "Families.h"
#include "Window.h"
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace tc::kernels {

std::string Window::ints(const char *name, size_t i, int64_t dflt) const {
  const std::vector<int64_t> &v = op.getInts(name);
  return std::to_string(v.empty() ? dflt : v.at(i));
}

std::string Window::kernel(size_t d) const {
  if (!transposed && !op.is(OpKind::Conv))
    return ints("kernel_shape", d, 1);
  // The weights: [C or M, ., k...], or OHWI [M, k..., C/G] (channels-last Conv).
  const Value *w = op.operand(1);
  size_t axis = at == 2 ? 2 + d : 1 + d;
  const Dim &k = w->type.shape[axis];
  return k.isStatic() ? std::to_string(k.size) : c.dim(w, axis);
}

void Window::emitSetup(std::ostream &os) const {
  const Value *x = op.operand(0), *y = windows ? windows : op.result();
  const std::string &autoPad = op.getString("auto_pad");
  const std::vector<int64_t> &outShape =
      transposed ? op.getInts("output_shape") : std::vector<int64_t>{};
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  for (size_t d = 0; d < sp; ++d) {
    std::string n = std::to_string(d);
    os << "  const int64_t I" << n << " = " << c.dim(x, at + d) << ", O" << n << " = "
       << c.dim(y, at + d) << ", K" << n << " = " << kernel(d) << ", S" << n << " = "
       << ints("strides", d, 1) << ", D" << n << " = " << ints("dilations", d, 1) << ";\n";
    std::string effK = "(D" + n + " * (K" + n + " - 1) + 1)";
    if (transposed) {
      // The full result is S * (I - 1) + output_padding + effK long.
      if (!outShape.empty() || same) {
        std::string total = "(S" + n + " * (I" + n + " - 1) + " + ints("output_padding", d, 0) +
                            " + " + effK + " - O" + n + ")";
        std::string half = "(" + total + " >= 0 ? " + total + " / 2 : -((-" + total + " + 1) / 2))";
        os << "  const int64_t P" << n << " = "
           << (autoPad == "SAME_UPPER" ? half : total + " - " + half) << ";\n";
      } else {
        os << "  const int64_t P" << n << " = " << (autoPad == "VALID" ? "0" : ints("pads", d, 0))
           << ";\n";
      }
      continue;
    }
    if (same) {
      std::string need = "((O" + n + " - 1) * S" + n + " + " + effK + " - I" + n + ")";
      os << "  const int64_t T" << n << " = " << need << " > 0 ? " << need << " : 0, P" << n
         << " = " << (autoPad == "SAME_UPPER" ? "T" + n + " / 2" : "T" + n + " - T" + n + " / 2")
         << ", E" << n << " = T" << n << " - P" << n << ";\n";
    } else {
      bool valid = autoPad == "VALID";
      os << "  const int64_t P" << n << " = " << (valid ? "0" : ints("pads", d, 0)) << ", E" << n
         << " = " << (valid ? "0" : ints("pads", sp + d, 0)) << ";\n";
    }
  }
}

std::string Window::offset(const std::string &base, const char *pos, const char *size) const {
  std::string e = base;
  for (size_t d = 0; d < sp; ++d)
    e = "(" + e + ") * " + size + std::to_string(d) + " + " + pos + std::to_string(d);
  return e;
}

namespace {

// The pools' and ConvTranspose's per-element code.
struct PoolWindow : Window {
  // The element at (row, j): o<d> per axis and nc (pools), nb and ch (NHWC
  // pools) or nb, m (ConvTranspose).
  // `index`: the grid loop's type (unsigned below 2^31 elements: cheaper
  // divisions); `vec` channels per thread in NHWC.
  void emitIndex(std::ostream &os, const std::string &index = "int64_t", unsigned vec = 1) const {
    if (op.is(OpKind::MaxPoolGrad)) { // X's position p<d>: nb and ch, or nc
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    " << index << " rem = row;\n";
      if (at == 1)
        os << "    const int64_t ch = j" << (vec > 1 ? " * " + std::to_string(vec) : "") << ";\n";
      for (size_t d = sp; d-- > 0;) {
        if (at == 2 && d == sp - 1) {
          os << "    const int64_t p" << d << " = j;\n";
          continue;
        }
        // NHWC vectors: the last axis's positions in classes of a stride
        // apart (where the stride divides it), so that a warp's positions
        // share their parity, hence the windows reaching them (consecutive
        // positions ran the union of both sets, masked).
        bool classes = vec > 1 && d == sp - 1;
        os << "    const int64_t " << (classes ? "q" : "p") << d << " = rem % " << cast << "I" << d
           << ";\n    rem /= " << cast << "I" << d << ";\n";
        if (classes)
          os << "    const int64_t U" << d << " = I" << d << " % S" << d << " == 0 ? I" << d
             << " / S" << d << " : I" << d << ";\n    const int64_t p" << d << " = U" << d
             << " == I" << d << " ? q" << d << " : (q" << d << " % U" << d << ") * S" << d << " + q"
             << d << " / U" << d << ";\n";
      }
      os << "    const int64_t " << (at == 1 ? "nb" : "nc") << " = rem;\n";
      return;
    }
    if (at == 1) {
      std::string cast = index == "int64_t" ? "" : "(" + index + ")";
      os << "    const int64_t ch = j" << (vec > 1 ? " * " + std::to_string(vec) : "") << ";\n    "
         << index << " rem = row;\n";
      for (size_t d = sp; d-- > 0;)
        os << "    const int64_t o" << d << " = rem % " << cast << "O" << d
           << ";\n    rem /= " << cast << "O" << d << ";\n";
      os << "    const int64_t nb = rem;\n";
      if (transposed)
        os << "    const int64_t m = ch, g = m / MG;\n";
      return;
    }
    os << "    const int64_t o" << sp - 1 << " = j;\n    int64_t rem = row;\n";
    for (size_t d = sp - 1; d-- > 0;)
      os << "    const int64_t o" << d << " = rem % O" << d << ";\n    rem /= O" << d << ";\n";
    if (transposed)
      os << "    const int64_t m = rem % M, nb = rem / M, g = m / MG;\n";
    else
      os << "    const int64_t nc = rem;\n";
  }

  // Opens a loop per spatial axis over the taps k whose window reaches
  // position `from`<d>: `to`<d> = (`from` + P - k * D) / S where S divides
  // it and it is below `extent`<d> (MaxPool's gradient: the windows o of an
  // X tap p; ConvTranspose: the input positions i of a result position o).
  // Returns the indent inside; the caller closes the sp loops.
  std::string openReaching(std::ostream &os, const char *from, const char *to,
                           const char *extent) const {
    std::string ind = "    ";
    for (size_t d = 0; d < sp; ++d) {
      std::string n = std::to_string(d);
      os << ind << "for (int64_t k" << n << " = 0; k" << n << " < K" << n << "; ++k" << n << ") {\n"
         << ind << "  const int64_t t" << n << " = " << from << n << " + P" << n << " - k" << n
         << " * D" << n << ";\n"
         << ind << "  if (t" << n << " < 0 || t" << n << " % S" << n << " != 0) continue;\n"
         << ind << "  const int64_t " << to << n << " = t" << n << " / S" << n << ";\n"
         << ind << "  if (" << to << n << " >= " << extent << n << ") continue;\n";
      ind += "  ";
    }
    return ind;
  }

  // Opens a loop per spatial axis over window o's taps `var`<d> inside X:
  // i<d> = o * S - P + var * D. Returns the indent inside (from `ind`).
  // `predicated`: every tap, unrolled, with in<d> saying whether taps up to
  // axis d are inside X (no branch between the taps' loads, so they issue
  // together: a tap's `continue` serialised them).
  std::string openTaps(std::ostream &os, const char *var, std::string ind,
                       bool predicated = false) const {
    for (size_t d = 0; d < sp; ++d) {
      std::string n = std::to_string(d), k = var + n;
      if (predicated)
        os << ind << "#pragma unroll\n";
      os << ind << "for (int64_t " << k << " = 0; " << k << " < K" << n << "; ++" << k << ") {\n"
         << ind << "  const int64_t i" << n << " = o" << n << " * S" << n << " - P" << n << " + "
         << k << " * D" << n << ";\n";
      if (predicated)
        os << ind << "  const bool in" << n << " = "
           << (d ? "in" + std::to_string(d - 1) + " && " : "") << "i" << n << " >= 0 && i" << n
           << " < I" << n << ";\n";
      else
        os << ind << "  if (i" << n << " < 0 || i" << n << " >= I" << n << ") continue;\n";
      ind += "  ";
    }
    return ind;
  }

  // `vec` > 1: NHWC, `vec` consecutive channels per thread, read and written
  // as one 16-byte tc_vec (acc[l] per lane).
  void emitPoolBody(std::ostream &os, const std::string &yAt, unsigned vec = 1) const {
    DType t = op.operand(0)->type.dtype;
    if (op.is(OpKind::MaxPool) && (op.results.size() > 1 || !isFloat(t)))
      return emitArgMaxPoolBody(os, yAt);
    const char *T = c.ct(t);
    std::string V = std::to_string(vec), vt = "tc_vec<" + std::string(c.st(t)) + ", " + V + ">",
                acc = vec > 1 ? "acc[l]" : "acc";
    bool max = op.is(OpKind::MaxPool), avg = op.is(OpKind::AveragePool);
    int64_t p = op.is(OpKind::LpPool) ? op.getInt("p") : 1;
    // Taps per axis inside the input, and (count_include_pad) inside the padding.
    bool padded = avg && op.getInt("count_include_pad");
    os << "    int64_t count = 1;\n";
    for (size_t d = 0; d < sp; ++d) {
      std::string n = std::to_string(d);
      os << "    const int64_t b" << n << " = o" << n << " * S" << n << " - P" << n << ";\n";
      if (avg)
        os << "    { int64_t taps = 0; for (int64_t k = 0; k < K" << n
           << "; ++k) { const int64_t q = b" << n << " + k * D" << n << "; taps += "
           << (padded ? "q >= -P" + n + " && q < I" + n + " + E" + n : "q >= 0 && q < I" + n)
           << "; } count *= taps; }\n";
    }
    std::string init = max ? floatLiteral(-INFINITY, t, c.dialect) : std::string(T) + "(0)";
    if (vec > 1)
      os << "    " << T << " acc[" << V << "];\n#pragma unroll\n    for (int l = 0; l < " << V
         << "; ++l) acc[l] = " << init << ";\n";
    else
      os << "    " << T << " acc = " << init << ";\n";
    std::string ind = "    ";
    for (size_t d = 0; d < sp; ++d) {
      std::string n = std::to_string(d);
      os << ind << "for (int64_t k" << n << " = 0; k" << n << " < K" << n << "; ++k" << n << ") {\n"
         << ind << "  const int64_t i" << n << " = b" << n << " + k" << n << " * D" << n << ";\n"
         << ind << "  if (i" << n << " < 0 || i" << n << " >= I" << n << ") continue;\n";
      ind += "  ";
    }
    std::string xAt =
        at == 1 ? "(" + offset("nb", "i", "I") + ") * CH + ch" : offset("nc", "i", "I");
    std::string xv = c.load(t, vec > 1 ? "xv.v[l]" : "X[" + xAt + "]");
    if (vec > 1)
      os << ind << "const " << vt << " xv = *(const " << vt << " *)(X + " << xAt << ");\n"
         << ind << "#pragma unroll\n"
         << ind << "for (int l = 0; l < " << V << "; ++l) {\n";
    os << ind << "const " << T << " v = " << xv << ";\n" << ind;
    if (max)
      os << acc << " = tc_max(" << acc << ", v);\n";
    else if (avg || p == 1)
      os << acc << " += " << (avg ? "v" : "tc_abs(v)") << ";\n";
    else if (p == 2)
      os << acc << " += v * v;\n";
    else
      os << acc << " += tc_pow(tc_abs(v), " << T << "(" << p << "));\n";
    if (vec > 1)
      os << ind << "}\n";
    for (size_t d = sp; d-- > 0;)
      os << std::string(4 + 2 * d, ' ') << "}\n";
    std::string r = max      ? acc
                    : avg    ? acc + " / " + std::string(T) + "(count > 0 ? count : 1)"
                    : p == 1 ? acc
                    : p == 2 ? "tc_sqrt(" + acc + ")"
                             : "tc_pow(" + acc + ", " + std::string(T) + "(1) / " + T + "(" +
                                   std::to_string(p) + "))";
    if (vec > 1)
      os << "    " << vt << " yv;\n#pragma unroll\n    for (int l = 0; l < " << V
         << "; ++l) yv.v[l] = " << c.store(t, r) << ";\n    *(" << vt << " *)(Y + " << yAt
         << ") = yv;\n";
    else
      os << "    Y[" << yAt << "] = " << c.store(t, r) << ";\n";
  }

  // MaxPool as the reference picks: the first tap in the input, then each
  // strictly greater one (NaN never replaces a value; integers compare as
  // integers), and with Indices its flat index in X (row-major, or
  // column-major over the spatial axes with storage_order 1), -1 for a
  // window wholly in the padding. NCHW, one element at a time.
  void emitArgMaxPoolBody(std::ostream &os, const std::string &yAt) const {
    DType t = op.operand(0)->type.dtype;
    const char *T = c.ct(t);
    bool colMajor = op.getInt("storage_order") != 0;
    os << "    int64_t bestAt = -1, bestCol = -1;\n    " << T << " best = " << T << "(0);\n";
    std::string ind = openTaps(os, "k", "    ");
    std::string xAt = offset("nc", "i", "I"), col = "i" + std::to_string(sp - 1), plane = "1";
    for (size_t d = sp - 1; d-- > 0;)
      col = "i" + std::to_string(d) + " + I" + std::to_string(d) + " * (" + col + ")";
    for (size_t d = 0; d < sp; ++d)
      plane += " * I" + std::to_string(d);
    os << ind << "const " << T << " v = " << c.load(t, "X[" + xAt + "]") << ";\n"
       << ind << "if (bestAt < 0 || v > best) { best = v; bestAt = " << xAt << "; bestCol = nc * ("
       << plane << ") + " << col << "; }\n";
    for (size_t d = sp; d-- > 0;)
      os << std::string(4 + 2 * d, ' ') << "}\n";
    if (isFloat(t)) // no tap in the input: the lowest value, as the reference
      os << "    if (bestAt < 0) best = " << floatLiteral(-INFINITY, t, c.dialect) << ";\n";
    os << "    Y[" << yAt << "] = " << c.store(t, "best") << ";\n";
    if (op.results.size() > 1)
      os << "    Ind[" << yAt << "] = bestAt < 0 ? -1 : " << (colMajor ? "bestCol" : "bestAt")
         << ";\n";
    else
      os << "    (void)bestCol;\n";
  }

  // MaxPoolGrad: X's tap p sums dY over the windows o that reach it (o * S
  // - P + k * D = p for a tap k) whose first maximum, scanned as MaxPool's
  // Indices pick it (the first tap, then each strictly greater one), is p.
  // `vec` > 1: NHWC, `vec` channels per thread (16-byte loads; one channel
  // a thread ran resnet50's MaxPool gradient at 4% of HBM's bandwidth):
  // each lane keeps its window's first maximum as a spatial position, the
  // channels sharing every address computation.
  void emitMaxGradBody(std::ostream &os, const std::string &yAt, unsigned vec = 1) const {
    if (vec > 1)
      return emitMaxGradVectorBody(os, vec);
    DType t = op.operand(0)->type.dtype;
    const char *T = c.ct(t);
    bool last = at == 1;
    auto xAt = [&](const char *pos) {
      return last ? "(" + offset("nb", pos, "I") + ") * CH + ch" : offset("nc", pos, "I");
    };
    // Test-only: the last maximum instead of the first, which ties must
    // catch (test/CodeGen/cuda-host-maxpool-grad.tcir).
    bool lastMax = std::getenv("TC_TEST_MAXPOOL_GRAD_LAST_MAX") != nullptr;
    std::string pAt = xAt("p"),
                dyAt = last ? "(" + offset("nb", "o", "O") + ") * CH + ch" : offset("nc", "o", "O");
    os << "    const int64_t self = " << pAt << ";\n    " << T << " acc = " << T << "(0);\n";
    std::string ind = openReaching(os, "p", "o", "O");
    os << ind << "int64_t bestAt = -1;\n" << ind << T << " best = " << T << "(0);\n";
    std::string scan = openTaps(os, "q", ind);
    os << scan << "const int64_t at = " << xAt("i") << ";\n"
       << scan << "const " << T << " v = " << c.load(t, "X[at]") << ";\n"
       << scan << "if (bestAt < 0 || v " << (lastMax ? ">=" : ">")
       << " best) { best = v; bestAt = at; }\n";
    for (size_t d = sp; d-- > 0;)
      os << ind << std::string(2 * d, ' ') << "}\n";
    os << ind << "if (bestAt == self) acc += " << c.load(t, "DY[" + dyAt + "]") << ";\n";
    for (size_t d = sp; d-- > 0;)
      os << std::string(4 + 2 * d, ' ') << "}\n";
    os << "    Y[" << yAt << "] = " << c.store(t, "acc") << ";\n";
  }

  void emitMaxGradVectorBody(std::ostream &os, unsigned vec) const {
    DType t = op.operand(0)->type.dtype;
    const char *T = c.ct(t);
    std::string V = std::to_string(vec), vt = "tc_vec<" + std::string(c.st(t)) + ", " + V + ">";
    bool lastMax = std::getenv("TC_TEST_MAXPOOL_GRAD_LAST_MAX") != nullptr; // as above
    os << "    const int64_t self = " << offset("nb", "p", "I") << ";\n    " << T << " acc[" << V
       << "];\n#pragma unroll\n    for (int l = 0; l < " << V << "; ++l) acc[l] = " << T
       << "(0);\n";
    // Each lane keeps its maximum's tap in the window (an int: p is the
    // window's tap k, the one that reached it, so no position is compared).
    auto tapOf = [&](const char *var) {
      std::string e = std::string(var) + "0";
      for (size_t d = 1; d < sp; ++d)
        e = "(" + e + ") * int(K" + std::to_string(d) + ") + " + var + std::to_string(d);
      return "int(" + e + ")";
    };
    std::string ind = openReaching(os, "p", "o", "O");
    os << ind << "int bestAt[" << V << "];\n"
       << ind << T << " best[" << V << "];\n"
       << ind << "#pragma unroll\n"
       << ind << "for (int l = 0; l < " << V << "; ++l) { bestAt[l] = -1; best[l] = " << T
       << "(0); }\n";
    // A tap outside X loads p's own vector (in bounds) and is not compared.
    std::string scan = openTaps(os, "q", ind, true), in = "in" + std::to_string(sp - 1);
    os << scan << "const int64_t at = " << in << " ? " << offset("nb", "i", "I") << " : self;\n"
       << scan << "const " << vt << " xv = *(const " << vt << " *)(X + at * CH + ch);\n"
       << scan << "#pragma unroll\n"
       << scan << "for (int l = 0; l < " << V << "; ++l) {\n"
       << scan << "  const " << T << " v = " << c.load(t, "xv.v[l]") << ";\n"
       << scan << "  if (" << in << " && (bestAt[l] < 0 || v " << (lastMax ? ">=" : ">")
       << " best[l])) { best[l] = v; bestAt[l] = " << tapOf("q") << "; }\n"
       << scan << "}\n";
    for (size_t d = sp; d-- > 0;)
      os << ind << std::string(2 * d, ' ') << "}\n";
    // dY's vector only where a lane's maximum is this tap.
    os << ind << "const int mineAt = " << tapOf("k") << ";\n"
       << ind << "bool mine = false;\n"
       << ind << "#pragma unroll\n"
       << ind << "for (int l = 0; l < " << V << "; ++l) mine = mine || bestAt[l] == mineAt;\n"
       << ind << "if (mine) {\n"
       << ind << "  const " << vt << " dv = *(const " << vt << " *)(DY + ("
       << offset("nb", "o", "O") << ") * CH + ch);\n"
       << ind << "#pragma unroll\n"
       << ind << "  for (int l = 0; l < " << V << "; ++l)\n"
       << ind << "    if (bestAt[l] == mineAt) acc[l] += " << c.load(t, "dv.v[l]") << ";\n"
       << ind << "}\n";
    for (size_t d = sp; d-- > 0;)
      os << std::string(4 + 2 * d, ' ') << "}\n";
    os << "    " << vt << " yv;\n#pragma unroll\n    for (int l = 0; l < " << V
       << "; ++l) yv.v[l] = " << c.store(t, "acc[l]") << ";\n    *(" << vt
       << " *)(Y + self * CH + ch) = yv;\n";
  }

  // y[n, m, o] = B[m] + sum over the taps k with o = i * S + k * D - P for
  // an input position i, and the group's channels c. Taps outside, channels
  // inside: a tap's stride test and division once for all CG channels
  // (resnet50's MaxPool gradient, 9 channels a group, spent 1 ms in them).
  void emitTransposedBody(std::ostream &os, const std::string &yAt, bool bias) const {
    DType t = op.operand(0)->type.dtype;
    const char *T = c.ct(t);
    // X's channel c = g * CG + ci; W is [C, MG, k...], or [C, k..., MG] in NHWC.
    bool last = at == 1;
    os << "    " << T << " acc = " << (bias ? c.load(t, "Bv[m]") : std::string(T) + "(0)") << ";\n";
    std::string ind = openReaching(os, "o", "i", "I");
    os << ind << "for (int64_t ci = 0; ci < CG; ++ci) {\n";
    if (last)
      os << ind << "  const int64_t xc = g * CG + ci;\n";
    else
      os << ind << "  const int64_t xc = nb * C + g * CG + ci, wc = (g * CG + ci) * MG + m % MG;\n";
    std::string xAt = last ? "(" + offset("nb", "i", "I") + ") * C + xc" : offset("xc", "i", "I"),
                wAt = last ? "(" + offset("xc", "k", "K") + ") * MG + m % MG"
                           : offset("wc", "k", "K");
    os << ind << "  acc += " << c.load(t, "X[" + xAt + "]") << " * " << c.load(t, "Wt[" + wAt + "]")
       << ";\n";
    for (size_t d = sp + 1; d-- > 0;)
      os << std::string(4 + 2 * d, ' ') << "}\n";
    os << "    Y[" << yAt << "] = " << c.store(t, "acc") << ";\n";
  }
};

// ConvWeightGrad (NCHW) in gather form, the fallback where no library
// takes it: one weight element dW[m, ci, k...] per thread (CUDA) or inner
// iteration (CPU), summing dY[n, m, o] * X[n, g * CG + ci, o * S - P + k * D]
// over the batch and the output positions whose tap lands inside X.
void emitWeightGrad(const KernelContext &c, const Op &op, std::ostream &os, std::ostream &body) {
  const Value *x = op.operand(0), *dy = op.operand(1), *dw = op.result();
  size_t sp = x->type.rank() - 2;
  DType t = x->type.dtype;
  const char *T = c.ct(t);
  const std::vector<int64_t> &kernel = op.getInts("kernel_shape");
  auto ints = [&](const char *name, size_t i, int64_t dflt) {
    const std::vector<int64_t> &v = op.getInts(name);
    return std::to_string(v.empty() ? dflt : v.at(i));
  };
  os << "  const int64_t NB = " << c.dim(x, 0) << ", C = " << c.dim(x, 1)
     << ", M = " << c.dim(dy, 1) << ", G = " << op.getInt("group") << ", CG = C / G, MG = M / G;\n";
  for (size_t d = 0; d < sp; ++d) {
    std::string n = std::to_string(d);
    os << "  const int64_t I" << n << " = " << c.dim(x, 2 + d) << ", O" << n << " = "
       << c.dim(dy, 2 + d) << ", K" << n << " = " << kernel.at(d) << ", S" << n << " = "
       << ints("strides", d, 1) << ", D" << n << " = " << ints("dilations", d, 1) << ", P" << n
       << " = " << ints("pads", d, 0) << ";\n";
  }
  (void)dw;
  // The element: k<sp-1> = j, then k<d>, ci and m from the row.
  body << "    const int64_t k" << sp - 1 << " = j;\n    int64_t rem = row;\n";
  for (size_t d = sp - 1; d-- > 0;)
    body << "    const int64_t k" << d << " = rem % K" << d << ";\n    rem /= K" << d << ";\n";
  body << "    const int64_t ci = rem % CG, m = rem / CG, g = m / MG;\n"
       << "    " << T << " acc = " << T << "(0);\n"
       << "    for (int64_t nb = 0; nb < NB; ++nb) {\n"
       << "      const int64_t xc = nb * C + g * CG + ci, yc = nb * M + m;\n";
  std::string ind = "      ";
  for (size_t d = 0; d < sp; ++d) {
    std::string n = std::to_string(d);
    body << ind << "for (int64_t o" << n << " = 0; o" << n << " < O" << n << "; ++o" << n << ") {\n"
         << ind << "  const int64_t i" << n << " = o" << n << " * S" << n << " - P" << n << " + k"
         << n << " * D" << n << ";\n"
         << ind << "  if (i" << n << " < 0 || i" << n << " >= I" << n << ") continue;\n";
    ind += "  ";
  }
  Window win{c, op, sp, false};
  body << ind << "acc += " << c.load(t, "X[" + win.offset("xc", "i", "I") + "]") << " * "
       << c.load(t, "DY[" + win.offset("yc", "o", "O") + "]") << ";\n";
  for (size_t d = sp + 1; d-- > 0;)
    body << std::string(6 + 2 * d, ' ') << "}\n";
  body << "    Y[row * K" << sp - 1 << " + j] = " << c.store(t, "acc") << ";\n";
}

} // namespace

std::optional<EmittedKernel> emitPool(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  if (op.is(OpKind::ConvWeightGrad)) {
    const Value *x = op.operand(0), *dy = op.operand(1);
    if (c.f.ops.size() != 1 || c.f.results.size() != 1 || c.argIndex(x) == SIZE_MAX ||
        c.argIndex(dy) == SIZE_MAX)
      return c.reject("ConvWeightGrad other than a lone op on group arguments");
    DType t = x->type.dtype;
    if (!isFloat(t) || !c.st(t))
      return c.reject("ConvWeightGrad on " + x->type.str());
    if (op.getInt("channels_last"))
      return c.reject("ConvWeightGrad with channels_last (no generated kernel)");
    const char *S = c.st(t);
    std::string symbol = "tc_" + c.f.name;
    std::ostringstream os, body;
    os << "// group @" << c.f.name << ": ConvWeightGrad (" << x->type.rank() - 2 << "-D)\n";
    c.emitSignature(os, symbol, kPointwiseBlock);
    os << "  const " << S << " *__restrict X = (const " << S << " *)bufs[" << c.argIndex(x)
       << "];\n  const " << S << " *__restrict DY = (const " << S << " *)bufs[" << c.argIndex(dy)
       << "];\n  " << S << " *__restrict Y = (" << S << " *)bufs[" << c.f.args.size() << "];\n";
    emitWeightGrad(c, op, os, body);
    std::string inner = "K" + std::to_string(x->type.rank() - 3);
    if (c.cuda()) {
      os << "  const int64_t inner = " << inner << ", n = " << c.rowsExpr() << " * inner;\n"
         << kGridHead;
      c.emitGridLoops(os, "0", true, [&](const std::string &) {
        os << "    {\n" << body.str() << "    }\n";
      });
      os << "}\n";
    } else {
      os << "  for (int64_t row = begin; row < end; ++row)\n"
         << "    for (int64_t j = 0; j < " << inner << "; ++j) {\n"
         << body.str() << "    }\n}\n";
    }
    EmittedKernel k = c.kernel(symbol, os.str());
    k.block = c.cuda() ? kPointwiseBlock : 0;
    k.halfTypes = c.cuda() && c.usesHalf();
    return k;
  }
  const Value *x = op.operand(0), *y = op.result();
  bool transposed = op.is(OpKind::ConvTranspose), grad = op.is(OpKind::MaxPoolGrad);
  // MaxPool's Indices: the group's second result, NCHW.
  bool indices = op.is(OpKind::MaxPool) && op.results.size() == 2 && c.f.results == op.results &&
                 !op.getInt("channels_last");
  if (c.f.ops.size() != 1 || c.f.results.size() != op.results.size() ||
      (op.results.size() != 1 && !indices) || c.argIndex(x) == SIZE_MAX || x->type.rank() < 3)
    return c.reject(std::string(op.name()) +
                    " other than a lone op (one result, or MaxPool's Indices over NCHW) on a "
                    "group argument");
  DType t = x->type.dtype;
  bool integerMax = op.is(OpKind::MaxPool) && isInteger(t) && !op.getInt("channels_last");
  if (!(isFloat(t) || integerMax) || !c.st(t))
    return c.reject(std::string(op.name()) + " on " + x->type.str());
  const Value *dy = grad ? op.operand(1) : nullptr;
  if (grad && c.argIndex(dy) == SIZE_MAX)
    return c.reject("MaxPoolGrad whose dY is not a group argument");
  const Value *w = transposed ? op.operand(1) : nullptr, *b = transposed ? op.operand(2) : nullptr;
  if (transposed && (c.argIndex(w) == SIZE_MAX || (b && c.argIndex(b) == SIZE_MAX)))
    return c.reject("ConvTranspose whose weights or bias are not group arguments");
  bool last = op.getInt("channels_last") != 0;
  PoolWindow win{{c, op, x->type.rank() - 2, transposed, last ? size_t(1) : size_t(2), dy}};
  const char *S = c.st(t);
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os, body;
  os << "// group @" << c.f.name << ": " << op.name() << " (" << win.sp << "-D"
     << (last ? ", NHWC" : "") << ")\n";
  c.emitSignature(os, symbol, kPointwiseBlock);
  auto view = [&](const char *name, const Value *v, bool out) {
    size_t i = out ? c.f.args.size() : c.argIndex(v);
    os << "  " << (out ? "" : "const ") << S << " *__restrict " << name << " = ("
       << (out ? "" : "const ") << S << " *)bufs[" << i << "];\n";
  };
  view("X", x, false);
  if (grad)
    view("DY", dy, false);
  if (transposed) {
    view("Wt", w, false);
    if (b)
      view("Bv", b, false);
    size_t ch = last ? x->type.rank() - 1 : 1;
    os << "  const int64_t C = " << c.dim(x, ch) << ", M = " << c.dim(y, ch)
       << ", G = " << op.getInt("group") << ", CG = C / G, MG = M / G;\n";
  }
  view("Y", y, true);
  if (indices)
    os << "  int64_t *__restrict Ind = (int64_t *)bufs[" << c.f.args.size() + 1 << "];\n";
  if (last) // the result's channels (ConvTranspose's M)
    os << "  const int64_t CH = " << c.dim(y, y->type.rank() - 1) << ";\n";
  win.emitSetup(os);
  std::string inner = last ? "CH" : (grad ? "I" : "O") + std::to_string(win.sp - 1),
              yAt = "row * " + inner + " + j";
  if (grad)
    win.emitMaxGradBody(body, yAt);
  else if (transposed)
    win.emitTransposedBody(body, yAt, b != nullptr);
  else
    win.emitPoolBody(body, yAt);
  if (c.cuda()) {
    os << "  const int64_t inner = " << inner << ", n = " << c.rowsExpr() << " * inner;\n"
       << kGridHead;
    // NHWC max/average pools: 16 bytes of channels per thread where the
    // channel count and the buffers allow (resnet's MaxPool, poolformer's
    // AveragePool ran one channel per thread at 280-600 GB/s).
    size_t bytes = dtypeSize(t);
    unsigned vec = bytes && bytes < 16 ? unsigned(16 / bytes) : 1;
    if (last && vec > 1 && (op.is(OpKind::MaxPool) || op.is(OpKind::AveragePool) || grad)) {
      std::string V = std::to_string(vec);
      os << "  if (CH % " << V << " == 0 && tc_aligned(X, 16) && tc_aligned(Y, 16)"
         << (grad ? " && tc_aligned(DY, 16)" : "") << ") {\n"
         << "  const int64_t innerV = CH / " << V << ", nV = n / " << V << ";\n";
      c.emitGridLoops(
          os, "0", true,
          [&](const std::string &index) {
            std::ostringstream vb;
            win.emitIndex(vb, index, vec);
            if (grad)
              win.emitMaxGradBody(vb, "row * CH + ch", vec);
            else
              win.emitPoolBody(vb, "row * CH + ch", vec);
            os << "    {\n" << vb.str() << "    }\n";
          },
          "iv", "nV", "innerV");
      os << "  return;\n  }\n";
    }
    c.emitGridLoops(os, "0", true, [&](const std::string &index) {
      std::ostringstream ix;
      win.emitIndex(ix, index);
      os << "    {\n" << ix.str() << body.str() << "    }\n";
    });
    os << "}\n";
  } else {
    std::ostringstream ix;
    win.emitIndex(ix);
    os << "  for (int64_t row = begin; row < end; ++row)\n"
       << "    for (int64_t j = 0; j < " << inner << "; ++j) {\n"
       << ix.str() << body.str() << "    }\n}\n";
  }
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = c.cuda() ? kPointwiseBlock : 0;
  k.halfTypes = c.cuda() && c.usesHalf();
  return k;
}

} // namespace tc::kernels
