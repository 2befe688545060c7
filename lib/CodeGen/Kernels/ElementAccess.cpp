#include "ElementAccess.h"

namespace tc::kernels {

ElementAccess::ElementAccess(const KernelContext &c, const Op *contraction) : c_(c) {
  const Function &f = c.f;
  for (const auto &op : f.ops)
    for (size_t k = 0; k < op->operands.size(); ++k)
      if (op.get() != contraction || (op->is(OpKind::Gemm) && k == 2))
        for (size_t i = 0; i < f.args.size(); ++i)
          if (f.args[i] == op->operands[k])
            elementwise_[i] = true;
}

ElementAccess::Access ElementAccess::access(size_t arg) const {
  const Shape &s = c_.f.args[arg]->type.shape;
  if (s == c_.domain)
    return Access::Contiguous;
  auto n = staticNumElements(s);
  if (n && *n == 1)
    return Access::Scalar;
  return Access::Broadcast;
}

ElementAccess::Along ElementAccess::along(size_t arg, size_t d) const {
  const Shape &s = c_.f.args[arg]->type.shape;
  const Dim &D = c_.domain[d];
  if (D.isStatic() && D.size == 1)
    return Along::Either;
  if (d + s.size() < c_.rank)
    return Along::Constant;
  const Dim &a = s[d + s.size() - c_.rank];
  if (a.isStatic() && a.size == 1)
    return Along::Constant;
  return !a.isUnknown() && a == D ? Along::Whole : Along::Unknown; // '?' == '?' proves nothing
}

bool ElementAccess::uniform(size_t arg, size_t from) const {
  bool whole = false, constant = false;
  for (size_t d = from; d < c_.rank; ++d) {
    Along a = along(arg, d);
    if (a == Along::Unknown)
      return false;
    whole |= a == Along::Whole;
    constant |= a == Along::Constant;
  }
  return !(whole && constant);
}

size_t ElementAccess::vectorBlock() const {
  auto all = [&](size_t from) {
    for (size_t i = 0; i < c_.f.args.size(); ++i)
      if (elementwise(i) && access(i) == Access::Broadcast && !uniform(i, from))
        return false;
    return true;
  };
  if (c_.rank == 0 || !all(c_.rank - 1))
    return c_.rank;
  size_t from = c_.rank - 1;
  while (from > 0 && all(from - 1))
    --from;
  return from;
}

bool ElementAccess::whole(size_t arg, size_t from) const {
  for (size_t d = from; d < c_.rank; ++d)
    if (along(arg, d) == Along::Whole)
      return true;
  return false;
}

bool ElementAccess::readsBroadcast() const {
  for (size_t i = 0; i < c_.f.args.size(); ++i)
    if (elementwise(i) && access(i) == Access::Broadcast)
      return true;
  return false;
}

void ElementAccess::emitStrides(std::ostream &os) const {
  const Function &f = c_.f;
  size_t rank = c_.rank;
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (access(i) != Access::Broadcast)
      continue;
    size_t rk = f.args[i]->type.rank();
    os << "  int64_t st" << i << "[" << (rank ? rank : 1) << "];\n";
    os << "  { int64_t s = 1;\n";
    for (size_t d = rank; d-- > 0;) {
      if (d + rk < rank) {
        os << "    st" << i << "[" << d << "] = 0;\n";
        continue;
      }
      std::string dim = c_.dim(f.args[i], d + rk - rank);
      os << "    st" << i << "[" << d << "] = " << dim << " == 1 && " << c_.dim(f.results[0], d)
         << " != 1 ? 0 : s; s *= " << dim << ";\n";
    }
    os << "  }\n";
    os << "  const int64_t step" << i << " = st" << i << "[" << (rank ? rank - 1 : 0) << "];\n";
  }
}

void ElementAccess::emitRowBases(std::ostream &os, const std::string &index, size_t axes) const {
  const Function &f = c_.f;
  size_t rank = c_.rank;
  axes = std::min(axes, rank ? rank - 1 : 0);
  std::string cast = index == "int64_t" ? "" : "(" + index + ")";
  for (size_t i = 0; i < f.args.size(); ++i)
    if (access(i) == Access::Broadcast)
      os << "    int64_t base" << i << " = 0;\n";
  if (axes >= 1) {
    os << "    { " << index << " rem = row;\n";
    for (size_t d = axes; d-- > 0;) {
      os << "      { const " << index << " c = rem % " << cast << c_.dim(f.results[0], d)
         << "; rem /= " << cast << c_.dim(f.results[0], d) << ";";
      for (size_t i = 0; i < f.args.size(); ++i)
        if (access(i) == Access::Broadcast)
          os << " base" << i << " += c * st" << i << "[" << d << "];";
      os << " }\n";
    }
    os << "    }\n";
  }
}

void ElementAccess::emitLoads(std::ostream &os, const std::string &contiguous) const {
  const Function &f = c_.f;
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (!elementwise(i))
      continue;
    DType t = f.args[i]->type.dtype;
    std::string ref = "in" + std::to_string(i);
    switch (access(i)) {
    case Access::Contiguous: ref += "[" + contiguous + "]"; break;
    case Access::Scalar: ref += "[0]"; break;
    case Access::Broadcast:
      ref += "[base" + std::to_string(i) + " + j * step" + std::to_string(i) + "]";
      break;
    }
    os << "      const " << c_.ct(t) << " a" << i << " = " << c_.load(t, ref) << ";\n";
  }
}

} // namespace tc::kernels
