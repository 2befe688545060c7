#include "tc/IR/Verifier.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/RuntimeAttrs.h"
#include "tc/IR/StringMath.h"
#include "tc/Support/Error.h"
#include <unordered_set>

namespace tc {

static void verifyStructure(const Op &op) {
  const OpInfo &info = op.info();
  size_t n = op.operands.size();
  if (n < info.minOperands() || n > info.maxOperands()) {
    std::string want =
        info.maxOperands() == SIZE_MAX ? "at least " + std::to_string(info.minOperands())
        : info.minOperands() == info.maxOperands()
            ? std::to_string(info.minOperands())
            : std::to_string(info.minOperands()) + " to " + std::to_string(info.maxOperands());
    fail("expects ", want, " operands, got ", n);
  }
  for (size_t i = 0; i < n; ++i) {
    const OperandSpec &spec = info.operands[std::min(i, info.operands.size() - 1)];
    if (!op.operands[i] && !spec.optional)
      fail("operand ", i, " (", spec.name, ") is required");
  }
  if (info.numResults >= 0 ? op.results.size() != size_t(info.numResults) : op.results.empty())
    fail("expects ", info.numResults >= 0 ? std::to_string(info.numResults) : "one or more",
         " results, got ", op.results.size());
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    const auto &[name, value] = op.attrs[i];
    for (size_t j = 0; j < i; ++j)
      if (op.attrs[j].first == name)
        fail("attribute '", name, "' given twice");
    const AttrSpec *spec = info.findAttr(name);
    if (!spec)
      fail("unknown attribute '", name, "'");
    if (value.kind() != spec->kind)
      fail("attribute '", name, "' must be ", attrKindName(spec->kind), ", got ",
           attrKindName(value.kind()));
  }
  checkRuntimeAttrOperands(op);
  for (const AttrSpec &spec : info.attrs)
    if (!spec.defaultValue && !op.findAttr(spec.name) &&
        !runtimeAttrOperand(info, op.operands, spec.name))
      fail("missing required attribute '", spec.name, "'");
}

// Structure first: shape rules may assume arity and attribute kinds.
std::vector<TensorType> inferResultTypes(const Op &op) {
  try {
    verifyStructure(op);
    checkStringOperands(op);
    if (hasRuntimeAttrOperands(op)) {
      // Constant run-time attribute operands: infer the attribute form.
      Function scratch;
      if (const Op *bound = bindRuntimeAttrs(scratch, op)) {
        verifyStructure(*bound);
        return op.info().infer(*bound);
      }
    }
    return op.info().infer(op);
  } catch (const Error &e) {
    fail(op.where(), ": ", e.what());
  }
}

void verifyOp(const Op &op) {
  std::vector<TensorType> inferred = inferResultTypes(op);
  if (inferred.size() != op.results.size())
    fail(op.where(), ": shape rule gave ", inferred.size(), " results for ", op.results.size());
  for (size_t i = 0; i < inferred.size(); ++i)
    if (!typeCompatible(op.results[i]->type, inferred[i]))
      fail(op.where(), ": result ", i, " is declared ", op.results[i]->type.str(),
           " but the operands give ", inferred[i].str());
}

void verifyFunction(const Function &f) {
  std::unordered_set<const Value *> defined;
  std::unordered_set<std::string> names;
  auto define = [&](const Value *v, const std::string &what) {
    if (!names.insert(v->name).second)
      fail(f.name, ": ", what, " %", v->name, " redefines a name");
    defined.insert(v);
  };
  for (const Value *a : f.args)
    define(a, "argument");
  for (const Value *c : f.constants) {
    if (!c->data)
      fail(f.name, ": constant %", c->name, " has no data");
    if (!dataFitsType(c->type, c->data->bytes()))
      fail(c->loc.str(), ": constant %", c->name, " of type ", c->type.str(), " holds ",
           c->type.dtype == DType::Str ? "malformed string data in " : "", c->data->size, " bytes");
    define(c, "constant");
  }
  for (const auto &op : f.ops) {
    for (const Value *o : op->operands)
      if (o && !defined.count(o))
        fail(op->where(), ": operand %", o->name, " is used before it is defined");
    verifyOp(*op);
    for (const Value *r : op->results) {
      if (r->def != op.get())
        fail(op->where(), ": result %", r->name, " does not point back to its op");
      define(r, "result");
    }
  }
  for (const Value *r : f.results)
    if (!defined.count(r))
      fail(f.name, ": returns undefined value %", r->name);
}

// A Fused op calls a function of the module whose signature is exactly the
// op's operand and result types.
static void verifyFusedCall(const Module &m, const Function &caller, const Op &op) {
  const std::string &callee = op.getString("callee");
  const Function *f = m.lookup(callee);
  if (!f)
    fail(op.where(), ": callee @", callee, " is not a function of the module");
  if (f == &caller)
    fail(op.where(), ": @", callee, " calls itself");
  if (f->args.size() != op.operands.size() || f->results.size() != op.results.size())
    fail(op.where(), ": @", callee, " takes ", f->args.size(), " arguments and returns ",
         f->results.size(), " results; the op has ", op.operands.size(), " operands and ",
         op.results.size(), " results");
  for (size_t i = 0; i < f->args.size(); ++i)
    if (!(f->args[i]->type == op.operands[i]->type))
      fail(op.where(), ": operand ", i, " is ", op.operands[i]->type.str(), " but @", callee,
           " takes ", f->args[i]->type.str());
  for (size_t i = 0; i < f->results.size(); ++i)
    if (!(f->results[i]->type == op.results[i]->type))
      fail(op.where(), ": result ", i, " is ", op.results[i]->type.str(), " but @", callee,
           " returns ", f->results[i]->type.str());
  for (const auto &inner : f->ops)
    if (inner->is(OpKind::Fused))
      fail(inner->where(), ": fusion groups do not nest (in @", callee, ")");
}

void verifyModule(const Module &m) {
  for (const auto &f : m.functions)
    verifyFunction(*f);
  for (const auto &f : m.functions)
    for (const auto &op : f->ops)
      if (op->is(OpKind::Fused))
        verifyFusedCall(m, *f, *op);
      else if (isControlFlowOp(*op))
        verifyControlFlowCall(m, *f, *op);
}

} // namespace tc
