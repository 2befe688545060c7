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

bool ElementAccess::trailing(size_t arg) const {
  if (access(arg) != Access::Broadcast)
    return false;
  const Shape &s = c_.f.args[arg]->type.shape, &domain = c_.domain;
  size_t lead = 0;
  while (lead < s.size() && s[lead].isStatic() && s[lead].size == 1)
    ++lead;
  size_t k = s.size() - lead;
  if (k == 0 || k > domain.size())
    return false;
  for (size_t d = 0; d < k; ++d) // '?' == '?' proves nothing
    if (s[lead + d].isUnknown() || !(s[lead + d] == domain[domain.size() - k + d]))
      return false;
  return true;
}

bool ElementAccess::readsBroadcast() const {
  for (size_t i = 0; i < c_.f.args.size(); ++i)
    if (elementwise(i) && access(i) == Access::Broadcast)
      return true;
  return false;
}

std::string ElementAccess::sizeOf(size_t arg) const {
  const Value *v = c_.f.args[arg];
  std::string e = "(int64_t)1";
  for (size_t d = 0; d < v->type.rank(); ++d)
    e += " * " + c_.dim(v, d);
  return e;
}

void ElementAccess::emitStrides(std::ostream &os) const {
  const Function &f = c_.f;
  size_t rank = c_.rank, r0 = c_.dimAt.at(f.results[0]);
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (access(i) != Access::Broadcast)
      continue;
    size_t rk = f.args[i]->type.rank(), at = c_.dimAt.at(f.args[i]);
    os << "  int64_t st" << i << "[" << (rank ? rank : 1) << "];\n";
    os << "  { int64_t s = 1;\n";
    for (size_t d = rank; d-- > 0;) {
      if (d + rk < rank) {
        os << "    st" << i << "[" << d << "] = 0;\n";
        continue;
      }
      std::string dim = "dims[" + std::to_string(at + d + rk - rank) + "]";
      os << "    st" << i << "[" << d << "] = " << dim << " == 1 && dims[" << r0 + d
         << "] != 1 ? 0 : s; s *= " << dim << ";\n";
    }
    os << "  }\n";
    os << "  const int64_t step" << i << " = st" << i << "[" << (rank ? rank - 1 : 0) << "];\n";
  }
}

void ElementAccess::emitRowBases(std::ostream &os, const std::string &index) const {
  const Function &f = c_.f;
  size_t rank = c_.rank, r0 = c_.dimAt.at(f.results[0]);
  std::string cast = index == "int64_t" ? "" : "(" + index + ")";
  for (size_t i = 0; i < f.args.size(); ++i)
    if (access(i) == Access::Broadcast)
      os << "    int64_t base" << i << " = 0;\n";
  if (rank >= 2) {
    os << "    { " << index << " rem = row;\n";
    for (size_t d = rank - 1; d-- > 0;) {
      os << "      { const " << index << " c = rem % " << cast << "dims[" << r0 + d
         << "]; rem /= " << cast << "dims[" << r0 + d << "];";
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
