// Gradient rules of the spectral ops. DFT is linear: an operand's cotangent
// is the adjoint transform of the result's (the reference's semantics,
// lib/Runtime/Ref/Signal.cpp: the axis zero-padded or truncated to n =
// dft_length, a onesided forward keeping bins 0..n/2, a onesided inverse
// extending its bins by conjugate symmetry and keeping the real part):
//   forward:  x_bar = n * IDFT(y_bar padded to n bins)     (ONNX's IDFT scales by 1/n)
//   inverse:  x_bar = DFT(y_bar) / n
//   inverse onesided: x_bar_m = c_m / n * rfft(y_bar)_m, c_m = 2 for the bins
//                     the symmetry mirrors (1 <= m <= n - n/2 - 1), else 1
// then cropped or zero-padded back to the input's length, and its real part
// taken for a real input.
#include "GradRules.h"

namespace tc::grad {

namespace {

// `v` along `axis` cropped or zero-padded from its length to `to`.
Value *fitAxis(GradBuilder &b, Value *v, size_t axis, int64_t to) {
  return b.padAxis(v, axis, 0, to - b.dims(v)[axis]);
}

Value *dft(GradBuilder &b, Value *v, int64_t axis, int64_t n, bool inverse, bool onesided) {
  return b.op(OpKind::DFT, {v},
              {{"axis", Attribute(axis)},
               {"dft_length", Attribute(n)},
               {"inverse", Attribute(int64_t(inverse))},
               {"onesided", Attribute(int64_t(onesided))}});
}

} // namespace

void dftGrad(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  if (!w[0] || !rg[0])
    return;
  const Op &op = b.fwd;
  for (size_t i = 1; i < op.operands.size(); ++i)
    if (op.operand(i))
      fail(op.where(), ": the gradient of a DFT whose dft_length or axis is known only at run "
                       "time is not supported");
  Value *x = op.operand(0);
  std::vector<int64_t> xd = b.dims(x);
  int64_t rank = int64_t(xd.size()), axis = op.getInt("axis");
  if (axis < 0)
    axis += rank;
  bool inverse = op.getInt("inverse") != 0, onesided = op.getInt("onesided") != 0;
  int64_t in = xd[size_t(axis)], n = op.getInt("dft_length");
  if (n == 0)
    n = inverse && onesided ? 2 * (in - 1) : in;
  Value *g = rg[0], *xg;
  if (inverse && onesided) {
    // The real cotangent as a real signal [.., n, 1]; its onesided DFT.
    Value *spec = dft(b, g, axis, n, false, true); // n/2 + 1 bins
    int64_t bins = n / 2 + 1, kept = std::min(in, bins);
    std::vector<double> c(static_cast<size_t>(bins));
    for (int64_t m = 0; m < bins; ++m)
      c[size_t(m)] = (m >= 1 && m <= n - n / 2 - 1 ? 2.0 : 1.0) / double(n);
    std::vector<int64_t> cd(size_t(rank), 1);
    cd[size_t(axis)] = bins;
    Value *weights =
        b.castTo(b.f.addConstant(b.f.uniqueName(op.result()->name + "_dft_bins"),
                                 TensorType{DType::F64, makeShape(cd)},
                                 TensorData::copyOf(c.data(), c.size() * sizeof(double)), b.loc()),
                 spec->type.dtype);
    xg = fitAxis(b, fitAxis(b, b.mul(spec, weights), size_t(axis), kept), size_t(axis), in);
  } else {
    // The cotangent over all n bins (a onesided forward's past n/2 are 0),
    // through the adjoint, back to the input's length.
    g = fitAxis(b, g, size_t(axis), n);
    xg = inverse ? b.scale(dft(b, g, axis, n, false, false), 1.0 / double(n))
                 : b.scale(dft(b, g, axis, n, true, false), double(n));
    xg = fitAxis(b, xg, size_t(axis), in);
  }
  if (xd.back() == 1 && b.dims(xg).back() == 2) // a real input: the real part
    xg = fitAxis(b, xg, size_t(rank - 1), 1);
  og[0] = xg;
}

} // namespace tc::grad
