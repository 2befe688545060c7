// Which steps run as one multi-tensor launch (tc/CodeGen/MultiTensor.h):
// steps whose groups are flat pointwise chains (every value of the domain's
// shape or a single element) with the same kernel once their sizes are
// erased, independent of each other. A run forms around its last member:
// an earlier member joins when nothing after it, up to and including that
// last member, reads its results, and moves right before it (its operands
// then live until the run; its results are written later, where nothing
// reads them before). A train step's optimizer updates are such steps: each
// reads its gradient, weight and moments and writes only state results.
// On CUDA so are steps whose groups are full `split` reductions of one
// statistic (flatReduction): the AMP overflow check's sum of each large
// gradient.
#include "tc/CodeGen/Codegen.h"
#include "tc/CodeGen/MultiTensor.h"
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// Every value of `g` is of its domain's static shape or a single element,
// results of the domain's shape, every op elementwise and not reading its
// element's index (PhiloxDropout: the CPU runs a member in parts).
bool flatGroup(const Function &g) {
  if (g.results.empty())
    return false;
  const Shape &domain = g.results[0]->type.shape;
  std::optional<int64_t> n = staticNumElements(domain);
  if (!n || *n < 1)
    return false;
  auto fits = [&](const Value *v) {
    std::optional<int64_t> k = staticNumElements(v->type.shape);
    return multiTensorFlat(v->type, domain) || (k && *k == 1);
  };
  for (const Value *r : g.results)
    if (!multiTensorFlat(r->type, domain))
      return false;
  for (const Value *a : g.args)
    if (!fits(a))
      return false;
  for (const auto &op : g.ops) {
    if (opInfo(op->kind).category != FusionCategory::Pointwise || op->is(OpKind::PhiloxDropout))
      return false;
    for (const Value *r : op->results)
      if (!fits(r))
        return false;
  }
  return true;
}

// A full reduction to one element of one statistic (its members' `split`
// kernels are then one erased kernel: tc/CodeGen/MultiTensor.h): one
// Reduce* of the whole input X, with no axes (X's rank goes), a pointwise
// prologue over X's static shape, whose element count is a multiple of
// kMultiTensorReduceMultiple, and an epilogue and results of one element.
bool flatReduction(const Function &g) {
  const Op *anchor = nullptr;
  for (const auto &op : g.ops)
    if (opInfo(op->kind).category != FusionCategory::Pointwise) {
      if (anchor || op->operands.size() != 1 || op->findAttr("axes") ||
          op->findAttr("noop_with_empty_axes") ||
          !(op->is(OpKind::ReduceSum) || op->is(OpKind::ReduceSumSquare) ||
            op->is(OpKind::ReduceMean) || op->is(OpKind::ReduceMax) || op->is(OpKind::ReduceMin)))
        return false;
      anchor = op.get();
    }
  if (!anchor || g.results.empty())
    return false;
  const Shape &xs = anchor->operand(0)->type.shape;
  std::optional<int64_t> n = staticNumElements(xs);
  if (!n || *n < 1 || *n % kMultiTensorReduceMultiple)
    return false;
  auto fits = [&](const Value *v) {
    std::optional<int64_t> k = staticNumElements(v->type.shape);
    return v->type.shape == xs || (k && *k == 1);
  };
  for (const Value *r : g.results)
    if (r->type.shape == xs || !fits(r))
      return false;
  for (const Value *a : g.args)
    if (!fits(a))
      return false;
  for (const auto &op : g.ops)
    for (const Value *r : op->results)
      if (!fits(r) || op->is(OpKind::PhiloxDropout))
        return false;
  return true;
}

// The shape of `g`'s flat values (multiTensorShape).
const Shape &flatShape(const Function &g, bool reduction) {
  std::vector<const Value *> values(g.args.begin(), g.args.end());
  values.insert(values.end(), g.results.begin(), g.results.end());
  return multiTensorShape(values, g.args.size(), reduction);
}

// `g` with its sizes erased, as function `name` of `scratch`: flat values
// [n] (one symbol for all), the others []. A reduction's anchor then
// reduces all of [n] to [].
Function &erase(const Function &g, Module &scratch, const std::string &name, bool reduction) {
  const Shape &domain = flatShape(g, reduction);
  auto erased = [&](const TensorType &t) {
    return TensorType{t.dtype, multiTensorFlat(t, domain) ? Shape{Dim::sym("tc_mt_n")} : Shape{}};
  };
  Function &e = *scratch.addFunction(name);
  std::unordered_map<const Value *, Value *> map;
  for (const Value *a : g.args)
    map[a] = e.addArgument(a->name, erased(a->type));
  for (const Value *c : g.constants) // single elements: their bytes fit []
    map[c] = e.addConstant(c->name, erased(c->type), *c->data, c->loc);
  for (const auto &op : g.ops) {
    std::vector<Value *> operands;
    for (const Value *v : op->operands)
      operands.push_back(v ? map.at(v) : nullptr);
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (const Value *r : op->results) {
      names.push_back(r->name);
      types.push_back(erased(r->type));
    }
    Op *copy = e.addOp(op->kind, operands, names, types, op->loc);
    copy->attrs = op->attrs;
    if (reduction && opInfo(op->kind).category != FusionCategory::Pointwise)
      copy->setAttr("keepdims", Attribute(int64_t(0)));
    for (size_t i = 0; i < op->results.size(); ++i)
      map[op->results[i]] = copy->results[i];
  }
  for (const Value *r : g.results)
    e.results.push_back(map.at(r));
  return e;
}

// Whether something in main's ops (at, to] reads a result of ops[at].
bool readBefore(const Function &main, size_t at, size_t to) {
  std::unordered_set<const Value *> results(main.ops[at]->results.begin(),
                                            main.ops[at]->results.end());
  for (size_t i = at + 1; i <= to; ++i)
    for (const Value *v : main.ops[i]->operands)
      if (results.count(v))
        return true;
  return false;
}

size_t indexOf(const Function &main, const Op *op) {
  for (size_t i = 0; i < main.ops.size(); ++i)
    if (main.ops[i].get() == op)
      return i;
  return SIZE_MAX;
}

// `moving` (steps of main) out of main in order and back in right before
// (or `after`) `anchor`, together.
void moveBeside(Function &main, const std::unordered_set<const Op *> &moving, const Op *anchor,
                bool after) {
  std::vector<std::unique_ptr<Op>> moved;
  for (auto it = main.ops.begin(); it != main.ops.end();)
    if (moving.count(it->get())) {
      moved.push_back(std::move(*it));
      it = main.ops.erase(it);
    } else {
      ++it;
    }
  size_t at = indexOf(main, anchor) + (after ? 1 : 0);
  main.ops.insert(main.ops.begin() + std::ptrdiff_t(at), std::make_move_iterator(moved.begin()),
                  std::make_move_iterator(moved.end()));
}

// Of `members` (calls in main's order), runs around the last one, then the
// last of those left, and so on; each run's members moved together (main's
// ops reordered). Runs of one step are none.
std::vector<std::vector<Op *>> formRuns(Function &main, std::vector<Op *> members) {
  std::vector<std::vector<Op *>> runs;
  while (members.size() >= 2) {
    Op *anchor = members.back();
    members.pop_back();
    size_t to = indexOf(main, anchor);
    std::vector<Op *> run{anchor}, left;
    for (size_t k = members.size(); k-- > 0;) {
      if (run.size() < kMultiTensorMaxTensors && !readBefore(main, indexOf(main, members[k]), to))
        run.push_back(members[k]);
      else
        left.push_back(members[k]);
    }
    std::reverse(run.begin(), run.end());
    std::reverse(left.begin(), left.end());
    members = std::move(left);
    if (run.size() < 2)
      continue;
    moveBeside(main, {run.begin(), run.end() - 1}, anchor, /*after=*/false);
    runs.push_back(std::move(run));
  }
  std::reverse(runs.begin(), runs.end());
  return runs;
}

} // namespace

std::vector<MultiTensorSummary> formMultiTensorRuns(Module &m, std::vector<GroupCode> &groups,
                                                    KernelDialect dialect) {
  Function &main = m.main();
  std::map<std::string, size_t> calls;
  for (const auto &op : main.ops)
    if (op->is(OpKind::Fused))
      ++calls[op->getString("callee")];
  std::map<std::string, GroupCode *> groupOf;
  for (GroupCode &g : groups)
    groupOf[g.group->name] = &g;
  // The candidates by their erased kernel's source, in main's order.
  Module scratch;
  std::map<std::string, EmittedKernel> kernelOf;
  std::map<std::string, std::vector<Op *>> membersOf;
  std::vector<std::string> order;
  for (const auto &op : main.ops) {
    if (!op->is(OpKind::Fused))
      continue;
    GroupCode *g = groupOf[op->getString("callee")];
    if (!g || calls[g->group->name] != 1 || !g->kernel || !g->library.empty() || g->host ||
        g->kernel->mayFault)
      continue;
    const EmittedKernel &own = *g->kernel;
    bool pointwise = own.kind == KernelKind::Pointwise && own.launch == LaunchKind::Pointwise;
    bool reduction = dialect == KernelDialect::Cuda && own.kind == KernelKind::Reduction &&
                     own.launch == LaunchKind::Split && own.vec == 1;
    if (!(pointwise ? flatGroup(*g->group) : reduction && flatReduction(*g->group)))
      continue;
    std::string why;
    std::optional<EmittedKernel> k = emitMultiTensorKernel(
        erase(*g->group, scratch, g->group->name + "_mt", reduction), dialect, why);
    if (!k)
      continue;
    std::string key = anonymousSource(*k);
    if (!kernelOf.count(key)) {
      kernelOf.emplace(key, *k);
      order.push_back(key);
    }
    membersOf[key].push_back(op.get());
  }
  std::vector<MultiTensorSummary> out;
  int64_t id = 0;
  for (const std::string &key : order) {
    for (std::vector<Op *> &run : formRuns(main, membersOf[key])) {
      ++id;
      const EmittedKernel &k = kernelOf.at(key);
      MultiTensorSummary s{k.symbol, {}};
      for (Op *call : run) {
        call->setAttr("multi_tensor", Attribute(id));
        GroupCode &g = *groupOf[call->getString("callee")];
        g.kernel = k;
        g.kernel->group = g.group->name;
        s.groups.push_back(g.group->name);
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

} // namespace tc
