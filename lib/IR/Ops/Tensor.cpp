// Shape rules of reshaping and data-movement ops.
#include "OpInference.h"
#include <algorithm>
#include <map>

namespace tc::infer {

std::vector<TensorType> inferReshape(const Op &op) {
  const TensorType &x = operandType(op, 0), &s = operandType(op, 1);
  if (s.dtype != DType::I64 || s.rank() != 1)
    fail("shape must be a 1-D i64 tensor, got ", s.str());
  auto target = constantInts(op.operand(1));
  if (!target) {
    // Shape computed at run time: only the rank is known.
    if (!s.shape[0].isStatic())
      fail("shape operand has unknown length");
    if (s.shape[0].size > 64)
      fail("shape operand has ", s.shape[0].size, " entries; tc supports rank <= 64");
    return {TensorType{x.dtype, Shape(s.shape[0].size, Dim::unknown())}};
  }
  bool allowZero = op.getInt("allowzero");
  Shape out;
  int inferAt = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == -1) {
      if (inferAt >= 0)
        fail("shape has more than one -1");
      inferAt = int(i);
      out.push_back(Dim::unknown());
    } else if (d == 0 && !allowZero) {
      if (i >= x.rank())
        fail("shape[", i, "] = 0 copies a dimension the input does not have");
      out.push_back(x.shape[i]);
    } else if (d < 0) {
      fail("shape[", i, "] = ", d, " is invalid");
    } else {
      out.push_back(Dim::fixed(d));
    }
  }
  // Count static product and symbol multiplicities of input and output; the
  // -1 dim is what remains after cancelling (unknown when that is unclear).
  auto tally = [](const Shape &sh, int skip, int64_t &n, std::map<std::string, int> &syms) {
    bool unknown = false;
    for (size_t i = 0; i < sh.size(); ++i) {
      if (int(i) == skip)
        continue;
      if (sh[i].isStatic())
        n = checkedMul(n, sh[i].size);
      else if (sh[i].isSymbolic())
        ++syms[sh[i].symbol];
      else
        unknown = true;
    }
    return !unknown;
  };
  int64_t nIn = 1, nOut = 1;
  std::map<std::string, int> symIn, symOut;
  bool knownIn = tally(x.shape, -1, nIn, symIn);
  bool knownOut = tally(out, inferAt, nOut, symOut);
  if (inferAt < 0) {
    if (knownIn && knownOut && symIn == symOut && nIn != nOut)
      fail("cannot reshape ", x.str(), " (", nIn, " elements) to ", nOut, " elements");
    return {TensorType{x.dtype, out}};
  }
  if (knownIn && knownOut) {
    for (auto &[sym, c] : symOut)
      symIn[sym] -= c;
    std::erase_if(symIn, [](auto &p) { return p.second == 0; });
    bool symOk = std::all_of(symIn.begin(), symIn.end(), [](auto &p) { return p.second > 0; });
    if (nOut == 0 || !symOk) {
      // leave unknown
    } else if (nIn % nOut != 0 && symIn.empty()) {
      fail("cannot reshape ", x.str(), " (", nIn, " elements) into a multiple of ", nOut);
    } else if (symIn.empty()) {
      out[inferAt] = Dim::fixed(nIn / nOut);
    } else if (symIn.size() == 1 && symIn.begin()->second == 1 && nIn == nOut) {
      out[inferAt] = Dim::sym(symIn.begin()->first);
    }
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferTranspose(const Op &op) {
  const TensorType &x = operandType(op, 0);
  std::vector<int64_t> perm = op.getInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < x.rank(); ++i)
      perm.push_back(int64_t(x.rank() - 1 - i));
  if (perm.size() != x.rank())
    fail("perm has ", perm.size(), " entries for a rank-", x.rank(), " input");
  std::vector<bool> seen(x.rank());
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(x.rank()) || seen[p])
      fail("perm is not a permutation of 0..", x.rank() - 1);
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> inferFlatten(const Op &op) {
  const TensorType &x = operandType(op, 0);
  int64_t r = int64_t(x.rank());
  int64_t axis = op.getInt("axis");
  if (axis < -r || axis > r)
    fail("axis ", axis, " is out of range for rank ", r);
  if (axis < 0)
    axis += r;
  return {TensorType{x.dtype, {product(x.shape, 0, axis), product(x.shape, axis, r)}}};
}

std::vector<TensorType> inferConcat(const Op &op) {
  const TensorType &first = operandType(op, 0);
  int64_t r = int64_t(first.rank());
  if (r == 0)
    fail("cannot concatenate scalars");
  int64_t axis = normalizeAxis(op.getInt("axis"), r);
  Shape out = first.shape;
  int64_t total = 0;
  bool allStatic = true;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TensorType &t = operandType(op, i);
    if (t.dtype != first.dtype || int64_t(t.rank()) != r)
      fail("input ", i, " ", t.str(), " does not match input 0 ", first.str());
    for (int64_t d = 0; d < r; ++d) {
      if (d == axis)
        continue;
      const Dim &a = out[d], &b = t.shape[d];
      if (a.isStatic() && b.isStatic() && a.size != b.size)
        fail("input ", i, " ", t.str(), " differs from input 0 ", first.str(), " off the axis");
      if (!a.isStatic() && b.isStatic())
        out[d] = b;
    }
    if (t.shape[axis].isStatic())
      total = checkedAdd(total, t.shape[axis].size);
    else
      allStatic = false;
  }
  out[axis] = allStatic ? Dim::fixed(total) : Dim::unknown();
  return {TensorType{first.dtype, out}};
}

} // namespace tc::infer
