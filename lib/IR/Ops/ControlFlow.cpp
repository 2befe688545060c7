// Shape rules of the control-flow ops (If, Loop, Scan) and the checks of
// their callees (see include/tc/IR/ControlFlow.h). The ops' own shape rules
// see no module: they check the operands and keep the declared result types,
// like Fused; the callee-dependent rules live in controlFlowResultTypes.
#include "tc/IR/ControlFlow.h"
#include "OpInference.h"
#include <algorithm>

namespace tc {

namespace {

std::vector<TensorType> declaredResults(const Op &op) {
  if (op.results.empty())
    fail(op.name(), " needs declared result types (they come from its callees)");
  std::vector<TensorType> types;
  for (const Value *r : op.results)
    types.push_back(r->type);
  return types;
}

// A one-element operand of dtype `dt` (ONNX's cond and M scalars).
void checkScalar(const Op &op, size_t i, DType dt, const char *what) {
  const Value *v = op.operand(i);
  if (!v)
    return;
  if (v->type.dtype != dt)
    fail(what, " must be ", dtypeName(dt), ", got ", v->type.str());
  for (const Dim &d : v->type.shape)
    if (d.isStatic() && d.size != 1)
      fail(what, " must have one element, got ", v->type.str());
}

size_t numCaptures(const Op &op, size_t fixed) {
  int64_t c = op.getInt("num_captures");
  if (c < 0 || size_t(c) > op.operands.size() - std::min(fixed, op.operands.size()))
    fail("num_captures ", c, " is out of range for ", op.operands.size(), " operands");
  return size_t(c);
}

// Scan's operands: N states, M scan inputs, C captures.
struct ScanLayout {
  size_t states, scans, captures;
};

ScanLayout scanLayout(const Op &op) {
  int64_t m = op.getInt("num_scan_inputs");
  if (m < 1 || size_t(m) > op.operands.size())
    fail("num_scan_inputs ", m, " is out of range for ", op.operands.size(), " operands");
  size_t c = numCaptures(op, size_t(m));
  return {op.operands.size() - size_t(m) - c, size_t(m), c};
}

// The per-scan-input or per-output attribute value i (default 0).
int64_t scanAttr(const Op &op, const char *name, size_t i, size_t count) {
  const std::vector<int64_t> &v = op.getInts(name);
  if (v.empty())
    return 0;
  if (v.size() != count)
    fail(name, " has ", v.size(), " entries for ", count, " values");
  return v[i];
}

Shape withoutAxis(const Shape &s, size_t axis) {
  Shape r = s;
  r.erase(r.begin() + std::ptrdiff_t(axis));
  return r;
}

} // namespace

bool isControlFlowOp(const Op &op) {
  return op.is(OpKind::If) || op.is(OpKind::Loop) || op.is(OpKind::Scan);
}

std::vector<std::string> calleeAttrs(const Op &op) {
  if (op.is(OpKind::If))
    return {"then_branch", "else_branch"};
  if (op.is(OpKind::Loop) || op.is(OpKind::Scan))
    return {"body"};
  return {};
}

TensorType mergeTypes(const TensorType &a, const TensorType &b, const std::string &what) {
  if (a.dtype != b.dtype || a.rank() != b.rank())
    fail(what, " is ", a.str(), " and ", b.str(), " (dtype and rank must agree)");
  TensorType t = a;
  for (size_t i = 0; i < t.rank(); ++i)
    if (!(a.shape[i] == b.shape[i]))
      t.shape[i] = Dim::unknown();
  return t;
}

bool describesType(const TensorType &general, const TensorType &specific) {
  if (general.dtype != specific.dtype || general.rank() != specific.rank())
    return false;
  for (size_t i = 0; i < general.rank(); ++i)
    if (!general.shape[i].isUnknown() && !(general.shape[i] == specific.shape[i]))
      return false;
  return true;
}

namespace {

// Callee argument i must accept operand values of type `t`.
void checkArg(const Function &f, size_t i, const TensorType &t) {
  if (!describesType(f.args[i]->type, t))
    fail("@", f.name, " argument ", i, " is ", f.args[i]->type.str(), " but is passed ", t.str());
}

void checkArity(const Function &f, size_t args, size_t minResults) {
  if (f.args.size() != args)
    fail("@", f.name, " takes ", f.args.size(), " arguments, the op passes ", args);
  if (f.results.size() < minResults)
    fail("@", f.name, " returns ", f.results.size(), " results, the op needs at least ",
         minResults);
}

std::vector<TensorType> ifResults(const Op &op, const Function &t, const Function &e) {
  for (const Function *f : {&t, &e}) {
    checkArity(*f, op.operands.size() - 1, 1);
    for (size_t i = 1; i < op.operands.size(); ++i)
      checkArg(*f, i - 1, op.operands[i]->type);
  }
  if (t.results.size() != e.results.size())
    fail("@", t.name, " returns ", t.results.size(), " results but @", e.name, " returns ",
         e.results.size());
  std::vector<TensorType> types;
  for (size_t i = 0; i < t.results.size(); ++i)
    types.push_back(mergeTypes(t.results[i]->type, e.results[i]->type,
                               "result " + std::to_string(i) + " of the branches"));
  return types;
}

std::vector<TensorType> loopResults(const Op &op, const Function &body) {
  size_t c = numCaptures(op, 2);
  size_t n = op.operands.size() - std::min<size_t>(2, op.operands.size()) - c;
  checkArity(body, 2 + n + c, 1 + n);
  checkArg(body, 0, TensorType{DType::I64, {}});
  checkArg(body, 1, TensorType{DType::Bool, {}});
  for (size_t i = 0; i < n + c; ++i)
    checkArg(body, 2 + i, op.operands[2 + i]->type);
  const TensorType &condOut = body.results[0]->type;
  if (condOut.dtype != DType::Bool || staticNumElements(condOut.shape).value_or(1) != 1)
    fail("@", body.name, " result 0 (the condition) must be one bool, got ", condOut.str());
  std::vector<TensorType> types;
  for (size_t i = 0; i < n; ++i) {
    const TensorType &out = body.results[1 + i]->type;
    if (!describesType(body.args[2 + i]->type, out))
      fail("loop-carried value ", i, " enters @", body.name, " as ", body.args[2 + i]->type.str(),
           " but leaves as ", out.str());
    types.push_back(
        mergeTypes(op.operands[2 + i]->type, out, "loop-carried value " + std::to_string(i)));
  }
  for (size_t k = 1 + n; k < body.results.size(); ++k) {
    TensorType t = body.results[k]->type;
    t.shape.insert(t.shape.begin(), Dim::unknown()); // the iteration count
    types.push_back(std::move(t));
  }
  return types;
}

std::vector<TensorType> scanResults(const Op &op, const Function &body) {
  ScanLayout l = scanLayout(op);
  bool batched = op.getInt("batched") != 0;
  size_t b = batched ? 1 : 0;
  checkArity(body, l.states + l.scans + l.captures, l.states);
  auto strip = [&](const TensorType &t, const char *what, size_t i) {
    if (t.rank() < b)
      fail(what, " ", i, " has no batch axis: ", t.str());
    return TensorType{t.dtype, Shape(t.shape.begin() + std::ptrdiff_t(b), t.shape.end())};
  };
  for (size_t i = 0; i < l.states; ++i)
    checkArg(body, i, strip(op.operands[i]->type, "state", i));
  Dim length = Dim::unknown();
  for (size_t i = 0; i < l.scans; ++i) {
    TensorType t = strip(op.operands[l.states + i]->type, "scan input", i);
    int64_t axis = infer::normalizeAxis(scanAttr(op, "scan_input_axes", i, l.scans),
                                        int64_t(t.rank()), "scan_input_axes");
    if (i == 0)
      length = t.shape[size_t(axis)];
    t.shape = withoutAxis(t.shape, size_t(axis));
    checkArg(body, l.states + i, t);
  }
  for (size_t i = 0; i < l.captures; ++i)
    checkArg(body, l.states + l.scans + i, op.operands[l.states + l.scans + i]->type);
  Dim batch =
      batched && op.operands[0]->type.rank() ? op.operands[0]->type.shape[0] : Dim::unknown();
  std::vector<TensorType> types;
  for (size_t i = 0; i < l.states; ++i) {
    const TensorType &out = body.results[i]->type;
    if (!describesType(body.args[i]->type, out))
      fail("scan state ", i, " enters @", body.name, " as ", body.args[i]->type.str(),
           " but leaves as ", out.str());
    TensorType t = out;
    if (batched)
      t.shape.insert(t.shape.begin(), op.operands[i]->type.shape[0]);
    types.push_back(mergeTypes(op.operands[i]->type, t, "scan state " + std::to_string(i)));
  }
  size_t k = body.results.size() - l.states;
  for (size_t i = 0; i < k; ++i) {
    TensorType t = body.results[l.states + i]->type;
    int64_t axis = infer::normalizeAxis(scanAttr(op, "scan_output_axes", i, k),
                                        int64_t(t.rank()) + 1, "scan_output_axes");
    t.shape.insert(t.shape.begin() + axis, length);
    if (batched)
      t.shape.insert(t.shape.begin(), batch);
    types.push_back(std::move(t));
  }
  return types;
}

} // namespace

std::vector<TensorType> controlFlowResultTypes(const Op &op,
                                               const std::vector<const Function *> &callees) {
  if (callees.size() != calleeAttrs(op).size())
    fail(op.name(), " takes ", calleeAttrs(op).size(), " callees");
  for (size_t i = op.is(OpKind::Loop) ? 2 : 1; i < op.operands.size(); ++i)
    if (!op.operands[i])
      fail("operand ", i, " cannot be absent");
  if (op.is(OpKind::If))
    return ifResults(op, *callees[0], *callees[1]);
  if (op.is(OpKind::Loop))
    return loopResults(op, *callees[0]);
  return scanResults(op, *callees[0]);
}

void verifyControlFlowCall(const Module &m, const Function &caller, const Op &op) {
  std::vector<const Function *> callees;
  for (const std::string &attr : calleeAttrs(op)) {
    const std::string &name = op.getString(attr);
    const Function *f = m.lookup(name);
    if (!f)
      fail(op.where(), ": ", attr, " @", name, " is not a function of the module");
    if (f == &caller)
      fail(op.where(), ": @", name, " calls itself");
    callees.push_back(f);
  }
  std::vector<TensorType> types;
  try {
    types = controlFlowResultTypes(op, callees);
  } catch (const Error &e) {
    fail(op.where(), ": ", e.what());
  }
  if (types.size() != op.results.size())
    fail(op.where(), ": the callees give ", types.size(), " results; the op has ",
         op.results.size());
  for (size_t i = 0; i < types.size(); ++i)
    if (!describesType(op.results[i]->type, types[i]))
      fail(op.where(), ": result ", i, " is declared ", op.results[i]->type.str(),
           " but the callees give ", types[i].str());
}

std::vector<Function *> walkedFunctions(const Module &m) {
  std::vector<Function *> order{&m.main()};
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto &op : order[i]->ops)
      if (isControlFlowOp(*op))
        for (const std::string &attr : calleeAttrs(*op))
          if (Function *f = m.lookup(op->getString(attr));
              f && std::find(order.begin(), order.end(), f) == order.end())
            order.push_back(f);
  return order;
}

namespace infer {

std::vector<TensorType> inferIf(const Op &op) {
  if (!op.operand(0))
    fail("cond is required");
  checkScalar(op, 0, DType::Bool, "cond");
  return declaredResults(op);
}

std::vector<TensorType> inferLoop(const Op &op) {
  checkScalar(op, 0, DType::I64, "M (the trip count)");
  checkScalar(op, 1, DType::Bool, "cond");
  numCaptures(op, 2);
  return declaredResults(op);
}

std::vector<TensorType> inferScan(const Op &op) {
  scanLayout(op);
  return declaredResults(op);
}

} // namespace infer

} // namespace tc
