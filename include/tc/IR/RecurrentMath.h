// The activation functions of RNN, GRU and LSTM (their `activations`,
// `activation_alpha` and `activation_beta` attributes), resolved once so the
// shape rule rejects what the reference kernel could not run.
#pragma once
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tc::nn {

struct RnnActivation {
  enum Fn {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  };
  Fn fn = Tanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (fn) {
    case Relu: return std::max(x, 0.0);
    case Tanh: return std::tanh(x);
    case Sigmoid: return 1 / (1 + std::exp(-x));
    case Affine: return alpha * x + beta;
    case LeakyRelu: return x >= 0 ? x : alpha * x;
    case ThresholdedRelu: return x >= alpha ? x : 0;
    case ScaledTanh: return alpha * std::tanh(beta * x);
    case HardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case Softsign: return x / (1 + std::fabs(x));
    case Softplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The default activations of an op with `gates` gates (RNN 1: f; GRU 3:
// f, g; LSTM 4: f, g, h), one direction's: their count is the op's.
inline std::vector<std::string> rnnDefaultActivations(int64_t gates) {
  if (gates == 1)
    return {"Tanh"};
  if (gates == 3)
    return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// The perDirection * directions activations in order (direction-major).
// `names` holds perDirection (used for every direction) or that many per
// direction, or is empty for `defaults`; alphas and betas are consumed in
// order by the functions that take one, the rest get the defaults of the
// ONNX operators of the same names. Throws tc::Error.
inline std::vector<RnnActivation> rnnActivations(const std::vector<std::string> &names,
                                                 const std::vector<double> &alphas,
                                                 const std::vector<double> &betas,
                                                 const std::vector<std::string> &defaults,
                                                 size_t directions) {
  size_t per = defaults.size();
  const std::vector<std::string> &given = names.empty() ? defaults : names;
  if (given.size() != per && given.size() != per * directions)
    fail("activations must list ", per, " or ", per * directions, " functions, got ", given.size());
  struct Known {
    std::string_view name;
    RnnActivation::Fn fn;
    int params; // 0, 1 (alpha) or 2 (alpha and beta)
    double alpha, beta;
  };
  static constexpr Known kKnown[] = {
      {"Relu", RnnActivation::Relu, 0, 0, 0},
      {"Tanh", RnnActivation::Tanh, 0, 0, 0},
      {"Sigmoid", RnnActivation::Sigmoid, 0, 0, 0},
      {"Affine", RnnActivation::Affine, 2, 1.0, 0.0},
      {"LeakyRelu", RnnActivation::LeakyRelu, 1, 0.01, 0},
      {"ThresholdedRelu", RnnActivation::ThresholdedRelu, 1, 1.0, 0},
      {"ScaledTanh", RnnActivation::ScaledTanh, 2, 1.0, 1.0},
      {"HardSigmoid", RnnActivation::HardSigmoid, 2, 0.2, 0.5},
      {"Elu", RnnActivation::Elu, 1, 1.0, 0},
      {"Softsign", RnnActivation::Softsign, 0, 0, 0},
      {"Softplus", RnnActivation::Softplus, 0, 0, 0},
  };
  std::vector<RnnActivation> r;
  size_t nextAlpha = 0, nextBeta = 0;
  for (size_t i = 0; i < per * directions; ++i) {
    const std::string &name = given[i % given.size()];
    const Known *k = nullptr;
    for (const Known &c : kKnown)
      if (c.name.size() == name.size() &&
          std::equal(name.begin(), name.end(), c.name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          }))
        k = &c;
    if (!k)
      fail("unknown activation '", name, "'");
    RnnActivation a{k->fn, k->alpha, k->beta};
    // A list given once applies to both directions with the same parameters.
    bool fresh = given.size() == per * directions || i < per;
    if (k->params >= 1 && fresh && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (k->params == 2 && fresh && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    if (!fresh)
      a = r[i - per];
    r.push_back(a);
  }
  if (nextAlpha < alphas.size() || nextBeta < betas.size())
    fail("activation_alpha/activation_beta hold more values than the activations take");
  return r;
}

} // namespace tc::nn
