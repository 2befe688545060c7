// Reduction kernels: Softmax and LogSoftmax along one axis, numerically
// stable (the row maximum is subtracted before exp), summed in double; the
// Reduce* family over any set of axes, ArgMax/ArgMin, Hardmax, CumSum, TopK.
// Floats accumulate in double; integer sums and products are exact (wrapping)
// in 64 bits, integer extremes compare exactly (u64 as unsigned).
#include "Kernels.h"
#include <algorithm>
#include <cmath>
#include <numeric>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

template <bool Log> void softmaxKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  if (!isFloat(x.dtype()))
    fail("expects a float input, got ", dtypeName(x.dtype()));
  int64_t rank = int64_t(x.rank());
  int64_t axis = normalizeAxis(op.getInt("axis"), rank);
  const Dims &s = x.shape();
  int64_t outer = 1, len = s[size_t(axis)], inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[size_t(d)];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= s[size_t(d)];
  std::vector<double> v = loadDoubles(x);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * len + k) * inner + in; };
      // Subtract the row maximum; NaN or inf anywhere in the row propagate
      // through the sum as IEEE arithmetic says (as numpy would).
      double shift = -INFINITY;
      for (int64_t k = 0; k < len; ++k)
        if (v[size_t(at(k))] > shift)
          shift = v[size_t(at(k))];
      double sum = 0;
      for (int64_t k = 0; k < len; ++k)
        sum += std::exp(v[size_t(at(k))] - shift);
      for (int64_t k = 0; k < len; ++k) {
        double e = v[size_t(at(k))] - shift;
        y.setDouble(at(k), Log ? e - std::log(sum) : std::exp(e) / sum);
      }
    }
  }
}

// ---- Reduce* ---------------------------------------------------------------

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Index of the result element each input element reduces into.
std::vector<int64_t> reductionTargets(const Op &op, const Dims &xs, int64_t &groups) {
  int64_t rank = int64_t(xs.size()), n = numElements(xs);
  const Dims &axes = op.getInts("axes");
  std::vector<bool> reduced(xs.size(), axes.empty());
  for (int64_t a : axes)
    reduced[size_t(normalizeAxis(a, rank))] = true;
  Dims str = stridesOf(xs);
  groups = 1;
  for (size_t d = 0; d < xs.size(); ++d)
    if (!reduced[d])
      groups *= xs[d];
  std::vector<int64_t> target(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!reduced[d])
        g = g * xs[d] + i / str[d] % xs[d];
    target[size_t(i)] = g;
  }
  return target;
}

bool intLess(int64_t a, int64_t b, DType t) {
  return t == DType::U64 ? uint64_t(a) < uint64_t(b) : a < b;
}

template <Red R> void reduceKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  int64_t groups = 0;
  std::vector<int64_t> target = reductionTargets(op, x.shape(), groups);
  if (groups != y.numElements())
    fail("internal: ", groups, " reduction groups for result ", y.typeStr());
  int64_t n = x.numElements();
  int64_t members = groups ? n / groups : 0;
  DType t = x.dtype();
  bool exactInt =
      !isFloat(t) && (R == Red::Sum || R == Red::Mean || R == Red::Max || R == Red::Min ||
                      R == Red::Prod || R == Red::L1 || R == Red::SumSquare);
  if (exactInt) {
    std::vector<int64_t> v = loadInts(x);
    std::vector<int64_t> acc(static_cast<size_t>(groups));
    std::vector<bool> seen(static_cast<size_t>(groups));
    if (R == Red::Prod)
      std::fill(acc.begin(), acc.end(), 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t e = v[size_t(i)], &a = acc[size_t(target[size_t(i)])];
      bool first = !seen[size_t(target[size_t(i)])];
      seen[size_t(target[size_t(i)])] = true;
      if constexpr (R == Red::Sum || R == Red::Mean)
        a = wrapAdd(a, e);
      else if constexpr (R == Red::Prod)
        a = wrapMul(a, e);
      else if constexpr (R == Red::Max)
        a = first || intLess(a, e, t) ? e : a;
      else if constexpr (R == Red::Min)
        a = first || intLess(e, a, t) ? e : a;
      else if constexpr (R == Red::L1)
        a = wrapAdd(a, isSigned(t) && e < 0 ? wrapNeg(e) : e);
      else
        a = wrapAdd(a, wrapMul(e, e));
    }
    for (int64_t g = 0; g < groups; ++g) {
      int64_t a = acc[size_t(g)];
      if (R == Red::Mean && members == 0)
        fail("the mean of an empty integer reduction is undefined");
      if constexpr (R == Red::Mean)
        a = t == DType::U64 ? int64_t(uint64_t(a) / uint64_t(members)) : a / members;
      if ((R == Red::Max || R == Red::Min) && !seen[size_t(g)]) {
        // Empty: the lowest (max) or highest (min) value of the type.
        if (t == DType::Bool)
          y.setInt(g, R == Red::Max ? 0 : 1);
        else
          y.setDouble(g, R == Red::Max ? -INFINITY : INFINITY);
        continue;
      }
      y.setInt(g, a);
    }
    return;
  }
  std::vector<double> v = loadDoubles(x);
  double init = R == Red::Prod ? 1 : R == Red::Max ? -INFINITY : R == Red::Min ? INFINITY : 0;
  std::vector<double> acc(size_t(groups), init);
  // LogSumExp subtracts each group's maximum first.
  std::vector<double> shift(size_t(groups), -INFINITY);
  if (R == Red::LogSumExp) {
    for (int64_t i = 0; i < n; ++i) {
      double &s = shift[size_t(target[size_t(i)])];
      s = std::max(s, v[size_t(i)]);
    }
    for (double &s : shift)
      if (!std::isfinite(s))
        s = std::isnan(s) ? s : 0; // all -inf (or empty), or an inf: no shift
  }
  for (int64_t i = 0; i < n; ++i) {
    double e = v[size_t(i)];
    double &a = acc[size_t(target[size_t(i)])];
    if constexpr (R == Red::Sum || R == Red::Mean || R == Red::LogSum)
      a += e;
    else if constexpr (R == Red::Prod)
      a *= e;
    else if constexpr (R == Red::Max)
      a = e > a || std::isnan(e) ? e : a;
    else if constexpr (R == Red::Min)
      a = e < a || std::isnan(e) ? e : a;
    else if constexpr (R == Red::L1)
      a += std::fabs(e);
    else if constexpr (R == Red::L2 || R == Red::SumSquare)
      a += e * e;
    else
      a += std::exp(e - shift[size_t(target[size_t(i)])]);
  }
  for (int64_t g = 0; g < groups; ++g) {
    double a = acc[size_t(g)];
    if constexpr (R == Red::Mean)
      a /= double(members);
    else if constexpr (R == Red::L2)
      a = std::sqrt(a);
    else if constexpr (R == Red::LogSum)
      a = std::log(a);
    else if constexpr (R == Red::LogSumExp)
      a = std::log(a) + shift[size_t(g)];
    y.setDouble(g, a);
  }
}

// ---- ArgMax / ArgMin, Hardmax ----------------------------------------------

// Calls fn(outer, inner, at) for each line along `axis`; at(k) is the flat
// index of element k of the line.
template <typename F> void forEachLine(const Dims &s, int64_t axis, F fn) {
  int64_t outer = 1, len = s[size_t(axis)], inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < s.size(); ++d)
    inner *= s[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in)
      fn(o * inner + in, len, [=](int64_t k) { return (o * len + k) * inner + in; });
}

// Index of the extreme of a line: the first (or last) maximum (or minimum).
template <typename At>
int64_t extremeIndex(const HostTensor &x, const std::vector<double> &dv,
                     const std::vector<int64_t> &iv, int64_t len, At at, bool max, bool last) {
  bool fp = isFloat(x.dtype());
  int64_t best = 0;
  for (int64_t k = 1; k < len; ++k) {
    size_t a = size_t(at(k)), b = size_t(at(best));
    bool before, same;
    if (fp) {
      before = max ? dv[a] > dv[b] : dv[a] < dv[b];
      same = dv[a] == dv[b];
    } else {
      before = max ? intLess(iv[b], iv[a], x.dtype()) : intLess(iv[a], iv[b], x.dtype());
      same = iv[a] == iv[b];
    }
    if (before || (last && same))
      best = k;
  }
  return best;
}

template <bool Max> void argKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  bool last = op.getInt("select_last_index") != 0;
  bool fp = isFloat(x.dtype());
  std::vector<double> dv = fp ? loadDoubles(x) : std::vector<double>{};
  std::vector<int64_t> iv = fp ? std::vector<int64_t>{} : loadInts(x);
  forEachLine(x.shape(), axis, [&](int64_t line, int64_t len, auto at) {
    if (len == 0)
      fail("cannot take the index of an extreme of an empty axis");
    outs[0].setInt(line, extremeIndex(x, dv, iv, len, at, Max, last));
  });
}

void hardmaxKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  std::vector<double> dv = loadDoubles(x);
  forEachLine(x.shape(), axis, [&](int64_t, int64_t len, auto at) {
    int64_t best = len ? extremeIndex(x, dv, {}, len, at, true, false) : -1;
    for (int64_t k = 0; k < len; ++k)
      outs[0].setDouble(at(k), k == best ? 1.0 : 0.0);
  });
}

// ---- CumSum, TopK ----------------------------------------------------------

void cumSumKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  bool exclusive = op.getInt("exclusive") != 0, reverse = op.getInt("reverse") != 0;
  bool fp = isFloat(x.dtype());
  std::vector<double> dv = fp ? loadDoubles(x) : std::vector<double>{};
  std::vector<int64_t> iv = fp ? std::vector<int64_t>{} : loadInts(x);
  forEachLine(x.shape(), axis, [&](int64_t, int64_t len, auto at) {
    double dacc = 0;
    int64_t iacc = 0;
    for (int64_t j = 0; j < len; ++j) {
      int64_t a = at(reverse ? len - 1 - j : j);
      if (!exclusive) {
        dacc += fp ? dv[size_t(a)] : 0;
        iacc = fp ? 0 : wrapAdd(iacc, iv[size_t(a)]);
      }
      if (fp)
        outs[0].setDouble(a, dacc);
      else
        outs[0].setInt(a, iacc);
      if (exclusive) {
        dacc += fp ? dv[size_t(a)] : 0;
        iacc = fp ? 0 : wrapAdd(iacc, iv[size_t(a)]);
      }
    }
  });
}

void topKKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 2);
  const HostTensor &x = *ins[0];
  int64_t axis = normalizeAxis(op.getInt("axis"), int64_t(x.rank()));
  int64_t k = op.getInt("k");
  bool largest = op.getInt("largest") != 0;
  if (k < 0 || k > x.shape()[size_t(axis)] || outs[0].shape()[size_t(axis)] != k)
    fail("k = ", k, " does not fit axis ", axis, " of ", x.typeStr());
  bool fp = isFloat(x.dtype());
  std::vector<double> dv = fp ? loadDoubles(x) : std::vector<double>{};
  std::vector<int64_t> iv = fp ? std::vector<int64_t>{} : loadInts(x);
  // A strict total order: NaN above every number (numpy sorts it last).
  auto less = [&](int64_t a, int64_t b) {
    if (!fp)
      return intLess(iv[size_t(a)], iv[size_t(b)], x.dtype());
    double u = dv[size_t(a)], v = dv[size_t(b)];
    if (std::isnan(u) || std::isnan(v))
      return !std::isnan(u) && std::isnan(v);
    return u < v;
  };
  Dims ys = outs[0].shape();
  forEachLine(x.shape(), axis, [&](int64_t line, int64_t len, auto at) {
    std::vector<int64_t> order(static_cast<size_t>(len));
    std::iota(order.begin(), order.end(), 0);
    // Equal values keep index order (stable sort).
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? less(at(b), at(a)) : less(at(a), at(b));
    });
    // The same line of the result: its own outer/inner decomposition.
    int64_t inner = 1;
    for (size_t d = size_t(axis) + 1; d < ys.size(); ++d)
      inner *= ys[d];
    int64_t o = line / inner, in = line % inner;
    for (int64_t j = 0; j < k; ++j) {
      int64_t dst = (o * k + j) * inner + in, src = at(order[size_t(j)]);
      if (fp)
        outs[0].setDouble(dst, dv[size_t(src)]);
      else
        outs[0].setInt(dst, iv[size_t(src)]);
      outs[1].setInt(dst, order[size_t(j)]);
    }
  });
}

} // namespace

void registerReductionKernels(KernelTable &t) {
  t[size_t(OpKind::Softmax)] = softmaxKernel<false>;
  t[size_t(OpKind::LogSoftmax)] = softmaxKernel<true>;
  t[size_t(OpKind::ReduceSum)] = reduceKernel<Red::Sum>;
  t[size_t(OpKind::ReduceMean)] = reduceKernel<Red::Mean>;
  t[size_t(OpKind::ReduceMax)] = reduceKernel<Red::Max>;
  t[size_t(OpKind::ReduceMin)] = reduceKernel<Red::Min>;
  t[size_t(OpKind::ReduceProd)] = reduceKernel<Red::Prod>;
  t[size_t(OpKind::ReduceL1)] = reduceKernel<Red::L1>;
  t[size_t(OpKind::ReduceL2)] = reduceKernel<Red::L2>;
  t[size_t(OpKind::ReduceLogSum)] = reduceKernel<Red::LogSum>;
  t[size_t(OpKind::ReduceLogSumExp)] = reduceKernel<Red::LogSumExp>;
  t[size_t(OpKind::ReduceSumSquare)] = reduceKernel<Red::SumSquare>;
  t[size_t(OpKind::ArgMax)] = argKernel<true>;
  t[size_t(OpKind::ArgMin)] = argKernel<false>;
  t[size_t(OpKind::Hardmax)] = hardmaxKernel;
  t[size_t(OpKind::CumSum)] = cumSumKernel;
  t[size_t(OpKind::TopK)] = topKKernel;
}

} // namespace tc::ref
