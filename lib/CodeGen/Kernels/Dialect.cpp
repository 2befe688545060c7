#include "Dialect.h"
#include <cstdio>

namespace tc::kernels {

namespace {

constexpr DialectInfo kDialects[] = {
    {"extern \"C\" void ",
     "__builtin_",
     {"tc_f16", "tc_h2f", "tc_f2h"},
     {"tc_bf16", "tc_b2f", "tc_f2b"},
     "__builtin_inf()",
     "__builtin_nan(\"\")"},
    {"extern \"C\" __global__ void ",
     "",
     {"__half", "__half2float", "__float2half_rn"},
     {"__nv_bfloat16", "__bfloat162float", "__float2bfloat16_rn"},
     "__longlong_as_double(0x7ff0000000000000LL)",
     "__longlong_as_double(0x7ff8000000000000LL)"},
};

} // namespace

const DialectInfo &dialectInfo(KernelDialect d) { return kDialects[d == KernelDialect::Cuda]; }

const char *storageType(DType t, KernelDialect d) {
  switch (t) {
  case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  case DType::I32: return "int"; // pointwise kernels only (Classify.cpp)
  case DType::I64: return "int64_t";
  // The other integer types: the prelude's typedefs (one token, so that
  // `T(x)` casts).
  case DType::I16: return "tc_i16";
  case DType::I8: return "tc_i8";
  case DType::U64: return "tc_u64";
  case DType::U32: return "tc_u32";
  case DType::U16: return "tc_u16";
  case DType::U8: return "tc_u8";
  case DType::F16: return dialectInfo(d).f16.type;
  case DType::BF16: return dialectInfo(d).bf16.type;
  default: return nullptr;
  }
}

const char *computeType(DType t, KernelDialect d) {
  const char *s = storageType(t, d);
  return s && isHalf(t) ? "float" : s;
}

bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

const char *movedType(DType t) {
  switch (dtypeSize(t)) {
  case 8: return "int64_t";
  case 4: return "int";
  case 2: return "short";
  case 1: return "char";
  default: return nullptr;
  }
}

std::string floatLiteral(double v, DType t, KernelDialect d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v); // exact
  std::string s = buf;
  if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan")
    s = std::string(s[0] == '-' ? "-" : "") +
        (s.find("inf") != std::string::npos ? dialectInfo(d).inf : dialectInfo(d).nan);
  return t == DType::F64 ? s : "(float)" + s;
}

} // namespace tc::kernels
