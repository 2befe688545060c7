// What each op the Reduction family anchors computes, as data: the row
// statistics (one pass over the row each) and the anchor's value from them
// (Reduction.cpp runs the passes). Reduce* and global pools give a value
// per row; the normalizations (Softmax / LogSoftmax / LayerNormalization
// over any axes, Instance-, Group-, Lp- and MeanVarianceNormalization) one
// per element, read back over the row; ArgMax / ArgMin an index per row.
#include "Families.h"

namespace tc::kernels {

namespace {

int64_t axisOf(const Op &op, size_t rank) {
  int64_t a = op.getInt("axis");
  return a < 0 ? a + int64_t(rank) : a;
}

bool isNormalization(OpKind k) {
  switch (k) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::LayerNormalization:
  case OpKind::InstanceNormalization:
  case OpKind::GroupNormalization:
  case OpKind::LpNormalization:
  case OpKind::MeanVarianceNormalization: return true;
  default: return false;
  }
}

// Mean and 1 / sqrt(variance + eps) as s0, s1: LayerNorm's statistics.
void meanRstd(ReducePlan &p, double eps) {
  p.stats.push_back({"x", "tc_add_op", "0", "acc / (A)L"});
  p.stats.push_back({"(x - s0) * (x - s0)", "tc_add_op", "0",
                     "(A)1 / tc_sqrt(acc / (A)L + " + floatLiteral(eps, DType::F64) + ")"});
  p.value = "(x - s0) * s1";
  p.centered = true;
}

} // namespace

bool isRowStatistic(const Value *v) {
  return v && v->def && v->def->is(OpKind::LayerNormalization) && v->resultIndex > 0;
}

bool isReduceAnchor(const Op &op) {
  switch (op.kind) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ReduceL1:
  case OpKind::ReduceL2:
  case OpKind::ReduceSumSquare:
  case OpKind::ReduceLogSum:
  case OpKind::ReduceLogSumExp:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
  case OpKind::ArgMax:
  case OpKind::ArgMin:
  case OpKind::TopK: return true;
  default: return isNormalization(op.kind);
  }
}

std::optional<ReducePlan> reducePlan(const KernelContext &c, const Op &op) {
  const Value *x = op.operand(0);
  size_t r = x->type.rank();
  ReducePlan p;
  p.reduced.assign(r, false);
  auto fail = [&](const std::string &what) {
    c.noKernel(std::string(op.name()) + " " + what);
    return std::nullopt;
  };
  auto axis = [&]() -> bool {
    int64_t a = axisOf(op, r);
    if (a < 0 || a >= int64_t(r))
      return false;
    p.reduced[size_t(a)] = true;
    return true;
  };
  auto fromAxis = [&](size_t first) {
    for (size_t d = first; d < r; ++d)
      p.reduced[d] = true;
  };
  if (op.is(OpKind::TopK)) {
    // The k best of each row in registers, by insertion (small k). A k
    // computed at run time is the result's extent along the axis (the CPU
    // runtime gives a lone op's kernel the shape rule's sizes), at most the
    // axis' static extent, which sizes the registers.
    if (!axis())
      return fail("over an axis out of range");
    int64_t k = 0;
    if (!op.operand(1)) {
      k = op.getInt("k");
    } else {
      const Dim &d = x->type.shape[size_t(axisOf(op, r))];
      if (!d.isStatic())
        return fail("with a run-time k over an axis of run-time extent");
      k = d.size;
      p.runTimeK = true;
    }
    if (k < 1 || k > kMaxTopK)
      return fail("with k above " + std::to_string(kMaxTopK));
    p.topK = k;
    p.arg = op.getInt("largest") != 0 ? 1 : -1;
    return p;
  }
  if (op.results.size() != 1 && !op.is(OpKind::LayerNormalization))
    return fail("with several results");
  if (op.is(OpKind::GlobalAveragePool) || op.is(OpKind::GlobalMaxPool)) {
    fromAxis(2);
  } else if (op.name().rfind("Reduce", 0) == 0) { // attribute axes, none: all
    if (op.operands.size() > 1 && op.operand(1))
      return fail("with run-time axes");
    p.reduced.assign(r, op.getInts("axes").empty());
    for (int64_t a : op.getInts("axes")) {
      if (a < -int64_t(r) || a >= int64_t(r))
        return fail("over an axis out of range");
      p.reduced[size_t(a < 0 ? a + int64_t(r) : a)] = true;
    }
  }
  switch (op.kind) {
  case OpKind::ReduceSum: p.stats = {{"x", "tc_add_op", "0", "acc"}}; break;
  case OpKind::ReduceMean:
  case OpKind::GlobalAveragePool: p.stats = {{"x", "tc_add_op", "0", "acc / (A)L"}}; break;
  case OpKind::ReduceProd: p.stats = {{"x", "tc_mul_op", "1", "acc"}}; break;
  case OpKind::ReduceMax:
  case OpKind::GlobalMaxPool: p.stats = {{"x", "tc_maxn_op", "-inf", "acc"}}; break;
  case OpKind::ReduceMin: p.stats = {{"x", "tc_minn_op", "inf", "acc"}}; break;
  case OpKind::ReduceL1: p.stats = {{"tc_abs(x)", "tc_add_op", "0", "acc"}}; break;
  case OpKind::ReduceL2: p.stats = {{"x * x", "tc_add_op", "0", "tc_sqrt(acc)"}}; break;
  case OpKind::ReduceSumSquare: p.stats = {{"x * x", "tc_add_op", "0", "acc"}}; break;
  case OpKind::ReduceLogSum: p.stats = {{"x", "tc_add_op", "0", "tc_log(acc)"}}; break;
  case OpKind::ReduceLogSumExp:
    // The maximum as the shift; none (all -inf, or an inf) when not finite.
    p.stats = {{"x", "tc_maxn_op", "-inf", "acc - acc == (A)0 || acc != acc ? acc : (A)0"},
               {"tc_exp(x - s0)", "tc_add_op", "0", "tc_log(acc) + s0"}};
    p.value = "s1";
    p.online = true;
    break;
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    if (!axis())
      return fail("over an axis out of range");
    p.arg = op.is(OpKind::ArgMax) ? 1 : -1;
    p.selectLast = op.getInt("select_last_index") != 0;
    return p;
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    if (!axis())
      return fail("over an axis out of range");
    p.stats = {{"x", "tc_max_op", "-inf", "acc"}, {"tc_exp(x - s0)", "tc_add_op", "0", "acc"}};
    p.value = op.is(OpKind::Softmax) ? "tc_exp(x - s0) / s1" : "x - s0 - tc_log(s1)";
    break;
  case OpKind::LpNormalization: {
    if (!axis())
      return fail("over an axis out of range");
    int64_t pw = op.getInt("p");
    if (pw != 1 && pw != 2)
      return fail("with p other than 1 or 2");
    p.stats = {
        {pw == 1 ? "tc_abs(x)" : "x * x", "tc_add_op", "0", pw == 1 ? "acc" : "tc_sqrt(acc)"}};
    p.value = "s0 == (A)0 ? (A)0 : x / s0"; // an all-zero line gives zeros
    break;
  }
  case OpKind::MeanVarianceNormalization:
    for (int64_t a : op.getInts("axes")) {
      if (a < -int64_t(r) || a >= int64_t(r))
        return fail("over an axis out of range");
      p.reduced[size_t(a < 0 ? a + int64_t(r) : a)] = true;
    }
    p.stats = {{"x", "tc_add_op", "0", "acc / (A)L"},
               {"(x - s0) * (x - s0)", "tc_add_op", "0", "tc_sqrt(acc / (A)L) + (A)1e-9"}};
    p.centered = true;
    p.value = "(x - s0) / s1";
    break;
  case OpKind::LayerNormalization: {
    int64_t a = axisOf(op, r);
    if (a < 0 || a >= int64_t(r))
      return fail("over an axis out of range");
    fromAxis(size_t(a));
    meanRstd(p, op.getFloat("epsilon"));
    p.rowValues = {"s0", "s1"}; // Mean, InvStdDev
    // Scale and B broadcast over the normalized dims: element j of the row
    // reads j % size, when (leading 1s dropped) they are its trailing dims.
    for (size_t k = 1; k < op.operands.size(); ++k) {
      const Value *v = op.operand(k);
      if (!v)
        continue;
      const Shape &s = v->type.shape;
      size_t lead = 0;
      while (lead < s.size() && s[lead].isStatic() && s[lead].size == 1)
        ++lead;
      if (s.size() - lead > r - size_t(a))
        return fail("parameters of more dims than it normalizes");
      for (size_t d = lead; d < s.size(); ++d)
        if (!(s[d] == x->type.shape[r - s.size() + d]) || s[d].isUnknown())
          return fail("parameters that are not the normalized dims' trailing ones");
      std::string n = "(int64_t)1";
      for (size_t d = lead; d < s.size(); ++d)
        n += " * " + c.dim(x, r - s.size() + d);
      p.params.push_back({v, "j % (" + n + ")"});
      p.value += std::string(k == 1 ? " * " : " + ") + "p" + std::to_string(k - 1);
    }
    break;
  }
  case OpKind::InstanceNormalization:
  case OpKind::GroupNormalization: {
    if (r < 2)
      return fail("of rank below 2");
    meanRstd(p, op.getFloat("epsilon"));
    std::string C = c.dim(x, 1), hw = "(int64_t)1";
    for (size_t d = 2; d < r; ++d)
      hw += " * " + c.dim(x, d);
    std::string channel = "o % " + C;
    if (op.is(OpKind::GroupNormalization)) {
      // Rows of C / G channels: X viewed as [N, G, C / G, spatial...].
      int64_t G = op.getInt("num_groups");
      if (G < 1 || !x->type.shape[1].isStatic() || x->type.shape[1].size % G)
        return fail("whose groups do not divide a static channel count");
      std::string g = std::to_string(G);
      p.viewDims = {c.dim(x, 0), g, "(" + C + " / " + g + ")"};
      for (size_t d = 2; d < r; ++d)
        p.viewDims.push_back(c.dim(x, d));
      p.reduced.assign(p.viewDims.size(), true);
      p.reduced[0] = p.reduced[1] = false;
      channel = "(o % " + g + ") * (" + C + " / " + g + ") + j / (" + hw + ")";
    } else {
      fromAxis(2);
    }
    for (size_t k = 1; k < 3; ++k) {
      const Value *v = op.operand(k);
      if (!v || v->type.rank() != 1 || !(v->type.shape[0] == x->type.shape[1]))
        return fail("whose scale or bias is not one per channel");
      p.params.push_back({v, channel});
    }
    p.value += " * p0 + p1";
    break;
  }
  default: return fail("is no reduction");
  }
  p.perElement = isNormalization(op.kind);
  return p;
}

} // namespace tc::kernels
