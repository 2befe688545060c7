// Shape rules of the signal-processing ops: DFT, STFT, the window functions
// and MelWeightMatrix. A size given by a run-time attribute operand (see
// Ops.def) is `?` in the result.
#include "OpInference.h"

namespace tc::infer {

namespace {

// The static last dim of a signal: 1 (real) or 2 (complex).
int64_t complexDim(const TensorType &t, const char *what) {
  if (!isFloat(t.dtype) || t.rank() < 2 || !t.shape.back().isStatic() ||
      (t.shape.back().size != 1 && t.shape.back().size != 2))
    fail(what,
         " must be a float tensor of rank >= 2 whose last dim is 1 (real) or 2 (complex), got ",
         t.str());
  return t.shape.back().size;
}

void requireFlag(const Op &op, const char *name) {
  if (op.getInt(name) != 0 && op.getInt(name) != 1)
    fail(name, " must be 0 or 1, got ", op.getInt(name));
}

// A run-time attribute operand that must hold one value.
bool runtimeScalar(const Op &op, size_t i) {
  if (!op.operand(i))
    return false;
  if (runtimeIntsLength(op, i) != 1)
    fail("operand '", op.info().operands[i].name, "' must hold one value, got ",
         operandType(op, i).str());
  return true;
}

} // namespace

std::vector<TensorType> inferDFT(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t c = complexDim(x, "input");
  requireFlag(op, "inverse");
  requireFlag(op, "onesided");
  bool inverse = op.getInt("inverse") != 0, onesided = op.getInt("onesided") != 0;
  if (onesided && !inverse && c != 1)
    fail("onesided forward DFT needs a real input (last dim 1), got ", x.str());
  Shape out = x.shape;
  out.back() = Dim::fixed(inverse && onesided ? 1 : 2);
  int64_t rank = int64_t(x.rank());
  if (runtimeScalar(op, 2)) { // which axis changes is known at run time only
    for (size_t i = 0; i + 1 < out.size(); ++i)
      out[i] = Dim::unknown();
    runtimeScalar(op, 1);
    return {TensorType{x.dtype, out}};
  }
  int64_t axis = normalizeAxis(op.getInt("axis"), rank);
  if (axis == rank - 1)
    fail("axis ", op.getInt("axis"), " is the real/imaginary axis of ", x.str());
  const Dim &in = x.shape[size_t(axis)];
  Dim &o = out[size_t(axis)];
  int64_t n = -1;
  if (!runtimeScalar(op, 1)) {
    n = op.getInt("dft_length");
    if (n < 0)
      fail("dft_length must be > 0 (or 0: the axis' size), got ", n);
    if (n == 0 && in.isStatic())
      n = inverse && onesided ? checkedMul(2, in.size - 1) : in.size;
    if (n == 0 && in.isStatic())
      fail("the DFT of an empty axis is undefined (", x.str(), ")");
  }
  if (n <= 0)
    o = Dim::unknown();
  else
    o = Dim::fixed(onesided && !inverse ? n / 2 + 1 : n);
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferSTFT(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t c = complexDim(x, "signal");
  if (x.rank() != 3)
    fail("signal must be [batch, length, 1 or 2], got ", x.str());
  requireFlag(op, "onesided");
  bool onesided = op.getInt("onesided") != 0;
  if (onesided && c != 1)
    fail("onesided needs a real signal (last dim 1), got ", x.str());
  Dim window = Dim::unknown();
  if (const Value *win = op.operand(2)) {
    if (win->type.dtype != x.dtype || win->type.rank() != 1)
      fail("window must be 1-D of the signal's type, got ", win->type.str());
    window = win->type.shape[0];
  }
  int64_t step = -1, length = -1;
  if (!runtimeScalar(op, 1)) {
    step = op.getInt("frame_step");
    if (step <= 0)
      fail("frame_step must be > 0, got ", step);
  }
  if (!runtimeScalar(op, 3)) {
    length = op.getInt("frame_length");
    if (length < 0)
      fail("frame_length must be > 0 (or 0: the window's length), got ", length);
    if (length == 0)
      length = op.operand(2) ? window.size : x.shape[1].size; // -1 when not static
    else if (window.isStatic() && window.size != length)
      fail("frame_length ", length, " differs from the window's length ", window.size);
    if (length == 0)
      fail("frame_length must be > 0");
  }
  const Dim &sig = x.shape[1];
  Dim frames = Dim::unknown(), bins = Dim::unknown();
  if (length > 0 && sig.isStatic() && sig.size < length)
    fail("frame_length ", length, " is longer than the signal ", x.str());
  if (length > 0 && step > 0 && sig.isStatic())
    frames = Dim::fixed((sig.size - length) / step + 1);
  if (length > 0)
    bins = Dim::fixed(onesided ? length / 2 + 1 : length);
  return {TensorType{x.dtype, {x.shape[0], frames, bins, Dim::fixed(2)}}};
}

std::vector<TensorType> inferWindow(const Op &op) {
  DType dt = op.attr("output_datatype").type();
  if (!isFloat(dt) && !isInteger(dt))
    fail("output_datatype must be numeric, got ", dtypeName(dt));
  requireFlag(op, "periodic");
  if (runtimeScalar(op, 0))
    return {TensorType{dt, {Dim::unknown()}}};
  int64_t size = op.getInt("size");
  if (size < 0)
    fail("size must be >= 0, got ", size);
  return {TensorType{dt, {Dim::fixed(size)}}};
}

std::vector<TensorType> inferMelWeightMatrix(const Op &op) {
  DType dt = op.attr("output_datatype").type();
  if (!isFloat(dt) && !isInteger(dt))
    fail("output_datatype must be numeric, got ", dtypeName(dt));
  Dim bins = Dim::unknown(), mels = Dim::unknown();
  if (!runtimeScalar(op, 0)) {
    int64_t m = op.getInt("num_mel_bins");
    if (m <= 0)
      fail("num_mel_bins must be > 0, got ", m);
    mels = Dim::fixed(m);
  }
  if (!runtimeScalar(op, 1)) {
    int64_t n = op.getInt("dft_length");
    if (n <= 0)
      fail("dft_length must be > 0, got ", n);
    bins = Dim::fixed(n / 2 + 1);
  }
  if (!runtimeScalar(op, 2) && op.getInt("sample_rate") <= 0)
    fail("sample_rate must be > 0, got ", op.getInt("sample_rate"));
  if (!op.operand(3) && !op.operand(4)) {
    double lo = op.getFloat("lower_edge_hertz"), hi = op.getFloat("upper_edge_hertz");
    if (!(lo >= 0 && lo < hi))
      fail("lower_edge_hertz and upper_edge_hertz must satisfy 0 <= lower < upper, got ", lo,
           " and ", hi);
  }
  return {TensorType{dt, {bins, mels}}};
}

} // namespace tc::infer
