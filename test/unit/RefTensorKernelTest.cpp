// Reference kernels and shape rules of the second batch of ops: more
// elementwise math (activations, trig, variadic, bitwise, Mod, Clip) and the
// indexing / shape ops (Slice, Gather*, Scatter*, Split, Tile, ...), checked
// against hand-computed values; plus shape computations that depend on
// run-time data (Shape -> Gather -> Concat -> Reshape over a symbolic dim).
#include "tc/IR/Parser.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

using namespace tc;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
using V = std::vector<double>;

HostTensor T(DType t, std::vector<int64_t> shape, V values) {
  HostTensor r(t, std::move(shape));
  EXPECT_EQ(size_t(r.numElements()), values.size());
  for (size_t i = 0; i < values.size() && i < size_t(r.numElements()); ++i)
    r.setDouble(int64_t(i), values[i]);
  return r;
}
HostTensor F(std::vector<int64_t> shape, V v) { return T(DType::F32, std::move(shape), v); }
HostTensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  HostTensor r(DType::I64, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    r.setInt(int64_t(i), v[i]);
  return r;
}
// 0, 1, 2, ... as f32.
HostTensor iota(std::vector<int64_t> shape) {
  HostTensor r(DType::F32, std::move(shape));
  for (int64_t i = 0; i < r.numElements(); ++i)
    r.setDouble(i, double(i));
  return r;
}

V values(const HostTensor &t) {
  V v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.getDouble(i));
  return v;
}

std::unique_ptr<Module> parse(const std::string &signature, const std::string &body) {
  return parseModule("module @t {\n  func @main" + signature + " {\n" + body + "\n  }\n}\n",
                     "t.tcir");
}

std::vector<HostTensor> run(const std::string &signature, const std::string &body,
                            const std::vector<HostTensor> &inputs) {
  auto m = parse(signature, body);
  return runReference(m->main(), inputs);
}

HostTensor run1(const std::string &signature, const std::string &body,
                const std::vector<HostTensor> &inputs) {
  auto r = run(signature, body, inputs);
  EXPECT_EQ(r.size(), 1u);
  return r.empty() ? HostTensor() : r[0];
}

// One op on one input: "Op(%x) {attrs}" with the result type `ty`.
HostTensor unary(const std::string &in, const std::string &op, const std::string &ty,
                 const HostTensor &x) {
  return run1("(%x: " + in + ") -> (" + ty + ")", "%y = " + op + " : " + ty + "\nreturn %y", {x});
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

void expectNear(const V &got, const V &want, double tol = 1e-6) {
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

} // namespace

// ---- More elementwise --------------------------------------------------------

TEST(RefMoreElementwise, SignRoundIsNaNIsInf) {
  auto x = F({6}, {-2.5, -0.5, 0, 0.5, 1.5, kNaN});
  expectNear(values(unary("f32[6]", "Sign(%x)", "f32[6]", x)), {-1, -1, 0, 1, 1, kNaN});
  // Round: ties to even.
  expectNear(values(unary("f32[6]", "Round(%x)", "f32[6]", x)), {-2, -0, 0, 0, 2, kNaN});
  expectNear(values(unary("f32[4]", "Round(%x)", "f32[4]", F({4}, {2.5, 3.5, -1.5, 2.4}))),
             {2, 4, -2, 2});
  EXPECT_EQ(values(unary("i32[3]", "Sign(%x)", "i32[3]", T(DType::I32, {3}, {-7, 0, 9}))),
            (V{-1, 0, 1}));
  HostTensor u(DType::U64, {2});
  u.setInt(0, -1); // 2^64 - 1
  EXPECT_EQ(values(unary("u64[2]", "Sign(%x)", "u64[2]", u)), (V{1, 0}));
  auto s = F({4}, {kInf, -kInf, kNaN, 1});
  EXPECT_EQ(values(unary("f32[4]", "IsNaN(%x)", "bool[4]", s)), (V{0, 0, 1, 0}));
  EXPECT_EQ(values(unary("f32[4]", "IsInf(%x)", "bool[4]", s)), (V{1, 1, 0, 0}));
  EXPECT_EQ(values(unary("f32[4]", "IsInf(%x) {detect_negative = 0}", "bool[4]", s)),
            (V{1, 0, 0, 0}));
  EXPECT_EQ(values(unary("f32[4]", "IsInf(%x) {detect_positive = 0}", "bool[4]", s)),
            (V{0, 1, 0, 0}));
  EXPECT_NE(
      errorOf([] { parse("(%x: i32[2]) -> (bool[2])", "%y = IsNaN(%x) : bool[2]\nreturn %y"); }),
      "(no error)");
}

TEST(RefMoreElementwise, Activations) {
  auto x = F({4}, {-2, -0.5, 0.5, 2});
  auto un = [&](const std::string &op) { return values(unary("f32[4]", op, "f32[4]", x)); };
  expectNear(un("Elu(%x)"), {std::expm1(-2.0), std::expm1(-0.5), 0.5, 2});
  expectNear(un("Elu(%x) {alpha = 2.0}"), {2 * std::expm1(-2.0), 2 * std::expm1(-0.5), 0.5, 2});
  double a = 1.6732632, g = 1.050701;
  expectNear(un("Selu(%x)"), {g * a * std::expm1(-2.0), g * a * std::expm1(-0.5), g * 0.5, g * 2},
             1e-5);
  expectNear(un("Celu(%x) {alpha = 2.0}"), {2 * std::expm1(-1.0), 2 * std::expm1(-0.25), 0.5, 2});
  expectNear(un("Softplus(%x)"), {0.12692801, 0.47407698, 0.97407698, 2.12692801});
  expectNear(un("Softsign(%x)"), {-2.0 / 3, -0.5 / 1.5, 0.5 / 1.5, 2.0 / 3});
  expectNear(un("Mish(%x)"), {-0.25250148, -0.22074378, 0.37524521, 1.94395896});
  expectNear(un("ThresholdedRelu(%x) {alpha = 0.5}"), {0, 0, 0, 2});
  expectNear(un("Shrink(%x) {bias = 0.25, lambd = 0.5}"), {-1.75, 0, 0, 1.75});
  // Softplus does not overflow for large inputs.
  expectNear(values(unary("f64[2]", "Softplus(%x)", "f64[2]", T(DType::F64, {2}, {800, -800}))),
             {800, 0});
  // Shrink on integers.
  EXPECT_EQ(values(unary("i32[3]", "Shrink(%x) {bias = 1.0, lambd = 1.0}", "i32[3]",
                         T(DType::I32, {3}, {-3, 1, 3}))),
            (V{-2, 0, 2}));
}

TEST(RefMoreElementwise, TrigAndHyperbolic) {
  auto x = F({3}, {-0.5, 0, 0.5});
  auto un = [&](const std::string &op) {
    return values(unary("f32[3]", op + "(%x)", "f32[3]", x));
  };
  expectNear(un("Tan"), {std::tan(-0.5), 0, std::tan(0.5)});
  expectNear(un("Acos"), {std::acos(-0.5), std::acos(0.0), std::acos(0.5)});
  expectNear(un("Asin"), {std::asin(-0.5), 0, std::asin(0.5)});
  expectNear(un("Atan"), {std::atan(-0.5), 0, std::atan(0.5)});
  expectNear(un("Sinh"), {std::sinh(-0.5), 0, std::sinh(0.5)});
  expectNear(un("Cosh"), {std::cosh(-0.5), 1, std::cosh(0.5)});
  expectNear(un("Asinh"), {std::asinh(-0.5), 0, std::asinh(0.5)});
  expectNear(un("Atanh"), {std::atanh(-0.5), 0, std::atanh(0.5)});
  expectNear(values(unary("f32[3]", "Acosh(%x)", "f32[3]", F({3}, {1, 2, 0.5}))),
             {0, std::acosh(2.0), kNaN});
}

TEST(RefMoreElementwise, PReluBroadcastsSlope) {
  // Slope [2,1] broadcasts over X [2,2,3]'s last two axes.
  auto y = run1("(%x: f32[2,2,3], %s: f32[2,1]) -> (f32[2,2,3])",
                "%y = PRelu(%x, %s) : f32[2,2,3]\nreturn %y",
                {F({2, 2, 3}, {-1, 2, -3, -4, 5, -6, 1, -2, 3, -4, -5, 6}), F({2, 1}, {0.5, 10})});
  expectNear(values(y), {-0.5, 2, -1.5, -40, 5, -60, 1, -1, 3, -40, -50, 6});
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[2,3], %s: f32[2,3,1]) -> (f32[2,3])",
                    "%y = PRelu(%x, %s) : f32[2,3]\nreturn %y");
            }),
            "(no error)");
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[2,3], %s: f32[2]) -> (f32[2,3])",
                    "%y = PRelu(%x, %s) : f32[2,3]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreElementwise, Clip) {
  auto x = F({5}, {-5, -1, 0, 3, kNaN});
  auto lo = F({}, {-2}), hi = F({}, {2});
  const char *sig = "(%x: f32[5], %lo: f32[], %hi: f32[]) -> (f32[5])";
  expectNear(values(run1(sig, "%y = Clip(%x, %lo, %hi) : f32[5]\nreturn %y", {x, lo, hi})),
             {-2, -1, 0, 2, kNaN});
  expectNear(values(run1(sig, "%y = Clip(%x, none, %hi) : f32[5]\nreturn %y", {x, lo, hi})),
             {-5, -1, 0, 2, kNaN});
  expectNear(values(run1(sig, "%y = Clip(%x, %lo) : f32[5]\nreturn %y", {x, lo, hi})),
             {-2, -1, 0, 3, kNaN});
  expectNear(values(run1(sig, "%y = Clip(%x) : f32[5]\nreturn %y", {x, lo, hi})),
             {-5, -1, 0, 3, kNaN});
  // min > max: everything becomes max (numpy's clip).
  expectNear(values(run1(sig, "%y = Clip(%x, %hi, %lo) : f32[5]\nreturn %y", {x, lo, hi})),
             {-2, -2, -2, -2, kNaN});
  // Integers, including u64 above INT64_MAX.
  auto i = run1("(%x: i8[3], %lo: i8[], %hi: i8[]) -> (i8[3])",
                "%y = Clip(%x, %lo, %hi) : i8[3]\nreturn %y",
                {T(DType::I8, {3}, {-128, 5, 127}), T(DType::I8, {}, {-3}), T(DType::I8, {}, {3})});
  EXPECT_EQ(values(i), (V{-3, 3, 3}));
  HostTensor u(DType::U64, {2}), ulo(DType::U64, {});
  u.setInt(0, -1);
  u.setInt(1, 1);
  ulo.setInt(0, 7);
  auto uy = run1("(%x: u64[2], %lo: u64[]) -> (u64[2])", "%y = Clip(%x, %lo) : u64[2]\nreturn %y",
                 {u, ulo});
  EXPECT_EQ(uint64_t(uy.getInt(0)), UINT64_MAX);
  EXPECT_EQ(uy.getInt(1), 7);
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[5], %lo: f32[2]) -> (f32[5])",
                    "%y = Clip(%x, %lo) : f32[5]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreElementwise, VariadicMinMaxSumMean) {
  const char *sig = "(%a: f32[2,1], %b: f32[3], %c: f32[]) -> (f32[2,3])";
  std::vector<HostTensor> in{F({2, 1}, {1, 5}), F({3}, {0, 4, kNaN}), F({}, {2})};
  auto op = [&](const char *name) {
    return values(
        run1(sig, std::string("%y = ") + name + "(%a, %b, %c) : f32[2,3]\nreturn %y", in));
  };
  expectNear(op("Min"), {0, 1, kNaN, 0, 2, kNaN});
  expectNear(op("Max"), {2, 4, kNaN, 5, 5, kNaN});
  expectNear(op("Sum"), {3, 7, kNaN, 7, 11, kNaN});
  expectNear(op("Mean"), {1, 7.0 / 3, kNaN, 7.0 / 3, 11.0 / 3, kNaN});
  // One input: a copy.
  expectNear(values(unary("f32[2]", "Max(%x)", "f32[2]", F({2}, {3, -1}))), {3, -1});
  // Integers: u64 compares unsigned; Sum wraps.
  HostTensor a(DType::U64, {2}), b(DType::U64, {2});
  a.setInt(0, -1);
  a.setInt(1, 3);
  b.setInt(0, 1);
  b.setInt(1, 4);
  auto mx =
      run1("(%a: u64[2], %b: u64[2]) -> (u64[2])", "%y = Max(%a, %b) : u64[2]\nreturn %y", {a, b});
  EXPECT_EQ(uint64_t(mx.getInt(0)), UINT64_MAX);
  EXPECT_EQ(mx.getInt(1), 4);
  auto s = run1("(%a: i8[1], %b: i8[1]) -> (i8[1])", "%y = Sum(%a, %b) : i8[1]\nreturn %y",
                {T(DType::I8, {1}, {100}), T(DType::I8, {1}, {100})});
  EXPECT_EQ(s.getInt(0), -56);
  EXPECT_NE(errorOf([] { parse("(%a: i32[2]) -> (i32[2])", "%y = Mean(%a) : i32[2]\nreturn %y"); }),
            "(no error)");
  EXPECT_NE(errorOf([] {
              parse("(%a: f32[2], %b: f64[2]) -> (f32[2])", "%y = Min(%a, %b) : f32[2]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreElementwise, CompareXorBitwise) {
  const char *sig = "(%a: f32[4], %b: f32[4]) -> (bool[4])";
  std::vector<HostTensor> in{F({4}, {1, 2, kNaN, 4}), F({4}, {1, 3, kNaN, 3})};
  EXPECT_EQ(values(run1(sig, "%y = GreaterOrEqual(%a, %b) : bool[4]\nreturn %y", in)),
            (V{1, 0, 0, 1}));
  EXPECT_EQ(values(run1(sig, "%y = LessOrEqual(%a, %b) : bool[4]\nreturn %y", in)),
            (V{1, 1, 0, 0}));
  auto x = run1("(%a: bool[4], %b: bool[4]) -> (bool[4])", "%y = Xor(%a, %b) : bool[4]\nreturn %y",
                {T(DType::Bool, {4}, {0, 0, 1, 1}), T(DType::Bool, {4}, {0, 1, 0, 1})});
  EXPECT_EQ(values(x), (V{0, 1, 1, 0}));
  const char *isig = "(%a: i8[3], %b: i8[3]) -> (i8[3])";
  std::vector<HostTensor> iin{T(DType::I8, {3}, {-1, 12, -128}), T(DType::I8, {3}, {15, 10, 127})};
  EXPECT_EQ(values(run1(isig, "%y = BitwiseAnd(%a, %b) : i8[3]\nreturn %y", iin)), (V{15, 8, 0}));
  EXPECT_EQ(values(run1(isig, "%y = BitwiseOr(%a, %b) : i8[3]\nreturn %y", iin)), (V{-1, 14, -1}));
  EXPECT_EQ(values(run1(isig, "%y = BitwiseXor(%a, %b) : i8[3]\nreturn %y", iin)), (V{-16, 6, -1}));
  EXPECT_EQ(values(unary("u8[2]", "BitwiseNot(%x)", "u8[2]", T(DType::U8, {2}, {0, 240}))),
            (V{255, 15}));
  EXPECT_NE(errorOf([] {
              parse("(%a: f32[2], %b: f32[2]) -> (f32[2])",
                    "%y = BitwiseAnd(%a, %b) : f32[2]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreElementwise, Mod) {
  const char *sig = "(%a: i32[4], %b: i32[4]) -> (i32[4])";
  std::vector<HostTensor> in{T(DType::I32, {4}, {7, -7, 7, -7}),
                             T(DType::I32, {4}, {3, 3, -3, -3})};
  // fmod = 0: the sign of the divisor (Python's %).
  EXPECT_EQ(values(run1(sig, "%y = Mod(%a, %b) : i32[4]\nreturn %y", in)), (V{1, 2, -2, -1}));
  // fmod = 1: the sign of the dividend (C's fmod).
  EXPECT_EQ(values(run1(sig, "%y = Mod(%a, %b) {fmod = 1} : i32[4]\nreturn %y", in)),
            (V{1, -1, 1, -1}));
  expectNear(values(run1("(%a: f32[3], %b: f32[3]) -> (f32[3])",
                         "%y = Mod(%a, %b) {fmod = 1} : f32[3]\nreturn %y",
                         {F({3}, {5.5, -5.5, 1}), F({3}, {2, 2, 0})})),
             {1.5, -1.5, kNaN});
  auto big = run1("(%a: i64[1], %b: i64[1]) -> (i64[1])", "%y = Mod(%a, %b) : i64[1]\nreturn %y",
                  {I64({1}, {INT64_MIN}), I64({1}, {-1})});
  EXPECT_EQ(big.getInt(0), 0);
  EXPECT_EQ(errorOf([&] {
              run1(sig, "%y = Mod(%a, %b) : i32[4] loc(\"m.onnx\":\"mod\")\nreturn %y",
                   {in[0], T(DType::I32, {4}, {1, 0, 1, 1})});
            }),
            "m.onnx:mod (Mod): integer modulo by zero");
  EXPECT_EQ(errorOf([] {
              parse("(%a: f32[2], %b: f32[2]) -> (f32[2])",
                    "%y = Mod(%a, %b) : f32[2] loc(\"m.onnx\":\"mod\")\nreturn %y");
            }),
            "t.tcir:3:1: m.onnx:mod (Mod): fmod must be 1 for float operands (f32)");
}

TEST(RefMoreElementwise, BitShift) {
  const char *sig = "(%a: u8[4], %b: u8[4]) -> (u8[4])";
  std::vector<HostTensor> in{T(DType::U8, {4}, {1, 255, 16, 3}), T(DType::U8, {4}, {3, 1, 4, 9})};
  EXPECT_EQ(
      values(run1(sig, "%y = BitShift(%a, %b) {direction = \"LEFT\"} : u8[4]\nreturn %y", in)),
      (V{8, 254, 0, 0}));
  EXPECT_EQ(
      values(run1(sig, "%y = BitShift(%a, %b) {direction = \"RIGHT\"} : u8[4]\nreturn %y", in)),
      (V{0, 127, 1, 0}));
  HostTensor a(DType::U64, {2}), b(DType::U64, {2});
  a.setInt(0, -1);
  a.setInt(1, 1);
  b.setInt(0, 63);
  b.setInt(1, 64);
  auto r = run1("(%a: u64[2], %b: u64[2]) -> (u64[2])",
                "%y = BitShift(%a, %b) {direction = \"RIGHT\"} : u64[2]\nreturn %y", {a, b});
  EXPECT_EQ(r.getInt(0), 1);
  EXPECT_EQ(r.getInt(1), 0);
  EXPECT_NE(errorOf([] {
              parse("(%a: i32[2], %b: i32[2]) -> (i32[2])",
                    "%y = BitShift(%a, %b) {direction = \"LEFT\"} : i32[2]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreElementwise, CastLike) {
  auto y = run1("(%x: f32[3], %t: i32[]) -> (i32[3])", "%y = CastLike(%x, %t) : i32[3]\nreturn %y",
                {F({3}, {1.7, -2.5, 3}), T(DType::I32, {}, {0})});
  EXPECT_EQ(values(y), (V{1, -2, 3}));
}

// ---- More shape and data movement ------------------------------------------------

TEST(RefMoreTensor, SqueezeUnsqueeze) {
  auto x = iota({1, 3, 1});
  auto y = unary("f32[1,3,1]", "Squeeze(%x)", "f32[3]", x);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3}));
  y = unary("f32[1,3,1]", "Squeeze(%x) {axes = [-1]}", "f32[1,3]", x);
  EXPECT_EQ(values(y), (V{0, 1, 2}));
  y = unary("f32[1,3,1]", "Unsqueeze(%x) {axes = [0, -1]}", "f32[1,1,3,1,1]", x);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 1, 1}));
  // A symbolic dim squeezes; it must be 1 at run time.
  auto m = parse("(%x: f32[N,3]) -> (f32[3])", "%y = Squeeze(%x) {axes = [0]} : f32[3]\nreturn %y");
  EXPECT_EQ(runReference(m->main(), {iota({1, 3})})[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_NE(errorOf([&] { runReference(m->main(), {iota({2, 3})}); }), "(no error)");
  for (const char *bad : {"%y = Squeeze(%x) {axes = [1]} : f32[1]\nreturn %y",
                          "%y = Squeeze(%x) {axes = [0, 0]} : f32[3]\nreturn %y"})
    EXPECT_NE(errorOf([&] { parse("(%x: f32[1,3]) -> (f32[3])", bad); }), "(no error)") << bad;
  EXPECT_NE(
      errorOf([] { parse("(%x: f32[N,3]) -> (f32[3])", "%y = Squeeze(%x) : f32[3]\nreturn %y"); }),
      "(no error)");
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[3]) -> (f32[1,3])",
                    "%y = Unsqueeze(%x) {axes = [0, 0]} : f32[1,1,3]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreTensor, Split) {
  auto r = run("(%x: f32[5]) -> (f32[2], f32[2], f32[1])",
               "%a, %b, %c = Split(%x) : f32[2], f32[2], f32[1]\nreturn %a, %b, %c", {iota({5})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(values(r[0]), (V{0, 1}));
  EXPECT_EQ(values(r[1]), (V{2, 3}));
  EXPECT_EQ(values(r[2]), (V{4}));
  r = run("(%x: f32[2,3]) -> (f32[2,1], f32[2,2])",
          "%a, %b = Split(%x) {axis = -1, split = [1, 2]} : f32[2,1], f32[2,2]\nreturn %a, %b",
          {iota({2, 3})});
  EXPECT_EQ(values(r[0]), (V{0, 3}));
  EXPECT_EQ(values(r[1]), (V{1, 2, 4, 5}));
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[5]) -> (f32[2])",
                    "%a, %b = Split(%x) {split = [2, 2]} : f32[2], f32[2]\nreturn %a");
            }),
            "(no error)");
}

TEST(RefMoreTensor, SliceClampsAndStepsBackwards) {
  auto x = iota({10});
  auto slice = [&](int64_t s, int64_t e, int64_t st) {
    auto m = parse("(%x: f32[10], %s: i64[1], %e: i64[1], %a: i64[1], %t: i64[1]) -> (f32[?])",
                   "%y = Slice(%x, %s, %e, %a, %t) : f32[?]\nreturn %y");
    return values(runReference(
        m->main(), {x, I64({1}, {s}), I64({1}, {e}), I64({1}, {0}), I64({1}, {st})})[0]);
  };
  EXPECT_EQ(slice(2, 5, 1), (V{2, 3, 4}));
  EXPECT_EQ(slice(-3, INT64_MAX, 1), (V{7, 8, 9}));
  EXPECT_EQ(slice(-100, 100, 4), (V{0, 4, 8}));
  EXPECT_EQ(slice(8, INT64_MIN, -3), (V{8, 5, 2}));
  EXPECT_EQ(slice(20, 0, -4), (V{9, 5, 1}));
  EXPECT_EQ(slice(-1, -11, -1), (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(5, 2, 1), V{});
  EXPECT_EQ(slice(INT64_MIN, INT64_MAX, INT64_MAX), (V{0}));
  EXPECT_EQ(slice(INT64_MAX, INT64_MIN, INT64_MIN), (V{9}));
  // 2-D with constant operands: the shape rule computes the result type.
  auto y = run1("(%x: f32[3,4]) -> (f32[2,2])",
                "%s = const i64[2] [0, 3]\n%e = const i64[2] [9223372036854775807, 0]\n"
                "%a = const i64[2] [0, -1]\n%t = const i64[2] [2, -2]\n"
                "%y = Slice(%x, %s, %e, %a, %t) : f32[2,2]\nreturn %y",
                {iota({3, 4})});
  EXPECT_EQ(values(y), (V{3, 1, 11, 9}));
  // Symbolic dims: [0:INT64_MAX:1] keeps the symbol; other slices are unknown.
  auto m = parse("(%x: f32[N,M]) -> (f32[N,?])",
                 "%s = const i64[2] [0, 1]\n%e = const i64[2] [9223372036854775807, -1]\n"
                 "%y = Slice(%x, %s, %e) : f32[N,?]\nreturn %y");
  EXPECT_EQ(m->main().ops[0]->results[0]->type.str(), "f32[N,?]");
  EXPECT_EQ(values(runReference(m->main(), {iota({2, 4})})[0]), (V{1, 2, 5, 6}));
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[4]) -> (f32[4])",
                    "%s = const i64[1] [0]\n%t = const i64[1] [0]\n"
                    "%y = Slice(%x, %s, %s, none, %t) : f32[0]\nreturn %y");
            }),
            "(no error)");
}

TEST(RefMoreTensor, Gathers) {
  auto data = F({3, 2}, {1, 2, 3, 4, 5, 6});
  auto y = run1("(%d: f32[3,2], %i: i64[2,2]) -> (f32[2,2,2])",
                "%y = Gather(%d, %i) : f32[2,2,2]\nreturn %y", {data, I64({2, 2}, {0, -1, 1, 2})});
  EXPECT_EQ(values(y), (V{1, 2, 5, 6, 3, 4, 5, 6}));
  y = run1("(%d: f32[3,2], %i: i32[1]) -> (f32[3,1])",
           "%y = Gather(%d, %i) {axis = 1} : f32[3,1]\nreturn %y",
           {data, T(DType::I32, {1}, {-1})});
  EXPECT_EQ(values(y), (V{2, 4, 6}));
  // Scalar index drops the axis.
  y = run1("(%d: f32[3,2], %i: i64[]) -> (f32[2])", "%y = Gather(%d, %i) : f32[2]\nreturn %y",
           {data, I64({}, {2})});
  EXPECT_EQ(values(y), (V{5, 6}));
  EXPECT_EQ(errorOf([&] {
              run1("(%d: f32[3,2], %i: i64[1]) -> (f32[1,2])",
                   "%y = Gather(%d, %i) : f32[1,2] loc(\"m.onnx\":\"g\")\nreturn %y",
                   {data, I64({1}, {3})});
            }),
            "m.onnx:g (Gather): index 3 is out of range for an axis of size 3");

  y = run1("(%d: f32[2,2], %i: i64[2,2]) -> (f32[2,2])",
           "%y = GatherElements(%d, %i) {axis = 1} : f32[2,2]\nreturn %y",
           {F({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, -2})});
  EXPECT_EQ(values(y), (V{1, 1, 4, 3}));
  y = run1("(%d: f32[3,3], %i: i64[2,3]) -> (f32[2,3])",
           "%y = GatherElements(%d, %i) : f32[2,3]\nreturn %y",
           {iota({3, 3}), I64({2, 3}, {1, 2, 0, 2, 0, 0})});
  EXPECT_EQ(values(y), (V{3, 7, 2, 6, 1, 2}));

  y = run1("(%d: f32[2,2], %i: i64[2,2]) -> (f32[2])", "%y = GatherND(%d, %i) : f32[2]\nreturn %y",
           {iota({2, 2}), I64({2, 2}, {0, 0, 1, 1})});
  EXPECT_EQ(values(y), (V{0, 3}));
  y = run1("(%d: f32[2,2], %i: i64[2,1]) -> (f32[2,2])",
           "%y = GatherND(%d, %i) : f32[2,2]\nreturn %y", {iota({2, 2}), I64({2, 1}, {1, 0})});
  EXPECT_EQ(values(y), (V{2, 3, 0, 1}));
  y = run1("(%d: f32[2,2,2], %i: i64[2,1]) -> (f32[2,2])",
           "%y = GatherND(%d, %i) {batch_dims = 1} : f32[2,2]\nreturn %y",
           {iota({2, 2, 2}), I64({2, 1}, {1, 0})});
  EXPECT_EQ(values(y), (V{2, 3, 4, 5}));
}

TEST(RefMoreTensor, Scatters) {
  const char *sig = "(%d: f32[1,5], %i: i64[1,2], %u: f32[1,2]) -> (f32[1,5])";
  auto d = F({1, 5}, {1, 2, 3, 4, 5});
  auto y = run1(sig, "%y = ScatterElements(%d, %i, %u) {axis = 1} : f32[1,5]\nreturn %y",
                {d, I64({1, 2}, {1, -2}), F({1, 2}, {1.5, 2.5})});
  expectNear(values(y), {1, 1.5, 3, 2.5, 5});
  y = run1(sig,
           "%y = ScatterElements(%d, %i, %u) {axis = 1, reduction = \"add\"} : f32[1,5]\nreturn %y",
           {d, I64({1, 2}, {1, 1}), F({1, 2}, {1.5, 2.5})});
  expectNear(values(y), {1, 6, 3, 4, 5});
  y = run1(sig,
           "%y = ScatterElements(%d, %i, %u) {axis = 1, reduction = \"max\"} : f32[1,5]\nreturn %y",
           {d, I64({1, 2}, {0, 4}), F({1, 2}, {7, 0})});
  expectNear(values(y), {7, 2, 3, 4, 5});
  // axis 0 on a 3x3.
  y = run1(
      "(%d: f32[3,3], %i: i64[2,3], %u: f32[2,3]) -> (f32[3,3])",
      "%y = ScatterElements(%d, %i, %u) : f32[3,3]\nreturn %y",
      {F({3, 3}, V(9, 0)), I64({2, 3}, {1, 0, 2, 0, 2, 1}), F({2, 3}, {1, 1.1, 1.2, 2, 2.1, 2.2})});
  expectNear(values(y), {2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2});

  y = run1("(%d: f32[8], %i: i64[4,1], %u: f32[4]) -> (f32[8])",
           "%y = ScatterND(%d, %i, %u) : f32[8]\nreturn %y",
           {F({8}, {1, 2, 3, 4, 5, 6, 7, 8}), I64({4, 1}, {4, 3, 1, 7}), F({4}, {9, 10, 11, 12})});
  EXPECT_EQ(values(y), (V{1, 11, 3, 10, 9, 6, 7, 12}));
  y = run1("(%d: f32[8], %i: i64[2,1], %u: f32[2]) -> (f32[8])",
           "%y = ScatterND(%d, %i, %u) {reduction = \"mul\"} : f32[8]\nreturn %y",
           {F({8}, {1, 2, 3, 4, 5, 6, 7, 8}), I64({2, 1}, {4, 4}), F({2}, {2, 3})});
  EXPECT_EQ(values(y), (V{1, 2, 3, 4, 30, 6, 7, 8}));
  // Slices: rows of a 2x2.
  y = run1("(%d: f32[2,2], %i: i64[1,1], %u: f32[1,2]) -> (f32[2,2])",
           "%y = ScatterND(%d, %i, %u) {reduction = \"add\"} : f32[2,2]\nreturn %y",
           {F({2, 2}, {1, 2, 3, 4}), I64({1, 1}, {-1}), F({1, 2}, {10, 20})});
  EXPECT_EQ(values(y), (V{1, 2, 13, 24}));
  EXPECT_NE(errorOf([&] {
              parse(sig, "%y = ScatterElements(%d, %i, %u) {reduction = \"avg\"} : f32[1,5]\n"
                         "return %y");
            }),
            "(no error)");
}

TEST(RefMoreTensor, ExpandTileShapeSize) {
  auto y = run1("(%x: f32[3,1]) -> (f32[2,3,2])",
                "%s = const i64[3] [2, 1, 2]\n%y = Expand(%x, %s) : f32[2,3,2]\nreturn %y",
                {F({3, 1}, {1, 2, 3})});
  EXPECT_EQ(values(y), (V{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // A shape computed at run time.
  auto m = parse("(%x: f32[3,1], %s: i64[2]) -> (f32[3,?])",
                 "%y = Expand(%x, %s) : f32[3,?]\nreturn %y");
  EXPECT_EQ(runReference(m->main(), {F({3, 1}, {1, 2, 3}), I64({2}, {1, 2})})[0].shape(),
            (std::vector<int64_t>{3, 2}));

  y = run1("(%x: f32[2,2]) -> (f32[4,4])",
           "%r = const i64[2] [2, 2]\n%y = Tile(%x, %r) : f32[4,4]\nreturn %y", {iota({2, 2})});
  EXPECT_EQ(values(y), (V{0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}));

  auto x = iota({2, 3, 4});
  EXPECT_EQ(values(unary("f32[2,3,4]", "Shape(%x)", "i64[3]", x)), (V{2, 3, 4}));
  EXPECT_EQ(values(unary("f32[2,3,4]", "Shape(%x) {start = -2}", "i64[2]", x)), (V{3, 4}));
  EXPECT_EQ(values(unary("f32[2,3,4]", "Shape(%x) {start = 1, end = -1}", "i64[1]", x)), (V{3}));
  EXPECT_EQ(values(unary("f32[2,3,4]", "Shape(%x) {start = -10, end = 10}", "i64[3]", x)),
            (V{2, 3, 4}));
  EXPECT_EQ(values(unary("f32[2,3,4]", "Shape(%x) {start = 2, end = 1}", "i64[0]", x)), V{});
  EXPECT_EQ(values(unary("f32[2,3,4]", "Size(%x)", "i64[]", x)), (V{24}));
}

TEST(RefMoreTensor, ConstantOfShapeRangeEyeLike) {
  auto y = unary("i64[2]", "ConstantOfShape(%x) {dtype = i32, value = 7.0}", "i32[?,?]",
                 I64({2}, {2, 3}));
  EXPECT_EQ(y.dtype(), DType::I32);
  EXPECT_EQ(values(y), V(6, 7));
  y = run1("(%x: f32[1]) -> (f32[])",
           "%s = const i64[0] []\n%y = ConstantOfShape(%s) : f32[]\nreturn %y", {F({1}, {0})});
  EXPECT_EQ(values(y), (V{0}));
  EXPECT_NE(errorOf([] {
              parse("(%x: i64[1]) -> (i32[?])",
                    "%y = ConstantOfShape(%x) {dtype = i32, value = 0.5} : i32[?]\nreturn %y");
            }),
            "(no error)");

  auto range = [&](DType t, const std::string &ty, double s, double l, double d) {
    return run1("(%s: " + ty + "[], %l: " + ty + "[], %d: " + ty + "[]) -> (" + ty + "[?])",
                "%y = Range(%s, %l, %d) : " + ty + "[?]\nreturn %y",
                {T(t, {}, {s}), T(t, {}, {l}), T(t, {}, {d})});
  };
  EXPECT_EQ(values(range(DType::F32, "f32", 1, 5, 2)), (V{1, 3}));
  EXPECT_EQ(values(range(DType::I32, "i32", 10, 4, -3)), (V{10, 7}));
  EXPECT_EQ(values(range(DType::I64, "i64", 0, 0, 1)), V{});
  EXPECT_EQ(values(range(DType::I16, "i16", 5, 1, 1)), V{});
  expectNear(values(range(DType::F64, "f64", 0, 1, 0.3)), {0, 0.3, 0.6, 0.9});
  // Constant operands give a static length.
  auto m = parse("(%x: f32[1]) -> (i64[3])",
                 "%s = const i64[] [2]\n%l = const i64[] [-4]\n%d = const i64[] [-2]\n"
                 "%y = Range(%s, %l, %d) : i64[3]\nreturn %y");
  EXPECT_EQ(values(runReference(m->main(), {F({1}, {0})})[0]), (V{2, 0, -2}));
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[1]) -> (i64[?])", "%s = const i64[] [2]\n%d = const i64[] [0]\n"
                                                "%y = Range(%s, %s, %d) : i64[?]\nreturn %y");
            }),
            "(no error)");

  auto e = unary("f32[3,4]", "EyeLike(%x) {dtype = i32, k = 1}", "i32[3,4]", iota({3, 4}));
  EXPECT_EQ(values(e), (V{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  e = unary("f32[3,2]", "EyeLike(%x) {dtype = f32, k = -2}", "f32[3,2]", iota({3, 2}));
  EXPECT_EQ(values(e), (V{0, 0, 0, 0, 1, 0}));
  e = unary("f32[2,2]", "EyeLike(%x) {dtype = bool, k = -9223372036854775807}", "bool[2,2]",
            iota({2, 2}));
  EXPECT_EQ(values(e), (V{0, 0, 0, 0}));
}

TEST(RefMoreTensor, TriluOneHot) {
  auto x = F({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const char *sig = "(%x: f32[3,4], %k: i64[]) -> (f32[3,4])";
  EXPECT_EQ(values(run1(sig, "%y = Trilu(%x, %k) : f32[3,4]\nreturn %y", {x, I64({}, {1})})),
            (V{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(
      values(run1(sig, "%y = Trilu(%x, %k) {upper = 0} : f32[3,4]\nreturn %y", {x, I64({}, {-1})})),
      (V{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(
      values(run1(sig, "%y = Trilu(%x) {upper = 0} : f32[3,4]\nreturn %y", {x, I64({}, {0})})),
      (V{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(
      values(run1(sig, "%y = Trilu(%x, %k) : f32[3,4]\nreturn %y", {x, I64({}, {INT64_MIN})})),
      values(x));

  const char *osig = "(%i: i64[3], %d: f32[], %v: f32[2]) -> (f32[3,?])";
  std::vector<HostTensor> in{I64({3}, {0, -1, 5}), F({}, {3.7}), F({2}, {-1, 1})};
  EXPECT_EQ(values(run1(osig, "%y = OneHot(%i, %d, %v) : f32[3,?]\nreturn %y", in)),
            (V{1, -1, -1, -1, -1, 1, -1, -1, -1}));
  auto y = run1("(%i: i64[3], %d: f32[], %v: f32[2]) -> (f32[?,3])",
                "%y = OneHot(%i, %d, %v) {axis = 0} : f32[?,3]\nreturn %y", in);
  EXPECT_EQ(values(y), (V{1, -1, -1, -1, -1, -1, -1, 1, -1}));
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, 3}));
}

TEST(RefMoreTensor, DepthToSpaceSpaceToDepth) {
  auto x = iota({1, 8, 2, 3});
  auto dcr = unary("f32[1,8,2,3]", "DepthToSpace(%x) {blocksize = 2}", "f32[1,2,4,6]", x);
  EXPECT_EQ(values(dcr), (V{0,  12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38, 3,  15, 4,  16,
                            5,  17, 27, 39, 28, 40, 29, 41, 6,  18, 7,  19, 8,  20, 30, 42,
                            31, 43, 32, 44, 9,  21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47}));
  auto crd =
      unary("f32[1,8,2,3]", "DepthToSpace(%x) {blocksize = 2, mode = \"CRD\"}", "f32[1,2,4,6]", x);
  EXPECT_EQ(values(crd), (V{0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10,
                            5,  11, 15, 21, 16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42,
                            37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47}));
  // SpaceToDepth inverts DCR DepthToSpace.
  auto back = unary("f32[1,2,4,6]", "SpaceToDepth(%x) {blocksize = 2}", "f32[1,8,2,3]", dcr);
  EXPECT_EQ(values(back), values(x));
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[1,6,2,2]) -> (f32[1,1,4,4])",
                    "%y = DepthToSpace(%x) {blocksize = 2} : f32[1,1,4,4]\nreturn %y");
            }),
            "(no error)");
  EXPECT_NE(errorOf([] {
              parse("(%x: f32[1,1,3,4]) -> (f32[1,4,1,2])",
                    "%y = SpaceToDepth(%x) {blocksize = 2} : f32[1,4,1,2]\nreturn %y");
            }),
            "(no error)");
}

// A shape computed from a symbolic dim: Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape. The shape rules see the run-time data of the small i64
// tensors, so every result type is concrete when the kernels run.
TEST(RefMoreTensor, RunTimeShapeComputation) {
  auto m =
      parse("(%x: f32[N,3,4]) -> (f32[N,12])", "%i = const i64[] [0]\n%tail = const i64[1] [-1]\n"
                                               "%s = Shape(%x) : i64[3]\n"
                                               "%n = Gather(%s, %i) : i64[]\n"
                                               "%u = Unsqueeze(%n) {axes = [0]} : i64[1]\n"
                                               "%c = Concat(%u, %tail) {axis = 0} : i64[2]\n"
                                               "%y = Reshape(%x, %c) : f32[N,12]\nreturn %y");
  auto y = runReference(m->main(), {iota({2, 3, 4})})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(y.getDouble(23), 23);
  // Range and ConstantOfShape from computed scalars and shapes.
  auto r = parse("(%x: f32[N]) -> (f32[N])",
                 "%zero = const i64[] [0]\n%one = const i64[] [1]\n"
                 "%s = Shape(%x) : i64[1]\n%n = Squeeze(%s) {axes = [0]} : i64[]\n"
                 "%r = Range(%zero, %n, %one) : i64[?]\n"
                 "%f = Cast(%r) {to = f32} : f32[?]\n"
                 "%y = Add(%x, %f) : f32[N]\nreturn %y");
  EXPECT_EQ(values(runReference(r->main(), {F({3}, {10, 10, 10})})[0]), (V{10, 11, 12}));
}
