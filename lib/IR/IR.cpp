#include "tc/IR/IR.h"
#include "tc/IR/DimExpr.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <unordered_set>

namespace tc {

std::string Location::str() const {
  if (file.empty())
    return node;
  return node.empty() ? file : file + ":" + node;
}

const char *phaseName(Phase p) {
  switch (p) {
  case Phase::Forward: return "forward";
  case Phase::Backward: return "backward";
  case Phase::Optimizer: return "optimizer";
  }
  return "forward";
}

std::optional<Phase> parsePhase(std::string_view s) {
  for (Phase p : {Phase::Forward, Phase::Backward, Phase::Optimizer})
    if (s == phaseName(p))
      return p;
  return std::nullopt;
}

TensorData TensorData::copyOf(const void *bytes, size_t n) {
  const auto *p = static_cast<const uint8_t *>(bytes);
  return fromVector(std::vector<uint8_t>(p, p + n));
}

TensorData TensorData::fromVector(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  TensorData d;
  d.ptr = owned->data();
  d.size = owned->size();
  d.owner = std::move(owned);
  return d;
}

const Attribute *Op::findAttr(std::string_view n) const {
  for (const auto &[k, v] : attrs)
    if (k == n)
      return &v;
  return nullptr;
}

const Attribute &Op::attr(std::string_view n) const {
  if (const Attribute *a = findAttr(n))
    return *a;
  const AttrSpec *spec = info().findAttr(n);
  if (!spec)
    fail("op has no attribute '", n, "'");
  if (!spec->defaultValue)
    fail("missing required attribute '", n, "'");
  return *spec->defaultValue;
}

void Op::setAttr(const std::string &n, Attribute a) {
  for (auto &[k, v] : attrs)
    if (k == n) {
      v = std::move(a);
      return;
    }
  // Insert in op-table order so the printed form is canonical.
  const auto &specs = info().attrs;
  auto rank = [&](const std::string &name) {
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == name)
        return i;
    return specs.size();
  };
  size_t r = rank(n);
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto &p) { return rank(p.first) > r; });
  attrs.insert(it, {n, std::move(a)});
}

std::string Op::where() const {
  std::string w = loc.str();
  return (w.empty() ? std::string("<unknown>") : w) + " (" + std::string(name()) + ")";
}

Value *Function::newValue(std::string n, TensorType t) {
  values_.push_back(std::make_unique<Value>());
  Value *v = values_.back().get();
  ++names_[n];
  v->name = std::move(n);
  v->type = std::move(t);
  return v;
}

std::string Function::uniqueName(const std::string &base) {
  if (!names_.count(base))
    return base;
  for (unsigned i = names_[base];; ++i) {
    std::string cand = base + "_" + std::to_string(i);
    if (!names_.count(cand)) {
      names_[base] = i + 1;
      return cand;
    }
  }
}

Value *Function::addArgument(std::string n, TensorType t) {
  Value *v = newValue(std::move(n), std::move(t));
  args.push_back(v);
  return v;
}

Value *Function::addConstant(std::string n, TensorType t, TensorData d, Location loc) {
  Value *v = newValue(std::move(n), std::move(t));
  v->data = std::move(d);
  v->loc = std::move(loc);
  constants.push_back(v);
  return v;
}

Op *Function::addOp(OpKind k, std::vector<Value *> operands, std::vector<std::string> resultNames,
                    std::vector<TensorType> resultTypes, Location loc) {
  auto op = std::make_unique<Op>(k);
  op->operands = std::move(operands);
  op->loc = std::move(loc);
  for (size_t i = 0; i < resultNames.size(); ++i) {
    Value *v =
        newValue(std::move(resultNames[i]), i < resultTypes.size() ? resultTypes[i] : TensorType{});
    v->def = op.get();
    v->resultIndex = unsigned(i);
    op->results.push_back(v);
  }
  ops.push_back(std::move(op));
  return ops.back().get();
}

Op *Function::insertOp(size_t pos, std::unique_ptr<Op> op) {
  pos = std::min(pos, ops.size());
  return ops.insert(ops.begin() + pos, std::move(op))->get();
}

void Function::replaceAllUsesWith(Value *from, Value *to) {
  for (auto &op : ops)
    for (Value *&o : op->operands)
      if (o == from)
        o = to;
  for (Value *&r : results)
    if (r == from)
      r = to;
}

void Function::eraseOps(const std::vector<const Op *> &dead) {
  std::unordered_set<const Op *> d(dead.begin(), dead.end());
  std::erase_if(ops, [&](const std::unique_ptr<Op> &op) { return d.count(op.get()) != 0; });
}

void Function::removeUnusedConstants() {
  std::unordered_set<const Value *> used(results.begin(), results.end());
  for (auto &op : ops)
    used.insert(op->operands.begin(), op->operands.end());
  std::erase_if(constants, [&](Value *c) { return !used.count(c); });
}

Function *Module::addFunction(std::string n) {
  functions.push_back(std::make_unique<Function>());
  functions.back()->name = std::move(n);
  return functions.back().get();
}

Function *Module::lookup(std::string_view n) const {
  for (auto &f : functions)
    if (f->name == n)
      return f.get();
  return nullptr;
}

Function &Module::main() const {
  if (Function *f = lookup("main"))
    return *f;
  if (functions.empty())
    fail("module has no functions");
  return *functions.front();
}

void substituteDims(Module &m, const std::map<std::string, int64_t> &dims) {
  auto substitute = [&](TensorType &t) {
    for (Dim &d : t.shape)
      d = substituteDim(d, dims);
  };
  for (const auto &f : m.functions) {
    for (Value *a : f->args)
      substitute(a->type);
    for (auto &op : f->ops)
      for (Value *r : op->results)
        substitute(r->type);
  }
}

} // namespace tc
