// Pointwise groups: one loop nest over the group's domain (its first
// result's shape). Operands of the domain's shape are read contiguously,
// single-element operands as a scalar, and broadcast operands through
// strides computed from their run-time dims (0 along broadcast axes).
// Every op of the group is one expression over register values, so the
// group reads each operand once and writes each result once.
#include "tc/CodeGen/KernelEmitter.h"
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>

namespace tc {

namespace {

const char *cType(DType t) {
  switch (t) {
  case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  default: return nullptr;
  }
}

std::string floatLiteral(double v, DType t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v); // exact
  std::string s = buf;
  if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan")
    return std::string(s[0] == '-' ? "-" : "") +
           (s.find("inf") != std::string::npos ? "__builtin_inf()" : "__builtin_nan(\"\")");
  return t == DType::F32 ? "(float)" + s : s;
}

class Emitter {
public:
  Emitter(const Function &f, std::string &why) : f_(f), why_(why) {}

  std::optional<EmittedKernel> run() {
    if (f_.results.empty() || f_.ops.empty())
      return reject("an empty group");
    domain_ = f_.results[0]->type.shape;
    for (const Value *r : f_.results)
      if (r->type.shape != domain_)
        return reject("results of different shapes");
    for (const Value *a : f_.args)
      if (!cType(a->type.dtype))
        return reject("argument %" + a->name + " of type " + a->type.str());
    rank_ = domain_.size();
    // dims[] layout: every argument's dims, then every result's.
    size_t at = 0;
    for (const Value *a : f_.args) {
      dimAt_[a] = at;
      at += a->type.rank();
    }
    for (const Value *r : f_.results) {
      dimAt_[r] = at;
      at += r->type.rank();
    }
    std::ostringstream body;
    for (const auto &op : f_.ops)
      if (!emitOp(*op, body))
        return std::nullopt;
    for (const Value *r : f_.results)
      if (!names_.count(r))
        return reject("a result that is not computed in the group");

    std::string symbol = "tc_" + f_.name;
    std::ostringstream os;
    os << "// group @" << f_.name << ": domain " << TensorType{DType::F32, domain_}.str().substr(3)
       << "\n";
    os << "extern \"C\" void " << symbol
       << "(void *const *bufs, const int64_t *dims, int64_t begin, int64_t end) {\n";
    // Dims of the domain come from result 0.
    size_t r0 = dimAt_.at(f_.results[0]);
    os << "  const int64_t inner = "
       << (rank_ ? "dims[" + std::to_string(r0 + rank_ - 1) + "]" : "1") << ";\n";
    for (size_t i = 0; i < f_.args.size(); ++i)
      os << "  const " << cType(f_.args[i]->type.dtype) << " *__restrict in" << i << " = (const "
         << cType(f_.args[i]->type.dtype) << " *)bufs[" << i << "];\n";
    for (size_t i = 0; i < f_.results.size(); ++i)
      os << "  " << cType(f_.results[i]->type.dtype) << " *__restrict out" << i << " = ("
         << cType(f_.results[i]->type.dtype) << " *)bufs[" << f_.args.size() + i << "];\n";
    bool anyBroadcast = false;
    for (size_t i = 0; i < f_.args.size(); ++i)
      anyBroadcast |= access(i) == Access::Broadcast;
    if (anyBroadcast)
      emitStrides(os);
    os << "  for (int64_t row = begin; row < end; ++row) {\n";
    if (anyBroadcast)
      emitRowBases(os);
    os << "    for (int64_t j = 0; j < inner; ++j) {\n";
    for (size_t i = 0; i < f_.args.size(); ++i) {
      const char *t = cType(f_.args[i]->type.dtype);
      os << "      const " << t << " a" << i << " = in" << i;
      switch (access(i)) {
      case Access::Contiguous: os << "[row * inner + j];\n"; break;
      case Access::Scalar: os << "[0];\n"; break;
      case Access::Broadcast: os << "[base" << i << " + j * step" << i << "];\n"; break;
      }
    }
    os << body.str();
    for (size_t i = 0; i < f_.results.size(); ++i)
      os << "      out" << i << "[row * inner + j] = " << names_.at(f_.results[i]) << ";\n";
    os << "    }\n  }\n}\n";
    return EmittedKernel{f_.name, symbol, os.str()};
  }

private:
  enum class Access { Contiguous, Scalar, Broadcast };
  const Function &f_;
  std::string &why_;
  Shape domain_;
  size_t rank_ = 0;
  std::unordered_map<const Value *, size_t> dimAt_;
  std::unordered_map<const Value *, std::string> names_;
  size_t nextTemp_ = 0;

  std::nullopt_t reject(const std::string &what) {
    fail(what);
    return std::nullopt;
  }
  // Records why the group gets no kernel; false stops emitting.
  bool fail(const std::string &what) {
    why_ = "@" + f_.name + ": " + what;
    return false;
  }

  Access access(size_t arg) const {
    const Shape &s = f_.args[arg]->type.shape;
    if (s == domain_)
      return Access::Contiguous;
    auto n = staticNumElements(s);
    if (n && *n == 1)
      return Access::Scalar;
    return Access::Broadcast;
  }

  // Row-major strides of each broadcast argument aligned to the domain's
  // axes (numpy: trailing axes line up), 0 where it has size 1 or no axis.
  void emitStrides(std::ostringstream &os) {
    size_t r0 = dimAt_.at(f_.results[0]);
    for (size_t i = 0; i < f_.args.size(); ++i) {
      if (access(i) != Access::Broadcast)
        continue;
      size_t rk = f_.args[i]->type.rank(), at = dimAt_.at(f_.args[i]);
      os << "  int64_t st" << i << "[" << (rank_ ? rank_ : 1) << "];\n";
      os << "  { int64_t s = 1;\n";
      for (size_t d = rank_; d-- > 0;) {
        if (d + rk < rank_) {
          os << "    st" << i << "[" << d << "] = 0;\n";
          continue;
        }
        std::string dim = "dims[" + std::to_string(at + d + rk - rank_) + "]";
        os << "    st" << i << "[" << d << "] = " << dim << " == 1 && dims[" << r0 + d
           << "] != 1 ? 0 : s; s *= " << dim << ";\n";
      }
      os << "  }\n";
      os << "  const int64_t step" << i << " = st" << i << "[" << (rank_ ? rank_ - 1 : 0) << "];\n";
    }
  }

  void emitRowBases(std::ostringstream &os) {
    size_t r0 = dimAt_.at(f_.results[0]);
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (access(i) == Access::Broadcast)
        os << "    int64_t base" << i << " = 0;\n";
    if (rank_ >= 2) {
      os << "    { int64_t rem = row;\n";
      for (size_t d = rank_ - 1; d-- > 0;) {
        os << "      { const int64_t c = rem % dims[" << r0 + d << "]; rem /= dims[" << r0 + d
           << "];";
        for (size_t i = 0; i < f_.args.size(); ++i)
          if (access(i) == Access::Broadcast)
            os << " base" << i << " += c * st" << i << "[" << d << "];";
        os << " }\n";
      }
      os << "    }\n";
    }
  }

  std::string temp() { return "t" + std::to_string(nextTemp_++); }

  std::optional<std::string> operandExpr(const Value *v) {
    if (auto it = names_.find(v); it != names_.end())
      return it->second;
    for (size_t i = 0; i < f_.args.size(); ++i)
      if (f_.args[i] == v)
        return names_[v] = "a" + std::to_string(i);
    if (v->isConstant()) {
      auto n = staticNumElements(v->type.shape);
      if (!n || *n != 1 || !cType(v->type.dtype))
        return std::nullopt;
      double x = 0;
      if (v->type.dtype == DType::F32)
        x = double(*v->data->as<float>());
      else if (v->type.dtype == DType::F64)
        x = *v->data->as<double>();
      else
        x = v->data->ptr[0] ? 1 : 0;
      return names_[v] = v->type.dtype == DType::Bool ? (x != 0 ? "true" : "false")
                                                      : floatLiteral(x, v->type.dtype);
    }
    return std::nullopt;
  }

  bool emitOp(const Op &op, std::ostringstream &os) {
    if (op.results.size() != 1)
      return fail(std::string(op.name()) + " with several results");
    const Value *res = op.result();
    const char *rt = cType(res->type.dtype);
    if (!rt)
      return fail(std::string(op.name()) + " producing " + res->type.str());
    std::vector<std::string> a;
    for (const Value *v : op.operands) {
      if (!v) {
        a.push_back("");
        continue;
      }
      if (!cType(v->type.dtype))
        return fail(std::string(op.name()) + " reading " + v->type.str());
      auto e = operandExpr(v);
      if (!e)
        return fail(std::string(op.name()) + " reading the non-scalar constant %" + v->name);
      a.push_back(*e);
    }
    bool isFloat = res->type.dtype != DType::Bool;
    std::string T = rt, x = a.empty() ? "" : a[0];
    auto call = [&](const char *fn) { return std::string(fn) + "(" + x + ")"; };
    auto lit = [&](double v) { return floatLiteral(v, res->type.dtype); };
    std::string e;
    switch (op.kind) {
    case OpKind::Neg: e = "-(" + x + ")"; break;
    case OpKind::Abs: e = call("tc_abs"); break;
    case OpKind::Relu: e = x + " < 0 ? " + T + "(0) : " + x; break; // NaN stays NaN
    case OpKind::Sigmoid: e = T + "(1) / (" + T + "(1) + tc_exp(-" + x + "))"; break;
    case OpKind::Tanh: e = call("tc_tanh"); break;
    case OpKind::Exp: e = call("tc_exp"); break;
    case OpKind::Log: e = call("tc_log"); break;
    case OpKind::Sqrt: e = call("tc_sqrt"); break;
    case OpKind::Reciprocal: e = T + "(1) / " + x; break;
    case OpKind::Cos: e = call("tc_cos"); break;
    case OpKind::Sin: e = call("tc_sin"); break;
    case OpKind::Erf: e = call("tc_erf"); break;
    case OpKind::Floor: e = call("tc_floor"); break;
    case OpKind::Ceil: e = call("tc_ceil"); break;
    case OpKind::HardSwish:
      e = x + " * tc_clamp01(" + x + " / " + T + "(6) + " + T + "(0.5))";
      break;
    case OpKind::HardSigmoid:
      e = "tc_clamp01(" + lit(op.getFloat("alpha")) + " * " + x + " + " + lit(op.getFloat("beta")) +
          ")";
      break;
    case OpKind::LeakyRelu:
      e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * " + x + " : " + x;
      break;
    case OpKind::Elu:
      e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * (tc_exp(" + x + ") - " + T +
          "(1)) : " + x;
      break;
    case OpKind::Gelu:
      if (op.getString("approximate") == "tanh")
        e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_tanh(" + lit(0.7978845608028654) + " * (" +
            x + " + " + lit(0.044715) + " * " + x + " * " + x + " * " + x + ")))";
      else
        e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_erf(" + x + " * " +
            lit(0.7071067811865476) + "))";
      break;
    case OpKind::Add: e = a[0] + " + " + a[1]; break;
    case OpKind::Sub: e = a[0] + " - " + a[1]; break;
    case OpKind::Mul: e = a[0] + " * " + a[1]; break;
    case OpKind::Div: e = a[0] + " / " + a[1]; break;
    case OpKind::Pow: e = "tc_pow(" + a[0] + ", " + a[1] + ")"; break;
    case OpKind::Min:
    case OpKind::Max: {
      const char *fn = op.is(OpKind::Min) ? "tc_min" : "tc_max";
      e = a[0];
      for (size_t i = 1; i < a.size(); ++i)
        e = std::string(fn) + "(" + e + ", " + a[i] + ")";
      break;
    }
    case OpKind::Where: e = a[0] + " ? " + a[1] + " : " + a[2]; break;
    case OpKind::Equal: e = a[0] + " == " + a[1]; break;
    case OpKind::Less: e = a[0] + " < " + a[1]; break;
    case OpKind::Greater: e = a[0] + " > " + a[1]; break;
    case OpKind::LessOrEqual: e = a[0] + " <= " + a[1]; break;
    case OpKind::GreaterOrEqual: e = a[0] + " >= " + a[1]; break;
    case OpKind::Not: e = "!" + x; break;
    case OpKind::And: e = a[0] + " && " + a[1]; break;
    case OpKind::Or: e = a[0] + " || " + a[1]; break;
    case OpKind::Xor: e = a[0] + " != " + a[1]; break;
    case OpKind::Clip: {
      // min(max(x, lo), hi) with NaN kept, absent bounds skipped.
      e = x;
      if (a.size() > 1 && !a[1].empty())
        e = "tc_max(" + e + ", " + a[1] + ")";
      if (a.size() > 2 && !a[2].empty())
        e = "tc_min(" + e + ", " + a[2] + ")";
      break;
    }
    case OpKind::Cast:
      if (!isFloat && op.operand(0)->type.dtype != DType::Bool)
        e = x + " != 0";
      else
        e = T + "(" + x + ")";
      break;
    default: return fail("no code for " + std::string(op.name()));
    }
    std::string t = temp();
    os << "      const " << T << " " << t << " = " << e << ";\n";
    names_[res] = t;
    return true;
  }
};

} // namespace

std::optional<EmittedKernel> emitKernel(const Function &callee, KernelDialect, std::string &why) {
  return Emitter(callee, why).run();
}

std::string kernelPrelude(KernelDialect dialect) {
  std::string p = "// Generated by tc-codegen. Kernel ABI: include/tc/CodeGen/KernelEmitter.h\n";
  p += dialect == KernelDialect::Cuda ? "#define TC_INLINE static __device__ __forceinline__\n"
                                      : "#define TC_INLINE static inline\n";
  p += R"(typedef long int64_t;
// NaN-propagating min/max (ONNX Min/Max/Clip): a NaN operand wins.
template <class T> TC_INLINE T tc_min(T a, T b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
template <class T> TC_INLINE T tc_max(T a, T b) { return a != a ? a : b != b ? b : (b > a ? b : a); }
template <class T> TC_INLINE T tc_clamp01(T x) { return x < T(0) ? T(0) : x > T(1) ? T(1) : x; }
#define TC_MATH1(name, f32, f64) \
  TC_INLINE float name(float x) { return f32(x); } \
  TC_INLINE double name(double x) { return f64(x); }
TC_MATH1(tc_abs, __builtin_fabsf, __builtin_fabs)
TC_MATH1(tc_exp, __builtin_expf, __builtin_exp)
TC_MATH1(tc_log, __builtin_logf, __builtin_log)
TC_MATH1(tc_sqrt, __builtin_sqrtf, __builtin_sqrt)
TC_MATH1(tc_tanh, __builtin_tanhf, __builtin_tanh)
TC_MATH1(tc_cos, __builtin_cosf, __builtin_cos)
TC_MATH1(tc_sin, __builtin_sinf, __builtin_sin)
TC_MATH1(tc_erf, __builtin_erff, __builtin_erf)
TC_MATH1(tc_floor, __builtin_floorf, __builtin_floor)
TC_MATH1(tc_ceil, __builtin_ceilf, __builtin_ceil)
TC_INLINE float tc_pow(float a, float b) { return __builtin_powf(a, b); }
TC_INLINE double tc_pow(double a, double b) { return __builtin_pow(a, b); }

)";
  return p;
}

} // namespace tc
