// Kernels of the string ops (StringNormalizer, TfIdfVectorizer) and Cast to
// and from str. Numbers are spelled as NumPy's str() spells them (what ONNX's
// reference Cast does): the shortest digits that read back to the same value,
// positional for 1e-4 <= |x| < 1e16 (f64), 1e6 (f32), 1e3 (f16, bf16), else
// scientific with a two-digit exponent; nan, inf, -inf; True/False.
#include "Kernels.h"
#include "tc/IR/StringMath.h"
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// Shortest scientific spelling "d.ddde±XX" of v that reads back to v in `t`.
std::string shortestScientific(double v, DType t) {
  char buf[64];
  if (t == DType::F64)
    return std::string(buf,
                       std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr);
  if (t == DType::F32)
    return std::string(
        buf, std::to_chars(buf, buf + sizeof buf, float(v), std::chars_format::scientific).ptr);
  // f16/bf16: the fewest digits that round back to the same 16-bit value.
  for (int p = 0;; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    if (roundToFloatDType(std::strtod(buf, nullptr), t) == v || p >= 17)
      return buf;
  }
}

std::string formatFloat(double v, DType t) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  std::string sci = shortestScientific(v, t);
  size_t e = sci.find('e');
  bool neg = sci[0] == '-';
  std::string digits;
  for (size_t i = neg ? 1 : 0; i < e; ++i)
    if (sci[i] != '.')
      digits += sci[i];
  int exp = std::atoi(sci.c_str() + e + 1);
  double limit = t == DType::F64 ? 1e16 : t == DType::F32 ? 1e6 : 1e3;
  double a = std::fabs(v);
  std::string r = neg ? "-" : "";
  if (a != 0 && (a < 1e-4 || a >= limit)) {
    r += digits.substr(0, 1);
    if (digits.size() > 1)
      r += "." + digits.substr(1);
    std::string ex = std::to_string(std::abs(exp));
    return r + "e" + (exp < 0 ? "-" : "+") + (ex.size() < 2 ? "0" : "") + ex;
  }
  if (exp < 0)
    return r + "0." + std::string(size_t(-exp - 1), '0') + digits;
  if (digits.size() <= size_t(exp) + 1)
    return r + digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
  return r + digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
}

std::string formatElement(const HostTensor &x, int64_t i) {
  DType t = x.dtype();
  if (t == DType::Bool)
    return x.getInt(i) ? "True" : "False";
  if (t == DType::U64)
    return std::to_string(uint64_t(x.getInt(i)));
  if (isInteger(t))
    return std::to_string(x.getInt(i));
  return formatFloat(x.getDouble(i), t);
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

bool equalsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

[[noreturn]] void unreadable(std::string_view s, DType t) {
  fail("cannot read \"", std::string(s), "\" as ", dtypeName(t));
}

// Python's float(): surrounding space, a sign, decimal digits with an
// optional exponent, or nan/inf/infinity in any case.
double parseFloat(std::string_view s, DType t) {
  std::string_view body = trim(s);
  bool neg = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '-' || body[0] == '+'))
    body.remove_prefix(1);
  if (equalsNoCase(body, "nan"))
    return std::numeric_limits<double>::quiet_NaN();
  if (equalsNoCase(body, "inf") || equalsNoCase(body, "infinity"))
    return neg ? -HUGE_VAL : HUGE_VAL;
  bool digit = false;
  for (char c : body) {
    digit |= c >= '0' && c <= '9';
    if (!(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
      unreadable(s, t);
  }
  std::string text(body);
  char *end = nullptr;
  double v = digit ? std::strtod(text.c_str(), &end) : 0;
  if (!digit || end != text.c_str() + text.size())
    unreadable(s, t);
  return neg ? -v : v;
}

int64_t parseInteger(std::string_view s, DType t) {
  std::string_view body = trim(s);
  if (!body.empty() && body[0] == '+')
    body.remove_prefix(1);
  if (t == DType::U64) {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), u);
    if (body.empty() || ec != std::errc() || p != body.data() + body.size())
      unreadable(s, t);
    return int64_t(u);
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (body.empty() || ec != std::errc() || p != body.data() + body.size())
    unreadable(s, t);
  HostTensor probe(t, {}); // in range when it survives the round trip
  probe.setInt(0, v);
  if (probe.getInt(0) != v)
    fail("\"", std::string(s), "\" is out of the range of ", dtypeName(t));
  return v;
}

void stringNormalizerKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  std::vector<std::string> y = normalizeStrings(op, x.strings());
  std::vector<int64_t> dims{int64_t(y.size())};
  if (x.rank() == 2)
    dims.insert(dims.begin(), 1);
  outs[0] = HostTensor::fromStrings(std::move(dims), std::move(y));
}

// Counts, per pool n-gram, the n-grams of one row: items start, start + s,
// ..., start + (n - 1) * s for every skip s - 1 in [0, max_skip_count]
// (a 1-gram counts once, not once per skip).
template <typename Key, typename Item>
std::vector<double> countRow(const TfIdfSpec &spec, const std::map<std::vector<Key>, size_t> &pool,
                             Item item, int64_t c) {
  std::vector<double> counts(spec.ngramIndexes.size(), 0.0);
  std::vector<Key> gram;
  for (int64_t skip = 0; skip <= spec.maxSkip; ++skip)
    for (int64_t start = 0; start < c; ++start)
      for (int64_t n = spec.minN; n <= spec.maxN; ++n) {
        if (n == 1 && skip > 0)
          continue;
        if ((n - 1) * (skip + 1) >= c - start)
          break;
        gram.clear();
        for (int64_t j = 0; j < n; ++j)
          gram.push_back(item(start + j * (skip + 1)));
        if (auto it = pool.find(gram); it != pool.end())
          counts[it->second] += 1;
      }
  return counts;
}

void tfidfVectorizerKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 1, outs, 1);
  const HostTensor &x = *ins[0];
  HostTensor &y = outs[0];
  TfIdfSpec spec = tfidfSpec(op);
  int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, c = x.shape().back();
  std::vector<int64_t> ints = x.dtype() == DType::Str ? std::vector<int64_t>{} : loadInts(x);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = r * c;
    std::vector<double> counts =
        x.dtype() == DType::Str
            ? countRow<std::string>(
                  spec, spec.strs, [&](int64_t i) { return x.strings()[size_t(base + i)]; }, c)
            : countRow<int64_t>(
                  spec, spec.ints, [&](int64_t i) { return ints[size_t(base + i)]; }, c);
    for (size_t k = 0; k < counts.size(); ++k) {
      double w = spec.weights.empty() ? 1.0 : spec.weights[k];
      double v = spec.mode == TfIdfSpec::Mode::TF    ? counts[k]
                 : spec.mode == TfIdfSpec::Mode::IDF ? (counts[k] > 0 ? w : 0.0)
                                                     : counts[k] * w;
      int64_t o = r * spec.columns + spec.ngramIndexes[k];
      y.setDouble(o, y.getDouble(o) + v);
    }
  }
}

} // namespace

void castStrings(const HostTensor &x, HostTensor &y) {
  DType from = x.dtype(), to = y.dtype();
  int64_t n = y.numElements();
  if (x.numElements() != n)
    fail("internal: cast of ", x.typeStr(), " into ", y.typeStr());
  if (from == DType::Str && to == DType::Str) {
    y.strings() = x.strings();
  } else if (to == DType::Str) {
    for (int64_t i = 0; i < n; ++i)
      y.strings()[size_t(i)] = formatElement(x, i);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const std::string &s = x.strings()[size_t(i)];
      if (isFloat(to)) {
        y.setDouble(i, parseFloat(s, to));
      } else if (to == DType::Bool) {
        std::string_view b = trim(s);
        if (equalsNoCase(b, "true") || b == "1")
          y.setInt(i, 1);
        else if (equalsNoCase(b, "false") || b == "0")
          y.setInt(i, 0);
        else
          unreadable(s, to);
      } else {
        y.setInt(i, parseInteger(s, to));
      }
    }
  }
}

void registerStringKernels(KernelTable &t, SetsOutputDimsTable &setsDims) {
  t[size_t(OpKind::StringNormalizer)] = stringNormalizerKernel;
  setsDims[size_t(OpKind::StringNormalizer)] = true;
  t[size_t(OpKind::TfIdfVectorizer)] = tfidfVectorizerKernel;
}

} // namespace tc::ref
