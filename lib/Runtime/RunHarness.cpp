#include "tc/Runtime/RunHarness.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/TextLexer.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace tc {

namespace fs = std::filesystem;

namespace {

std::string inputNames(const Function &f) {
  std::string s;
  for (const Value *a : f.args)
    s += (s.empty() ? "" : ", ") + a->name;
  return s.empty() ? "none" : s;
}

// "input_12.pb" -> 12 (prefix "input_"), else nullopt.
std::optional<size_t> numberedFile(const std::string &file, std::string_view prefix) {
  if (!file.starts_with(prefix) || !file.ends_with(".pb"))
    return std::nullopt;
  std::string_view digits(file.data() + prefix.size(), file.size() - prefix.size() - 3);
  if (digits.empty() || digits.size() > 9)
    return std::nullopt;
  size_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + size_t(c - '0');
  }
  return n;
}

void requireDirectory(const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    fail(dir, ": not a directory");
}

// Numbered files in `dir` beyond the `count` the function has.
void rejectExtraNumbered(const std::string &dir, std::string_view prefix, size_t count,
                         const char *what) {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    auto n = numberedFile(e.path().filename().string(), prefix);
    if (n && *n >= count)
      fail(e.path().string(), ": the model has only ", count, " ", what);
  }
}

std::string fmtErr(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string fmtValue(double v) {
  if (std::isnan(v))
    return "nan"; // printf would show the sign bit: -nan
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Element i for a message: the number, or the string quoted with escapes.
std::string fmtElement(const HostTensor &t, int64_t i) {
  return t.dtype() == DType::Str ? quoteString(t.strings()[size_t(i)]) : fmtValue(t.getDouble(i));
}

std::string indexStr(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

// The bf16 tensor whose bit patterns are the elements of u16 tensor `t`
// (InputSources::bf16AsU16).
HostTensor bf16FromU16Bits(const HostTensor &t) {
  return HostTensor::fromBytes(DType::BF16, t.shape(), t.bytes(), t.byteSize());
}

// Two bf16 tensors compared bit by bit, except that any NaN matches any NaN:
// compareTensors without tolerance, which also tells -0 from +0.
Comparison compareBF16Bits(const HostTensor &actual, const HostTensor &expected) {
  Comparison c = compareTensors(actual, expected, 0, 0);
  if (!c.typeProblem.empty())
    return c;
  const uint16_t *a = actual.data<uint16_t>(), *e = expected.data<uint16_t>();
  for (int64_t i = 0, n = actual.numElements(); i < n; ++i)
    if (a[i] != e[i] && actual.getDouble(i) == expected.getDouble(i)) { // +0 and -0
      ++c.mismatches;
      c.firstBad = c.firstBad < 0 ? i : std::min(c.firstBad, i);
    }
  c.ok = c.mismatches == 0 && c.extraNaNs == 0 && c.missingNaNs == 0;
  return c;
}

} // namespace

HostTensor randomTensor(const TensorType &t, const std::map<std::string, int64_t> &dims,
                        std::mt19937_64 &rng, const std::string &what) {
  std::vector<int64_t> shape;
  for (const Dim &d : t.shape) {
    if (d.isStatic()) {
      shape.push_back(d.size);
    } else if (d.isSymbolic()) {
      std::optional<int64_t> n = dimValue(d, dims);
      if (!n)
        fail(what, " (", t.str(), ") has symbolic dim '", d.symbol, "' with no size: pass --dim ",
             d.symbol, "=SIZE");
      shape.push_back(*n);
    } else {
      fail(what, " (", t.str(), ") has a dim of unknown size: random data needs a concrete shape");
    }
  }
  HostTensor r(t.dtype, shape);
  // Drawn from the raw 64-bit stream so the data is the same everywhere.
  auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  for (int64_t i = 0, n = r.numElements(); i < n; ++i) {
    if (isFloat(t.dtype)) {
      double v = 0;
      while (roundToFloatDType(v, t.dtype) == 0)
        v = 2 * uniform() - 1;
      r.setDouble(i, v);
    } else if (t.dtype == DType::Bool) {
      r.setInt(i, int64_t(rng() & 1));
    } else if (t.dtype == DType::Str) { // short numerals, so a cast to a number works
      r.strings()[size_t(i)] = std::to_string(1 + int64_t(rng() % 9));
    } else {
      r.setInt(i, 1 + int64_t(rng() % 9));
    }
  }
  return r;
}

std::vector<HostTensor> gatherInputs(const Function &f, const InputSources &src) {
  size_t n = f.args.size();
  std::vector<std::optional<HostTensor>> got(n);
  auto argIndex = [&](const std::string &name) -> size_t {
    for (size_t i = 0; i < n; ++i)
      if (f.args[i]->name == name)
        return i;
    fail("no input named '", name, "' (inputs: ", inputNames(f), ")");
  };
  for (const auto &[name, file] : src.files) {
    size_t i = argIndex(name);
    if (got[i])
      fail("input '", name, "' is given twice");
    got[i] = readTensorFile(file).tensor;
  }
  if (!src.dir.empty()) {
    requireDirectory(src.dir);
    rejectExtraNumbered(src.dir, "input_", n, "inputs");
    for (size_t i = 0; i < n; ++i) {
      if (got[i])
        continue;
      fs::path pb = fs::path(src.dir) / ("input_" + std::to_string(i) + ".pb");
      fs::path npy = fs::path(src.dir) / (f.args[i]->name + ".npy");
      std::error_code ec;
      if (fs::exists(pb, ec))
        got[i] = readTensorProto(pb.string()).tensor;
      else if (fs::exists(npy, ec))
        got[i] = readNpy(npy.string());
    }
  }
  // Sizes of symbolic dims: --dim first, then what inputs from files show.
  std::map<std::string, int64_t> dims = src.dims;
  for (size_t i = 0; i < n; ++i) {
    const Shape &decl = f.args[i]->type.shape;
    if (!got[i] || got[i]->rank() != decl.size())
      continue;
    for (size_t d = 0; d < decl.size(); ++d)
      if (decl[d].isSymbolic())
        dims.emplace(decl[d].symbol, got[i]->shape()[d]);
  }
  std::mt19937_64 rng(src.seed);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < n; ++i) {
    const Value *a = f.args[i];
    if (got[i]) {
      if (src.bf16AsU16 && a->type.dtype == DType::BF16 && got[i]->dtype() == DType::U16)
        got[i] = bf16FromU16Bits(*got[i]);
      inputs.push_back(std::move(*got[i]));
    } else if (src.random) {
      inputs.push_back(randomTensor(a->type, dims, rng, "input '" + a->name + "'"));
    } else {
      fail("input '", a->name, "' (", a->type.str(), ") has no data: use --inputs DIR, --input ",
           a->name, "=FILE or --random-inputs");
    }
  }
  return inputs;
}

void writeTestDataSet(const std::string &dir, const Function &f,
                      const std::vector<HostTensor> &inputs,
                      const std::vector<HostTensor> &outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail(dir, ": cannot create directory: ", ec.message());
  for (size_t i = 0; i < inputs.size() && i < f.args.size(); ++i)
    writeTensorProto((fs::path(dir) / ("input_" + std::to_string(i) + ".pb")).string(), inputs[i],
                     f.args[i]->name);
  for (size_t i = 0; i < outputs.size() && i < f.results.size(); ++i)
    writeTensorProto((fs::path(dir) / ("output_" + std::to_string(i) + ".pb")).string(), outputs[i],
                     f.results[i]->name);
}

Comparison compareTensors(const HostTensor &actual, const HostTensor &expected, double rtol,
                          double atol) {
  Comparison c;
  if (!actual.sameType(expected)) {
    c.ok = false;
    c.typeProblem = "expected " + expected.typeStr() + ", got " + actual.typeStr();
    return c;
  }
  if (actual.dtype() == DType::Str) { // strings match exactly
    for (int64_t i = 0, n = actual.numElements(); i < n; ++i)
      if (actual.strings()[size_t(i)] != expected.strings()[size_t(i)] && !c.mismatches++)
        c.firstBad = i;
    c.ok = c.mismatches == 0;
    return c;
  }
  for (int64_t i = 0, n = actual.numElements(); i < n; ++i) {
    double a = actual.getDouble(i), e = expected.getDouble(i);
    bool bad = false;
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) && !std::isnan(a))
        ++c.missingNaNs, bad = true;
      else if (!std::isnan(e))
        ++c.extraNaNs, bad = true;
    } else if (a != e) { // equal infinities are equal
      double diff = std::fabs(a - e);
      c.maxAbsErr = std::max(c.maxAbsErr, diff);
      if (e != 0)
        c.maxRelErr = std::max(c.maxRelErr, diff / std::fabs(e));
      if (!(diff <= atol + rtol * std::fabs(e)))
        ++c.mismatches, bad = true;
    }
    if (bad && c.firstBad < 0)
      c.firstBad = i;
  }
  c.ok = c.mismatches == 0 && c.extraNaNs == 0 && c.missingNaNs == 0;
  return c;
}

HostTensor loadExpectedOutput(const std::string &dir, size_t index, const std::string &name) {
  fs::path pb = fs::path(dir) / ("output_" + std::to_string(index) + ".pb");
  fs::path npy = fs::path(dir) / (name + ".npy");
  std::error_code ec;
  if (fs::exists(pb, ec))
    return readTensorProto(pb.string()).tensor;
  if (fs::exists(npy, ec))
    return readNpy(npy.string());
  fail(dir, ": no expected value for output ", index, " '", name, "' (", pb.filename().string(),
       " or ", npy.filename().string(), ")");
}

bool compareOutputs(const Function &f, const std::vector<HostTensor> &outputs,
                    const std::string &dir, double rtol, double atol, std::ostream &os,
                    bool bf16AsU16) {
  requireDirectory(dir);
  rejectExtraNumbered(dir, "output_", f.results.size(), "outputs");
  bool allOk = true;
  for (size_t i = 0; i < outputs.size() && i < f.results.size(); ++i) {
    const std::string &name = f.results[i]->name;
    HostTensor expected = loadExpectedOutput(dir, i, name);
    bool bitExact =
        bf16AsU16 && outputs[i].dtype() == DType::BF16 && expected.dtype() == DType::U16;
    if (bitExact)
      expected = bf16FromU16Bits(expected);
    Comparison c = bitExact ? compareBF16Bits(outputs[i], expected)
                            : compareTensors(outputs[i], expected, rtol, atol);
    allOk &= c.ok;
    os << "output " << i << " '" << name << "': ";
    if (!c.typeProblem.empty()) {
      os << c.typeProblem << " [MISMATCH]\n";
      continue;
    }
    os << "max abs err " << fmtErr(c.maxAbsErr) << ", max rel err " << fmtErr(c.maxRelErr);
    if (c.ok) {
      os << " [ok]\n";
      continue;
    }
    if (c.mismatches)
      os << ", " << c.mismatches << " of " << expected.numElements() << " elements differ";
    if (c.extraNaNs)
      os << ", " << c.extraNaNs << " NaN where expected has none";
    if (c.missingNaNs)
      os << ", " << c.missingNaNs << " numbers where expected has NaN";
    os << ", first at " << indexStr(expected.shape(), c.firstBad) << ": got "
       << fmtElement(outputs[i], c.firstBad) << ", expected " << fmtElement(expected, c.firstBad)
       << " [MISMATCH]\n";
  }
  return allOk;
}

std::string summarizeTensor(const HostTensor &t, size_t maxValues) {
  std::string s = t.typeStr() + " [";
  int64_t n = t.numElements(), nans = 0, infs = 0;
  for (int64_t i = 0; i < n && t.dtype() == DType::Str; ++i)
    if (size_t(i) < maxValues)
      s += (i ? ", " : "") + fmtElement(t, i);
  for (int64_t i = 0; i < n && t.dtype() != DType::Str; ++i) {
    double v = t.getDouble(i);
    nans += std::isnan(v);
    infs += std::isinf(v);
    if (size_t(i) < maxValues)
      s += (i ? ", " : "") + fmtValue(v);
  }
  if (size_t(n) > maxValues)
    s += ", ... (" + std::to_string(n) + " values)";
  s += "]";
  if (nans)
    s += ", " + std::to_string(nans) + " NaN";
  if (infs)
    s += ", " + std::to_string(infs) + " inf";
  return s;
}

void printOutputSummary(const Function &f, const std::vector<HostTensor> &outputs,
                        std::ostream &os) {
  for (size_t i = 0; i < outputs.size() && i < f.results.size(); ++i)
    os << "output " << i << " '" << f.results[i]->name << "': " << summarizeTensor(outputs[i])
       << "\n";
}

} // namespace tc
