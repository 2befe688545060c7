#include "ControlFlowSteps.h"
#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/IR/ControlFlow.h"
#include <map>

namespace tc {

std::string controlFlowDescription(const Op &op) {
  std::string callees;
  for (const std::string &attr : calleeAttrs(op))
    callees += (callees.empty() ? "" : ", ") + attr + " @" + op.getString(attr);
  if (op.is(OpKind::If))
    return "If on the device: cond read back (one device-to-host read, a sync); " + callees;
  if (op.is(OpKind::Loop))
    return std::string("Loop on the device: ") + (op.operand(0) ? "trip count and " : "") +
           "each iteration's cond read back (a device-to-host read and sync each), carried "
           "values and scan outputs stay on the device; " +
           callees;
  return "Scan on the device: nothing read back, slices and scan outputs copied on the device; " +
         callees;
}

namespace {

struct Decider {
  const Module &m;
  const std::function<std::vector<HostStep>(const Function &, bool)> &hostStepsIn;
  std::map<const Function *, std::vector<HostStep>> done;
  std::vector<const Function *> active; // being decided: a call back into one is no device work
  // Each function's device control flow: its own ops' lines, then those of
  // their callees (a callee's lines count only when its caller's op runs on
  // the device).
  std::map<const Function *, std::vector<std::string>> device;

  const std::vector<HostStep> &stepsOf(const Function &f, bool body) {
    if (auto it = done.find(&f); it != done.end())
      return it->second;
    active.push_back(&f);
    std::vector<HostStep> steps = hostStepsIn(f, body);
    for (const auto &op : f.ops)
      if (isControlFlowOp(*op))
        if (std::optional<HostStep> h = decide(f, *op, device[&f]))
          steps.push_back(std::move(*h));
    active.pop_back();
    return done[&f] = std::move(steps);
  }

  // nullopt: `op` runs on the device (its section line added).
  std::optional<HostStep> decide(const Function &caller, const Op &op,
                                 std::vector<std::string> &lines) {
    std::string why;
    for (const std::string &attr : calleeAttrs(op)) {
      const Function *f = m.lookup(op.getString(attr));
      if (!f)
        why = attr + " @" + op.getString(attr) + " is not a function of the module";
      else if (std::find(active.begin(), active.end(), f) != active.end())
        why = attr + " @" + f->name + " calls itself back";
      else if (const std::vector<HostStep> &inner = stepsOf(*f, true); !inner.empty())
        why = attr + " @" + f->name + " has a host step (" + inner[0].group + ": " + inner[0].why +
              ")";
      if (!why.empty())
        break;
    }
    if (why.empty()) {
      lines.push_back(controlFlowLine(caller, op, controlFlowDescription(op)));
      for (const std::string &attr : calleeAttrs(op)) {
        const std::vector<std::string> &inner = device[m.lookup(op.getString(attr))];
        lines.insert(lines.end(), inner.begin(), inner.end());
      }
      return std::nullopt;
    }
    return HostStep{"%" + op.result()->name, std::string(op.name()) + " on the host: " + why,
                    onnxNodesOf({&op})};
  }
};

} // namespace

ControlFlowSteps decideControlFlow(
    const Module &m,
    const std::function<std::vector<HostStep>(const Function &, bool body)> &hostStepsIn) {
  Decider d{m, hostStepsIn, {}, {}, {}};
  ControlFlowSteps r;
  r.host = d.stepsOf(m.main(), false);
  r.device = std::move(d.device[&m.main()]);
  return r;
}

} // namespace tc
