// The reference executor: checks the inputs against the signature, then runs
// the ops in order. Result types come from the op table's shape rules applied
// to the concrete operand types (and to the data of small integer operands,
// so that e.g. a computed Reshape shape is known); kernels only fill them in.
#include "tc/Runtime/RefExecutor.h"
#include "Kernels.h"
#include "tc/IR/Verifier.h"
#include <map>
#include <set>
#include <unordered_map>

namespace tc {

RefKernel lookupRefKernel(OpKind k) {
  static const ref::KernelTable table = [] {
    ref::KernelTable t{};
    ref::registerElementwiseKernels(t);
    ref::registerReductionKernels(t);
    ref::registerNNKernels(t);
    ref::registerTensorKernels(t);
    return t;
  }();
  return size_t(k) < table.size() ? table[size_t(k)] : nullptr;
}

namespace {

// Sizes bound to symbolic dims during one call, and who bound them.
struct Bindings {
  std::map<std::string, std::pair<int64_t, std::string>> dims;

  // " (N = 2 from input 'x')" for the bound symbols of `declared`.
  std::string describe(const Shape &declared) const {
    std::string s;
    std::set<std::string> done;
    for (const Dim &d : declared) {
      auto it = d.isSymbolic() ? dims.find(d.symbol) : dims.end();
      if (it == dims.end() || !done.insert(d.symbol).second)
        continue;
      s += std::string(s.empty() ? " (" : ", ") + d.symbol + " = " +
           std::to_string(it->second.first) + " from " + it->second.second;
    }
    return s.empty() ? s : s + ")";
  }

  // True when `dims` fits `declared`, binding its free symbols to `who`.
  bool match(const Shape &declared, const std::vector<int64_t> &actual, const std::string &who) {
    if (declared.size() != actual.size())
      return false;
    std::map<std::string, int64_t> fresh;
    for (size_t i = 0; i < declared.size(); ++i) {
      const Dim &d = declared[i];
      if (d.isStatic() && d.size != actual[i])
        return false;
      if (!d.isSymbolic())
        continue;
      auto it = dims.find(d.symbol);
      int64_t want = it != dims.end() ? it->second.first : -1;
      if (auto f = fresh.find(d.symbol); f != fresh.end())
        want = f->second;
      if (want >= 0 && want != actual[i])
        return false;
      fresh[d.symbol] = actual[i];
    }
    for (auto &[sym, n] : fresh)
      dims.emplace(sym, std::make_pair(n, who));
    return true;
  }
};

// Shape rules read these as constants: i64/i32 vectors (shapes, axes,
// starts) and numeric scalars of any type (Range bounds, OneHot depth).
bool smallIntData(const HostTensor &t) {
  return ((t.dtype() == DType::I64 || t.dtype() == DType::I32) && t.numElements() <= 1024) ||
         (t.dtype() != DType::Bool && t.numElements() == 1);
}

// The op's result types for these concrete operands: the op table's rule on
// a scratch copy of the op whose operands have the run-time types.
std::vector<TensorType> concreteResultTypes(const Op &op,
                                            const std::vector<const HostTensor *> &ins) {
  Function scratch;
  std::vector<Value *> operands;
  for (size_t i = 0; i < ins.size(); ++i) {
    const HostTensor *t = ins[i];
    if (!t) {
      operands.push_back(nullptr);
      continue;
    }
    std::string name = op.operands[i]->name;
    if (smallIntData(*t))
      operands.push_back(
          scratch.addConstant(name, t->type(), TensorData::copyOf(t->bytes(), t->byteSize())));
    else
      operands.push_back(scratch.addArgument(name, t->type()));
  }
  std::vector<std::string> names;
  for (const Value *r : op.results)
    names.push_back(r->name);
  Op *s = scratch.addOp(op.kind, std::move(operands), std::move(names), {}, op.loc);
  s->attrs = op.attrs;
  std::vector<TensorType> types = inferResultTypes(*s); // errors carry op.where()
  if (types.size() != op.results.size())
    fail(op.where(), ": shape rule gave ", types.size(), " results for ", op.results.size());
  for (const TensorType &t : types)
    if (!isStaticShape(t.shape))
      fail(op.where(), ": cannot determine the output shape at run time");
  return types;
}

// A Fused op runs its callee's ops (the reference does not fuse anything).
std::vector<HostTensor> runFused(const Module *m, const Op &op,
                                 const std::vector<const HostTensor *> &ins) {
  const std::string &callee = op.getString("callee");
  const Function *f = m ? m->lookup(callee) : nullptr;
  if (!f)
    fail(op.where(), ": callee @", callee, " is not available to the reference executor");
  std::vector<HostTensor> args;
  for (const HostTensor *t : ins)
    args.push_back(*t);
  return runReference(m, *f, args);
}

} // namespace

std::vector<HostTensor> runReference(const Function &f, const std::vector<HostTensor> &inputs) {
  return runReference(nullptr, f, inputs);
}

std::vector<HostTensor> runReference(const Module &m, const std::vector<HostTensor> &inputs) {
  return runReference(&m, m.main(), inputs);
}

std::vector<HostTensor> runReference(const Module *m, const Function &f,
                                     const std::vector<HostTensor> &inputs) {
  verifyFunction(f); // kernels rely on arity, attribute kinds and operand types
  if (inputs.size() != f.args.size()) {
    std::string names;
    for (const Value *a : f.args)
      names += (names.empty() ? "" : ", ") + a->name;
    fail(f.name, " expects ", f.args.size(), " inputs (", names, "), got ", inputs.size());
  }
  Bindings bind;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value *a = f.args[i];
    const HostTensor &t = inputs[i];
    std::string who = "input '" + a->name + "'";
    if (t.dtype() != a->type.dtype || !bind.match(a->type.shape, t.shape(), who))
      fail(who, ": expected ", a->type.str(), ", got ", t.typeStr(), bind.describe(a->type.shape));
  }

  // Values live here from definition to last use; arguments are read in place.
  std::unordered_map<const Value *, const HostTensor *> env;
  std::unordered_map<const Value *, HostTensor> owned;
  std::unordered_map<const Value *, size_t> lastUse;
  for (size_t i = 0; i < inputs.size(); ++i)
    env[f.args[i]] = &inputs[i];
  for (size_t i = 0; i < f.ops.size(); ++i)
    for (const Value *v : f.ops[i]->operands)
      if (v)
        lastUse[v] = i;
  for (const Value *r : f.results)
    lastUse[r] = SIZE_MAX;

  auto lookup = [&](const Value *v) -> const HostTensor * {
    if (auto it = env.find(v); it != env.end())
      return it->second;
    if (!v->isConstant())
      fail("value %", v->name, " is used before it is defined");
    if (!isStaticShape(v->type.shape))
      fail("constant %", v->name, " has a non-static type ", v->type.str());
    std::vector<int64_t> dims = staticDims(v->type.shape);
    HostTensor t;
    try {
      t = HostTensor::fromBytes(v->type.dtype, dims, v->data->ptr, v->data->size);
    } catch (const Error &e) {
      fail("constant %", v->name, ": ", e.what());
    }
    const HostTensor *p = &(owned[v] = std::move(t));
    env[v] = p;
    return p;
  };

  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op &op = *f.ops[i];
    std::vector<const HostTensor *> ins;
    for (const Value *v : op.operands)
      ins.push_back(v ? lookup(v) : nullptr);
    if (op.is(OpKind::Fused)) {
      std::vector<HostTensor> outs = runFused(m, op, ins);
      for (size_t r = 0; r < outs.size(); ++r) {
        const Value *res = op.results[r];
        if (outs[r].dtype() != res->type.dtype ||
            !bind.match(res->type.shape, outs[r].shape(), "result '" + res->name + "'"))
          fail(op.where(), ": result ", r, " '", res->name, "' is declared ", res->type.str(),
               " but is ", outs[r].typeStr(), " at run time", bind.describe(res->type.shape));
        env[res] = &(owned[res] = std::move(outs[r]));
      }
      for (const Value *v : op.operands)
        if (v && lastUse[v] == i && owned.erase(v))
          env.erase(v);
      continue;
    }
    std::vector<TensorType> types = concreteResultTypes(op, ins);
    std::vector<HostTensor> outs;
    for (size_t r = 0; r < types.size(); ++r) {
      const Value *res = op.results[r];
      std::vector<int64_t> dims = staticDims(types[r].shape);
      std::string who = "result '" + res->name + "' of " + op.where();
      if (types[r].dtype != res->type.dtype || !bind.match(res->type.shape, dims, who))
        fail(op.where(), ": result ", r, " '", res->name, "' is declared ", res->type.str(),
             " but is ", types[r].str(), " at run time", bind.describe(res->type.shape));
      outs.emplace_back(types[r].dtype, std::move(dims));
    }
    RefKernel kernel = lookupRefKernel(op.kind);
    if (!kernel)
      fail(op.where(), ": the reference executor has no kernel for ", op.name());
    try {
      kernel(op, ins, outs);
    } catch (const Error &e) {
      fail(op.where(), ": ", e.what());
    }
    for (size_t r = 0; r < outs.size(); ++r) {
      const Value *res = op.results[r];
      const HostTensor *p = &(owned[res] = std::move(outs[r]));
      env[res] = p;
    }
    // Free what no later op (and no function result) reads.
    for (const Value *v : op.operands)
      if (v && lastUse[v] == i && owned.erase(v))
        env.erase(v);
    for (const Value *res : op.results)
      if (!lastUse.count(res) && owned.erase(res))
        env.erase(res);
  }

  std::vector<HostTensor> results;
  for (const Value *r : f.results)
    results.push_back(*lookup(r));
  return results;
}

} // namespace tc
