#include "tc/Bench/LossRule.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tc::bench {

double lastLossDistance(const std::vector<double> &got, const std::vector<double> &want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (got.empty() || got.size() != want.size())
    return kInf;
  // A NaN anywhere is a divergence even when the last loss recovers.
  for (size_t i = 0; i < got.size(); ++i)
    if (!std::isfinite(got[i]) || !std::isfinite(want[i]))
      return kInf;
  return std::fabs(got.back() - want.back()) / std::max(std::fabs(want.back()), 1e-12);
}

std::optional<double> torchSpread(const std::vector<const std::vector<double> *> &rows,
                                  const std::vector<double> &reference) {
  std::optional<double> spread;
  for (const std::vector<double> *r : rows) {
    double d = lastLossDistance(*r, reference);
    if (std::isfinite(d))
      spread = std::max(spread.value_or(0.0), d);
  }
  return spread;
}

double lossBound(std::optional<double> torchAmpDistance) {
  return torchAmpDistance ? std::max(kLossTolerance, kTorchAmpLossFactor * *torchAmpDistance)
                          : kLossTolerance;
}

std::string describeLossCheck(double distance, double bound, std::optional<double> torchAmp,
                              size_t steps, bool f64) {
  char s[160];
  int n = std::snprintf(s, sizeof s, "losses %.1e %s %.1e at step %zu", distance,
                        distance <= bound ? "<=" : ">", bound, steps);
  if (torchAmp)
    std::snprintf(s + n, sizeof s - size_t(n), " (%gx torch %s %.1e)", kTorchAmpLossFactor,
                  f64 ? "fp32 vs f64" : "amp", *torchAmp);
  return s;
}

std::vector<size_t> skippedSteps(const std::vector<double> &scales, double initialScale) {
  std::vector<size_t> skipped;
  double before = initialScale;
  for (size_t i = 0; i < scales.size(); ++i) {
    if (scales[i] < before)
      skipped.push_back(i + 1);
    before = scales[i];
  }
  return skipped;
}

std::string describeSkips(const std::vector<double> &tcScales,
                          const std::vector<double> &torchScales) {
  if (tcScales.empty() || torchScales.empty())
    return "";
  auto list = [](const std::vector<size_t> &steps) {
    std::string s;
    for (size_t k : steps)
      s += (s.empty() ? "" : ",") + std::to_string(k);
    return s.empty() ? std::string("none") : s;
  };
  return "; steps skipped for overflow: tc " + list(skippedSteps(tcScales)) + ", PyTorch " +
         list(skippedSteps(torchScales));
}

std::string joinLosses(const std::vector<double> &losses) {
  std::string out;
  char buf[32];
  for (double l : losses) {
    std::snprintf(buf, sizeof buf, "%.7g", l);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

} // namespace tc::bench
