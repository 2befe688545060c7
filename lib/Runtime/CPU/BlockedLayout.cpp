#include "BlockedLayout.h"
#include <algorithm>
#include <functional>

namespace tc {

namespace {
bool isScalar(const Value &v) {
  return std::all_of(v.type.shape.begin(), v.type.shape.end(),
                     [](const Dim &d) { return d.isStatic() && d.size == 1; });
}
} // namespace

std::unordered_map<const Value *, std::string>
planBlockedLayouts(const Function &f, const std::vector<LayoutNeeds> &steps) {
  // Union-find over the values `together` joins.
  std::unordered_map<const Value *, const Value *> parent;
  std::function<const Value *(const Value *)> root = [&](const Value *v) -> const Value * {
    auto [it, fresh] = parent.emplace(v, v);
    if (fresh || it->second == v)
      return v;
    return it->second = root(it->second);
  };
  for (const LayoutNeeds &s : steps)
    for (size_t i = 1; i < s.together.size(); ++i)
      parent[root(s.together[i])] = root(s.together[0]);

  // Per class: the one layout everything asks of it, or "" (plain) once two
  // ask different ones or anything asks for plain.
  struct Class {
    std::optional<std::string> layout;
    bool plain = false;
  };
  std::unordered_map<const Value *, Class> classes;
  auto ask = [&](const Value *v, const std::string &layout) {
    Class &c = classes[root(v)];
    if (layout.empty() || (c.layout && *c.layout != layout))
      c.plain = true;
    c.layout = layout;
  };
  for (const LayoutNeeds &s : steps) {
    for (const auto &[v, layout] : s.fixed)
      ask(v, v->isArgument() || v->isConstant() ? "" : layout); // their bytes are plain
    for (const Value *v : s.together)
      if (v->isArgument() || v->isConstant())
        ask(v, "");
  }
  for (const Value *r : f.results)
    ask(r, "");

  std::unordered_map<const Value *, std::string> blocked;
  for (const auto &[v, unused] : parent) {
    const Class &c = classes[root(v)];
    if (!c.plain && c.layout)
      blocked[v] = *c.layout;
  }
  for (const LayoutNeeds &s : steps) // values no `together` names
    for (const auto &[v, layout] : s.fixed) {
      const Class &c = classes[root(v)];
      if (!c.plain && c.layout)
        blocked[v] = *c.layout;
    }
  return blocked;
}

std::optional<std::vector<size_t>> elementwiseArgs(const Function &group, size_t first) {
  if (group.results.size() != 1)
    return std::nullopt;
  const Shape &shape = group.results[0]->type.shape;
  std::vector<size_t> args;
  for (size_t i = first; i < group.ops.size(); ++i) {
    const Op &op = *group.ops[i];
    if (op.info().category != FusionCategory::Pointwise)
      return std::nullopt;
    for (const Value *r : op.results)
      if (r->type.shape != shape)
        return std::nullopt;
    for (const Value *v : op.operands) {
      if (!v || isScalar(*v))
        continue;
      if (v->type.shape != shape || v->isConstant())
        return std::nullopt;
      auto arg = std::find(group.args.begin(), group.args.end(), v);
      if (arg != group.args.end())
        args.push_back(size_t(arg - group.args.begin()));
    }
  }
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  return args;
}

} // namespace tc
