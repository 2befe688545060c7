// autodiff: reverse-mode differentiation of main's result 0 (a float scalar:
// the loss) with respect to the trained parameters (the training record's,
// tc/IR/TrainSignature.h) or, with wrt=args, every float argument. Appends
// the backward to main as ordinary ops, built by each op kind's gradient
// rule (tc/IR/Gradient.h), and returns the gradients as results 1..n.
#include "tc/IR/Gradient.h"
#include "tc/IR/RuntimeAttrs.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

bool isFloatValue(const Value *v) { return v && isFloat(v->type.dtype); }

// Where `v` is a constant-mode Pad (zeros) along one axis only: that axis
// and where its data lies, [begin, end).
struct AxisPad {
  Value *data;
  size_t axis;
  int64_t begin, end;
};
std::optional<AxisPad> axisPad(Value *v) {
  const Op *op = v->def;
  if (!op || !op->is(OpKind::Pad) || op->operands.size() != 1 || !op->findAttr("pads") ||
      (op->findAttr("mode") && op->getString("mode") != "constant"))
    return std::nullopt;
  std::vector<int64_t> pads = op->getInts("pads");
  size_t r = v->type.rank();
  std::optional<size_t> axis;
  for (size_t d = 0; d < r && pads.size() == 2 * r; ++d) {
    if (pads[d] < 0 || pads[r + d] < 0 || ((pads[d] || pads[r + d]) && axis))
      return std::nullopt;
    if (pads[d] || pads[r + d])
      axis = d;
  }
  if (!axis || !v->type.shape[*axis].isStatic())
    return std::nullopt;
  int64_t extent = v->type.shape[*axis].size;
  return AxisPad{op->operand(0), *axis, pads[*axis], extent - pads[r + *axis]};
}

// Two cotangents that are zero-padded pieces of one axis (a packed qkv's
// q, k and v gradients, from Gather's rule): side by side, one Concat of the
// pieces; over the same elements, their sum; either padded where it does
// not reach the ends, so later pieces join it too -- not a sum of mostly
// zeros. Null for other cotangents.
Value *joinPads(GradBuilder &b, Value *x, Value *y) {
  std::optional<AxisPad> px = axisPad(x), py = axisPad(y);
  if (!px || !py || px->axis != py->axis)
    return nullptr;
  size_t axis = px->axis;
  int64_t extent = x->type.shape[axis].size;
  if (px->begin == py->begin && px->end == py->end)
    return b.padAxis(b.add(px->data, py->data), axis, px->begin, extent - px->end);
  if (py->end == px->begin)
    std::swap(px, py);
  if (px->end != py->begin)
    return nullptr;
  std::vector<Value *> parts;
  for (Value *d : {px->data, py->data}) // nested joins: one Concat
    if (d->def && d->def->is(OpKind::Concat) && d->def->getInt("axis") == int64_t(axis))
      parts.insert(parts.end(), d->def->operands.begin(), d->def->operands.end());
    else
      parts.push_back(d);
  Value *joined = b.op(OpKind::Concat, parts, {{"axis", Attribute(int64_t(axis))}});
  return b.padAxis(joined, axis, px->begin, extent - py->end);
}

// The values a cotangent must reach: float values that depend on a `wrt`
// value and on which the loss depends.
std::unordered_set<const Value *> activeValues(const Function &f, const std::vector<Value *> &wrt,
                                               const Value *loss) {
  std::unordered_set<const Value *> fromWrt(wrt.begin(), wrt.end());
  for (const auto &op : f.ops) {
    bool reached = false;
    for (const Value *v : op->operands)
      reached |= v && fromWrt.count(v);
    if (reached)
      for (const Value *r : op->results)
        if (isFloatValue(r))
          fromWrt.insert(r);
  }
  std::unordered_set<const Value *> toLoss{loss};
  for (auto it = f.ops.rbegin(); it != f.ops.rend(); ++it) {
    bool feeds = false;
    for (const Value *r : (*it)->results)
      feeds |= toLoss.count(r) != 0;
    if (feeds)
      for (const Value *v : (*it)->operands)
        if (isFloatValue(v))
          toLoss.insert(v);
  }
  std::unordered_set<const Value *> active;
  for (const Value *v : fromWrt)
    if (toLoss.count(v))
      active.insert(v);
  return active;
}

// Run-time attribute operands that are constants by now (a Resize's sizes or
// a Pad's pads computed from shapes that --dim fixed) become the attributes
// they stand for, the form the gradient rules read.
void bindConstantRuntimeAttrs(Op &op) {
  if (!hasRuntimeAttrOperands(op))
    return;
  Function scratch;
  if (const Op *bound = bindRuntimeAttrs(scratch, op)) {
    op.attrs = bound->attrs;
    op.operands = bound->operands;
  }
}

} // namespace

bool runAutodiffPass(Module &m, const PassOptions &opts) {
  Function &f = m.main();
  std::optional<TrainSignature> sig = trainSignature(m);
  const std::string &wrtOpt = opts.get("wrt");
  if (f.results.empty())
    fail("autodiff: @", f.name, " returns nothing to differentiate");
  Value *loss = f.results[0];
  if (!isFloat(loss->type.dtype) ||
      staticNumElements(loss->type.shape) != std::optional<int64_t>(1))
    fail("autodiff: @", f.name, "'s first result %", loss->name,
         " must be a float scalar (the loss), not ", loss->type.str(),
         " (tc-opt --loss= appends one)");
  std::vector<Value *> wrt;
  if (wrtOpt == "params") {
    if (!sig || sig->params == 0)
      fail("autodiff: the module has no trained parameters (run train-state first, or wrt=args)");
    if (sig->grads || sig->step)
      fail("autodiff: the module is already differentiated");
    size_t first = f.args.size() - sig->state;
    wrt.assign(f.args.begin() + std::ptrdiff_t(first),
               f.args.begin() + std::ptrdiff_t(first + sig->params));
  } else if (wrtOpt == "args") {
    for (Value *a : f.args)
      if (isFloatValue(a))
        wrt.push_back(a);
  } else {
    fail("autodiff: wrt must be params or args, not '", wrtOpt, "'");
  }
  std::optional<OpKind> broken;
  if (const std::string &b = opts.get("break"); !b.empty()) {
    const OpInfo *info = lookupOp(b);
    if (!info)
      fail("autodiff: break names no op '", b, "'");
    broken = info->kind;
  }

  std::unordered_set<const Value *> active = activeValues(f, wrt, loss);
  std::unordered_map<const Value *, Value *> cot;
  Op seedOp(OpKind::Identity);
  seedOp.results.push_back(loss);
  GradBuilder seed(f, seedOp);
  // The seed: 1, or the loss scale (fp16 training: the gradients come out
  // scaled, append-optimizer unscales them and skips a step that overflowed).
  Value *one = seed.scalar(1.0, loss);
  if (std::string mode = opts.get("loss-scale"); mode != "none") {
    if (wrtOpt != "params")
      fail("autodiff: loss-scale goes with wrt=params (a training module)");
    double initScale = mode == "dynamic" ? opts.getNumber("autodiff", "init-scale") : [&] {
      try {
        size_t used = 0;
        double v = std::stod(mode, &used);
        if (used == mode.size() && v > 0 && std::isfinite(v))
          return v;
      } catch (const std::exception &) {
      }
      fail("autodiff: loss-scale must be none, dynamic or a positive number, not '", mode, "'");
    }();
    std::vector<std::string> keys = stateKeys(m);
    Function &init = *trainInit(m);
    GradBuilder ib(init, seedOp, "amp");
    auto addState = [&](const char *key, double value) {
      Value *a = f.addArgument(f.uniqueName(key), TensorType{DType::F32, {}});
      init.results.push_back(ib.scalar(value, a));
      keys.push_back(key);
      ++sig->state;
      return a;
    };
    Value *scale = addState(kLossScaleKey, initScale);
    if (mode == "dynamic")
      addState(kGrowthTrackerKey, 0.0);
    setStateKeys(m, keys);
    one = seed.castTo(scale, loss->type.dtype);
  }
  cot[loss] = seed.reshape(one, seed.dims(loss));

  for (size_t k = f.ops.size(); k-- > 0;) {
    Op &op = *f.ops[k];
    std::vector<Value *> rg;
    bool any = false;
    for (Value *r : op.results) {
      auto it = cot.find(r);
      rg.push_back(it == cot.end() ? nullptr : it->second);
      any |= it != cot.end();
    }
    std::vector<bool> wanted;
    bool need = false;
    for (Value *v : op.operands) {
      wanted.push_back(v && active.count(v));
      need |= wanted.back();
    }
    if (!any || !need)
      continue;
    bindConstantRuntimeAttrs(op);
    wanted.clear();
    for (Value *v : op.operands)
      wanted.push_back(v && active.count(v));
    GradFn rule = gradientRule(op.kind);
    if (!rule)
      fail(op.where(), ": no gradient rule for ", op.name(),
           " (the parameters before it cannot be trained: --freeze them; docs/architecture.md, "
           "\"Add an op "
           "with its gradient\")");
    GradBuilder b(f, op);
    // Rules may assume a cotangent for result 0; the others are optional.
    if (!rg[0])
      rg[0] = b.zerosLike(op.result());
    std::vector<Value *> og(op.operands.size(), nullptr);
    rule(b, rg, wanted, og);
    for (size_t i = 0; i < og.size(); ++i) {
      if (!wanted[i] || !og[i])
        continue;
      Value *g = og[i];
      const Value *v = op.operand(i);
      if (!(g->type.shape == v->type.shape) || g->type.dtype != v->type.dtype)
        fail(op.where(), ": internal: the gradient rule gave ", g->type.str(), " for %", v->name,
             " (", v->type.str(), ")");
      if (broken && op.kind == *broken)
        g = b.scale(g, 1.01); // a deliberately wrong rule: the gradient check's own test
      auto [it, fresh] = cot.emplace(v, g);
      if (!fresh) {
        Value *joined = joinPads(b, it->second, g);
        it->second = joined ? joined : b.add(it->second, g);
      }
    }
  }

  // The gradients follow the loss, in wrt order (zeros where none flows),
  // each through an Identity named after its parameter: canonicalize drops
  // it and the gradient keeps the name.
  std::vector<Value *> grads;
  for (Value *w : wrt) {
    auto it = cot.find(w);
    Value *g = it != cot.end() ? it->second : seed.zerosLike(w);
    grads.push_back(
        f.addOp(OpKind::Identity, {g}, {f.uniqueName(w->name + "_grad")}, {g->type}, seed.loc())
            ->result());
  }
  f.results.insert(f.results.begin() + 1, grads.begin(), grads.end());
  if (wrtOpt == "params") {
    sig->grads = grads.size();
    setTrainSignature(m, *sig);
  }
  return true;
}

} // namespace tc
