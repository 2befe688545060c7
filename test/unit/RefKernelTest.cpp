// The reference executor: kernel coverage of the op table, numeric results
// of every kernel family against hand-computed values, and input checking.
#include "tc/IR/Parser.h"
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

// Runs `body` (the inside of func @main) with `inputs`.
std::vector<HostTensor> run(const std::string &signature, const std::string &body,
                            const std::vector<HostTensor> &inputs) {
  std::string text = "module @t {\n  func @main" + signature + " {\n" + body + "\n  }\n}\n";
  auto m = parseModule(text, "t.tcir");
  return runReference(m->main(), inputs);
}

HostTensor run1(const std::string &signature, const std::string &body,
                const std::vector<HostTensor> &inputs) {
  auto r = run(signature, body, inputs);
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

// (a) Every op of the op table has a kernel. When this fails after ops were
// added to Ops.def, write their kernels in lib/Runtime/Ref/.
TEST(RefKernels, EveryOpHasAKernel) {
  for (const OpInfo &info : allOps())
    if (info.kind != OpKind::Fused && info.kind != OpKind::If && info.kind != OpKind::Loop &&
        info.kind != OpKind::Scan) { // run their callees: runReference(Module, ...)
      EXPECT_NE(lookupRefKernel(info.kind), nullptr) << info.name << " has no reference kernel";
    }
  EXPECT_EQ(lookupRefKernel(OpKind::NumOps), nullptr);
}

// ---- Elementwise -----------------------------------------------------------

TEST(RefKernels, BroadcastingAddMulSub) {
  auto y =
      run1("(%a: f32[2,3], %b: f32[3]) -> (f32[2,3])", "%y = Add(%a, %b) : f32[2,3]\nreturn %y",
           {F({2, 3}, {1, 2, 3, 4, 5, 6}), F({3}, {10, 20, 30})});
  EXPECT_EQ(values(y), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  // [2,1] x [1,3] -> [2,3]
  y = run1("(%a: f32[2,1], %b: f32[1,3]) -> (f32[2,3])", "%y = Mul(%a, %b) : f32[2,3]\nreturn %y",
           {F({2, 1}, {2, 3}), F({1, 3}, {1, 10, 100})});
  EXPECT_EQ(values(y), (std::vector<double>{2, 20, 200, 3, 30, 300}));
  // scalar on the left, rank 3 on the right
  y = run1("(%a: f32[], %b: f32[2,1,2]) -> (f32[2,1,2])",
           "%y = Sub(%a, %b) : f32[2,1,2]\nreturn %y", {F({}, {1}), F({2, 1, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(values(y), (std::vector<double>{0, -1, -2, -3}));
  // symbolic dims bind at run time
  y = run1("(%a: f32[N,2], %b: f32[N,1]) -> (f32[N,2])", "%y = Add(%a, %b) : f32[N,2]\nreturn %y",
           {F({3, 2}, {1, 2, 3, 4, 5, 6}), F({3, 1}, {0, 10, 20})});
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 13, 14, 25, 26}));
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, 2}));
}

TEST(RefKernels, IntegerDivisionTruncatesAndChecksZero) {
  const char *sig = "(%a: i32[4], %b: i32[4]) -> (i32[4])";
  auto y = run1(sig, "%y = Div(%a, %b) : i32[4]\nreturn %y",
                {T(DType::I32, {4}, {7, -7, 7, -7}), T(DType::I32, {4}, {2, 2, -2, -2})});
  EXPECT_EQ(values(y), (std::vector<double>{3, -3, -3, 3}));
  std::string err = errorOf([&] {
    run1(sig, "%y = Div(%a, %b) : i32[4] loc(\"m.onnx\":\"div\")\nreturn %y",
         {T(DType::I32, {4}, {1, 2, 3, 4}), T(DType::I32, {4}, {1, 0, 1, 1})});
  });
  EXPECT_EQ(err, "m.onnx:div (Div): integer division by zero");
  // INT64_MIN / -1 wraps rather than trapping; i8 arithmetic wraps too.
  auto w = run1("(%a: i64[1], %b: i64[1]) -> (i64[1])", "%y = Div(%a, %b) : i64[1]\nreturn %y",
                {I64({1}, {INT64_MIN}), I64({1}, {-1})});
  EXPECT_EQ(w.getInt(0), INT64_MIN);
  auto b = run1("(%a: i8[2], %b: i8[2]) -> (i8[2])", "%y = Add(%a, %b) : i8[2]\nreturn %y",
                {T(DType::I8, {2}, {127, -128}), T(DType::I8, {2}, {1, -1})});
  EXPECT_EQ(values(b), (std::vector<double>{-128, 127}));
  // u64 division is unsigned.
  HostTensor big(DType::U64, {1});
  big.setInt(0, int64_t(0xFFFFFFFFFFFFFFF0ull));
  auto u = run1("(%a: u64[1], %b: u64[1]) -> (u64[1])", "%y = Div(%a, %b) : u64[1]\nreturn %y",
                {big, T(DType::U64, {1}, {16})});
  EXPECT_EQ(uint64_t(u.getInt(0)), 0x0FFFFFFFFFFFFFFFull);
  // float division by zero is IEEE
  auto f = run1("(%a: f32[3], %b: f32[3]) -> (f32[3])", "%y = Div(%a, %b) : f32[3]\nreturn %y",
                {F({3}, {1, -1, 0}), F({3}, {0, 0, 0})});
  EXPECT_EQ(f.getDouble(0), kInf);
  EXPECT_EQ(f.getDouble(1), -kInf);
  EXPECT_TRUE(std::isnan(f.getDouble(2)));
}

TEST(RefKernels, Pow) {
  auto y = run1("(%a: f32[3], %b: f32[3]) -> (f32[3])", "%y = Pow(%a, %b) : f32[3]\nreturn %y",
                {F({3}, {2, 9, -2}), F({3}, {3, 0.5, 2})});
  EXPECT_EQ(values(y), (std::vector<double>{8, 3, 4}));
  auto i = run1("(%a: i64[5], %b: i64[5]) -> (i64[5])", "%y = Pow(%a, %b) : i64[5]\nreturn %y",
                {I64({5}, {2, 3, 2, -1, 1}), I64({5}, {10, 0, -1, -3, -7})});
  EXPECT_EQ(values(i), (std::vector<double>{1024, 1, 0, -1, 1}));
  // float base, integer exponent: result has the base's type
  auto m = run1("(%a: f32[2], %b: i64[2]) -> (f32[2])", "%y = Pow(%a, %b) : f32[2]\nreturn %y",
                {F({2}, {1.5, 2}), I64({2}, {2, -1})});
  EXPECT_EQ(values(m), (std::vector<double>{2.25, 0.5}));
}

TEST(RefKernels, UnaryMath) {
  const char *sig = "(%x: f32[4]) -> (f32[4])";
  auto x = F({4}, {-2, -0.5, 0.5, 2});
  auto un = [&](const char *op) {
    return values(run1(sig, std::string("%y = ") + op + "(%x) : f32[4]\nreturn %y", {x}));
  };
  expectNear(un("Relu"), {0, 0, 0.5, 2});
  expectNear(un("Neg"), {2, 0.5, -0.5, -2});
  expectNear(un("Abs"), {2, 0.5, 0.5, 2});
  expectNear(un("Sigmoid"), {0.11920292, 0.37754067, 0.62245933, 0.88079708});
  expectNear(un("Tanh"), {-0.96402758, -0.46211716, 0.46211716, 0.96402758});
  expectNear(un("Exp"), {0.13533528, 0.60653066, 1.64872127, 7.3890561});
  expectNear(un("Erf"), {-0.99532227, -0.52049988, 0.52049988, 0.99532227});
  expectNear(un("Floor"), {-2, -1, 0, 2});
  expectNear(un("Ceil"), {-2, -0, 1, 2});
  expectNear(un("Reciprocal"), {-0.5, -2, 2, 0.5});
  expectNear(un("Sin"), {-0.90929743, -0.47942554, 0.47942554, 0.90929743});
  expectNear(un("Cos"), {-0.41614684, 0.87758256, 0.87758256, -0.41614684});
  expectNear(un("LeakyRelu"), {-0.02, -0.005, 0.5, 2});
  expectNear(un("HardSigmoid"), {0.1, 0.4, 0.6, 0.9});
  expectNear(un("HardSwish"), {-2 * (1.0 / 6), -0.5 * (5.0 / 12), 0.5 * (7.0 / 12), 2 * (5.0 / 6)});
  expectNear(un("Gelu"), {-0.04550026, -0.15426877, 0.34573123, 1.95449974});
  expectNear(values(run1(sig, "%y = Gelu(%x) {approximate = \"tanh\"} : f32[4]\nreturn %y", {x})),
             {-0.04540231, -0.15428599, 0.34571401, 1.95459769});
  auto lx = F({4}, {4, 1, 0, -1});
  expectNear(values(run1(sig, "%y = Log(%x) : f32[4]\nreturn %y", {lx})),
             {std::log(4.0), 0, -kInf, kNaN});
  expectNear(values(run1(sig, "%y = Sqrt(%x) : f32[4]\nreturn %y", {lx})), {2, 1, 0, kNaN});
  // NaN passes through clamps and Relu.
  auto nx = F({4}, {kNaN, kNaN, kNaN, kNaN});
  for (const char *op : {"Relu", "HardSigmoid", "HardSwish", "LeakyRelu", "Sigmoid"}) {
    auto r = values(run1(sig, std::string("%y = ") + op + "(%x) : f32[4]\nreturn %y", {nx}));
    EXPECT_TRUE(std::isnan(r[0])) << op;
  }
  // Integer Neg/Abs/Relu are exact.
  auto ix = T(DType::I32, {3}, {-5, 0, 7});
  EXPECT_EQ(values(run1("(%x: i32[3]) -> (i32[3])", "%y = Relu(%x) : i32[3]\nreturn %y", {ix})),
            (std::vector<double>{0, 0, 7}));
  EXPECT_EQ(values(run1("(%x: i32[3]) -> (i32[3])", "%y = Abs(%x) : i32[3]\nreturn %y", {ix})),
            (std::vector<double>{5, 0, 7}));
  EXPECT_EQ(values(run1("(%x: i32[3]) -> (i32[3])", "%y = Neg(%x) : i32[3]\nreturn %y", {ix})),
            (std::vector<double>{5, 0, -7}));
}

TEST(RefKernels, CompareLogicWhere) {
  const char *sig = "(%a: f32[4], %b: f32[4]) -> (bool[4])";
  auto a = F({4}, {1, 2, kNaN, 4}), b = F({4}, {1, 3, kNaN, 3});
  EXPECT_EQ(values(run1(sig, "%y = Equal(%a, %b) : bool[4]\nreturn %y", {a, b})),
            (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(run1(sig, "%y = Less(%a, %b) : bool[4]\nreturn %y", {a, b})),
            (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(values(run1(sig, "%y = Greater(%a, %b) : bool[4]\nreturn %y", {a, b})),
            (std::vector<double>{0, 0, 0, 1}));
  // u64 compares unsigned
  HostTensor ua(DType::U64, {1}), ub(DType::U64, {1});
  ua.setInt(0, -1); // 2^64 - 1
  ub.setInt(0, 1);
  EXPECT_EQ(values(run1("(%a: u64[1], %b: u64[1]) -> (bool[1])",
                        "%y = Greater(%a, %b) : bool[1]\nreturn %y", {ua, ub})),
            (std::vector<double>{1}));
  auto p = T(DType::Bool, {2, 2}, {1, 1, 0, 0}), q = T(DType::Bool, {2}, {1, 0});
  const char *bsig = "(%p: bool[2,2], %q: bool[2]) -> (bool[2,2])";
  EXPECT_EQ(values(run1(bsig, "%y = And(%p, %q) : bool[2,2]\nreturn %y", {p, q})),
            (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(run1(bsig, "%y = Or(%p, %q) : bool[2,2]\nreturn %y", {p, q})),
            (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(run1("(%p: bool[2]) -> (bool[2])", "%y = Not(%p) : bool[2]\nreturn %y", {q})),
            (std::vector<double>{0, 1}));
  // Where broadcasts all three operands: cond [2,1], X [3], Y scalar.
  auto w = run1("(%c: bool[2,1], %x: i64[3], %z: i64[]) -> (i64[2,3])",
                "%y = Where(%c, %x, %z) : i64[2,3]\nreturn %y",
                {T(DType::Bool, {2, 1}, {1, 0}), I64({3}, {1, 2, 3}), I64({}, {-9})});
  EXPECT_EQ(values(w), (std::vector<double>{1, 2, 3, -9, -9, -9}));
}

TEST(RefKernels, Cast) {
  auto cast = [](const char *from, const char *to, HostTensor x) {
    std::string n = std::to_string(x.numElements());
    std::string sig = std::string("(%x: ") + from + "[" + n + "]) -> (" + to + "[" + n + "])";
    return run1(sig,
                std::string("%y = Cast(%x) {to = ") + to + "} : " + to + "[" + n + "]\nreturn %y",
                {x});
  };
  // float -> int truncates toward zero; out of range clamps; NaN is 0.
  auto i = cast("f32", "i32", F({6}, {1.9, -1.9, kNaN, 1e20, -1e20, -0.5}));
  EXPECT_EQ(values(i), (std::vector<double>{1, -1, 0, 2147483647.0, -2147483648.0, 0}));
  auto u = cast("f32", "u8", F({3}, {-5, 300, 255.9}));
  EXPECT_EQ(values(u), (std::vector<double>{0, 255, 255}));
  // int -> int wraps (two's complement), int -> bool is != 0
  auto w = cast("i32", "i8", T(DType::I32, {3}, {300, -129, 5}));
  EXPECT_EQ(values(w), (std::vector<double>{44, 127, 5}));
  auto b = cast("f32", "bool", F({3}, {0, 0.5, kNaN}));
  EXPECT_EQ(values(b), (std::vector<double>{0, 1, 1}));
  auto bf = cast("bool", "f32", T(DType::Bool, {2}, {1, 0}));
  EXPECT_EQ(values(bf), (std::vector<double>{1, 0}));
  // f32 -> f16 rounds to nearest even; 65520 and above overflow to inf.
  auto h = cast("f32", "f16", F({3}, {65519, 65520, 1.0 + 1.0 / 4096}));
  EXPECT_EQ(values(h), (std::vector<double>{65504, kInf, 1}));
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the midpoint between
  // 1 and 1 + 2^-10, although through f32 it would tie and round down to 1.
  auto d = cast("f64", "f16", T(DType::F64, {1}, {1.0 + std::ldexp(1, -11) + std::ldexp(1, -40)}));
  EXPECT_EQ(d.getDouble(0), 1.0 + std::ldexp(1, -10));
  // large i64 -> f32 rounds once
  auto l = cast("i64", "f32", I64({1}, {(int64_t(1) << 40) + 1}));
  EXPECT_EQ(l.getDouble(0), std::ldexp(1, 40));
}

// ---- Reductions --------------------------------------------------------------

TEST(RefKernels, SoftmaxAndLogSoftmax) {
  auto x = F({2, 3}, {1, 2, 3, 1000, 1001, 1002}); // the second row overflows exp() naively
  auto s =
      values(run1("(%x: f32[2,3]) -> (f32[2,3])", "%y = Softmax(%x) : f32[2,3]\nreturn %y", {x}));
  std::vector<double> row = {0.09003057, 0.24472847, 0.66524096};
  expectNear(s, {row[0], row[1], row[2], row[0], row[1], row[2]});
  EXPECT_NEAR(s[0] + s[1] + s[2], 1.0, 1e-6);
  EXPECT_NEAR(s[3] + s[4] + s[5], 1.0, 1e-6);
  // axis 0: columns sum to 1
  auto c = values(run1("(%x: f32[2,3]) -> (f32[2,3])",
                       "%y = Softmax(%x) {axis = 0} : f32[2,3]\nreturn %y",
                       {F({2, 3}, {0, 1, 2, 0, 2, 4})}));
  expectNear(c, {0.5, 0.26894142, 0.11920292, 0.5, 0.73105858, 0.88079708});
  auto l = values(
      run1("(%x: f32[2,3]) -> (f32[2,3])", "%y = LogSoftmax(%x) : f32[2,3]\nreturn %y", {x}));
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(l[i], std::log(row[i % 3]), 1e-5);
  // Out-of-range axis: an error, not an out-of-bounds read.
  EXPECT_NE(errorOf([&] {
              run1("(%x: f32[2,3]) -> (f32[2,3])",
                   "%y = Softmax(%x) {axis = 2} : f32[2,3]\nreturn %y", {x});
            }).find("axis 2 is out of range for rank 2"),
            std::string::npos);
}

// ---- MatMul / Gemm / Conv ----------------------------------------------------

TEST(RefKernels, MatMul) {
  auto a = F({2, 3}, {1, 2, 3, 4, 5, 6}), b = F({3, 2}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(values(run1("(%a: f32[2,3], %b: f32[3,2]) -> (f32[2,2])",
                        "%y = MatMul(%a, %b) : f32[2,2]\nreturn %y", {a, b})),
            (std::vector<double>{58, 64, 139, 154}));
  // 1-D promotion on either side, and vector . vector
  EXPECT_EQ(values(run1("(%a: f32[3], %b: f32[3,2]) -> (f32[2])",
                        "%y = MatMul(%a, %b) : f32[2]\nreturn %y", {F({3}, {1, 2, 3}), b})),
            (std::vector<double>{58, 64}));
  EXPECT_EQ(values(run1("(%a: f32[2,3], %b: f32[3]) -> (f32[2])",
                        "%y = MatMul(%a, %b) : f32[2]\nreturn %y", {a, F({3}, {1, 0, -1})})),
            (std::vector<double>{-2, -2}));
  auto dot = run1("(%a: f32[3], %b: f32[3]) -> (f32[])", "%y = MatMul(%a, %b) : f32[]\nreturn %y",
                  {F({3}, {1, 2, 3}), F({3}, {4, 5, 6})});
  EXPECT_EQ(dot.rank(), 0u);
  EXPECT_EQ(dot.getDouble(0), 32);
  // batch broadcasting: [2,1,1,2] x [3,2,1] -> [2,3,1,1]
  auto y = run1("(%a: f32[2,1,1,2], %b: f32[3,2,1]) -> (f32[2,3,1,1])",
                "%y = MatMul(%a, %b) : f32[2,3,1,1]\nreturn %y",
                {F({2, 1, 1, 2}, {1, 2, 3, 4}), F({3, 2, 1}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 3, 3, 4, 7}));
  // integers are exact
  auto iy = run1("(%a: i64[1,2], %b: i64[2,1]) -> (i64[1,1])",
                 "%y = MatMul(%a, %b) : i64[1,1]\nreturn %y",
                 {I64({1, 2}, {int64_t(1) << 53, 1}), I64({2, 1}, {1, 1})});
  EXPECT_EQ(iy.getInt(0), (int64_t(1) << 53) + 1);
}

TEST(RefKernels, Gemm) {
  // A^T is [[1,2],[3,4],[5,6]] (3x2), B^T is [[1,0],[0,1]] (2x2)
  auto at = F({2, 3}, {1, 3, 5, 2, 4, 6}), bt = F({2, 2}, {1, 0, 0, 1});
  auto y = run1("(%a: f32[2,3], %b: f32[2,2], %c: f32[2]) -> (f32[3,2])",
                "%y = Gemm(%a, %b, %c) {alpha = 2.0, beta = 0.5, transA = 1, transB = 1} : "
                "f32[3,2]\nreturn %y",
                {at, bt, F({2}, {10, 20})});
  EXPECT_EQ(values(y), (std::vector<double>{7, 14, 11, 18, 15, 22}));
  // C as a column [M,1] and as a scalar; no transposes.
  auto a = F({2, 2}, {1, 2, 3, 4}), b = F({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(values(run1("(%a: f32[2,2], %b: f32[2,2], %c: f32[2,1]) -> (f32[2,2])",
                        "%y = Gemm(%a, %b, %c) : f32[2,2]\nreturn %y", {a, b, F({2, 1}, {1, -1})})),
            (std::vector<double>{20, 23, 42, 49}));
  EXPECT_EQ(values(run1("(%a: f32[2,2], %b: f32[2,2], %c: f32[]) -> (f32[2,2])",
                        "%y = Gemm(%a, %b, %c) : f32[2,2]\nreturn %y", {a, b, F({}, {100})})),
            (std::vector<double>{119, 122, 143, 150}));
  // without C; with transA only
  EXPECT_EQ(values(run1("(%a: f32[2,2], %b: f32[2,2]) -> (f32[2,2])",
                        "%y = Gemm(%a, %b) {transA = 1} : f32[2,2]\nreturn %y", {a, b})),
            (std::vector<double>{26, 30, 38, 44}));
  // C broadcasts one way only: [2,2] does not fit into a [1,2] result.
  std::string err = errorOf([&] {
    run1("(%a: f32[1,2], %b: f32[2,2], %c: f32[2,2]) -> (f32[1,2])",
         "%y = Gemm(%a, %b, %c) : f32[1,2]\nreturn %y", {F({1, 2}, {1, 1}), b, a});
  });
  EXPECT_NE(err.find("does not broadcast to [M,N] = f32[1,2]"), std::string::npos) << err;
}

TEST(RefKernels, ConvPadsStridesGroupsDilations) {
  // X = 1..16 as [1,1,4,4], W = ones [1,1,2,2]
  std::vector<double> x16;
  for (int i = 1; i <= 16; ++i)
    x16.push_back(i);
  auto x = F({1, 1, 4, 4}, x16), w = F({1, 1, 2, 2}, {1, 1, 1, 1});
  // stride 2, no pads: 2x2 block sums
  EXPECT_EQ(values(run1("(%x: f32[1,1,4,4], %w: f32[1,1,2,2]) -> (f32[1,1,2,2])",
                        "%y = Conv(%x, %w) {strides = [2, 2]} : f32[1,1,2,2]\nreturn %y", {x, w})),
            (std::vector<double>{14, 22, 46, 54}));
  // pads [1,1,0,0] (top/left only), stride 2, with bias 100
  EXPECT_EQ(values(run1("(%x: f32[1,1,4,4], %w: f32[1,1,2,2], %b: f32[1]) -> (f32[1,1,2,2])",
                        "%y = Conv(%x, %w, %b) {pads = [1, 1, 0, 0], strides = [2, 2]} : "
                        "f32[1,1,2,2]\nreturn %y",
                        {x, w, F({1}, {100})})),
            (std::vector<double>{101, 105, 114, 134}));
  // dilation 2 on a 3x3 output: taps (0,0),(0,2),(2,0),(2,2)
  EXPECT_EQ(
      values(run1("(%x: f32[1,1,4,4], %w: f32[1,1,2,2]) -> (f32[1,1,2,2])",
                  "%y = Conv(%x, %w) {dilations = [2, 2]} : f32[1,1,2,2]\nreturn %y", {x, w})),
      (std::vector<double>{1 + 3 + 9 + 11, 2 + 4 + 10 + 12, 5 + 7 + 13 + 15, 6 + 8 + 14 + 16}));
  // SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning.
  const char *same = "(%x: f32[1,1,4,4], %w: f32[1,1,2,2]) -> (f32[1,1,4,4])";
  EXPECT_EQ(values(run1(same,
                        "%y = Conv(%x, %w) {auto_pad = \"SAME_UPPER\"} : f32[1,1,4,4]\n"
                        "return %y",
                        {x, w})),
            (std::vector<double>{14, 18, 22, 12, 30, 34, 38, 20, 46, 50, 54, 28, 27, 29, 31, 16}));
  EXPECT_EQ(values(run1(same,
                        "%y = Conv(%x, %w) {auto_pad = \"SAME_LOWER\"} : f32[1,1,4,4]\n"
                        "return %y",
                        {x, w})),
            (std::vector<double>{1, 3, 5, 7, 6, 14, 18, 22, 14, 30, 34, 38, 22, 46, 50, 54}));
  // groups: 2 input channels, 4 output channels, group 2 (two filters per
  // group); 1x1 kernels scale channel g by w.
  auto gx = F({1, 2, 1, 2}, {1, 2, 10, 20});
  auto gw = F({4, 1, 1, 1}, {1, -1, 2, 3});
  EXPECT_EQ(values(run1("(%x: f32[1,2,1,2], %w: f32[4,1,1,1]) -> (f32[1,4,1,2])",
                        "%y = Conv(%x, %w) {group = 2} : f32[1,4,1,2]\nreturn %y", {gx, gw})),
            (std::vector<double>{1, 2, -1, -2, 20, 40, 30, 60}));
  // 1-D conv with N=2, 2 in channels summed (group 1)
  auto x1 = F({2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6});
  auto w1 = F({1, 2, 2}, {1, 0, 0, 1});
  EXPECT_EQ(values(run1("(%x: f32[N,2,3], %w: f32[1,2,2]) -> (f32[N,1,2])",
                        "%y = Conv(%x, %w) : f32[N,1,2]\nreturn %y", {x1, w1})),
            (std::vector<double>{1 + 5, 2 + 6, -1 - 5, -2 - 6}));
  // kernel_shape must agree with W
  EXPECT_NE(errorOf([&] {
              run1("(%x: f32[1,1,4,4], %w: f32[1,1,2,2]) -> (f32[1,1,1,1])",
                   "%y = Conv(%x, %w) {kernel_shape = [3, 3], strides = [2, 2]} : f32[1,1,1,1]\n"
                   "return %y",
                   {x, w});
            }).find("kernel_shape 3 differs from W's spatial dim 2"),
            std::string::npos);
}

// ---- Shape ops ---------------------------------------------------------------

TEST(RefKernels, ReshapeTransposeFlattenConcatIdentity) {
  auto x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  // Shape from a run-time i64 input: the shape rule sees its data.
  auto r = run1("(%x: f32[2,3], %s: i64[2]) -> (f32[?,?])",
                "%y = Reshape(%x, %s) : f32[?,?]\nreturn %y", {x, I64({2}, {3, -1})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(r), values(x));
  auto t = run1("(%x: f32[2,3]) -> (f32[3,2])", "%y = Transpose(%x) : f32[3,2]\nreturn %y", {x});
  EXPECT_EQ(values(t), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  std::vector<double> v24;
  for (int i = 0; i < 24; ++i)
    v24.push_back(i);
  auto t3 =
      run1("(%x: f32[2,3,4]) -> (f32[4,2,3])",
           "%y = Transpose(%x) {perm = [2, 0, 1]} : f32[4,2,3]\nreturn %y", {F({2, 3, 4}, v24)});
  // y[k,i,j] = x[i,j,k] = 12i + 4j + k
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(t3.getDouble((k * 2 + i) * 3 + j), 12 * i + 4 * j + k);
  auto f = run1("(%x: f32[2,3,4]) -> (f32[6,4])",
                "%y = Flatten(%x) {axis = 2} : f32[6,4]\nreturn %y", {F({2, 3, 4}, v24)});
  EXPECT_EQ(f.shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(values(f), v24);
  auto c = run1("(%a: i64[2,1], %b: i64[2,2]) -> (i64[2,3])",
                "%y = Concat(%a, %b) {axis = -1} : i64[2,3]\nreturn %y",
                {I64({2, 1}, {1, 2}), I64({2, 2}, {3, 4, 5, 6})});
  EXPECT_EQ(values(c), (std::vector<double>{1, 3, 4, 2, 5, 6}));
  auto c0 = run1("(%a: f32[1,3], %b: f32[2,3]) -> (f32[3,3])",
                 "%y = Concat(%a, %b) {axis = 0} : f32[3,3]\nreturn %y", {F({1, 3}, {0, 0, 0}), x});
  EXPECT_EQ(values(c0), (std::vector<double>{0, 0, 0, 1, 2, 3, 4, 5, 6}));
  auto id = run1("(%x: bf16[2]) -> (bf16[2])", "%y = Identity(%x) : bf16[2]\nreturn %y",
                 {T(DType::BF16, {2}, {1.5, -2})});
  EXPECT_EQ(values(id), (std::vector<double>{1.5, -2}));
}

TEST(RefKernels, LowPrecisionRoundsOnce) {
  // f16 add computed in double, rounded once: 2048 + 1 ties to even (2048),
  // 2048 + 3 rounds up to 2052.
  auto y = run1("(%a: f16[2], %b: f16[2]) -> (f16[2])", "%y = Add(%a, %b) : f16[2]\nreturn %y",
                {T(DType::F16, {2}, {2048, 2048}), T(DType::F16, {2}, {1, 3})});
  EXPECT_EQ(values(y), (std::vector<double>{2048, 2052}));
  // bf16 matmul accumulates in double: 256 + 1 + 1 = 258 exactly representable
  // (through bf16 additions, 256 + 1 would round back to 256 each time).
  auto m = run1("(%a: bf16[1,3], %b: bf16[3,1]) -> (bf16[1,1])",
                "%y = MatMul(%a, %b) : bf16[1,1]\nreturn %y",
                {T(DType::BF16, {1, 3}, {256, 1, 1}), T(DType::BF16, {3, 1}, {1, 1, 1})});
  EXPECT_EQ(m.getDouble(0), 258);
}

// ---- The executor ------------------------------------------------------------

TEST(RefExecutor, ChecksInputs) {
  const char *sig = "(%x: f32[N,3], %y: f32[N,2]) -> (f32[N,3])";
  const char *body = "%z = Relu(%x) : f32[N,3]\nreturn %z";
  EXPECT_EQ(errorOf([&] { run(sig, body, {F({2, 3}, std::vector<double>(6, 1))}); }),
            "main expects 2 inputs (x, y), got 1");
  EXPECT_EQ(errorOf([&] {
              run(sig, body, {F({2, 4}, std::vector<double>(8, 1)), F({2, 2}, {1, 2, 3, 4})});
            }),
            "input 'x': expected f32[N,3], got f32[2,4]");
  EXPECT_EQ(errorOf([&] {
              run(sig, body, {F({2, 3}, std::vector<double>(6, 1)), F({3, 2}, {1, 2, 3, 4, 5, 6})});
            }),
            "input 'y': expected f32[N,2], got f32[3,2] (N = 2 from input 'x')");
  EXPECT_EQ(errorOf([&] {
              run(sig, body,
                  {T(DType::F64, {2, 3}, std::vector<double>(6, 1)), F({2, 2}, {1, 2, 3, 4})});
            }),
            "input 'x': expected f32[N,3], got f64[2,3]");
  EXPECT_EQ(errorOf([&] {
              run(sig, body, {F({2, 3, 1}, std::vector<double>(6, 1)), F({2, 2}, {1, 2, 3, 4})});
            }),
            "input 'x': expected f32[N,3], got f32[2,3,1]");
  // A symbol used twice in one input must agree with itself.
  EXPECT_EQ(errorOf([&] {
              run("(%x: f32[N,N]) -> (f32[N,N])", "%z = Relu(%x) : f32[N,N]\nreturn %z",
                  {F({2, 3}, std::vector<double>(6, 1))});
            }),
            "input 'x': expected f32[N,N], got f32[2,3]");
}

TEST(RefExecutor, OutputShapesMustBeKnownAndMatchTheDeclaration) {
  // allowzero with -1 and a 0: the rule cannot size the -1 (0 elements).
  std::string err = errorOf([&] {
    run("(%x: f32[0,3], %s: i64[2]) -> (f32[?,?])",
        "%y = Reshape(%x, %s) {allowzero = 1} : f32[?,?] loc(\"m.onnx\":\"r\")\nreturn %y",
        {F({0, 3}, {}), I64({2}, {0, -1})});
  });
  EXPECT_EQ(err, "m.onnx:r (Reshape): cannot determine the output shape at run time");
  // The declared result type binds symbols too: M must be 6 for both.
  err = errorOf([&] {
    run("(%x: f32[2,3], %s: i64[1]) -> (f32[M])",
        "%y = Reshape(%x, %s) : f32[M] loc(\"m.onnx\":\"r\")\n"
        "%z = Reshape(%x, %s) : f32[?]\n%w = Add(%y, %z) : f32[?]\nreturn %y",
        {F({2, 3}, std::vector<double>(6, 1)), I64({1}, {6})});
  });
  EXPECT_EQ(err, "(no error)");
  err = errorOf([&] {
    run("(%x: f32[N,3], %s: i64[1]) -> (f32[N])",
        "%y = Reshape(%x, %s) : f32[N] loc(\"m\":\"r\")\nreturn %y",
        {F({2, 3}, std::vector<double>(6, 1)), I64({1}, {6})});
  });
  EXPECT_EQ(err, "m:r (Reshape): result 0 'y' is declared f32[N] but is f32[6] at run time "
                 "(N = 2 from input 'x')");
  // Shape errors found at run time carry the op's location.
  err = errorOf([&] {
    run("(%x: f32[2,3], %s: i64[2]) -> (f32[?,?])",
        "%y = Reshape(%x, %s) : f32[?,?] loc(\"m\":\"r\")\nreturn %y",
        {F({2, 3}, std::vector<double>(6, 1)), I64({2}, {4, -1})});
  });
  EXPECT_NE(err.find("m:r (Reshape): cannot reshape"), std::string::npos) << err;
}

TEST(RefExecutor, ConstantsChainsAndPassThroughResults) {
  auto r = run("(%x: f32[2]) -> (f32[2], f32[2], f32[2])",
               "%c = const f32[2] [0.5, -1]\n%a = Mul(%x, %c) : f32[2]\n%b = Relu(%a) : f32[2]\n"
               "return %b, %x, %c",
               {F({2}, {4, 4})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(values(r[0]), (std::vector<double>{2, 0}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{4, 4}));
  EXPECT_EQ(values(r[2]), (std::vector<double>{0.5, -1}));
}

TEST(RefKernels, ZeroSizedTensors) {
  auto e = F({0, 3}, {});
  EXPECT_EQ(
      run1("(%x: f32[0,3]) -> (f16[0,3])", "%y = Cast(%x) {to = f16} : f16[0,3]\nreturn %y", {e})
          .typeStr(),
      "f16[0,3]");
  EXPECT_EQ(
      run1("(%x: f32[0,3]) -> (f32[0,3])", "%y = Cast(%x) {to = f32} : f32[0,3]\nreturn %y", {e})
          .numElements(),
      0);
  EXPECT_EQ(run1("(%x: f32[0,3], %b: f32[3]) -> (f32[0,3])",
                 "%y = Add(%x, %b) : f32[0,3]\nreturn %y", {e, F({3}, {1, 2, 3})})
                .typeStr(),
            "f32[0,3]");
  EXPECT_EQ(
      run1("(%x: f32[0,3]) -> (f32[0,3])", "%y = Softmax(%x) : f32[0,3]\nreturn %y", {e}).typeStr(),
      "f32[0,3]");
  EXPECT_EQ(run1("(%x: f32[0,3]) -> (f32[3,0])", "%y = Transpose(%x) : f32[3,0]\nreturn %y", {e})
                .typeStr(),
            "f32[3,0]");
  EXPECT_EQ(run1("(%x: f32[0,3], %w: f32[3,2]) -> (f32[0,2])",
                 "%y = MatMul(%x, %w) : f32[0,2]\nreturn %y", {e, F({3, 2}, {1, 2, 3, 4, 5, 6})})
                .typeStr(),
            "f32[0,2]");
  // an empty contraction gives zeros (and beta * C)
  auto k0 = run1("(%a: f32[2,0], %b: f32[0,3], %c: f32[3]) -> (f32[2,3])",
                 "%y = Gemm(%a, %b, %c) : f32[2,3]\nreturn %y",
                 {F({2, 0}, {}), F({0, 3}, {}), F({3}, {1, 2, 3})});
  EXPECT_EQ(values(k0), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  auto m0 = run1("(%a: i64[2,0], %b: i64[0,1]) -> (i64[2,1])",
                 "%y = MatMul(%a, %b) : i64[2,1]\nreturn %y", {I64({2, 0}, {}), I64({0, 1}, {})});
  EXPECT_EQ(values(m0), (std::vector<double>{0, 0}));
  EXPECT_EQ(run1("(%x: f32[0,1,3,3], %w: f32[2,1,2,2]) -> (f32[0,2,2,2])",
                 "%y = Conv(%x, %w) : f32[0,2,2,2]\nreturn %y",
                 {F({0, 1, 3, 3}, {}), F({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1})})
                .typeStr(),
            "f32[0,2,2,2]");
  EXPECT_EQ(values(run1("(%a: f32[0,2], %b: f32[1,2]) -> (f32[1,2])",
                        "%y = Concat(%a, %b) {axis = 0} : f32[1,2]\nreturn %y",
                        {F({0, 2}, {}), F({1, 2}, {7, 8})})),
            (std::vector<double>{7, 8}));
  EXPECT_EQ(values(run1("(%c: bool[0], %x: f32[0], %z: f32[0]) -> (f32[0])",
                        "%y = Where(%c, %x, %z) : f32[0]\nreturn %y",
                        {T(DType::Bool, {0}, {}), F({0}, {}), F({0}, {})})),
            std::vector<double>{});
}
