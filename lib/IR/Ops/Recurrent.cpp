// Shape rule of the recurrent ops RNN, GRU and LSTM (layouts: Ops.def).
#include "OpInference.h"
#include "tc/IR/RecurrentMath.h"

namespace tc::infer {

namespace {

// Fails unless `t` has `want`'s rank and agrees with it wherever both dims
// are static (an unknown or symbolic dim of `want` matches anything).
void expectShape(const TensorType &t, const char *what, const Shape &want, DType dtype) {
  bool ok = t.dtype == dtype && t.rank() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i)
    ok = !t.shape[i].isStatic() || !want[i].isStatic() || t.shape[i].size == want[i].size;
  if (!ok) {
    TensorType w{dtype, want};
    fail(what, " must be ", w.str(), ", got ", t.str());
  }
}

Dim times(int64_t k, const Dim &d) {
  return d.isStatic() ? Dim::fixed(checkedMul(k, d.size)) : Dim::unknown();
}

} // namespace

std::vector<TensorType> inferRecurrent(const Op &op) {
  const TensorType &x = operandType(op, 0), &w = operandType(op, 1), &r = operandType(op, 2);
  if (!isFloat(x.dtype) || x.rank() != 3)
    fail("X must be a 3-D float tensor, got ", x.str());
  bool lstm = op.is(OpKind::LSTM);
  int64_t gates = op.is(OpKind::RNN) ? 1 : op.is(OpKind::GRU) ? 3 : 4;
  const std::string &direction = op.getString("direction");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    fail("direction must be forward, reverse or bidirectional, got '", direction, "'");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t layout = op.getInt("layout");
  if (layout != 0 && layout != 1)
    fail("layout must be 0 or 1, got ", layout);
  for (const char *flag : {"linear_before_reset", "input_forget"})
    if (op.info().findAttr(flag) && op.getInt(flag) != 0 && op.getInt(flag) != 1)
      fail(flag, " must be 0 or 1, got ", op.getInt(flag));
  if (op.getFloat("clip") < 0 || std::isnan(op.getFloat("clip")))
    fail("clip must be > 0 (or 0: no clipping), got ", op.getFloat("clip"));
  nn::rnnActivations(op.attr("activations").strings(), op.attr("activation_alpha").floats(),
                     op.attr("activation_beta").floats(), nn::rnnDefaultActivations(gates),
                     size_t(dirs));

  if (r.rank() != 3)
    fail("R must be 3-D [num_directions, ", gates, " * hidden_size, hidden_size], got ", r.str());
  int64_t hs = op.getInt("hidden_size");
  if (hs < 0)
    fail("hidden_size must be >= 0 (0: from R), got ", hs);
  Dim h = hs > 0 ? Dim::fixed(hs) : r.shape[2];
  Dim d = Dim::fixed(dirs), seq = x.shape[layout == 0 ? 0 : 1],
      batch = x.shape[layout == 0 ? 1 : 0];
  expectShape(w, "W", {d, times(gates, h), x.shape[2]}, x.dtype);
  expectShape(r, "R", {d, times(gates, h), h}, x.dtype);
  if (const Value *b = op.operand(3))
    expectShape(b->type, "B", {d, times(2 * gates, h)}, x.dtype);
  if (const Value *lens = op.operand(4))
    expectShape(lens->type, "sequence_lens", {batch}, DType::I32);
  Shape state = layout == 0 ? Shape{d, batch, h} : Shape{batch, d, h};
  if (const Value *h0 = op.operand(5))
    expectShape(h0->type, "initial_h", state, x.dtype);
  if (const Value *c0 = op.operand(6))
    expectShape(c0->type, "initial_c", state, x.dtype);
  if (const Value *p = op.operand(7))
    expectShape(p->type, "P", {d, times(3, h)}, x.dtype);

  size_t maxResults = lstm ? 3 : 2;
  if (op.results.size() > maxResults)
    fail("has at most ", maxResults, " results, got ", op.results.size());
  std::vector<TensorType> out{
      TensorType{x.dtype, layout == 0 ? Shape{seq, d, batch, h} : Shape{batch, seq, d, h}}};
  for (size_t i = 1; i < op.results.size(); ++i)
    out.push_back(TensorType{x.dtype, state});
  return out;
}

} // namespace tc::infer
