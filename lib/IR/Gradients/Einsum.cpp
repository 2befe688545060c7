// Gradient rule of Einsum: the cotangent of operand i is itself an einsum,
// of the result's cotangent and the other operands, to operand i's labels
// ("bij,bjk->bik": dA = "bik,bjk->bij"). A label of operand i alone (summed
// by the forward, in no other term) is left out and broadcast back. The
// ellipsis' dims get letters of their own. Not supported (one line naming
// the node): a label repeated in a term (a diagonal), a label whose size
// differs between terms (size-1 broadcasting).
#include "GradRules.h"
#include "tc/IR/NNMath.h"
#include <algorithm>

namespace tc::grad {

void einsum(GradBuilder &b, const Grads &rg, const Wanted &w, Grads &og) {
  const Op &op = b.fwd;
  size_t n = op.operands.size();
  std::vector<size_t> ranks;
  for (Value *v : op.operands)
    ranks.push_back(v->type.rank());
  const std::string &eq = op.getString("equation");
  nn::EinsumSpec spec = nn::parseEinsum(eq, ranks);
  // Each label's size (the same in every term) and letter.
  std::vector<int64_t> size(size_t(spec.numLabels), -1);
  std::vector<bool> used(52, false);
  auto record = [&](const std::vector<int> &labels, const std::vector<int64_t> &dims) {
    for (size_t k = 0; k < labels.size(); ++k) {
      int64_t &s = size[size_t(labels[k])];
      if (s >= 0 && s != dims[k])
        fail(op.where(), ": the gradient of an Einsum ('", eq,
             "') whose label sizes differ between terms (broadcasting) is not supported");
      s = dims[k];
      if (labels[k] < 52)
        used[size_t(labels[k])] = true;
    }
  };
  for (size_t i = 0; i < n; ++i)
    record(spec.inputs[i], b.dims(op.operand(i)));
  record(spec.output, b.dims(op.result()));
  std::vector<char> letter(size_t(spec.numLabels), 0);
  auto letterOf = [](size_t l) { return char(l < 26 ? 'a' + l : 'A' + (l - 26)); };
  for (size_t l = 0, spare = 0; l < letter.size(); ++l) {
    if (l < 52) {
      letter[l] = letterOf(l);
      continue;
    }
    while (spare < 52 && used[spare])
      ++spare;
    if (spare == 52)
      fail(op.where(), ": the gradient of an Einsum ('", eq, "') has no letters left");
    used[spare] = true;
    letter[l] = letterOf(spare);
  }
  auto term = [&](const std::vector<int> &labels) {
    std::string t;
    for (int l : labels)
      t += letter[size_t(l)];
    return t;
  };
  for (size_t i = 0; i < n; ++i) {
    if (!w[i])
      continue;
    const std::vector<int> &mine = spec.inputs[i];
    std::vector<int> sorted = mine;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail(op.where(), ": the gradient of an Einsum ('", eq,
           "') with a label repeated in a term (a diagonal) is not supported");
    // Labels kept: those of the result or of another operand.
    std::vector<int> kept;
    std::vector<int64_t> keptShape;
    for (int l : mine) {
      bool elsewhere = std::count(spec.output.begin(), spec.output.end(), l) > 0;
      for (size_t j = 0; j < n; ++j)
        if (j != i)
          elsewhere |= std::count(spec.inputs[j].begin(), spec.inputs[j].end(), l) > 0;
      if (elsewhere)
        kept.push_back(l);
      keptShape.push_back(elsewhere ? size[size_t(l)] : 1);
    }
    std::string e = term(spec.output);
    std::vector<Value *> ins{rg[0]};
    for (size_t j = 0; j < n; ++j)
      if (j != i) {
        e += "," + term(spec.inputs[j]);
        ins.push_back(op.operand(j));
      }
    e += "->" + term(kept);
    Value *d = b.op(OpKind::Einsum, ins, {{"equation", Attribute(e)}});
    og[i] = b.expandTo(b.reshape(d, keptShape), b.dims(op.operand(i)));
  }
}

} // namespace tc::grad
