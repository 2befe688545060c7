// Window and resampling arithmetic that a shape rule and a reference kernel
// must agree on exactly: pooling and transposed-convolution output sizes and
// their implicit padding, and Resize's per-axis scales and output sizes. The
// rules size the results from these, the kernels place their reads by them.
// Every function checks its inputs and throws tc::Error (never overflows).
#pragma once
#include "tc/Support/Error.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc::nn {

inline int64_t mulChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail("dimension arithmetic overflows (", a, " * ", b, ")");
  return r;
}

inline int64_t addChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail("dimension arithmetic overflows (", a, " + ", b, ")");
  return r;
}

inline int64_t subChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    fail("dimension arithmetic overflows (", a, " - ", b, ")");
  return r;
}

inline int64_t floorDiv(int64_t a, int64_t b) { // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

inline bool isAutoPad(std::string_view s) {
  return s == "NOTSET" || s == "SAME_UPPER" || s == "SAME_LOWER" || s == "VALID";
}

// One spatial axis of a sliding window: the output size and how far the
// first window starts before the input (the leading padding).
struct WindowAxis {
  int64_t out = 0;
  int64_t padBegin = 0;
};

// Pooling (MaxPool, AveragePool, LpPool) on an axis of size `in`. With
// ceil_mode the size rounds up, but a window must start inside the input or
// its leading padding (the last one is dropped otherwise, as in ONNX and
// PyTorch). SAME_* gives ceil(in / stride); the odd padding goes at the end
// (SAME_UPPER) or the beginning (SAME_LOWER).
inline WindowAxis poolWindow(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                             int64_t padBegin, int64_t padEnd, std::string_view autoPad,
                             bool ceilMode) {
  if (kernel < 1 || stride < 1 || dilation < 1)
    fail("kernel_shape, strides and dilations must be >= 1");
  if (padBegin < 0 || padEnd < 0)
    fail("pads must be >= 0");
  int64_t effK = addChecked(mulChecked(dilation, kernel - 1), 1);
  WindowAxis w;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    w.out = in / stride + (in % stride != 0);
    int64_t total = std::max<int64_t>(
        0, addChecked(mulChecked(std::max<int64_t>(w.out - 1, 0), stride), effK) - in);
    w.padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    return w;
  }
  if (autoPad == "VALID") {
    padBegin = padEnd = 0;
  } else if (autoPad != "NOTSET") {
    fail("unknown auto_pad '", autoPad, "'");
  }
  int64_t padded = addChecked(addChecked(in, padBegin), padEnd);
  if (padded < effK)
    fail("the window (", effK, " with dilation) is larger than the padded input (", padded, ")");
  int64_t span = padded - effK;
  w.out = span / stride + 1;
  if (ceilMode && span % stride != 0) {
    ++w.out;
    if (mulChecked(w.out - 1, stride) >= in + padBegin)
      --w.out;
  }
  w.padBegin = padBegin;
  return w;
}

// ConvTranspose on an axis of size `in`: the full result has
// stride * (in - 1) + output_padding + effective kernel positions; the
// output is the window [padBegin, padBegin + out) of it. output_shape (when
// >= 0) fixes `out` and the padding follows from it, as for SAME_*: the odd
// one at the end for SAME_UPPER, else at the beginning.
inline WindowAxis convTransposeWindow(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                      int64_t padBegin, int64_t padEnd, int64_t outputPadding,
                                      int64_t outputShape, std::string_view autoPad) {
  if (kernel < 1 || stride < 1 || dilation < 1)
    fail("kernel_shape, strides and dilations must be >= 1");
  if (padBegin < 0 || padEnd < 0 || outputPadding < 0)
    fail("pads and output_padding must be >= 0");
  if (!isAutoPad(autoPad))
    fail("unknown auto_pad '", autoPad, "'");
  int64_t effK = addChecked(mulChecked(dilation, kernel - 1), 1);
  int64_t full = addChecked(addChecked(mulChecked(stride, in - 1), outputPadding), effK);
  WindowAxis w;
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outputShape >= 0 || same) {
    w.out = outputShape >= 0 ? outputShape : mulChecked(in, stride);
    int64_t total = subChecked(full, w.out);
    w.padBegin = autoPad == "SAME_UPPER" ? floorDiv(total, 2) : total - floorDiv(total, 2);
  } else if (autoPad == "VALID") {
    w.out = full;
  } else {
    w.out = subChecked(subChecked(full, padBegin), padEnd);
    w.padBegin = padBegin;
  }
  if (w.out < 0)
    fail("the output size ", w.out, " is negative (input ", in, ", padding too large)");
  return w;
}

// Resize's `axes` attribute against rank r: negative ones wrapped, []
// meaning every axis (range and repeats are the verifier's to reject).
inline std::vector<int64_t> resizeAxes(std::vector<int64_t> axes, size_t r) {
  for (int64_t &a : axes)
    a += a < 0 ? int64_t(r) : 0;
  if (axes.empty())
    for (size_t a = 0; a < r; ++a)
      axes.push_back(int64_t(a));
  return axes;
}

// Resize: per-axis scale (the factor of the coordinate transformation) and
// output size for input dims `in` (-1: unknown, giving a NaN scale and -1
// size where they depend on it). `axes` are normalized (>= 0, distinct) and
// `scales` or `sizes` (exactly one non-empty) has one entry per axis.
struct ResizePlan {
  std::vector<double> scale;
  std::vector<int64_t> out;
};

inline ResizePlan resizePlan(const std::vector<int64_t> &in, const std::vector<int64_t> &axes,
                             const std::vector<double> &scales, const std::vector<int64_t> &sizes,
                             std::string_view policy) {
  size_t r = in.size();
  ResizePlan p;
  p.scale.assign(r, 1.0);
  p.out = in;
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail("unknown keep_aspect_ratio_policy '", policy, "'");
  if (scales.empty() == sizes.empty())
    fail("exactly one of scales and sizes must be given");
  size_t n = axes.size();
  if ((scales.empty() ? sizes.size() : scales.size()) != n)
    fail(scales.empty() ? "sizes" : "scales", " has ",
         scales.empty() ? sizes.size() : scales.size(), " values for ", n, " axes");
  const double kMaxSize = 4611686018427387904.0; // 2^62
  if (!scales.empty()) {
    for (size_t i = 0; i < n; ++i) {
      int64_t a = axes[i];
      double s = scales[i];
      if (!(s > 0) || !std::isfinite(s))
        fail("scales must be positive, got ", s);
      p.scale[a] = s;
      if (in[a] < 0) {
        p.out[a] = -1;
        continue;
      }
      double o = std::floor(double(in[a]) * s);
      if (o >= kMaxSize)
        fail("the output size of axis ", a, " is too large");
      p.out[a] = int64_t(o);
    }
    return p;
  }
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] < 0)
      fail("sizes must be >= 0, got ", sizes[i]);
  if (policy == "stretch") {
    for (size_t i = 0; i < n; ++i) {
      int64_t a = axes[i];
      p.out[a] = sizes[i];
      p.scale[a] = in[a] < 0 ? NAN : double(sizes[i]) / double(in[a]);
      if (in[a] == 0 && sizes[i] != 0)
        fail("axis ", a, " of size 0 cannot be resized to ", sizes[i]);
    }
    return p;
  }
  // One scale for all the axes: the largest that fits (not_larger) or the
  // smallest that covers (not_smaller); sizes round half up.
  double s = NAN;
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (in[a] < 0) {
      s = NAN;
      break;
    }
    if (in[a] == 0)
      fail("axis ", a, " of size 0 cannot be resized with keep_aspect_ratio_policy");
    double si = double(sizes[i]) / double(in[a]);
    if (i == 0 || (policy == "not_larger" ? si < s : si > s))
      s = si;
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    p.scale[a] = s;
    if (std::isnan(s)) {
      p.out[a] = -1;
      continue;
    }
    double o = std::floor(s * double(in[a]) + 0.5);
    if (o >= kMaxSize)
      fail("the output size of axis ", a, " is too large");
    p.out[a] = int64_t(o);
  }
  return p;
}

// Einsum: the equation parsed against the operand ranks. Labels 0..51 are
// the letters a-z, A-Z; the dims an ellipsis stands for get labels 52 and up
// (right-aligned across operands, numpy broadcasting). Implicit output (no
// "->"): the ellipsis dims, then the letters used once, in ASCII order.
struct EinsumSpec {
  std::vector<std::vector<int>> inputs; // one label per dim of each operand
  std::vector<int> output;              // one label per dim of the result
  int numLabels = 0;
};

inline EinsumSpec parseEinsum(std::string_view eq, const std::vector<size_t> &ranks) {
  std::string s;
  for (char c : eq)
    if (c != ' ' && c != '\t')
      s += c;
  size_t arrow = s.find("->");
  std::string lhs = s.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = s.substr(arrow + 2);
  std::vector<std::string> terms{""};
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  if (terms.size() != ranks.size())
    fail("equation '", eq, "' has ", terms.size(), " operand terms, got ", ranks.size(),
         " operands");
  auto letter = [&](char c) -> int {
    if (c >= 'a' && c <= 'z')
      return c - 'a';
    if (c >= 'A' && c <= 'Z')
      return 26 + (c - 'A');
    fail("equation '", eq, "': unexpected character '", c, "'");
  };
  // Splits a term into letters before and after its ellipsis.
  struct Term {
    std::vector<int> head, tail;
    bool ellipsis = false;
  };
  auto split = [&](const std::string &t) {
    Term r;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        if (r.ellipsis)
          fail("equation '", eq, "': a term has two ellipses");
        r.ellipsis = true;
        i += 2;
        continue;
      }
      (r.ellipsis ? r.tail : r.head).push_back(letter(t[i]));
    }
    return r;
  };
  EinsumSpec spec;
  size_t ell = 0;
  std::vector<Term> parsed;
  for (size_t k = 0; k < terms.size(); ++k) {
    Term t = split(terms[k]);
    size_t named = t.head.size() + t.tail.size();
    if (t.ellipsis ? named > ranks[k] : named != ranks[k])
      fail("equation '", eq, "': term ", k, " '", terms[k], "' does not match rank ", ranks[k]);
    if (t.ellipsis)
      ell = std::max(ell, ranks[k] - named);
    parsed.push_back(std::move(t));
  }
  spec.numLabels = 52 + int(ell);
  std::vector<int> count(size_t(spec.numLabels), 0);
  for (size_t k = 0; k < parsed.size(); ++k) {
    const Term &t = parsed[k];
    std::vector<int> labels = t.head;
    if (t.ellipsis) {
      size_t e = ranks[k] - t.head.size() - t.tail.size();
      for (size_t i = 0; i < e; ++i)
        labels.push_back(int(52 + ell - e + i));
    }
    labels.insert(labels.end(), t.tail.begin(), t.tail.end());
    for (int l : labels)
      ++count[size_t(l)];
    spec.inputs.push_back(std::move(labels));
  }
  if (rhs) {
    Term t = split(*rhs);
    if (t.ellipsis)
      for (size_t i = 0; i < ell; ++i)
        t.head.push_back(int(52 + i));
    else if (ell > 0)
      fail("equation '", eq, "': the output leaves out the ellipsis dims");
    t.head.insert(t.head.end(), t.tail.begin(), t.tail.end());
    std::vector<bool> seen(size_t(spec.numLabels));
    for (int l : t.head) {
      if (l < 52 && !count[size_t(l)])
        fail("equation '", eq, "': output label '", char(l < 26 ? 'a' + l : 'A' + l - 26),
             "' is not in any input");
      if (seen[size_t(l)])
        fail("equation '", eq, "': output label repeated");
      seen[size_t(l)] = true;
    }
    spec.output = t.head;
  } else {
    for (size_t i = 0; i < ell; ++i)
      spec.output.push_back(int(52 + i));
    for (int l = 26; l < 52; ++l) // uppercase sorts first in ASCII
      if (count[size_t(l)] == 1)
        spec.output.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (count[size_t(l)] == 1)
        spec.output.push_back(l);
  }
  return spec;
}

// Keys' cubic convolution kernel with parameter A at distance t.
inline double cubicKernel(double t, double A) {
  t = std::fabs(t);
  if (t <= 1)
    return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2)
    return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0.0;
}

// The weights of the four samples floor(x) - 1 .. floor(x) + 2 for a point
// at fraction `ratio` past floor(x) (Resize and GridSample's cubic mode).
inline void cubicWeights(double ratio, double A, double w[4]) {
  w[0] = cubicKernel(ratio + 1, A);
  w[1] = cubicKernel(ratio, A);
  w[2] = cubicKernel(1 - ratio, A);
  w[3] = cubicKernel(2 - ratio, A);
}

} // namespace tc::nn
