// checkGradients (tc/Transforms/GradCheck.h): the module copied into f64,
// analytic gradients from one run, each sampled element's finite difference
// from two more.
#include "tc/Transforms/GradCheck.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include "tc/Support/Float16.h"
#include "tc/Support/MemoryBuffer.h"
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>

namespace tc {

namespace {

bool lowFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

double elementAsDouble(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F32: {
    float x;
    std::memcpy(&x, p, 4);
    return x;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  default: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
  }
}

// Every float value, constant and type attribute of `m` in f64.
void widenToF64(Module &m) {
  for (auto &fn : m.functions) {
    auto widen = [](Value *v) {
      if (!lowFloat(v->type.dtype))
        return;
      if (v->data) {
        size_t n = v->data->size / dtypeSize(v->type.dtype);
        std::vector<double> d(n);
        for (size_t i = 0; i < n; ++i)
          d[i] = elementAsDouble(v->type.dtype, v->data->ptr + i * dtypeSize(v->type.dtype));
        v->data = TensorData::copyOf(d.data(), n * 8);
      }
      v->type.dtype = DType::F64;
    };
    for (Value *a : fn->args)
      widen(a);
    for (Value *c : fn->constants)
      widen(c);
    for (auto &op : fn->ops) {
      for (Value *r : op->results)
        widen(r);
      for (auto &[name, a] : op->attrs)
        if (a.kind() == AttrKind::Type && lowFloat(a.type()))
          a = Attribute(DType::F64);
      // A float type attribute left at its default (LayerNormalization's
      // stash_type) too.
      for (const AttrSpec &spec : opInfo(op->kind).attrs)
        if (spec.kind == AttrKind::Type && spec.defaultValue &&
            lowFloat(spec.defaultValue->type()) && !op->findAttr(spec.name))
          op->setAttr(spec.name, Attribute(DType::F64));
    }
  }
}

HostTensor toF64(const HostTensor &t) {
  if (!lowFloat(t.dtype()))
    return t;
  return convertTo(t, DType::F64);
}

} // namespace

bool checkGradients(const Module &m, const std::vector<HostTensor> &inputs,
                    const GradCheckOptions &opts, std::ostream &os) {
  std::unique_ptr<Module> wide = cloneModule(m);
  widenToF64(*wide);
  const Function &f = wide->main();
  std::optional<TrainSignature> sig = trainSignature(*wide);
  std::vector<HostTensor> args;
  for (const HostTensor &t : inputs)
    args.push_back(toF64(t));
  std::vector<size_t> wrt; // argument indices, in gradient order
  if (sig) {
    if (sig->step || sig->grads == 0)
      fail("--check-gradients: the module returns no gradients (run autodiff, and no optimizer)");
    std::vector<HostTensor> state = runReference(wide.get(), *wide->lookup(kTrainInitFunction), {});
    if (args.size() + state.size() != f.args.size())
      fail("--check-gradients: ", args.size(), " inputs for ", f.args.size() - state.size());
    args.insert(args.end(), state.begin(), state.end());
    for (size_t i = 0; i < sig->grads; ++i)
      wrt.push_back(f.args.size() - sig->state + i);
  } else {
    for (size_t i = 0; i < f.args.size(); ++i)
      if (isFloat(f.args[i]->type.dtype))
        wrt.push_back(i);
  }
  if (f.results.size() < 1 + wrt.size())
    fail("--check-gradients: @", f.name, " returns ", f.results.size(),
         " values, not the loss and ", wrt.size(), " gradients");
  std::vector<HostTensor> base = runReference(wide.get(), f, args);
  auto lossAt = [&](std::vector<HostTensor> &a) {
    return runReference(wide.get(), f, a)[0].getDouble(0);
  };

  std::mt19937_64 rng(opts.seed);
  bool ok = true;
  for (size_t j = 0; j < wrt.size(); ++j) {
    size_t ai = wrt[j];
    const HostTensor &grad = base[1 + j];
    int64_t n = grad.numElements();
    std::set<int64_t> picks;
    if (n <= opts.samples) {
      for (int64_t i = 0; i < n; ++i)
        picks.insert(i);
    } else {
      while (int64_t(picks.size()) < opts.samples)
        picks.insert(int64_t(rng() % uint64_t(n)));
      int64_t largest = 0;
      for (int64_t i = 1; i < n; ++i)
        if (std::fabs(grad.getDouble(i)) > std::fabs(grad.getDouble(largest)))
          largest = i;
      picks.insert(largest);
    }
    double maxAbs = 0, maxRel = 0;
    std::string firstBad;
    for (int64_t i : picks) {
      HostTensor &x = args[ai];
      double orig = x.getDouble(i), h = opts.step * std::max(1.0, std::fabs(orig));
      x.setDouble(i, orig + h);
      double up = lossAt(args);
      x.setDouble(i, orig - h);
      double down = lossAt(args);
      x.setDouble(i, orig);
      double fd = (up - down) / (2 * h), an = grad.getDouble(i);
      double err = std::fabs(fd - an), scale = std::max(std::fabs(fd), std::fabs(an));
      maxAbs = std::max(maxAbs, err);
      if (scale > 0)
        maxRel = std::max(maxRel, err / scale);
      if (!(err <= opts.atol + opts.rtol * scale) && firstBad.empty()) {
        std::ostringstream s;
        s << " first at element " << i << ": analytic " << an << ", finite difference " << fd;
        firstBad = s.str();
      }
    }
    ok &= firstBad.empty();
    os << "gradient of %" << f.args[ai]->name << ": " << picks.size() << " elements, max abs err "
       << std::setprecision(3) << maxAbs << ", max rel err " << maxRel << ": "
       << (firstBad.empty() ? "ok" : "MISMATCH" + firstBad) << "\n";
  }
  return ok;
}

} // namespace tc
