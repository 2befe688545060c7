// Converters of If, Loop and Scan. Each subgraph attribute becomes a module
// function (NodeContext::importSubgraph); the outer values it reads become
// trailing operands, and the result types come from the callees
// (controlFlowResultTypes). Sequence and optional values are not supported.
#include "OnnxOps.h"
#include "tc/IR/ControlFlow.h"
#include <unordered_map>

namespace tc::onnximport {

namespace {

const onnx::GraphProto &graphAttr(const NodeContext &ctx, std::string_view name) {
  const onnx::AttributeProto *a = findNodeAttr(ctx, name);
  if (!a || !a->has_g())
    ctx.fail("missing required graph attribute ", quoteName(name));
  return a->g();
}

Value *requiredInput(const NodeContext &ctx, size_t i, const char *what) {
  Value *v = ctx.input(i);
  if (!v)
    ctx.fail(what, " (input ", i, ") is required");
  return v;
}

std::vector<TensorType> typesOf(const std::vector<Value *> &values) {
  std::vector<TensorType> t;
  for (const Value *v : values)
    t.push_back(v->type);
  return t;
}

// Emits the op once its callees are imported: result types from the callees.
void emitCall(NodeContext &ctx, OpKind kind, std::vector<Value *> operands, AttrList attrs,
              const std::vector<const Function *> &callees) {
  Op probe(kind);
  probe.operands = operands;
  for (const auto &[name, value] : attrs)
    probe.setAttr(name, value);
  std::vector<TensorType> types;
  try {
    types = controlFlowResultTypes(probe, callees);
  } catch (const Error &e) {
    ctx.fail(e.what());
  }
  if (types.empty())
    ctx.fail("has no outputs");
  std::vector<std::string> outs = nodeOutputs(ctx);
  if (outs.size() > types.size())
    ctx.fail("has ", outs.size(), " outputs but its subgraph gives ", types.size());
  ctx.emitTyped(kind, std::move(operands), attrs, outs, std::move(types));
}

void convertIf(NodeContext &ctx) {
  expectInputs(ctx, 1, 1);
  Value *cond = requiredInput(ctx, 0, "cond");
  std::vector<Value *> captures;
  Function &t = ctx.importSubgraph(graphAttr(ctx, "then_branch"), "then", {}, captures);
  Function &e = ctx.importSubgraph(graphAttr(ctx, "else_branch"), "else", {}, captures);
  // Both branches take every captured value: the else branch's arguments
  // follow the then branch's order, with the values only it reads added to
  // the then branch too (and vice versa).
  size_t nt = t.args.size();
  std::vector<Value *> operands{cond};
  std::unordered_map<const Value *, size_t> index;
  for (Value *c : captures)
    if (index.emplace(c, operands.size() - 1).second)
      operands.push_back(c);
  std::vector<Value *> tArgs(operands.size() - 1, nullptr), eArgs(operands.size() - 1, nullptr);
  for (size_t i = 0; i < captures.size(); ++i) {
    Function &f = i < nt ? t : e;
    Value *arg = f.args[i < nt ? i : i - nt];
    (i < nt ? tArgs : eArgs)[index.at(captures[i])] = arg;
  }
  for (auto [f, args] : {std::pair{&t, &tArgs}, std::pair{&e, &eArgs}}) {
    for (size_t i = 0; i < args->size(); ++i)
      if (!(*args)[i])
        (*args)[i] = f->addArgument(f->uniqueName(operands[i + 1]->name), operands[i + 1]->type);
    f->args = *args;
  }
  AttrList attrs = {{"then_branch", Attribute(t.name)}, {"else_branch", Attribute(e.name)}};
  emitCall(ctx, OpKind::If, std::move(operands), std::move(attrs), {&t, &e});
}

// Imports a loop or scan body whose state arguments take `stateTypes` first;
// re-imports it with less specific state types while a state leaves the body
// with a type its argument does not describe (its shape changes per step).
Function &importBody(NodeContext &ctx, std::vector<TensorType> types, size_t firstState,
                     size_t numStates, size_t firstStateResult, std::vector<Value *> &captures) {
  const onnx::GraphProto &g = graphAttr(ctx, "body");
  for (int attempt = 0;; ++attempt) {
    std::vector<Value *> caps;
    Function &f = ctx.importSubgraph(g, "body", types, caps);
    bool stable = true;
    for (size_t i = 0; i < numStates && firstStateResult + i < f.results.size(); ++i) {
      const TensorType &in = types[firstState + i], &out = f.results[firstStateResult + i]->type;
      if (describesType(in, out))
        continue;
      if (in.dtype != out.dtype || in.rank() != out.rank())
        ctx.fail("loop-carried value ", i, " enters the body as ", in.str(), " but leaves as ",
                 out.str());
      types[firstState + i] = mergeTypes(in, out, "loop-carried value");
      stable = false;
    }
    if (stable) {
      captures = std::move(caps);
      return f;
    }
    ctx.discardSubgraph(f);
    if (attempt > 8)
      ctx.fail("loop-carried value types do not settle");
  }
}

void convertLoop(NodeContext &ctx) {
  std::vector<Value *> ins = nodeInputs(ctx);
  if (ins.size() < 2)
    ctx.fail("expects at least 2 inputs (M, cond), got ", ins.size());
  std::vector<Value *> carried(ins.begin() + 2, ins.end());
  for (size_t i = 0; i < carried.size(); ++i)
    if (!carried[i])
      ctx.fail("loop-carried input ", i, " is absent");
  std::vector<TensorType> types{TensorType{DType::I64, {}}, TensorType{DType::Bool, {}}};
  for (const TensorType &t : typesOf(carried))
    types.push_back(t);
  std::vector<Value *> captures;
  Function &body = importBody(ctx, types, 2, carried.size(), 1, captures);
  std::vector<Value *> operands = ins;
  operands.resize(2 + carried.size()); // nodeInputs may stop early
  operands.insert(operands.end(), captures.begin(), captures.end());
  AttrList attrs = {{"body", Attribute(body.name)},
                    {"num_captures", Attribute(int64_t(captures.size()))}};
  emitCall(ctx, OpKind::Loop, std::move(operands), std::move(attrs), {&body});
}

void convertScan(NodeContext &ctx) {
  bool batched = ctx.opset() < 9;
  AttrList attrs = collectNodeAttrs(ctx, infoOf(ctx), {"body", "directions"});
  int64_t m = 0;
  for (const auto &[name, value] : attrs)
    if (name == "num_scan_inputs")
      m = value.i();
  std::vector<Value *> ins = nodeInputs(ctx);
  if (batched) {
    // Opset 8: sequence_lens, then states and scan inputs, all batched.
    if (!ins.empty() && ins[0])
      ctx.fail("sequence_lens is not supported");
    if (!ins.empty())
      ins.erase(ins.begin());
    attrs.push_back({"batched", Attribute(int64_t(1))});
    if (const onnx::AttributeProto *d = findNodeAttr(ctx, "directions"))
      attrs.push_back({"scan_input_directions", convertAttribute(ctx, *d, AttrKind::Ints)});
  }
  if (m < 1 || size_t(m) > ins.size())
    ctx.fail("num_scan_inputs ", m, " is out of range for ", ins.size(), " inputs");
  for (size_t i = 0; i < ins.size(); ++i)
    if (!ins[i])
      ctx.fail("input ", i, " is absent");
  size_t nStates = ins.size() - size_t(m);
  // Body argument types: the probe op computes them the same way the
  // verifier will (batch axis, then the scan axis, removed).
  std::vector<TensorType> types;
  const std::vector<int64_t> *axes = nullptr;
  for (const auto &[name, value] : attrs)
    if (name == "scan_input_axes")
      axes = &value.ints();
  for (size_t i = 0; i < ins.size(); ++i) {
    TensorType t = ins[i]->type;
    if (batched) {
      if (t.rank() == 0)
        ctx.fail("input ", i, " has no batch axis: ", t.str());
      t.shape.erase(t.shape.begin());
    }
    if (i >= nStates) {
      size_t k = i - nStates;
      int64_t axis = axes && !axes->empty() ? (k < axes->size() ? (*axes)[k] : INT64_MAX) : 0;
      if (axis < -int64_t(t.rank()) || axis >= int64_t(t.rank()))
        ctx.fail("scan input ", k, " ", t.str(), " has no scan axis ", axis);
      t.shape.erase(t.shape.begin() + (axis < 0 ? axis + int64_t(t.rank()) : axis));
    }
    types.push_back(std::move(t));
  }
  std::vector<Value *> captures;
  Function &body = importBody(ctx, types, 0, nStates, 0, captures);
  std::vector<Value *> operands = ins;
  operands.insert(operands.end(), captures.begin(), captures.end());
  attrs.push_back({"body", Attribute(body.name)});
  attrs.push_back({"num_captures", Attribute(int64_t(captures.size()))});
  emitCall(ctx, OpKind::Scan, std::move(operands), std::move(attrs), {&body});
}

} // namespace

ConvertFn findControlFlowOpConverter(std::string_view opType) {
  if (opType == "If")
    return convertIf;
  if (opType == "Loop")
    return convertLoop;
  if (opType == "Scan")
    return convertScan;
  return nullptr;
}

} // namespace tc::onnximport
