// Reference kernels and shape rules of the normalization, pooling, reduction
// and resampling ops against hand-computed values: the corners the ONNX node
// tests leave out (integer paths, empty reductions, NaN, ties, negative pads,
// column-major indices, antialiasing, symbolic dims).
#include "tc/IR/Parser.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace tc;

namespace {

HostTensor T(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor r(t, std::move(shape));
  EXPECT_EQ(size_t(r.numElements()), values.size());
  for (size_t i = 0; i < values.size() && i < size_t(r.numElements()); ++i)
    r.setDouble(int64_t(i), values[i]);
  return r;
}
HostTensor F(std::vector<int64_t> shape, std::vector<double> v) {
  return T(DType::F32, std::move(shape), std::move(v));
}
HostTensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  HostTensor r(DType::I64, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    r.setInt(int64_t(i), v[i]);
  return r;
}

std::vector<double> values(const HostTensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.getDouble(i));
  return v;
}

// Runs one op: `sig` is the function signature, `op` the op's line (its
// result %y or results %y, %z).
std::vector<HostTensor> run(const std::string &sig, const std::string &op,
                            const std::vector<HostTensor> &inputs, const std::string &ret = "%y") {
  std::string text =
      "module @t {\n  func @main" + sig + " {\n" + op + "\nreturn " + ret + "\n  }\n}\n";
  auto m = parseModule(text, "t.tcir");
  return runReference(m->main(), inputs);
}

HostTensor run1(const std::string &sig, const std::string &op,
                const std::vector<HostTensor> &inputs) {
  auto r = run(sig, op, inputs);
  EXPECT_EQ(r.size(), 1u);
  return r.empty() ? HostTensor() : r[0];
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

void expectNear(const std::vector<double> &got, const std::vector<double> &want,
                double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else if (std::isinf(want[i]))
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    else
      EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
  }
}

// The result types the shape rule gives an op line over the signature's
// arguments, as text ("f32[N,3]"); or the rule's error.
std::string inferred(const std::string &sig, const std::string &op) {
  try {
    std::string text = "module @t {\n  func @main" + sig + " {\n" + op + "\nreturn %y\n  }\n}\n";
    auto m = parseModule(text, "t.tcir");
    std::string r;
    for (const TensorType &t : inferResultTypes(*m->main().ops.back()))
      r += (r.empty() ? "" : ", ") + t.str();
    return r;
  } catch (const Error &e) {
    // The parser runs the rule first: "t.tcir:3:1: <unknown> (Op): what".
    std::string m = e.what();
    size_t at = m.find("): ");
    return at == std::string::npos ? m : m.substr(at + 3);
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

// ---- Pooling ---------------------------------------------------------------

TEST(RefNNKernels, MaxPoolIndicesRowAndColumnMajor) {
  auto x = F({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const char *sig = "(%x: f32[1,1,3,3]) -> (f32[1,1,2,2], i64[1,1,2,2])";
  auto r = run(sig, "%y, %z = MaxPool(%x) {kernel_shape = [2, 2]} : f32[1,1,2,2], i64[1,1,2,2]",
               {x}, "%y, %z");
  EXPECT_EQ(values(r[0]), (std::vector<double>{5, 6, 8, 9}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{4, 5, 7, 8}));
  // Column-major: h + w * H.
  r = run(sig,
          "%y, %z = MaxPool(%x) {kernel_shape = [2, 2], storage_order = 1} : f32[1,1,2,2], "
          "i64[1,1,2,2]",
          {x}, "%y, %z");
  EXPECT_EQ(values(r[1]), (std::vector<double>{4, 7, 5, 8}));
  // Padding never wins, even over negative values; u8 compares exactly.
  auto n = run1("(%x: f32[1,1,2]) -> (f32[1,1,3])",
                "%y = MaxPool(%x) {kernel_shape = [2], pads = [1, 1]} : f32[1,1,3]",
                {F({1, 1, 2}, {-3, -5})});
  EXPECT_EQ(values(n), (std::vector<double>{-3, -3, -5}));
  auto u =
      run1("(%x: u8[1,1,3]) -> (u8[1,1,2])", "%y = MaxPool(%x) {kernel_shape = [2]} : u8[1,1,2]",
           {T(DType::U8, {1, 1, 3}, {200, 7, 255})});
  EXPECT_EQ(values(u), (std::vector<double>{200, 255}));
}

TEST(RefNNKernels, PoolCeilModeDropsWindowsStartingInPadding) {
  // 5 wide, kernel 2, stride 2: floor gives 2 windows, ceil 3 (the last
  // one half outside).
  auto x5 = F({1, 1, 5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(values(run1("(%x: f32[1,1,5]) -> (f32[1,1,3])",
                        "%y = MaxPool(%x) {ceil_mode = 1, kernel_shape = [2], strides = [2]} : "
                        "f32[1,1,3]",
                        {x5})),
            (std::vector<double>{2, 4, 5}));
  // 4 wide with one end pad: the third window would start in the padding.
  EXPECT_EQ(inferred("(%x: f32[1,1,4]) -> (f32[1,1,2])",
                     "%y = MaxPool(%x) {ceil_mode = 1, kernel_shape = [2], pads = [0, 1], "
                     "strides = [2]} : f32[1,1,2]"),
            "f32[1,1,2]");
}

TEST(RefNNKernels, AveragePoolCountIncludePad) {
  auto x = F({1, 1, 3}, {1, 2, 3});
  const char *sig = "(%x: f32[1,1,3]) -> (f32[1,1,3])";
  expectNear(
      values(
          run1(sig, "%y = AveragePool(%x) {kernel_shape = [3], pads = [1, 1]} : f32[1,1,3]", {x})),
      {1.5, 2, 2.5});
  expectNear(values(run1(sig,
                         "%y = AveragePool(%x) {count_include_pad = 1, kernel_shape = [3], "
                         "pads = [1, 1]} : f32[1,1,3]",
                         {x})),
             {1, 2, 5.0 / 3});
  // Dilated: taps 0, 2 and 1, 3.
  expectNear(values(run1("(%x: f32[1,1,4]) -> (f32[1,1,2])",
                         "%y = AveragePool(%x) {dilations = [2], kernel_shape = [2]} : f32[1,1,2]",
                         {F({1, 1, 4}, {1, 2, 3, 5})})),
             {2, 3.5});
}

TEST(RefNNKernels, LpPoolAndGlobalPools) {
  expectNear(
      values(run1("(%x: f32[1,1,2]) -> (f32[1,1,1])",
                  "%y = LpPool(%x) {kernel_shape = [2]} : f32[1,1,1]", {F({1, 1, 2}, {3, -4})})),
      {5});
  expectNear(values(run1("(%x: f32[1,1,2]) -> (f32[1,1,1])",
                         "%y = LpPool(%x) {kernel_shape = [2], p = 1} : f32[1,1,1]",
                         {F({1, 1, 2}, {3, -4})})),
             {7});
  auto x = F({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, kNaN});
  expectNear(values(run1("(%x: f32[1,2,2,2]) -> (f32[1,2,1,1])",
                         "%y = GlobalAveragePool(%x) : f32[1,2,1,1]", {x})),
             {2.5, kNaN});
  expectNear(values(run1("(%x: f32[1,2,2,2]) -> (f32[1,2,1,1])",
                         "%y = GlobalMaxPool(%x) : f32[1,2,1,1]", {x})),
             {4, kNaN});
}

TEST(RefNNKernels, PoolShapeRules) {
  // Unknown sizes stay unknown unless the window keeps them.
  EXPECT_EQ(inferred("(%x: f32[N,3,H,W]) -> (f32[N,3,?,?])",
                     "%y = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2]} : f32[N,3,?,?]"),
            "f32[N,3,?,?]");
  EXPECT_EQ(inferred("(%x: f32[N,3,H,W]) -> (f32[N,3,H,W])",
                     "%y = AveragePool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : "
                     "f32[N,3,H,W]"),
            "f32[N,3,H,W]");
  EXPECT_EQ(inferred("(%x: f32[N,3,H,W]) -> (f32[N,3,H,W])",
                     "%y = MaxPool(%x) {auto_pad = \"SAME_LOWER\", kernel_shape = [2, 2]} : "
                     "f32[N,3,H,W]"),
            "f32[N,3,H,W]");
  EXPECT_EQ(inferred("(%x: f32[1,3,2,2]) -> (f32[1,3,1,1])",
                     "%y = MaxPool(%x) {kernel_shape = [3, 3]} : f32[1,3,1,1]"),
            "the window (3 with dilation) is larger than the padded input (2)");
  EXPECT_EQ(inferred("(%x: f32[1,3,4]) -> (f32[1,3,3])",
                     "%y = MaxPool(%x) {kernel_shape = [2, 2]} : f32[1,3,3]"),
            "kernel_shape has 2 values, expected 1");
  // A size known only at run time is checked then, naming the op.
  std::string err = errorOf([] {
    run1("(%x: f32[1,1,W]) -> (f32[1,1,?])",
         "%y = MaxPool(%x) {kernel_shape = [3]} : f32[1,1,?] loc(\"m.onnx\":\"pool\")",
         {F({1, 1, 2}, {1, 2})});
  });
  EXPECT_EQ(err, "m.onnx:pool (MaxPool): the window (3 with dilation) is larger than the padded "
                 "input (2)");
}

// ---- ConvTranspose ---------------------------------------------------------

TEST(RefNNKernels, ConvTransposeScattersThroughTheKernel) {
  auto x = F({1, 1, 2}, {1, 2});
  auto w = F({1, 1, 3}, {1, 1, 1});
  auto ct = [&](const std::string &attrs, int64_t n) {
    std::string t = "f32[1,1," + std::to_string(n) + "]";
    return values(run1("(%x: f32[1,1,2], %w: f32[1,1,3]) -> (" + t + ")",
                       "%y = ConvTranspose(%x, %w) {" + attrs + "} : " + t, {x, w}));
  };
  // The full result: stride 2 * (2 - 1) + 3 = 5 positions.
  expectNear(ct("strides = [2]", 5), {1, 1, 3, 2, 2});
  expectNear(ct("pads = [1, 1], strides = [2]", 3), {1, 3, 2});
  expectNear(ct("output_padding = [1], strides = [2]", 6), {1, 1, 3, 2, 2, 0});
  // output_shape 4 of the 5: the odd padding goes at the beginning, unless
  // SAME_UPPER.
  expectNear(ct("output_shape = [4], strides = [2]", 4), {1, 3, 2, 2});
  expectNear(ct("auto_pad = \"SAME_UPPER\", output_shape = [4], strides = [2]", 4), {1, 1, 3, 2});
  // Groups: each input channel feeds its own output channels; bias added.
  auto g = run1("(%x: f32[1,2,1], %w: f32[2,1,1], %b: f32[2]) -> (f32[1,2,1])",
                "%y = ConvTranspose(%x, %w, %b) {group = 2} : f32[1,2,1]",
                {F({1, 2, 1}, {1, 10}), F({2, 1, 1}, {2, 3}), F({2}, {0.5, -0.5})});
  expectNear(values(g), {2.5, 29.5});
  // Integers accumulate exactly.
  auto i = run1("(%x: i64[1,1,2], %w: i64[1,1,2]) -> (i64[1,1,3])",
                "%y = ConvTranspose(%x, %w) : i64[1,1,3]",
                {I64({1, 1, 2}, {int64_t(1) << 53, 1}), I64({1, 1, 2}, {1, 1})});
  EXPECT_EQ(i.getInt(1), (int64_t(1) << 53) + 1);
}

// ---- Normalization ---------------------------------------------------------

TEST(RefNNKernels, BatchNormPerChannelAndPerActivation) {
  auto x = F({1, 2, 2}, {1, 2, 3, 4});
  auto y = run1("(%x: f32[1,2,2], %s: f32[2], %b: f32[2], %m: f32[2], %v: f32[2]) -> (f32[1,2,2])",
                "%y = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 0.0} : f32[1,2,2]",
                {x, F({2}, {2, 1}), F({2}, {1, 0}), F({2}, {1, 3}), F({2}, {4, 1})});
  expectNear(values(y), {1, 2, 0, 1});
  // Legacy spatial = 0: one set of statistics per (c, spatial) position.
  auto p = run1("(%x: f32[1,2,2], %s: f32[2,2], %b: f32[2,2], %m: f32[2,2], %v: f32[2,2]) -> "
                "(f32[1,2,2])",
                "%y = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 0.0} : f32[1,2,2]",
                {x, F({2, 2}, {1, 1, 1, 1}), F({2, 2}, {0, 0, 0, 0}), F({2, 2}, {1, 2, 3, 4}),
                 F({2, 2}, {1, 1, 1, 1})});
  expectNear(values(p), {0, 0, 0, 0});
}

TEST(RefNNKernels, InstanceLayerGroupNorm) {
  expectNear(values(run1("(%x: f32[1,1,2], %s: f32[1], %b: f32[1]) -> (f32[1,1,2])",
                         "%y = InstanceNormalization(%x, %s, %b) {epsilon = 0.0} : f32[1,1,2]",
                         {F({1, 1, 2}, {1, 3}), F({1}, {2}), F({1}, {1})})),
             {-1, 3});
  // LayerNormalization with its statistics: row 0 has mean 2 and variance
  // 1, row 1 variance 0 (only epsilon).
  auto r = run("(%x: f32[2,2], %s: f32[2]) -> (f32[2,2], f32[2,1], f32[2,1])",
               "%y, %m, %i = LayerNormalization(%x, %s) : f32[2,2], f32[2,1], f32[2,1]",
               {F({2, 2}, {1, 3, 2, 2}), F({2}, {1, 2})}, "%y, %m, %i");
  double inv0 = 1 / std::sqrt(1 + 1e-5), inv1 = 1 / std::sqrt(1e-5);
  expectNear(values(r[0]), {-inv0, 2 * inv0, 0, 0}, 1e-5);
  expectNear(values(r[1]), {2, 2});
  expectNear(values(r[2]), {inv0, inv1}, 1e-2);
  // Scale broadcasting to the normalized dims [2,2] from [2].
  auto b = run1("(%x: f32[1,2,2], %s: f32[2], %b: f32[1]) -> (f32[1,2,2])",
                "%y = LayerNormalization(%x, %s, %b) {axis = 1, epsilon = 0.0} : f32[1,2,2]",
                {F({1, 2, 2}, {0, 0, 2, 2}), F({2}, {1, 3}), F({1}, {10})});
  expectNear(values(b), {9, 7, 11, 13});
  // GroupNormalization: groups {1, 3} and {10, 20}, per-channel scale/bias.
  auto g = run1("(%x: f32[1,4,1], %s: f32[4], %b: f32[4]) -> (f32[1,4,1])",
                "%y = GroupNormalization(%x, %s, %b) {epsilon = 0.0, num_groups = 2} : f32[1,4,1]",
                {F({1, 4, 1}, {1, 3, 10, 20}), F({4}, {1, 1, 2, 2}), F({4}, {0, 0, 1, 1})});
  expectNear(values(g), {-1, 1, -1, 3});
  EXPECT_EQ(inferred("(%x: f32[1,6,1], %s: f32[6], %b: f32[6]) -> (f32[1,6,1])",
                     "%y = GroupNormalization(%x, %s, %b) {num_groups = 4} : f32[1,6,1]"),
            "num_groups 4 does not divide the 6 channels");
}

TEST(RefNNKernels, LpNormMvnLrn) {
  expectNear(
      values(run1("(%x: f32[2,2]) -> (f32[2,2])", "%y = LpNormalization(%x) {p = 1} : f32[2,2]",
                  {F({2, 2}, {1, -3, 0, 0})})),
      {0.25, -0.75, 0, 0}); // an all-zero row stays zero
  expectNear(
      values(run1("(%x: f32[2,2]) -> (f32[2,2])", "%y = LpNormalization(%x) {axis = 0} : f32[2,2]",
                  {F({2, 2}, {3, 1, 4, 0})})),
      {0.6, 1, 0.8, 0});
  // MVN over axis 1: (x - mean) / (std + 1e-9).
  expectNear(values(run1("(%x: f32[2,2]) -> (f32[2,2])",
                         "%y = MeanVarianceNormalization(%x) {axes = [1]} : f32[2,2]",
                         {F({2, 2}, {1, 3, 5, 5})})),
             {-1, 1, 0, 0});
  // LRN size 2: channel c sums c and c + 1.
  expectNear(values(run1("(%x: f32[1,2,1,1]) -> (f32[1,2,1,1])",
                         "%y = LRN(%x) {alpha = 1.0, beta = 1.0, size = 2} : f32[1,2,1,1]",
                         {F({1, 2, 1, 1}, {1, 2})})),
             {1 / 3.5, 2.0 / 3});
}

// ---- Reductions ------------------------------------------------------------

TEST(RefNNKernels, ReduceFamily) {
  auto x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  auto red = [&](const char *op, const char *attrs, const char *type) {
    std::string sig = std::string("(%x: f32[2,3]) -> (") + type + ")";
    return values(run1(sig, std::string("%y = ") + op + "(%x) " + attrs + " : " + type, {x}));
  };
  expectNear(red("ReduceSum", "{axes = [1], keepdims = 0}", "f32[2]"), {6, 15});
  expectNear(red("ReduceMean", "{axes = [0]}", "f32[1,3]"), {2.5, 3.5, 4.5});
  expectNear(red("ReduceMax", "{axes = [-1]}", "f32[2,1]"), {3, 6});
  expectNear(red("ReduceMin", "{keepdims = 0}", "f32[]"), {1});
  expectNear(red("ReduceProd", "{axes = [1]}", "f32[2,1]"), {6, 120});
  expectNear(red("ReduceL1", "{axes = [1]}", "f32[2,1]"), {6, 15});
  expectNear(red("ReduceL2", "{axes = [0]}", "f32[1,3]"),
             {std::sqrt(17.0), std::sqrt(29.0), std::sqrt(45.0)});
  expectNear(red("ReduceSumSquare", "{axes = [1]}", "f32[2,1]"), {14, 77});
  expectNear(red("ReduceLogSum", "{axes = [1]}", "f32[2,1]"), {std::log(6.0), std::log(15.0)});
  // LogSumExp subtracts the maximum: no overflow at 1000.
  expectNear(
      values(run1("(%x: f32[2]) -> (f32[])", "%y = ReduceLogSumExp(%x) {keepdims = 0} : f32[]",
                  {F({2}, {1000, 1000})})),
      {1000 + std::log(2.0)}, 1e-3);
  // NaN propagates through Max/Min.
  expectNear(values(run1("(%x: f32[3]) -> (f32[1])", "%y = ReduceMax(%x) : f32[1]",
                         {F({3}, {1, kNaN, 2})})),
             {kNaN});
}

TEST(RefNNKernels, ReduceIntegersAndEmpty) {
  // Integer sums and products are exact in 64 bits; the mean truncates.
  int64_t big = (int64_t(1) << 53) + 1;
  auto s = run1("(%x: i64[2]) -> (i64[1])", "%y = ReduceSum(%x) : i64[1]", {I64({2}, {big, 2})});
  EXPECT_EQ(s.getInt(0), big + 2);
  auto m = run1("(%x: i32[2]) -> (i32[1])", "%y = ReduceMean(%x) : i32[1]",
                {T(DType::I32, {2}, {-3, -4})});
  EXPECT_EQ(m.getInt(0), -3);
  // Reducing an empty axis: the identity of each reduction.
  auto e = F({2, 0}, {});
  const char *sig = "(%x: f32[2,0]) -> (f32[2])";
  auto empty = [&](const char *op) {
    return values(
        run1(sig, std::string("%y = ") + op + "(%x) {axes = [1], keepdims = 0} : f32[2]", {e}));
  };
  expectNear(empty("ReduceSum"), {0, 0});
  expectNear(empty("ReduceProd"), {1, 1});
  expectNear(empty("ReduceMax"), {-kInf, -kInf});
  expectNear(empty("ReduceMin"), {kInf, kInf});
  expectNear(empty("ReduceMean"), {kNaN, kNaN});
  expectNear(empty("ReduceLogSumExp"), {-kInf, -kInf});
  // bool Max/Min are any/all.
  auto b = run1("(%x: bool[2,2]) -> (bool[2])",
                "%y = ReduceMax(%x) {axes = [1], keepdims = 0} : bool[2]",
                {T(DType::Bool, {2, 2}, {0, 1, 0, 0})});
  EXPECT_EQ(values(b), (std::vector<double>{1, 0}));
  EXPECT_EQ(inferred("(%x: f32[N,3]) -> (f32[N,1])", "%y = ReduceSum(%x) {axes = [1]} : f32[N,1]"),
            "f32[N,1]");
  EXPECT_EQ(inferred("(%x: f32[2,3]) -> (f32[2])", "%y = ReduceSum(%x) {axes = [2]} : f32[2]"),
            "axis 2 is out of range for rank 2");
}

TEST(RefNNKernels, ArgHardmaxCumSumTopK) {
  auto x = F({2, 3}, {1, 3, 3, 2, 2, 0});
  const char *sig = "(%x: f32[2,3]) -> (i64[2])";
  EXPECT_EQ(values(run1(sig, "%y = ArgMax(%x) {axis = 1, keepdims = 0} : i64[2]", {x})),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(
      values(run1(sig, "%y = ArgMax(%x) {axis = 1, keepdims = 0, select_last_index = 1} : i64[2]",
                  {x})),
      (std::vector<double>{2, 1}));
  EXPECT_EQ(values(run1(sig, "%y = ArgMin(%x) {axis = -1, keepdims = 0} : i64[2]", {x})),
            (std::vector<double>{0, 2}));
  EXPECT_EQ(values(run1("(%x: f32[2,3]) -> (f32[2,3])", "%y = Hardmax(%x) : f32[2,3]", {x})),
            (std::vector<double>{0, 1, 0, 1, 0, 0}));
  // CumSum on integers, exclusive and reversed.
  auto c = T(DType::I32, {4}, {1, 2, 3, 4});
  const char *csig = "(%x: i32[4]) -> (i32[4])";
  EXPECT_EQ(values(run1(csig, "%y = CumSum(%x) {axis = 0} : i32[4]", {c})),
            (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(
      values(run1(csig, "%y = CumSum(%x) {axis = 0, exclusive = 1, reverse = 1} : i32[4]", {c})),
      (std::vector<double>{9, 7, 4, 0}));
  // TopK: equal values keep index order; NaN sorts above every number.
  auto t = F({5}, {1, 3, kNaN, 3, 2});
  auto r = run("(%x: f32[5]) -> (f32[3], i64[3])", "%y, %i = TopK(%x) {k = 3} : f32[3], i64[3]",
               {t}, "%y, %i");
  expectNear(values(r[0]), {kNaN, 3, 3});
  EXPECT_EQ(values(r[1]), (std::vector<double>{2, 1, 3}));
  r = run("(%x: f32[5]) -> (f32[2], i64[2])",
          "%y, %i = TopK(%x) {k = 2, largest = 0} : f32[2], i64[2]", {t}, "%y, %i");
  EXPECT_EQ(values(r[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{0, 4}));
  EXPECT_EQ(
      inferred("(%x: f32[2,3]) -> (f32[2,4])", "%y, %i = TopK(%x) {k = 4} : f32[2,4], i64[2,4]"),
      "k = 4 is larger than axis 1 (3)");
}

// ---- Resize and Pad --------------------------------------------------------

TEST(RefNNKernels, ResizeModes) {
  auto x = F({2}, {0, 1});
  const char *sig = "(%x: f32[2]) -> (f32[4])";
  // half_pixel linear: sources -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  expectNear(values(run1(sig, "%y = Resize(%x) {mode = \"linear\", scales = [2.0]} : f32[4]", {x})),
             {0, 0.25, 0.75, 1});
  // asymmetric nearest floor: 0, 0.5, 1, 1.5 -> 0, 0, 1, 1.
  expectNear(values(run1(sig,
                         "%y = Resize(%x) {coordinate_transformation_mode = \"asymmetric\", "
                         "nearest_mode = \"floor\", sizes = [4]} : f32[4]",
                         {x})),
             {0, 0, 1, 1});
  // align_corners linear: 0, 1/3, 2/3, 1.
  expectNear(values(run1(sig,
                         "%y = Resize(%x) {coordinate_transformation_mode = \"align_corners\", "
                         "mode = \"linear\", sizes = [4]} : f32[4]",
                         {x})),
             {0, 1.0 / 3, 2.0 / 3, 1});
  // Antialiased linear downsampling by 2: a 4-tap triangle filter.
  expectNear(
      values(run1("(%x: f32[4]) -> (f32[2])",
                  "%y = Resize(%x) {antialias = 1, mode = \"linear\", scales = [0.5]} : f32[2]",
                  {F({4}, {0, 1, 2, 3})})),
      {0.625, 2.375});
  // Integers round to nearest even.
  auto i = run1("(%x: i32[2]) -> (i32[4])",
                "%y = Resize(%x) {mode = \"linear\", scales = [2.0]} : i32[4]",
                {T(DType::I32, {2}, {0, 2})});
  EXPECT_EQ(values(i), (std::vector<double>{0, 0, 2, 2}));
  // axes and keep_aspect_ratio_policy: one scale, min(8/4, 8/6), for both.
  EXPECT_EQ(inferred("(%x: f32[N,3,4,6]) -> (f32[N,3,5,8])",
                     "%y = Resize(%x) {axes = [2, 3], keep_aspect_ratio_policy = \"not_larger\", "
                     "sizes = [8, 8]} : f32[N,3,5,8]"),
            "f32[N,3,5,8]");
  EXPECT_EQ(inferred("(%x: f32[N,3,H,W]) -> (f32[N,3,?,?])",
                     "%y = Resize(%x) {scales = [1.0, 1.0, 2.0, 2.0]} : f32[N,3,?,?]"),
            "f32[N,3,?,?]");
  EXPECT_EQ(inferred("(%x: f32[2]) -> (f32[4])",
                     "%y = Resize(%x) {scales = [2.0], sizes = [4]} : f32[4]"),
            "exactly one of scales and sizes must be given");
}

TEST(RefNNKernels, PadModes) {
  auto x = F({3}, {1, 2, 3});
  auto pad = [&](const std::string &attrs, int64_t n) {
    std::string t = "f32[" + std::to_string(n) + "]";
    return values(run1("(%x: f32[3]) -> (" + t + ")", "%y = Pad(%x) {" + attrs + "} : " + t, {x}));
  };
  expectNear(pad("pads = [2, 1], value = 9.0", 6), {9, 9, 1, 2, 3, 9});
  expectNear(pad("pads = [-1, 1]", 3), {2, 3, 0}); // negative: crops
  expectNear(pad("mode = \"edge\", pads = [2, 1]", 6), {1, 1, 1, 2, 3, 3});
  // reflect repeats past the edge (numpy): ... 3 2 [1 2 3] 2 1 2 3
  expectNear(pad("mode = \"reflect\", pads = [2, 4]", 9), {3, 2, 1, 2, 3, 2, 1, 2, 3});
  expectNear(pad("mode = \"wrap\", pads = [4, 1]", 8), {3, 1, 2, 3, 1, 2, 3, 1});
  // Any element type, copied exactly.
  auto b = run1("(%x: bool[2]) -> (bool[3])", "%y = Pad(%x) {pads = [1, 0], value = 1.0} : bool[3]",
                {T(DType::Bool, {2}, {0, 0})});
  EXPECT_EQ(values(b), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(inferred("(%x: f32[2]) -> (f32[0])", "%y = Pad(%x) {pads = [-2, -1]} : f32[0]"),
            "pads -2, -1 remove more than axis 0 (2) holds");
  EXPECT_EQ(
      inferred("(%x: f32[N,2]) -> (f32[N,4])", "%y = Pad(%x) {pads = [0, 1, 0, 1]} : f32[N,4]"),
      "f32[N,4]");
}

// ---- Einsum ----------------------------------------------------------------

TEST(RefNNKernels, Einsum) {
  auto a = F({2, 2}, {1, 2, 3, 4}), b = F({2, 2}, {5, 6, 7, 8});
  const char *sig2 = "(%a: f32[2,2], %b: f32[2,2]) -> (f32[2,2])";
  // Implicit output: the letters used once, sorted ("ik").
  expectNear(values(run1(sig2, "%y = Einsum(%a, %b) {equation = \"ij,jk\"} : f32[2,2]", {a, b})),
             {19, 22, 43, 50});
  expectNear(
      values(run1(sig2, "%y = Einsum(%a, %b) {equation = \"ij,jk->ki\"} : f32[2,2]", {a, b})),
      {19, 43, 22, 50});
  expectNear(
      values(run1("(%a: f32[2,2]) -> (f32[])", "%y = Einsum(%a) {equation = \"ii\"} : f32[]", {a})),
      {5});
  // Ellipsis dims broadcast: [2,1,2] x [3,2] -> [2,3].
  auto e = run1("(%a: f32[2,1,2], %b: f32[3,2]) -> (f32[2,3])",
                "%y = Einsum(%a, %b) {equation = \"...j,...j->...\"} : f32[2,3]",
                {F({2, 1, 2}, {1, 0, 0, 1}), F({3, 2}, {1, 2, 3, 4, 5, 6})});
  expectNear(values(e), {1, 3, 5, 2, 4, 6});
  EXPECT_EQ(inferred("(%a: f32[2,3], %b: f32[4,5]) -> (f32[2,5])",
                     "%y = Einsum(%a, %b) {equation = \"ij,jk->ik\"} : f32[2,5]"),
            "equation 'ij,jk->ik': a label has sizes 3 and 4");
  EXPECT_EQ(
      inferred("(%a: f32[2,3]) -> (f32[2])", "%y = Einsum(%a) {equation = \"ijk->i\"} : f32[2]"),
      "equation 'ijk->i': term 0 'ijk' does not match rank 2");
}
