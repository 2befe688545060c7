#include "tc/Analysis/StepCost.h"
#include "tc/IR/AttentionLayout.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/OpAttrs.h"
#include <algorithm>
#include <map>

namespace tc {

namespace {

using Sizes = std::map<std::string, int64_t>;

// Dims of `t` with symbols bound by `sizes`; -1 for what stays unknown.
std::vector<int64_t> dimsOf(const TensorType &t, const Sizes &sizes) {
  std::vector<int64_t> out;
  for (const Dim &d : t.shape)
    out.push_back(dimValue(d, sizes).value_or(-1));
  return out;
}

double elements(const std::vector<int64_t> &dims) {
  double n = 1;
  for (int64_t d : dims)
    n *= double(std::max<int64_t>(d, 0));
  return n;
}

double elementsOf(const Value *v, const Sizes &sizes) {
  return v ? elements(dimsOf(v->type, sizes)) : 0;
}

// The FLOPs of one (non-Fused) op by its rule in the op table (OpTable.h's
// FlopRule; the rules in words: StepCost.h).
double opFlops(const Op &op, const Sizes &sizes) {
  const Value *r = op.results.empty() ? nullptr : op.result();
  double out = elementsOf(r, sizes);
  auto dims = [&](size_t i) {
    return op.operand(i) ? dimsOf(op.operand(i)->type, sizes) : std::vector<int64_t>();
  };
  switch (op.info().flops) {
  case FlopRule::PerOutput: return out;
  case FlopRule::PerInput: return elementsOf(op.operand(0), sizes);
  case FlopRule::None: return 0;
  case FlopRule::MatMul: {
    std::vector<int64_t> a = dims(0);
    if (a.empty())
      return 0;
    bool ta = a.size() >= 2 && attr<OpKind::MatMul, "transA">(op); // A stored [..., K, M]
    return 2 * out * double(std::max<int64_t>(a[a.size() - (ta ? 2 : 1)], 0));
  }
  case FlopRule::Gemm: {
    std::vector<int64_t> a = dims(0);
    if (a.size() != 2)
      return 0;
    int64_t k = attr<OpKind::Gemm, "transA">(op) ? a[0] : a[1];
    return 2 * out * double(std::max<int64_t>(k, 0)) + (op.operand(2) ? out : 0);
  }
  case FlopRule::Conv: {
    std::vector<int64_t> w = dims(1); // [Cout, Cin/group, k...]
    return w.empty() || w[0] <= 0 ? 0 : 2 * out * (elements(w) / double(w[0]));
  }
  case FlopRule::ConvTranspose: {
    std::vector<int64_t> w = dims(1); // [Cin, Cout/group, k...]
    return w.empty() || w[0] <= 0
               ? 0
               : 2 * elementsOf(op.operand(0), sizes) * (elements(w) / double(w[0]));
  }
  case FlopRule::ConvWeightGrad: { // result [Cout, ...]
    std::vector<int64_t> w = r ? dimsOf(r->type, sizes) : std::vector<int64_t>{};
    return w.empty() || w[0] <= 0
               ? 0
               : 2 * elementsOf(op.operand(1), sizes) * (elements(w) / double(w[0]));
  }
  case FlopRule::Attention: { // q [.., D], k with Skv tokens, result [B, H, Sq, Dv] (any layout)
    std::vector<int64_t> q = dims(0), k = dims(1);
    AttentionAxes ka = attentionAxes(op, 1);
    if (q.empty() || k.size() != ka.rank() || out <= 0)
      return 0;
    int64_t dv = r ? dimsOf(r->type, sizes).back() : 0; // B * H * Sq = out / Dv
    double qk = dv > 0 ? out / double(dv) * double(std::max<int64_t>(q.back(), 0)) : 0;
    return 2 * double(std::max<int64_t>(k[ka.tokens], 0)) * (qk + out);
  }
  case FlopRule::AttentionGrad: { // q, k, v, [mask], out, ... (any layout); result 0 dq
    std::vector<int64_t> k = dims(1), v = dims(2);
    AttentionAxes ka = attentionAxes(op, kAttnK);
    if (k.size() != ka.rank() || v.size() != attentionAxes(op, kAttnV).rank() || out <= 0)
      return 0;
    double rows = out / double(std::max<int64_t>(k.back(), 1)); // B * H * Sq
    return 2 * rows * double(k[ka.tokens]) * double(3 * k.back() + 2 * v.back());
  }
  case FlopRule::Window: {
    double window = 1;
    if (const Attribute *k = op.findAttr("kernel_shape"))
      for (int64_t d : k->ints())
        window *= double(d);
    return out * window;
  }
  }
  return 0;
}

void addDistinct(std::vector<std::string> &list, const std::string &s) {
  if (!s.empty() && std::find(list.begin(), list.end(), s) == list.end())
    list.push_back(s);
}

// The first matrix op (the op table's library category: MatMul, Gemm,
// Conv, ConvTranspose, Einsum) of a step decides which FLOP peak applies.
void noteMatrix(StepInfo &s, const Op &op) {
  if (s.matrix || op.info().category != FusionCategory::Library || !op.operand(0))
    return;
  s.matrix = true;
  s.matrixDType = std::string(dtypeName(op.operand(0)->type.dtype));
}

std::string typeStr(const Value *v) { return v ? v->type.str() : "none"; }

} // namespace

StepInfo describeStep(const Module &m, const Op &op) {
  StepInfo s;
  s.result = op.results.empty() ? "" : "%" + op.result()->name;
  s.dtype = op.results.empty() ? "" : std::string(dtypeName(op.result()->type.dtype));
  const Function *callee = op.is(OpKind::Fused) ? m.lookup(op.getString("callee")) : nullptr;
  s.group = callee ? callee->name : std::string(op.name());
  // Signature and bytes at the call site, each distinct value once.
  std::vector<const Value *> seen;
  std::string ins, outs;
  auto count = [&](const Value *v) {
    if (!v || std::find(seen.begin(), seen.end(), v) != seen.end())
      return;
    seen.push_back(v);
    if (std::optional<size_t> n = byteSize(v->type))
      s.bytes += *n;
  };
  for (const Value *v : op.operands) {
    ins += (ins.empty() ? "" : ", ") + typeStr(v);
    count(v);
  }
  for (const Value *v : op.results) {
    outs += (outs.empty() ? "" : ", ") + typeStr(v);
    count(v);
  }
  s.signature = ins + " -> " + outs;
  Phase phase = op.loc.phase;
  if (!callee) {
    s.phase = phaseName(phase);
    addDistinct(s.nodes, op.loc.node);
    addDistinct(s.opTypes, std::string(op.name()));
    s.flops = opFlops(op, {});
    noteMatrix(s, op);
    return s;
  }
  // Bind the callee's symbols from the call's (specialized, static) operands.
  Sizes sizes;
  for (size_t i = 0; i < callee->args.size() && i < op.operands.size(); ++i) {
    if (!op.operands[i])
      continue;
    const Shape &formal = callee->args[i]->type.shape, &actual = op.operands[i]->type.shape;
    for (size_t d = 0; d < formal.size() && d < actual.size(); ++d)
      if (formal[d].isSymbolic() && actual[d].isStatic())
        sizes.emplace(formal[d].symbol, actual[d].size);
  }
  for (const auto &body : callee->ops) {
    addDistinct(s.nodes, body->loc.node);
    addDistinct(s.opTypes, std::string(body->name()));
    s.flops += opFlops(*body, sizes);
    noteMatrix(s, *body);
    phase = std::max(phase, body->loc.phase); // fusion's rule: the latest phase
  }
  s.phase = phaseName(phase);
  return s;
}

} // namespace tc
