#include "tc/Bench/AmpRule.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

namespace fs = std::filesystem;

namespace tc::bench {

double ampBound(double floor, std::optional<double> torchAmpErr) {
  return torchAmpErr ? std::max(floor, kTorchAmpFactor * *torchAmpErr) : floor;
}

double relativeMaxError(const HostTensor &got, const HostTensor &want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (got.shape() != want.shape() || got.dtype() == DType::Str || want.dtype() == DType::Str)
    return kInf;
  double maxDiff = 0, maxRef = 0;
  for (int64_t i = 0, n = want.numElements(); i < n; ++i) {
    double g = got.getDouble(i), w = want.getDouble(i);
    if (g == w) // equal infinities too
      continue;
    if (!std::isfinite(g) || !std::isfinite(w))
      return kInf;
    maxDiff = std::max(maxDiff, std::fabs(g - w));
  }
  for (int64_t i = 0, n = want.numElements(); i < n; ++i)
    if (double w = std::fabs(want.getDouble(i)); std::isfinite(w))
      maxRef = std::max(maxRef, w);
  return maxDiff / std::max(maxRef, 1e-30);
}

double worstRelativeError(const std::string &dir, const std::string &refDir) {
  double worst = 0;
  for (int i = 0;; ++i) {
    std::string file = "output_" + std::to_string(i) + ".pb";
    fs::path ref = fs::path(refDir) / file;
    if (!fs::exists(ref))
      return worst;
    fs::path got = fs::path(dir) / file;
    if (!fs::exists(got))
      fail(got.string(), ": missing (the reference has ", ref.string(), ")");
    worst = std::max(worst, relativeMaxError(readTensorFile(got.string()).tensor,
                                             readTensorFile(ref.string()).tensor));
  }
}

std::string ampComparison(double err, double bound) {
  char s[64];
  std::snprintf(s, sizeof s, "%.1e %s %.1e", err, err <= bound ? "<=" : ">", bound);
  return s;
}

std::string torchAmpNote(double torchAmpErr) {
  char s[64];
  std::snprintf(s, sizeof s, "%gx torch amp %.1e", kTorchAmpFactor, torchAmpErr);
  return s;
}

std::string describeAmpCheck(double err, double bound, std::optional<double> torchAmpErr) {
  return "err " + ampComparison(err, bound) +
         (torchAmpErr ? " (" + torchAmpNote(*torchAmpErr) + ")" : "");
}

} // namespace tc::bench
