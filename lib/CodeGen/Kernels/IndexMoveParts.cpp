#include "IndexMoveParts.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Float16.h"
#include <algorithm>
#include <cstring>

namespace tc::kernels {

MoveCode::MoveCode(const KernelContext &c, const Op &op)
    : c(c), op(op), x(op.operands.empty() ? nullptr : op.operand(0)), y(op.result()),
      r(op.result()->type.rank()), T(movedType(op.result()->type.dtype)) {}

bool MoveCode::computed(bool integers) {
  DType t = y->type.dtype;
  if (!(isFloat(t) || (integers && isInteger(t))) || !c.st(t))
    return ok = c.noKernel(std::string(op.name()) + " producing " + y->type.str());
  compute_ = true;
  T = c.st(t);
  return true;
}

std::string MoveCode::dataOf(const Value *v) {
  if (auto it = names_.find(v); it != names_.end())
    return it->second;
  if (size_t a = c.argIndex(v); a != SIZE_MAX) {
    const char *type = compute_ ? c.st(v->type.dtype) : movedType(v->type.dtype);
    if (!type)
      ok = c.noKernel(std::string(op.name()) + " reading " + v->type.str());
    pointers_[a] = type ? type : "char";
    return names_[v] = "in" + std::to_string(a);
  }
  // A small constant copied into the kernel: its bits as integers.
  const char *M = movedType(v->type.dtype);
  if (!v->isConstant() || !M || compute_) {
    ok = c.noKernel(std::string(op.name()) + " reading the constant %" + v->name);
    return "in0";
  }
  std::string name = "cst" + std::to_string(names_.size());
  size_t es = dtypeSize(v->type.dtype), n = v->data->size / es;
  arrays_ << "  const " << M << " " << name << "[" << std::max<size_t>(n, 1) << "] = {";
  for (size_t i = 0; i < n; ++i) {
    int64_t bits = 0;
    std::memcpy(&bits, v->data->ptr + i * es, es);
    if (es == 4)
      bits = int32_t(bits);
    else if (es == 2)
      bits = int16_t(bits);
    else if (es == 1)
      bits = int8_t(bits);
    arrays_ << (i ? ", " : "") << "(" << M << ")" << bits << "LL";
  }
  arrays_ << "};\n";
  return names_[v] = name;
}

std::string MoveCode::stored(const Value *v) {
  size_t a = c.argIndex(v);
  const char *type = a == SIZE_MAX ? nullptr : c.st(v->type.dtype);
  if (!type) {
    ok = c.noKernel(std::string(op.name()) + " reading %" + v->name + " (" + v->type.str() + ")");
    return "in0";
  }
  pointers_[a] = type;
  return "in" + std::to_string(a);
}

std::string MoveCode::scalar(const Value *v) {
  if (v->isConstant()) {
    if (v->data->size != dtypeSize(v->type.dtype) || v->type.dtype == DType::Str) {
      ok = c.noKernel(std::string(op.name()) + " reading the constant %" + v->name);
      return "0.0";
    }
    HostTensor t(v->type.dtype, {});
    std::memcpy(t.bytes(), v->data->ptr, t.byteSize());
    std::ostringstream os;
    os.precision(17);
    if (isFloat(v->type.dtype))
      os << t.getDouble(0);
    else
      os << t.getInt(0) << ".0";
    return "(double)" + os.str();
  }
  return "(double)" + c.load(v->type.dtype, stored(v) + "[0]");
}

std::string MoveCode::indexFault(const std::string &a, const std::string &D) const {
  return c.cuda() ? "{ __trap(); continue; }"
                  : "{ tc_raise(TC_FAULT_INDEX, 0, " + a + ", " + D + "); continue; }";
}

size_t MoveCode::axis(const Value *v) {
  int64_t a = op.getInt("axis"), rank = int64_t(v->type.rank());
  a += a < 0 ? rank : 0;
  if (a < 0 || a >= rank) {
    ok = c.noKernel(std::string(op.name()) + " over an axis out of range");
    return SIZE_MAX;
  }
  return size_t(a);
}

std::string MoveCode::indices(const Value *v) {
  if (v->type.dtype != DType::I64 && v->type.dtype != DType::I32) {
    ok = c.noKernel(std::string(op.name()) + " with indices of " + v->type.str());
    return "in0";
  }
  bool was = compute_;
  compute_ = false; // indices are read as they are
  std::string ref = dataOf(v);
  compute_ = was;
  if (size_t a = c.argIndex(v); a != SIZE_MAX)
    pointers_[a] = v->type.dtype == DType::I64 ? "int64_t" : "int";
  return ref;
}

void MoveCode::index(std::ostream &os, const std::string &name, const Value *v,
                     const std::string &pos, const std::string &D, const std::string &indent) {
  std::string ref = indices(v);
  os << indent << "int64_t " << name << " = (int64_t)" << ref << "[" << pos << "];\n"
     << indent << "if (" << name << " < 0) " << name << " += " << D << ";\n"
     << indent << "if (" << name << " < 0 || " << name << " >= " << D << ") "
     << indexFault(name + " < 0 ? " + name + " - " + D + " : " + name, D) << "\n";
}

std::string MoveCode::load(const std::string &ref) const { return c.load(y->type.dtype, ref); }

std::string MoveCode::store(const std::string &value) const {
  return c.store(y->type.dtype, "(" + std::string(c.ct(y->type.dtype)) + ")(" + value + ")");
}

bool MoveCode::startCombine() {
  const std::string &red = op.getString("reduction");
  reduction_ = red == "none"  ? 0
               : red == "add" ? 1
               : red == "mul" ? 2
               : red == "max" ? 3
               : red == "min" ? 4
                              : -1;
  if (reduction_ < 0)
    return ok = c.noKernel("a scatter with reduction '" + red + "'");
  return !reduction_ || computed();
}

std::string MoveCode::initial(const std::string &at) {
  std::string x = data(0) + "[" + at + "]";
  return reduction_ ? c.ct(y->type.dtype) + std::string(" v = ") + load(x) + ";"
                    : T + std::string(" v = ") + x + ";";
}

std::string MoveCode::resume(const std::string &at) const {
  std::string x = "out0[" + at + "]";
  return "v = " + (reduction_ ? load(x) : x) + ";";
}

std::string MoveCode::combine(const std::string &update) const {
  std::string u = reduction_ ? load(update) : update;
  switch (reduction_) {
  case 1: return "v = v + " + u + ";";
  case 2: return "v = v * " + u + ";";
  case 3: return "{ const auto b = " + u + "; v = b > v ? b : v; }";
  case 4: return "{ const auto b = " + u + "; v = b < v ? b : v; }";
  default: return "v = " + u + ";";
  }
}

std::string MoveCode::finish(const std::string &at) const {
  return "out0[" + at + "] = " + (reduction_ ? c.store(y->type.dtype, "v") : std::string("v")) +
         ";";
}

void MoveCode::coordinates(std::ostream &os, const std::string &flat,
                           const std::string &indent) const {
  if (r)
    os << indent << "int64_t rem = " << flat << ";\n";
  for (size_t d = r; d-- > 0;) // the outermost is what is left (i < n)
    os << indent << "const int64_t c" << d << " = "
       << (d ? "rem % " + c.dim(y, d) + "; rem /= " + c.dim(y, d) : std::string("rem")) << ";\n";
}

void MoveCode::emitLoop(std::ostream &os, const std::string &) {
  for (const auto &[a, type] : pointers_)
    os << "  const " << type << " *__restrict in" << a << " = (const " << type << " *)bufs[" << a
       << "];\n";
  os << "  " << T << " *__restrict out0 = (" << T << " *)bufs[" << c.f.args.size() << "];\n"
     << arrays_.str();
  os << "  const int64_t inner = " << (r ? c.dim(y, r - 1) : "(int64_t)1") << ";\n";
  if (c.cuda()) {
    os << "  const int64_t n = " << c.rowsExpr() << " * inner;\n" << kGridHead;
  } else {
    os << "  const int64_t tid = begin * inner, stride = 1, n = end * inner;\n";
  }
  os << setup.str();
  auto elements = [&](const std::string &indent) {
    if (c.cuda() && !blockLoop.str().empty()) {
      std::istringstream lines(blockLoop.str());
      for (std::string line; std::getline(lines, line);)
        os << indent.substr(2) << line << "\n";
      return;
    }
    os << indent << "for (int64_t i = tid; i < n; i += stride) {\n";
    coordinates(os, "i", indent + "  ");
    std::istringstream lines(body.str());
    for (std::string line; std::getline(lines, line);) // at this depth
      os << indent.substr(2) << line << "\n";
    os << indent << "}\n";
  };
  // No copy where the result is the data (the memory plan's in-place
  // scatter: MemoryPlan.cpp mayOverwrite).
  std::string copy = "if ((const void *)out0 != (const void *)" + copied +
                     ") for (int64_t i = tid; i < n; i += stride) out0[i] = " + copied + "[i];\n";
  if (updates.str().empty()) {
    elements("  ");
  } else if (c.cuda()) {
    os << "  if (p.pass == 0) {\n    if (byUpdates) {\n      " << copy << "      return;\n    }\n";
    elements("    ");
    os << "    return;\n  }\n  if (!byUpdates)\n    return;\n" << updates.str();
  } else {
    os << "  " << copy << updates.str();
  }
  os << "}\n";
}

std::string cubicKernelCode(const std::string &t, const std::string &a) {
  return t + " <= 1 ? ((" + a + " + 2) * " + t + " - (" + a + " + 3)) * " + t + " * " + t +
         " + 1 : " + t + " < 2 ? ((" + a + " * " + t + " - 5 * " + a + ") * " + t + " + 8 * " + a +
         ") * " + t + " - 4 * " + a + " : 0.0";
}

std::string fillBits(double v, DType t, const char *T) {
  uint64_t bits = 0;
  if (t == DType::F32) {
    float f = float(v);
    std::memcpy(&bits, &f, 4);
  } else if (t == DType::F64) {
    std::memcpy(&bits, &v, 8);
  } else if (t == DType::F16) {
    bits = floatToHalf(float(v));
  } else if (t == DType::BF16) {
    bits = floatToBf16(float(v));
  } else if (isInteger(t)) {
    bits = uint64_t(int64_t(v));
  } else {
    bits = v != 0;
  }
  return "(" + std::string(T) + ")" + std::to_string(bits) + "ULL";
}

} // namespace tc::kernels
