#include "OpExpressions.h"
#include "tc/CodeGen/KernelFault.h"
#include "tc/IR/ConstantInts.h"
#include "tc/IR/Philox.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <limits>

namespace tc::kernels {

std::optional<std::string> Expressions::operand(const Value *v) {
  if (auto it = names_.find(v); it != names_.end())
    return it->second;
  const Function &f = c_.f;
  for (size_t i = 0; i < f.args.size(); ++i)
    if (f.args[i] == v)
      return names_[v] = "a" + std::to_string(i);
  if (v->isConstant()) {
    auto n = staticNumElements(v->type.shape);
    if (!n || *n != 1 || !c_.st(v->type.dtype))
      return std::nullopt;
    if (isInteger(v->type.dtype)) {
      int64_t k = 0;
      switch (v->type.dtype) {
      case DType::I64:
      case DType::U64: k = *v->data->as<int64_t>(); break;
      case DType::I32: k = *v->data->as<int32_t>(); break;
      case DType::U32: k = *v->data->as<uint32_t>(); break;
      case DType::I16: k = *v->data->as<int16_t>(); break;
      case DType::U16: k = *v->data->as<uint16_t>(); break;
      case DType::I8: k = *v->data->as<int8_t>(); break;
      default: k = *v->data->as<uint8_t>(); break;
      }
      return names_[v] = "(" + std::string(c_.st(v->type.dtype)) + ")" + std::to_string(k) + "LL";
    }
    double x = 0;
    if (v->type.dtype == DType::F32)
      x = double(*v->data->as<float>());
    else if (v->type.dtype == DType::F64)
      x = *v->data->as<double>();
    else if (v->type.dtype == DType::F16)
      x = double(halfToFloat(*v->data->as<uint16_t>()));
    else if (v->type.dtype == DType::BF16)
      x = double(bf16ToFloat(*v->data->as<uint16_t>()));
    else
      x = v->data->ptr[0] ? 1 : 0;
    return names_[v] = v->type.dtype == DType::Bool ? (x != 0 ? "true" : "false")
                                                    : floatLiteral(x, v->type.dtype, c_.dialect);
  }
  return std::nullopt;
}

const char *Expressions::resultType(const Op &op) {
  // LayerNormalizationGrad's dY * xhat has dX's type (the row family's anchor
  // defines both).
  if (op.results.size() != 1 && !op.is(OpKind::LayerNormalizationGrad))
    return c_.noKernel(std::string(op.name()) + " with several results"), nullptr;
  const Value *res = op.result();
  const char *rt = c_.ct(res->type.dtype);
  if (!rt)
    c_.noKernel(std::string(op.name()) + " producing " + res->type.str());
  // Integer results: the ops whose C++ expression is the ONNX op's on ints.
  static const OpKind integerOps[] = {
      OpKind::Cast,       OpKind::CastLike,   OpKind::Add,       OpKind::Sub,
      OpKind::Mul,        OpKind::Neg,        OpKind::Abs,       OpKind::Sign,
      OpKind::Clip,       OpKind::Where,      OpKind::Min,       OpKind::Max,
      OpKind::Div,        OpKind::Sum,        OpKind::Mod,       OpKind::Pow,
      OpKind::BitShift,   OpKind::BitwiseAnd, OpKind::BitwiseOr, OpKind::BitwiseXor,
      OpKind::BitwiseNot, OpKind::PRelu,      OpKind::Relu};
  if (rt && isInteger(res->type.dtype) &&
      std::find(std::begin(integerOps), std::end(integerOps), op.kind) == std::end(integerOps))
    return c_.noKernel(std::string(op.name()) + " producing " + res->type.str()), nullptr;
  return rt;
}

std::string Expressions::faultSite(const Op &op) {
  // The op's index in its group and the group's tag name it when the
  // runtime reads the fault (CPU: after the step; CUDA: after the run).
  size_t at = size_t(std::find_if(c_.f.ops.begin(), c_.f.ops.end(),
                                  [&](const auto &o) { return o.get() == &op; }) -
                     c_.f.ops.begin());
  mayFault_ = true;
  return std::to_string(at) + ", " + std::to_string(kernelFaultGroupTag(c_.f.name)) + "LL";
}

void Expressions::define(const Value *res, const char *T, const std::string &e, std::ostream &os) {
  std::string t = "t" + std::to_string(nextTemp_++);
  os << "      const " << T << " " << t << " = " << e << ";\n";
  names_[res] = t;
}

namespace {

// An integer type's range as double bounds a value at or beyond clamps to
// (lo, hi: the first values outside) and its least and greatest values.
struct IntegerRange {
  std::string lo, hi, mn, mx;
};
IntegerRange integerRange(DType t) {
  switch (t) {
  case DType::I64:
    return {"-9223372036854775808.0", "9223372036854775808.0", "(-9223372036854775807LL - 1)",
            "9223372036854775807LL"};
  case DType::U64: return {"0.0", "18446744073709551616.0", "0", "18446744073709551615ULL"};
  case DType::U32: return {"0.0", "4294967296.0", "0", "4294967295U"};
  case DType::I16: return {"-32768.0", "32768.0", "-32768", "32767"};
  case DType::U16: return {"0.0", "65536.0", "0", "65535"};
  case DType::I8: return {"-128.0", "128.0", "-128", "127"};
  case DType::U8: return {"0.0", "256.0", "0", "255"};
  default: return {"-2147483648.0", "2147483648.0", "(-2147483647 - 1)", "2147483647"};
  }
}

// UnaryMath.def's kernel expression template of `k`, or null.
const char *unaryMathKernel(OpKind k) {
  switch (k) {
#define TC_UNARY(Name, Precision, Operand, Summary, Reference, Kernel)                             \
  case OpKind::Name: return Kernel;
#include "tc/IR/UnaryMath.def"
#undef TC_UNARY
  default: return nullptr;
  }
}

// The template with {x} replaced by the operand and {T} by the compute type.
std::string expandKernel(const char *k, const std::string &x, const std::string &T) {
  std::string e;
  for (const char *p = k; *p; ++p) {
    if (p[0] == '{' && p[1] == 'x' && p[2] == '}')
      e += x, p += 2;
    else if (p[0] == '{' && p[1] == 'T' && p[2] == '}')
      e += T, p += 2;
    else
      e += *p;
  }
  return e;
}

} // namespace

bool Expressions::emit(const Op &op, std::ostream &os) {
  const char *rt = resultType(op);
  if (!rt)
    return false;
  const Value *res = op.result();
  std::vector<std::string> a;
  for (const Value *v : op.operands) {
    if (!v) {
      a.push_back("");
      continue;
    }
    if (!c_.st(v->type.dtype))
      return c_.noKernel(std::string(op.name()) + " reading " + v->type.str());
    auto e = operand(v);
    if (!e)
      return c_.noKernel(std::string(op.name()) + " reading the non-scalar constant %" + v->name);
    a.push_back(*e);
  }
  bool isFloat = res->type.dtype != DType::Bool;
  std::string T = rt, x = a.empty() ? "" : a[0];
  auto call = [&](const char *fn) { return std::string(fn) + "(" + x + ")"; };
  auto lit = [&](double v) { return floatLiteral(v, res->type.dtype, c_.dialect); };
  std::string e;
  switch (op.kind) {
  case OpKind::Neg: e = "-(" + x + ")"; break;
  case OpKind::Abs: // tc_abs is float / double only
    e = isInteger(res->type.dtype) ? x + " < 0 ? -" + x + " : " + x : call("tc_abs");
    break;
  case OpKind::Relu: e = x + " < 0 ? " + T + "(0) : " + x; break; // NaN stays NaN
  case OpKind::HardSigmoid:
    e = "tc_clamp01(" + lit(op.getFloat("alpha")) + " * " + x + " + " + lit(op.getFloat("beta")) +
        ")";
    break;
  case OpKind::LeakyRelu:
    e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * " + x + " : " + x;
    break;
  case OpKind::Elu:
    e = x + " < 0 ? " + lit(op.getFloat("alpha")) + " * (tc_exp(" + x + ") - " + T + "(1)) : " + x;
    break;
  case OpKind::Gelu:
    if (op.getString("approximate") == "tanh")
      e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_tanh(" + lit(0.7978845608028654) + " * (" +
          x + " + " + lit(0.044715) + " * " + x + " * " + x + " * " + x + ")))";
    else
      e = T + "(0.5) * " + x + " * (" + T + "(1) + tc_erf(" + x + " * " + lit(0.7071067811865476) +
          "))";
    break;
  case OpKind::Add: e = a[0] + " + " + a[1]; break;
  case OpKind::Sub: e = a[0] + " - " + a[1]; break;
  case OpKind::Mul: e = a[0] + " * " + a[1]; break;
  case OpKind::Div:
    if (!isInteger(res->type.dtype)) {
      e = a[0] + " / " + a[1];
    } else if (!integerDivMayFault(op)) {
      e = "tc_idiv_nz(" + T + "(" + a[0] + "), " + T + "(" + a[1] + "))";
    } else {
      e = "tc_idiv(" + T + "(" + a[0] + "), " + T + "(" + a[1] + "), " + faultSite(op) + ")";
    }
    break;
  case OpKind::Pow: {
    // Small constant exponents (GPT-2's x^3, variance's x^2) without powf.
    std::optional<double> k = scalarConstant(op.operand(1));
    DType bt = op.operand(0)->type.dtype, et = op.operand(1)->type.dtype;
    if (isInteger(res->type.dtype) && isInteger(et)) { // by squaring, wrapping
      e = integerDivMayFault(op)
              ? "tc_ipow(" + T + "(" + a[0] + "), " + a[1] + ", " + faultSite(op) + ")"
              : "tc_ipow_nz(" + T + "(" + a[0] + "), " + a[1] + ")";
    } else if (isInteger(res->type.dtype)) // pow in double, toward zero
      e = T + "(tc_pow((double)(" + a[0] + "), (double)(" + a[1] + ")))";
    else if (isInteger(et) || bt != et) // an integer exponent: as the base's type
      e = "tc_pow(" + a[0] + ", " + T + "(" + a[1] + "))";
    else if (k == 1.0)
      e = a[0];
    else if (k == 2.0)
      e = "(" + a[0] + " * " + a[0] + ")";
    else if (k == 3.0)
      e = "(" + a[0] + " * " + a[0] + " * " + a[0] + ")";
    else if (k == 0.5)
      e = "tc_sqrt(" + a[0] + ")";
    else
      e = "tc_pow(" + a[0] + ", " + a[1] + ")";
    break;
  }
  case OpKind::Min:
  case OpKind::Max: {
    const char *fn = op.is(OpKind::Min) ? "tc_min" : "tc_max";
    e = a[0];
    for (size_t i = 1; i < a.size(); ++i)
      e = std::string(fn) + "(" + e + ", " + a[i] + ")";
    break;
  }
  case OpKind::Sum:
  case OpKind::Mean: { // variadic, left to right (as an Add chain)
    e = a[0];
    for (size_t i = 1; i < a.size(); ++i)
      e = "(" + e + " + " + a[i] + ")";
    if (op.is(OpKind::Mean) && a.size() > 1)
      e = "(" + e + " / " + T + "(" + std::to_string(a.size()) + "))";
    break;
  }
  case OpKind::Where: e = a[0] + " ? " + a[1] + " : " + a[2]; break;
  case OpKind::Equal: e = a[0] + " == " + a[1]; break;
  case OpKind::Less: e = a[0] + " < " + a[1]; break;
  case OpKind::Greater: e = a[0] + " > " + a[1]; break;
  case OpKind::LessOrEqual: e = a[0] + " <= " + a[1]; break;
  case OpKind::GreaterOrEqual: e = a[0] + " >= " + a[1]; break;
  case OpKind::Not: e = "!" + x; break;
  case OpKind::IsNaN: e = x + " != " + x; break;
  case OpKind::IsInf: {
    bool neg = op.getInt("detect_negative"), pos = op.getInt("detect_positive");
    std::string inf = floatLiteral(std::numeric_limits<double>::infinity(),
                                   op.operand(0)->type.dtype, c_.dialect);
    e = neg && pos ? "(" + x + " == " + inf + " || " + x + " == -" + inf + ")"
        : neg      ? x + " == -" + inf
        : pos      ? x + " == " + inf
                   : "false";
    break;
  }
  case OpKind::BitShift:
    e = "tc_shift(" + T + "(" + a[0] + "), (unsigned long long)(" + a[1] + "), " +
        (op.getString("direction") == "LEFT" ? "true" : "false") + ")";
    break;
  case OpKind::BitwiseAnd: e = T + "(" + a[0] + " & " + a[1] + ")"; break;
  case OpKind::BitwiseOr: e = T + "(" + a[0] + " | " + a[1] + ")"; break;
  case OpKind::BitwiseXor: e = T + "(" + a[0] + " ^ " + a[1] + ")"; break;
  case OpKind::BitwiseNot: e = T + "(~" + x + ")"; break;
  case OpKind::PRelu: // as the reference: unsigned x is never negative
    e = isInteger(res->type.dtype) && !isSigned(res->type.dtype)
            ? x
            : x + " < 0 ? " + T + "(" + a[1] + " * " + x + ") : " + x;
    break;
  case OpKind::Shrink: {
    std::string l = lit(op.getFloat("lambd")), b = lit(op.getFloat("bias"));
    e = x + " < -" + l + " ? " + x + " + " + b + " : " + x + " > " + l + " ? " + x + " - " + b +
        " : " + T + "(0)";
    break;
  }
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
  case OpKind::Mod: {
    std::string cf = op.getInt("fmod") ? "true" : "false";
    if (!isInteger(res->type.dtype) && !op.getInt("fmod")) // the reference refuses it too
      return c_.noKernel("Mod with fmod = 0 on floats (ONNX requires fmod = 1)");
    if (!isInteger(res->type.dtype))
      e = "tc_fmod(" + a[0] + ", " + a[1] + ")";
    else if (integerDivMayFault(op))
      e = "tc_imod(" + T + "(" + a[0] + "), " + T + "(" + a[1] + "), " + cf + ", " + faultSite(op) +
          ")";
    else
      e = "tc_imod_nz(" + T + "(" + a[0] + "), " + T + "(" + a[1] + "), " + cf + ")";
    break;
  }
  case OpKind::CastLike:
  case OpKind::Cast:
    if (!isFloat && op.operand(0)->type.dtype != DType::Bool)
      e = x + " != 0";
    else if (isInteger(res->type.dtype) && tc::isFloat(op.operand(0)->type.dtype)) {
      // Toward zero, clamped to the type's range, NaN to 0 (the reference's).
      auto [lo, hi, mn, mx] = integerRange(res->type.dtype);
      std::string d = "(double)(" + x + ")";
      e = "(" + d + " != " + d + " ? " + T + "(0) : " + d + " <= " + lo + " ? " + T + "(" + mn +
          ") : " + d + " >= " + hi + " ? " + T + "(" + mx + ") : " + T + "(" + d + "))";
    } else if (isHalf(res->type.dtype)) // rounded to the half type, computed in float
      e = c_.load(res->type.dtype, c_.store(res->type.dtype, T + "(" + x + ")"));
    else
      e = T + "(" + x + ")";
    break;
  case OpKind::PhiloxDropout: {
    // Element index of the op's own shape: the domain's when they agree.
    if (index_.empty() || !(res->type.shape == c_.domain))
      return c_.noKernel("PhiloxDropout outside a pointwise kernel over its own shape");
    usesIndex_ = true;
    double ratio = op.getFloat("ratio");
    // Test-only: TC_TEST_DROPOUT_SHIFTED_MASK takes each element's neighbour's
    // mask (dropout.test's bit-for-bit comparison must catch it).
    std::string at = std::getenv("TC_TEST_DROPOUT_SHIFTED_MASK") ? index_ + " + 1" : index_;
    e = "tc_philox((unsigned long long)(" + a[1] + ") + " +
        std::to_string(uint64_t(op.getInt("seed"))) + "ULL, (unsigned long long)(" + a[2] + "), " +
        std::to_string(uint32_t(op.getInt("stream"))) + "u, (unsigned long long)(" + at +
        ")) >= " + std::to_string(philox::threshold(ratio)) + "u ? " + x + " * " +
        lit(philox::keptScale(ratio)) + " : " + T + "(0)";
    break;
  }
  case OpKind::Sign: e = x + " > 0 ? " + T + "(1) : " + x + " < 0 ? " + T + "(-1) : " + x; break;
  case OpKind::ThresholdedRelu:
    e = x + " > " + lit(op.getFloat("alpha")) + " ? " + x + " : " + T + "(0)";
    break;
  case OpKind::Selu:
    e = lit(op.getFloat("gamma")) + " * (" + x + " > 0 ? " + x + " : " + lit(op.getFloat("alpha")) +
        " * (tc_exp(" + x + ") - " + T + "(1)))";
    break;
  case OpKind::Celu: {
    // max(0, x) + min(0, v) as the reference's std::max/min: NaN gives 0.
    double alpha = op.getFloat("alpha");
    if (alpha == 0)
      return c_.noKernel("Celu with alpha 0");
    std::string v =
        "(" + lit(alpha) + " * (tc_exp(" + x + " / " + lit(alpha) + ") - " + T + "(1)))";
    e = "(" + x + " > 0 ? " + x + " : " + T + "(0)) + (" + v + " < 0 ? " + v + " : " + T + "(0))";
    break;
  }
  default:
    if (const char *k = unaryMathKernel(op.kind)) {
      e = expandKernel(k, x, T);
      break;
    }
    return c_.noKernel("no code for " + std::string(op.name()));
  }
  define(res, rt, e, os);
  return true;
}

void Expressions::emitStores(std::ostream &os, const std::string &at,
                             const std::unordered_set<const Value *> &prologue,
                             bool inPrologue) const {
  const Function &f = c_.f;
  for (size_t i = 0; i < f.results.size(); ++i)
    if ((prologue.count(f.results[i]) != 0) == inPrologue)
      os << "      out" << i << "[" << at
         << "] = " << c_.store(f.results[i]->type.dtype, names_.at(f.results[i])) << ";\n";
}

bool emitGroupOps(const KernelContext &c, Expressions &ex, const Op *anchor, bool split,
                  const AnchorCode &anchorCode, std::ostream &pro, std::ostream &body) {
  bool before = split;
  for (const auto &op : c.f.ops) {
    if (op.get() == anchor)
      before = false;
    std::ostream &os = before ? pro : body;
    if (op.get() != anchor) {
      if (!ex.emit(*op, os))
        return false;
    } else if (const char *T = ex.resultType(*op); !T || !anchorCode(*op, T, os)) {
      return false;
    }
  }
  for (const Value *r : c.f.results)
    if (!ex.computed(r))
      return c.noKernel("a result that is not computed in the group");
  return true;
}

bool integerDivMayFault(const Op &op) {
  if (!isInteger(op.result()->type.dtype))
    return false;
  std::optional<std::vector<int64_t>> q = infer::constantInts(op.operand(1));
  if (op.is(OpKind::Div) || op.is(OpKind::Mod)) // a zero divisor
    return !q || std::find(q->begin(), q->end(), 0) != q->end();
  if (op.is(OpKind::Pow)) // 0 to a negative power
    return isInteger(op.operand(1)->type.dtype) && isSigned(op.operand(1)->type.dtype) &&
           (!q || std::any_of(q->begin(), q->end(), [](int64_t k) { return k < 0; }));
  return false;
}

bool groupMayFault(const Function &f) {
  return std::any_of(f.ops.begin(), f.ops.end(),
                     [](const auto &op) { return integerDivMayFault(*op); });
}

} // namespace tc::kernels
