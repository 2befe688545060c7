#include "tc/Runtime/GroupDims.h"
#include "tc/IR/DimExpr.h"
#include "tc/Runtime/ConstantTensor.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <map>

namespace tc {

namespace {

// Dim `d` of result `r` of a pointwise group: the broadcast of what its
// arguments (at the run's dims) and constants have on that axis; nullopt
// where they disagree.
std::optional<int64_t> broadcastDim(const Function &f, const std::vector<const HostTensor *> &ins,
                                    const Value *r, size_t d) {
  std::optional<int64_t> out = 1;
  auto meet = [&](const std::vector<int64_t> &dims) {
    size_t from = r->type.rank() - d; // axes from the right
    if (dims.size() < from || !out)
      return;
    int64_t n = dims[dims.size() - from];
    if (n != 1)
      out = *out == 1 || *out == n ? std::optional<int64_t>(n) : std::nullopt;
  };
  for (const HostTensor *t : ins)
    meet(t->shape());
  for (const auto &op : f.ops)
    for (const Value *v : op->operands)
      if (v && v->isConstant())
        meet(staticDims(v->type.shape));
  return out;
}

} // namespace

std::optional<GroupDims> groupDims(const Op &op, const Function &f,
                                   const std::vector<const HostTensor *> &ins,
                                   std::optional<int64_t> count,
                                   const std::function<void()> &values) {
  GroupDims g;
  std::map<std::string, int64_t> sizes;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const Shape &s = f.args[i]->type.shape;
    if (i >= ins.size() || !ins[i] || ins[i]->rank() != s.size())
      return std::nullopt;
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t n = ins[i]->shape()[d];
      if (s[d].isSymbolic() && !sizes.emplace(s[d].symbol, n).second && sizes[s[d].symbol] != n)
        fail(op.where(), ": symbol ", s[d].symbol, " is both ", sizes[s[d].symbol], " and ", n);
      g.dims.push_back(n);
    }
  }
  std::optional<std::vector<TensorType>> ruled; // the lone op's result types at run time
  for (size_t k = 0; k < f.results.size(); ++k) {
    const Value *r = f.results[k];
    std::vector<int64_t> rd;
    for (size_t d = 0; d < r->type.shape.size(); ++d) {
      if (std::optional<int64_t> n = dimValue(r->type.shape[d], sizes)) {
        rd.push_back(*n);
        continue;
      }
      if (count && r->type.shape[d].isUnknown()) {
        rd.push_back(*count);
        continue;
      }
      // A size only the shape rule knows (a Tile's repeats, an Expand's
      // shape computed at run time): a group of one op over its arguments
      // asks the rule with the run's values; any other runs on the reference.
      // Its small constants (a Range's limit and delta) the group holds itself.
      // A library group (MatMul/Gemm/Conv and its pointwise epilogue): every
      // result has the anchor's shape, which its rule gives from the
      // operands' shapes alone (no values read).
      bool library = op.getString("kind") == "library";
      if (!ruled &&
          (library || (f.ops.size() == 1 && f.ops[0]->results.size() == f.results.size()))) {
        if (values && !library)
          values();
        std::vector<const HostTensor *> opIns;
        std::vector<HostTensor> constants;
        constants.reserve(f.ops[0]->operands.size());
        for (const Value *v : f.ops[0]->operands) {
          size_t a = std::find(f.args.begin(), f.args.end(), v) - f.args.begin();
          if (v && a == f.args.size() && !v->isConstant())
            return std::nullopt;
          if (v && a == f.args.size())
            constants.push_back(constantTensor(*v));
          opIns.push_back(!v ? nullptr : a < f.args.size() ? ins[a] : &constants.back());
        }
        ruled = runTimeResultTypes(*f.ops[0], opIns);
      }
      // A pointwise group's result is its operands' broadcast (a window
      // built from a Range's values: its length known only at run time).
      if (!ruled && op.getString("kind") == "pointwise") {
        std::optional<int64_t> n = broadcastDim(f, ins, r, d);
        if (!n)
          return std::nullopt;
        rd.push_back(*n);
        continue;
      }
      size_t from = library ? 0 : k; // the anchor's result, or the lone op's k-th
      if (!ruled || (!library && f.ops[0]->results[k] != r) || ruled->size() <= from ||
          (*ruled)[from].shape.size() != r->type.rank() || !(*ruled)[from].shape[d].isStatic())
        return std::nullopt;
      rd.push_back((*ruled)[from].shape[d].size);
    }
    g.dims.insert(g.dims.end(), rd.begin(), rd.end());
    g.results.push_back(std::move(rd));
  }
  return g;
}

} // namespace tc
