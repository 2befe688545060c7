// The reference executor: checks the inputs against the signature, then runs
// the ops in order. Result types come from the op table's shape rules applied
// to the concrete operand types (and to the data of small integer operands,
// so that e.g. a computed Reshape shape is known); kernels only fill them in.
#include "tc/Runtime/RefExecutor.h"
#include "Kernels.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/RuntimeAttrs.h"
#include "tc/IR/Verifier.h"
#include <map>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

struct KernelTables {
  ref::KernelTable kernels{};
  ref::SetsOutputDimsTable setsDims{};
};

const KernelTables &kernelTables() {
  static const KernelTables tables = [] {
    KernelTables all;
    ref::KernelTable &t = all.kernels;
    ref::registerElementwiseKernels(t);
    ref::registerReductionKernels(t);
    ref::registerNNKernels(t);
    ref::registerTensorKernels(t);
    ref::registerTrainingKernels(t);
    ref::registerQuantizeKernels(t);
    ref::registerSpatialKernels(t);
    ref::registerRecurrentKernels(t);
    ref::registerSignalKernels(t);
    ref::registerCollectiveKernels(t);
    ref::registerDataDependentKernels(t, all.setsDims);
    ref::registerStringKernels(t, all.setsDims);
    return all;
  }();
  return tables;
}

} // namespace

RefKernel lookupRefKernel(OpKind k) {
  const ref::KernelTable &t = kernelTables().kernels;
  return size_t(k) < t.size() ? t[size_t(k)] : nullptr;
}

bool refKernelSetsOutputDims(OpKind k) {
  const ref::SetsOutputDimsTable &t = kernelTables().setsDims;
  return size_t(k) < t.size() && t[size_t(k)];
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
      if (want < 0 && d.symbol[0] == '(') { // an expression of bound symbols: its value
        std::map<std::string, int64_t> sizes;
        for (const auto &[sym, bound] : dims)
          sizes[sym] = bound.first;
        want = dimValue(d, sizes).value_or(-1);
      }
      if (want >= 0 && want != actual[i])
        return false;
      fresh[d.symbol] = actual[i];
    }
    for (auto &[sym, n] : fresh)
      dims.emplace(sym, std::make_pair(n, who));
    return true;
  }
};

// A run-time tensor as constant data (str: the packed form).
TensorData constantData(const HostTensor &t) {
  if (t.dtype() == DType::Str)
    return TensorData::fromVector(t.packedData());
  return TensorData::copyOf(t.bytes(), t.byteSize());
}

// Shape rules read these as constants: i64/i32 vectors (shapes, axes,
// starts) and numeric scalars of any type (Range bounds, OneHot depth).
bool smallIntData(const HostTensor &t) {
  return ((t.dtype() == DType::I64 || t.dtype() == DType::I32) && t.numElements() <= 1024) ||
         (t.dtype() != DType::Bool && t.dtype() != DType::Str && t.numElements() == 1);
}

// The op with its run-time attribute operands (Ops.def) bound to attributes
// from their data, so that shape rule and kernel see the attribute form; `op`
// itself when it has none. `ins` then lines up with the bound op's operands.
const Op &boundOp(Function &scratch, const Op &op, std::vector<const HostTensor *> &ins) {
  if (!hasRuntimeAttrOperands(op))
    return op;
  Op *copy = scratch.addOp(op.kind, {}, {}, {}, op.loc);
  copy->attrs = op.attrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    const HostTensor *t = ins[i];
    const std::string &name = op.operands[i] ? op.operands[i]->name : "";
    copy->operands.push_back(!t ? nullptr
                             : runtimeAttrSpec(op.info(), i)
                                 ? scratch.addConstant(name, t->type(), constantData(*t))
                                 : scratch.addArgument(name, t->type()));
  }
  for (const Value *r : op.results)
    copy->results.push_back(scratch.newValue(r->name, r->type));
  Op *bound;
  try {
    bound = bindRuntimeAttrs(scratch, *copy);
  } catch (const Error &e) {
    fail(op.where(), ": ", e.what());
  }
  if (!bound) // every present operand is a constant here
    fail(op.where(), ": internal error: run-time attribute operands were not bound");
  ins.resize(bound->operands.size());
  for (size_t i = 0; i < ins.size(); ++i)
    if (!bound->operands[i])
      ins[i] = nullptr;
  return *bound;
}

// The op's result types for these concrete operands: the op table's rule on
// a scratch copy of the op whose operands have the run-time types. Only an op
// whose kernel sets its output dims may keep `?` dims (the data decides them).
std::vector<TensorType>
concreteResultTypes(const Op &op, const std::vector<const HostTensor *> &ins, bool dataDependent) {
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
      operands.push_back(scratch.addConstant(name, t->type(), constantData(*t)));
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
    for (const Dim &d : t.shape)
      if (!d.isStatic() && !(dataDependent && d.isUnknown()))
        fail(op.where(), ": cannot determine the output shape at run time");
  return types;
}

// What a kernel made of result `r` against the rule's type `want`: the
// dtype, rank and known dims must match (a kernel that sets its output dims
// fills in the `?` ones; any other kernel must keep the shape it was given).
void checkKernelResult(const Op &op, size_t r, const TensorType &want, const HostTensor &got) {
  bool ok = got.dtype() == want.dtype && got.rank() == want.rank();
  for (size_t d = 0; ok && d < got.rank(); ++d)
    ok = !want.shape[d].isStatic() || want.shape[d].size == got.shape()[d];
  if (!ok)
    fail(op.where(), ": internal error: the kernel produced ", got.typeStr(), " for result ", r,
         ", which the shape rule gives as ", want.str());
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

std::optional<std::vector<TensorType>>
runTimeResultTypes(const Op &op, const std::vector<const HostTensor *> &ins) {
  if (refKernelSetsOutputDims(op.kind))
    return std::nullopt;
  std::vector<const HostTensor *> bound = ins;
  Function scratch;
  try {
    return concreteResultTypes(boundOp(scratch, op, bound), bound, false);
  } catch (const Error &) {
    return std::nullopt;
  }
}

std::vector<HostTensor> runReference(const Function &f, const std::vector<HostTensor> &inputs) {
  return runReference(nullptr, f, inputs);
}

std::vector<HostTensor> runReference(const Module &m, const std::vector<HostTensor> &inputs) {
  return runReference(&m, m.main(), inputs);
}

std::vector<HostTensor> runReference(const Module *m, const Function &f,
                                     const std::vector<HostTensor> &inputs,
                                     const ValueObserver *observe, const OpOverride *override) {
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
    std::optional<std::vector<HostTensor>> external;
    if (override)
      external = (*override)(op, ins);
    if (external || op.is(OpKind::Fused) || isControlFlowOp(op)) {
      std::vector<HostTensor> outs = external               ? std::move(*external)
                                     : op.is(OpKind::Fused) ? runFused(m, op, ins)
                                                            : ref::runControlFlow(m, op, ins);
      if (outs.size() != op.results.size())
        fail(op.where(), ": internal error: ", outs.size(), " results for ", op.results.size());
      for (size_t r = 0; r < outs.size(); ++r) {
        const Value *res = op.results[r];
        if (outs[r].dtype() != res->type.dtype ||
            !bind.match(res->type.shape, outs[r].shape(), "result '" + res->name + "'"))
          fail(op.where(), ": result ", r, " '", res->name, "' is declared ", res->type.str(),
               " but is ", outs[r].typeStr(), " at run time", bind.describe(res->type.shape));
        env[res] = &(owned[res] = std::move(outs[r]));
        if (observe)
          (*observe)(*res, *env[res]);
      }
      for (const Value *v : op.operands)
        if (v && lastUse[v] == i && owned.erase(v))
          env.erase(v);
      continue;
    }
    Function scratch;
    const Op &run = boundOp(scratch, op, ins);
    bool dataDependent = refKernelSetsOutputDims(op.kind);
    std::vector<TensorType> types = concreteResultTypes(run, ins, dataDependent);
    auto checkDeclared = [&](size_t r, const std::vector<int64_t> &dims) {
      const Value *res = op.results[r];
      std::string who = "result '" + res->name + "' of " + op.where();
      if (types[r].dtype != res->type.dtype || !bind.match(res->type.shape, dims, who))
        fail(op.where(), ": result ", r, " '", res->name, "' is declared ", res->type.str(),
             " but is ", TensorType{types[r].dtype, makeShape(dims)}.str(), " at run time",
             bind.describe(res->type.shape));
    };
    std::vector<HostTensor> outs;
    for (size_t r = 0; r < types.size(); ++r) {
      std::vector<int64_t> dims;
      for (const Dim &d : types[r].shape) // `?`: 0 until the kernel sets it
        dims.push_back(d.isStatic() ? d.size : 0);
      if (!dataDependent)
        checkDeclared(r, dims);
      outs.emplace_back(types[r].dtype, std::move(dims));
    }
    RefKernel kernel = lookupRefKernel(op.kind);
    if (!kernel)
      fail(op.where(), ": the reference executor has no kernel for ", op.name());
    try {
      kernel(run, ins, outs);
    } catch (const Error &e) {
      fail(op.where(), ": ", e.what());
    }
    if (outs.size() != types.size())
      fail(op.where(), ": internal error: the kernel produced ", outs.size(), " results for ",
           types.size());
    for (size_t r = 0; r < outs.size(); ++r) {
      checkKernelResult(op, r, types[r], outs[r]);
      if (dataDependent)
        checkDeclared(r, outs[r].shape());
    }
    for (size_t r = 0; r < outs.size(); ++r) {
      const Value *res = op.results[r];
      const HostTensor *p = &(owned[res] = std::move(outs[r]));
      env[res] = p;
      if (observe)
        (*observe)(*res, *p);
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
