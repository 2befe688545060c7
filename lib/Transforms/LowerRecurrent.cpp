// RNN, GRU and LSTM become ops every backend compiles (tc-opt -O1+ before
// fold-constants, and the --train pipeline before autodiff, which then
// differentiates the steps like any other ops). Layouts and gate order:
// Ops.def. With a static sequence length T, per direction d:
//
//   XW = MatMul(X, W^T) + (Wb + Rb)        all steps and directions at once
//   per step t (forward 0..T-1, reverse T-1..0):
//     hr = MatMul(h, R_d^T)                skipped while h is the zero state
//     the gates' pointwise math over Slice(XW, t, d, gate) + Slice(hr, gate)
//     with sequence_lens: m = t < len[n]; h = Where(m, h', h), y = Where(m, h', 0)
//   Y = Concat of the steps' y, Y_h / Y_c the last states
//
// The input projection of every step is one GEMM; what stays per step is the
// recurrence's GEMM and the gate math, which fusion makes one kernel (its
// Slices read in place). Rb joins Wb in XW's bias except GRU's h-gate Rb with
// linear_before_reset, which the reset gate multiplies. A GRU without
// linear_before_reset needs a second GEMM per step, (r * h) Rh^T. Batch-major
// (layout 1) X is transposed to time-major once, Y and the states back once.
// The mask is computed on the device from sequence_lens (one compare of
// [T, N, 1]), so a run-time sequence_lens stays a kernel input.
//
// What stays the op (then a host step, named by codegen): a sequence length
// or hidden size known only at run time (the steps are unrolled).
#include "tc/IR/OpTable.h"
#include "tc/IR/RecurrentMath.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <map>

namespace tc {

namespace {

bool isRecurrent(const Op &o) {
  return o.is(OpKind::RNN) || o.is(OpKind::GRU) || o.is(OpKind::LSTM);
}

using Attrs = std::vector<std::pair<std::string, Attribute>>;

class RecurrentLowering {
public:
  RecurrentLowering(Function &f, const Op &rnn)
      : f_(f), rnn_(rnn), loc_(rnn.loc), base_(rnn.result()->name),
        dtype_(rnn.operand(0)->type.dtype) {
    batchMajor_ = rnn.getInt("layout") == 1;
    const Shape &x = rnn.operand(0)->type.shape;
    T_ = x[batchMajor_ ? 1 : 0].size;
    H_ = rnn.operand(2)->type.shape[2].size;
    G_ = rnn.is(OpKind::RNN) ? 1 : rnn.is(OpKind::GRU) ? 3 : 4;
    D_ = rnn.getString("direction") == "bidirectional" ? 2 : 1;
    std::vector<std::string> defaults = nn::rnnDefaultActivations(G_);
    perDirection_ = defaults.size();
    acts_ =
        nn::rnnActivations(rnn.attr("activations").strings(), rnn.attr("activation_alpha").floats(),
                           rnn.attr("activation_beta").floats(), defaults, size_t(D_));
    clip_ = rnn.getFloat("clip");
  }

  // Adds the ops; returns the values of the op's results, in order.
  std::vector<Value *> lower();

private:
  Value *op(OpKind k, std::vector<Value *> ins, Attrs attrs = {}) {
    return addInferredOp(f_, k, std::move(ins), std::move(attrs), base_, loc_);
  }
  Value *add(Value *a, Value *b) { return op(OpKind::Add, {a, b}); }
  Value *mul(Value *a, Value *b) { return op(OpKind::Mul, {a, b}); }
  Value *ints(const std::vector<int64_t> &v); // 1-D i64 constants, one per content
  Value *scalar(double v);                    // X's type, one per value
  Value *slice(Value *v, const std::vector<int64_t> &axes, const std::vector<int64_t> &starts,
               const std::vector<int64_t> &ends) {
    return op(OpKind::Slice, {v, ints(starts), ints(ends), ints(axes)});
  }
  Value *reshape(Value *v, const std::vector<int64_t> &shape) {
    return op(OpKind::Reshape, {v, ints(shape)});
  }
  Value *transpose(Value *v, std::vector<int64_t> perm) {
    return op(OpKind::Transpose, {v}, {{"perm", Attribute(std::move(perm))}});
  }
  // v [1, N, K] times m^T (m [M, K]): [1, N, M].
  Value *timesTransposed(Value *v, Value *m) {
    return op(OpKind::MatMul, {v, m}, {{"transB", Attribute(int64_t(1))}});
  }
  Value *concat(std::vector<Value *> parts, int64_t axis);
  Value *activate(const nn::RnnActivation &a, Value *x);
  Value *clip(Value *x) {
    return clip_ > 0 ? op(OpKind::Clip, {x, scalar(-clip_), scalar(clip_)}) : x;
  }
  // A state operand (initial_h / initial_c) of direction d as [1, N, H].
  Value *initialState(Value *s, int64_t d);

  // One step of direction d: the new h (and c) from the old ones (null: zero).
  struct State {
    Value *h = nullptr, *c = nullptr;
  };
  State step(int64_t d, int64_t t, const State &s);

  Function &f_;
  const Op &rnn_;
  Location loc_;
  std::string base_;
  DType dtype_;
  bool batchMajor_ = false;
  int64_t T_ = 0, H_ = 0, G_ = 0, D_ = 0;
  size_t perDirection_ = 0;
  std::vector<nn::RnnActivation> acts_;
  double clip_ = 0;
  std::map<std::vector<int64_t>, Value *> ints_;
  std::map<double, Value *> scalars_;
  // XW [T, N, D*G*H] and the mask [T, N, 1]; per direction: the R read by
  // the step's product (GRU without linear_before_reset: its z, r rows; rh_
  // the h rows), GRU's h-gate Rb, the 3 peepholes (null: absent).
  Value *xw_ = nullptr, *mask_ = nullptr;
  std::vector<Value *> r_, rh_, rbh_, peep_;
};

Value *RecurrentLowering::ints(const std::vector<int64_t> &v) {
  Value *&c = ints_[v];
  if (!c)
    c = addIntsConstant(f_, base_ + "_ints", v, loc_);
  return c;
}

Value *RecurrentLowering::scalar(double v) {
  Value *&c = scalars_[v];
  if (!c) {
    HostTensor t(dtype_, {});
    t.setDouble(0, v);
    c = f_.addConstant(f_.uniqueName(base_ + "_scalar"), t.type(),
                       TensorData::copyOf(t.bytes(), t.byteSize()), loc_);
  }
  return c;
}

// The parts joined along `axis`, at most kConcatParts per Concat: a kernel
// reads each part through a pointer of its own (CUDA: 4 KB of parameters),
// and a Concat that fusion inlines selects its part per element.
Value *RecurrentLowering::concat(std::vector<Value *> parts, int64_t axis) {
  constexpr size_t kConcatParts = 32;
  while (parts.size() > 1) {
    std::vector<Value *> joined;
    for (size_t at = 0; at < parts.size(); at += kConcatParts) {
      std::vector<Value *> chunk(parts.begin() + std::ptrdiff_t(at),
                                 parts.begin() +
                                     std::ptrdiff_t(std::min(parts.size(), at + kConcatParts)));
      joined.push_back(chunk.size() == 1 ? chunk[0]
                                         : op(OpKind::Concat, chunk, {{"axis", Attribute(axis)}}));
    }
    parts = std::move(joined);
  }
  return parts[0];
}

// The ONNX activations by the ops that compute them (RecurrentMath.h).
Value *RecurrentLowering::activate(const nn::RnnActivation &a, Value *x) {
  using F = nn::RnnActivation;
  auto alpha = [&] { return Attrs{{"alpha", Attribute(a.alpha)}}; };
  switch (a.fn) {
  case F::Relu: return op(OpKind::Relu, {x});
  case F::Tanh: return op(OpKind::Tanh, {x});
  case F::Sigmoid: return op(OpKind::Sigmoid, {x});
  case F::Affine: return add(mul(x, scalar(a.alpha)), scalar(a.beta));
  case F::LeakyRelu: return op(OpKind::LeakyRelu, {x}, alpha());
  case F::ThresholdedRelu: return op(OpKind::ThresholdedRelu, {x}, alpha());
  case F::ScaledTanh: return mul(op(OpKind::Tanh, {mul(x, scalar(a.beta))}), scalar(a.alpha));
  case F::HardSigmoid:
    return op(OpKind::HardSigmoid, {x},
              {{"alpha", Attribute(a.alpha)}, {"beta", Attribute(a.beta)}});
  case F::Elu: return op(OpKind::Elu, {x}, alpha());
  case F::Softsign: return op(OpKind::Softsign, {x});
  case F::Softplus: return op(OpKind::Softplus, {x});
  }
  fail(loc_.str(), " (", rnn_.name(), "): internal: an activation without a lowering");
}

Value *RecurrentLowering::initialState(Value *s, int64_t d) {
  if (!s)
    return nullptr;
  if (!batchMajor_) // [D, N, H]
    return slice(s, {0}, {d}, {d + 1});
  return transpose(slice(s, {1}, {d}, {d + 1}), {1, 0, 2}); // [N, D, H]
}

RecurrentLowering::State RecurrentLowering::step(int64_t d, int64_t t, const State &s) {
  const nn::RnnActivation *act = &acts_[size_t(d) * perDirection_];
  const int64_t GH = G_ * H_;
  // Gate g's input projection at step t, [1, N, H]: step t's rows are a
  // view of XW, so the steps' kernels read the same offsets and are equal
  // (codegen compiles one for all).
  Value *xwt = slice(xw_, {0}, {t}, {t + 1});
  auto xw = [&](int64_t g) {
    int64_t at = d * GH + g * H_;
    return slice(xwt, {2}, {at}, {at + H_});
  };
  // The recurrence's product for the gates in r (all but GRU's h gate
  // without linear_before_reset); null while h is the zero state.
  Value *hr = s.h ? timesTransposed(s.h, r_[size_t(d)]) : nullptr;
  auto pre = [&](int64_t g) {
    Value *x = xw(g);
    return hr ? add(x, slice(hr, {2}, {g * H_}, {(g + 1) * H_})) : x;
  };
  State n;
  if (G_ == 1) {
    n.h = activate(act[0], clip(pre(0)));
  } else if (G_ == 3) { // z, r, h
    Value *z = activate(act[0], clip(pre(0)));
    Value *r = activate(act[0], clip(pre(1)));
    Value *cand = xw(2);
    if (rnn_.getInt("linear_before_reset")) { // r * (h Rh^T + Rbh)
      Value *hh = hr ? slice(hr, {2}, {2 * H_}, {3 * H_}) : nullptr;
      if (Value *rb = rbh_[size_t(d)])
        hh = hh ? add(hh, rb) : rb;
      if (hh)
        cand = add(cand, mul(r, hh));
    } else if (s.h) { // (r * h) Rh^T; Rbh is in XW's bias
      cand = add(cand, timesTransposed(mul(r, s.h), rh_[size_t(d)]));
    }
    cand = activate(act[1], clip(cand));
    Value *keep = op(OpKind::Sub, {scalar(1), z});
    n.h = mul(keep, cand);
    if (s.h)
      n.h = add(n.h, mul(z, s.h));
  } else { // i, o, f, c; peepholes P_i, P_o, P_f read c
    Value *const *p = &peep_[size_t(d) * 3];
    auto peep = [&](Value *x, int k, Value *c) { return p[k] && c ? add(x, mul(p[k], c)) : x; };
    Value *in = activate(act[0], clip(peep(pre(0), 0, s.c)));
    Value *forget = rnn_.getInt("input_forget") ? op(OpKind::Sub, {scalar(1), in})
                                                : activate(act[0], clip(peep(pre(2), 2, s.c)));
    Value *cell = mul(in, activate(act[1], clip(pre(3))));
    n.c = s.c ? add(mul(forget, s.c), cell) : cell;
    Value *out = activate(act[0], clip(peep(pre(1), 1, n.c)));
    n.h = mul(out, activate(act[2], n.c));
  }
  return n;
}

std::vector<Value *> RecurrentLowering::lower() {
  Value *x = rnn_.operand(0), *w = rnn_.operand(1), *r = rnn_.operand(2), *b = rnn_.operand(3);
  Value *lens = rnn_.operand(4), *h0 = rnn_.operand(5), *c0 = rnn_.operand(6), *p = rnn_.operand(7);
  const int64_t GH = G_ * H_, I = x->type.shape[2].size;
  const bool gru = G_ == 3, lbr = gru && rnn_.getInt("linear_before_reset");

  // Every step's input projection: [T, N, D*G*H].
  Value *xs = batchMajor_ ? transpose(x, {1, 0, 2}) : x;
  xw_ = timesTransposed(xs, reshape(w, {D_ * GH, I}));
  if (b) { // Wb + Rb, but GRU's h-gate Rb with linear_before_reset stays per step
    Value *wb = slice(b, {1}, {0}, {GH}), *rb = slice(b, {1}, {GH}, {2 * GH});
    Value *sum = lbr ? op(OpKind::Concat,
                          {add(slice(wb, {1}, {0}, {2 * H_}), slice(rb, {1}, {0}, {2 * H_})),
                           slice(wb, {1}, {2 * H_}, {GH})},
                          {{"axis", Attribute(int64_t(1))}})
                     : add(wb, rb);
    xw_ = add(xw_, reshape(sum, {D_ * GH}));
  }
  for (int64_t d = 0; d < D_; ++d) {
    Value *rd = reshape(slice(r, {0}, {d}, {d + 1}), {GH, H_});
    r_.push_back(gru && !lbr ? slice(rd, {0}, {0}, {2 * H_}) : rd);
    rh_.push_back(gru && !lbr ? slice(rd, {0}, {2 * H_}, {GH}) : nullptr);
    rbh_.push_back(lbr && b ? slice(b, {0, 1}, {d, GH + 2 * H_}, {d + 1, 2 * GH}) : nullptr);
    for (int64_t k = 0; k < 3; ++k)
      peep_.push_back(p ? slice(p, {0, 1}, {d, k * H_}, {d + 1, (k + 1) * H_}) : nullptr);
  }
  // Steps at or past a sequence's length keep its state and write 0:
  // mask [T, N, 1] = t < len[n], on the device.
  if (lens) {
    HostTensor iota(DType::I32, {T_, 1, 1});
    for (int64_t t = 0; t < T_; ++t)
      iota.setInt(t, t);
    Value *steps = f_.addConstant(f_.uniqueName(base_ + "_steps"), iota.type(),
                                  TensorData::copyOf(iota.bytes(), iota.byteSize()), loc_);
    mask_ = op(OpKind::Less, {steps, op(OpKind::Unsqueeze, {lens},
                                        {{"axes", Attribute(std::vector<int64_t>{0, 2})}})});
  }

  std::vector<Value *> ys, hs, cs; // per direction: Y [T, 1, N, H], the last h and c
  for (int64_t d = 0; d < D_; ++d) {
    bool reverse = rnn_.getString("direction") == "reverse" || d == 1;
    State s{initialState(h0, d), G_ == 4 ? initialState(c0, d) : nullptr};
    std::vector<Value *> y(static_cast<size_t>(T_));
    for (int64_t k = 0; k < T_; ++k) {
      int64_t t = reverse ? T_ - 1 - k : k;
      State n = step(d, t, s);
      if (!mask_) {
        y[size_t(t)] = n.h;
        s = n;
        continue;
      }
      Value *m = slice(mask_, {0}, {t}, {t + 1});
      Value *zero = scalar(0);
      y[size_t(t)] = op(OpKind::Where, {m, n.h, zero});
      s.h = s.h ? op(OpKind::Where, {m, n.h, s.h}) : y[size_t(t)];
      if (n.c)
        s.c = op(OpKind::Where, {m, n.c, s.c ? s.c : zero});
    }
    Value *yd = concat(y, 0);
    ys.push_back(op(OpKind::Unsqueeze, {yd}, {{"axes", Attribute(std::vector<int64_t>{1})}}));
    hs.push_back(s.h);
    cs.push_back(s.c);
  }
  Value *y = concat(ys, 1); // [T, D, N, H]
  std::vector<Value *> out{batchMajor_ ? transpose(y, {2, 0, 1, 3}) : y};
  for (auto *states : {&hs, &cs}) {
    if (out.size() == rnn_.results.size())
      break;
    Value *s = concat(*states, 0); // [D, N, H]
    out.push_back(batchMajor_ ? transpose(s, {1, 0, 2}) : s);
  }
  return out;
}

} // namespace

std::string recurrentObstacle(const Op &rnn) {
  const Shape &x = rnn.operand(0)->type.shape;
  const Dim &steps = x[rnn.getInt("layout") == 1 ? 1 : 0];
  if (!steps.isStatic())
    return "a sequence length known only at run time (the lowering unrolls the time steps)";
  if (steps.size == 0)
    return "no time steps";
  if (!rnn.operand(2)->type.shape[2].isStatic() || !x[2].isStatic())
    return "a hidden or input size known only at run time";
  return "";
}

bool runLowerRecurrentPass(Module &m, const PassOptions &) {
  bool changed = false;
  for (auto &fp : m.functions) {
    Function &f = *fp;
    if (std::none_of(f.ops.begin(), f.ops.end(), [](const auto &o) { return isRecurrent(*o); }))
      continue;
    std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
    f.ops.clear();
    for (auto &o : old) {
      if (!isRecurrent(*o) || !recurrentObstacle(*o).empty()) {
        f.ops.push_back(std::move(o));
        continue;
      }
      std::vector<Value *> ys = RecurrentLowering(f, *o).lower();
      for (size_t i = 0; i < o->results.size(); ++i)
        adoptValue(o->result(i), ys[i], &f);
      changed = true;
    }
    eraseDeadOps(f);
    f.removeUnusedConstants();
  }
  return changed;
}

} // namespace tc
