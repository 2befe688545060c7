// Loss and training kernels: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, Dropout (the deterministic cases), PhiloxDropout, and the
// ai.onnx.preview.training optimizers Adagrad, Adam and Momentum. All
// arithmetic is in double; every result is rounded once.
#include "Kernels.h"
#include "tc/IR/Philox.h"
#include <cmath>
#include <cstring>

namespace tc::ref {

namespace {

using Ins = std::vector<const HostTensor *>;
using Outs = std::vector<HostTensor>;

// input/scores [N, C, d...] seen as [N, C, D]; target/labels [N, D].
void lossKernel(const Op &op, const Ins &ins, Outs &outs) {
  bool softmax = op.is(OpKind::SoftmaxCrossEntropyLoss);
  if (outs.empty() || outs.size() > (softmax ? 2u : 1u))
    fail("internal: ", op.name(), " with ", outs.size(), " results");
  expectArity(ins, 2, outs, outs.size());
  const HostTensor &x = *ins[0], &target = *ins[1];
  const HostTensor *weight = ins.size() > 2 ? ins[2] : nullptr;
  const Dims &xs = x.shape();
  if (xs.size() < 2)
    fail("internal: input ", x.typeStr(), " has rank < 2");
  int64_t N = xs[0], C = xs[1], D = numElements(Dims(xs.begin() + 2, xs.end()));
  if (target.numElements() != N * D)
    fail("internal: target ", target.typeStr(), " does not match input ", x.typeStr());
  if (weight && weight->numElements() != C)
    fail("weight ", weight->typeStr(), " must have ", C, " entries");
  std::vector<double> xv = loadDoubles(x);
  if (softmax) {
    // Log-softmax over axis 1, in place.
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        auto at = [&](int64_t c) -> double & { return xv[size_t((n * C + c) * D + d)]; };
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; ++c)
          mx = std::max(mx, at(c));
        for (int64_t c = 0; c < C; ++c)
          sum += std::exp(at(c) - mx);
        double lse = mx + std::log(sum);
        for (int64_t c = 0; c < C; ++c)
          at(c) -= lse;
      }
    if (outs.size() > 1)
      for (size_t i = 0; i < xv.size(); ++i)
        outs[1].setDouble(int64_t(i), xv[i]);
  }
  std::vector<int64_t> t = loadInts(target);
  std::vector<double> w = weight ? loadDoubles(*weight) : std::vector<double>{};
  const std::vector<int64_t> &ignore = op.getInts("ignore_index");
  std::vector<double> loss(t.size(), 0.0);
  double lossSum = 0, weightSum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      size_t k = size_t(n * D + d);
      if (!ignore.empty() && t[k] == ignore[0])
        continue;
      if (t[k] < 0 || t[k] >= C)
        fail("target ", t[k], " at element ", k, " is outside [0, ", C, ")",
             ignore.empty() ? "" : " and is not ignore_index");
      double wk = weight ? w[size_t(t[k])] : 1.0;
      loss[k] = -xv[size_t((n * C + t[k]) * D + d)] * wk;
      lossSum += loss[k];
      weightSum += wk;
    }
  const std::string &red = op.getString("reduction");
  if (red == "none") {
    for (size_t k = 0; k < loss.size(); ++k)
      outs[0].setDouble(int64_t(k), loss[k]);
  } else if (red == "sum") {
    outs[0].setDouble(0, lossSum);
  } else if (red == "mean") {
    outs[0].setDouble(0, lossSum / weightSum); // 0 / 0 (all ignored) is NaN, as in ONNX
  } else {
    fail("unknown reduction '", red, "'");
  }
}

// Inference, or training with ratio 0: the identity and an all-true mask.
void dropoutKernel(const Op &, const Ins &ins, Outs &outs) {
  if (outs.empty() || outs.size() > 2)
    fail("internal: Dropout with ", outs.size(), " results");
  expectArity(ins, 1, outs, outs.size());
  const HostTensor *ratio = ins.size() > 1 ? ins[1] : nullptr;
  const HostTensor *training = ins.size() > 2 ? ins[2] : nullptr;
  if (training && training->getInt(0) != 0) {
    double r = ratio ? ratio->getDouble(0) : 0.5;
    if (!(r >= 0 && r < 1))
      fail("ratio must be in [0, 1), got ", r);
    if (r != 0)
      fail("training Dropout with ratio ", r,
           " drops random elements; the reference executor runs it only with ratio 0 (tc-opt "
           "--train makes it a PhiloxDropout)");
  }
  const HostTensor &x = *ins[0];
  if (!x.sameType(outs[0]))
    fail("internal: Dropout output ", outs[0].typeStr(), " is not ", x.typeStr());
  if (x.byteSize())
    std::memcpy(outs[0].bytes(), x.bytes(), x.byteSize());
  if (outs.size() > 1)
    for (int64_t i = 0; i < outs[1].numElements(); ++i)
      outs[1].setInt(i, 1);
}

// Training dropout (tc/IR/Philox.h): element i kept, scaled by 1 / (1 -
// ratio), when its Philox word clears the threshold. Computed as the
// kernels do (float for f32 and the half types, rounded once): equal bit
// for bit.
void philoxDropoutKernel(const Op &op, const Ins &ins, Outs &outs) {
  expectArity(ins, 3, outs, 1);
  const HostTensor &x = *ins[0];
  uint64_t seed = uint64_t(ins[1]->getInt(0)) + uint64_t(op.getInt("seed"));
  uint64_t offset = uint64_t(ins[2]->getInt(0));
  uint32_t stream = uint32_t(op.getInt("stream"));
  double ratio = op.getFloat("ratio");
  uint32_t threshold = philox::threshold(ratio);
  double scale = philox::keptScale(ratio);
  bool wide = x.dtype() == DType::F64;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    bool keep = philox::word(seed, offset, stream, uint64_t(i)) >= threshold;
    double v = x.getDouble(i);
    outs[0].setDouble(i, !keep ? 0.0 : wide ? v * scale : double(float(v) * float(scale)));
  }
}

// Adagrad, Adam, Momentum: inputs R, T, then n tensors per group (X, G,
// then H; V, H; or V); results: the updated groups but G.
void optimizerKernel(const Op &op, const Ins &ins, Outs &outs) {
  size_t groups = op.is(OpKind::Adam) ? 4 : 3;
  size_t n = ins.size() > 2 ? (ins.size() - 2) / groups : 0;
  if (n == 0 || ins.size() != 2 + groups * n)
    fail("internal: ", op.name(), " with ", ins.size(), " operands");
  expectArity(ins, ins.size(), outs, (groups - 1) * n);
  double r = ins[0]->getDouble(0);
  int64_t t = ins[1]->getInt(0);
  double nc = op.getFloat("norm_coefficient");
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> in[4];
    for (size_t g = 0; g < groups; ++g) {
      in[g] = loadDoubles(*ins[2 + g * n + i]);
      if (in[g].size() != in[0].size())
        fail("operand ", 2 + g * n + i, " has ", in[g].size(), " elements, X", i + 1, " ",
             in[0].size());
    }
    HostTensor &xNew = outs[i], &s1 = outs[n + i];
    for (size_t e = 0; e < in[0].size(); ++e) {
      int64_t k = int64_t(e);
      double x = in[0][e], g = nc * x + in[1][e]; // gradient with L2 regularization
      if (op.is(OpKind::Adagrad)) {
        double rate = r / (1 + double(t) * op.getFloat("decay_factor"));
        double h = in[2][e] + g * g;
        xNew.setDouble(k, x - rate * g / (std::sqrt(h) + op.getFloat("epsilon")));
        s1.setDouble(k, h);
      } else if (op.is(OpKind::Adam)) {
        double alpha = op.getFloat("alpha"), beta = op.getFloat("beta");
        double v = alpha * in[2][e] + (1 - alpha) * g;
        double h = beta * in[3][e] + (1 - beta) * g * g;
        double rate =
            t > 0 ? r * std::sqrt(1 - std::pow(beta, double(t))) / (1 - std::pow(alpha, double(t)))
                  : r; // bias correction from the first step on
        double xn = x - rate * v / (std::sqrt(h) + op.getFloat("epsilon"));
        xNew.setDouble(k, (1 - op.getFloat("norm_coefficient_post")) * xn);
        s1.setDouble(k, v);
        outs[2 * n + i].setDouble(k, h);
      } else {
        double alpha = op.getFloat("alpha"), beta = t > 0 ? op.getFloat("beta") : 1.0;
        double v = alpha * in[2][e] + beta * g;
        bool nesterov = op.getString("mode") == "nesterov";
        xNew.setDouble(k, x - r * (nesterov ? g + alpha * v : v));
        s1.setDouble(k, v);
      }
    }
  }
}

} // namespace

void registerTrainingKernels(KernelTable &t) {
  t[size_t(OpKind::NegativeLogLikelihoodLoss)] = lossKernel;
  t[size_t(OpKind::SoftmaxCrossEntropyLoss)] = lossKernel;
  t[size_t(OpKind::Dropout)] = dropoutKernel;
  t[size_t(OpKind::PhiloxDropout)] = philoxDropoutKernel;
  t[size_t(OpKind::Adagrad)] = optimizerKernel;
  t[size_t(OpKind::Adam)] = optimizerKernel;
  t[size_t(OpKind::Momentum)] = optimizerKernel;
}

} // namespace tc::ref
