// The one code generation driver every backend runs (Codegen.h); a backend
// supplies only its differences (CodegenBackend).
#include "ControlFlowSteps.h"
#include "tc/Analysis/KernelCount.h"
#include "tc/CodeGen/Codegen.h"
#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/CodeGen/LibraryCall.h"
#include "tc/CodeGen/ShapePlanCompile.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/ControlFlow.h"
#include "tc/IR/ElementMove.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Rewrite.h"
#include "tc/Transforms/ShapeComputations.h"
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace tc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "@group: why" -> "why".
std::string reason(const std::string &why) {
  size_t colon = why.find(": ");
  return !why.empty() && why[0] == '@' && colon != std::string::npos ? why.substr(colon + 2) : why;
}

// Whether `g` runs on the host, and why: no kernel and no library, a
// library call the library turns down at the group's types, or one whose
// epilogue has no kernel and which the library does not take whole. Only a
// size the library refuses at run time (tc-run --print-steps says which) is
// left to the run.
void decideHost(GroupCode &g, const CodegenBackend &b) {
  std::string target = b.name();
  if (g.kernel)
    return;
  CodegenBackend::LibraryVerdict verdict;
  if (!g.library.empty())
    verdict = b.libraryVerdict(g);
  g.fuses = verdict.fuses;
  if (g.library.empty()) {
    g.host = true;
    g.hostWhy = "no " + target + " kernel: " + g.kernelWhy;
  } else if (!verdict.refusal.empty()) {
    g.host = true;
    g.hostWhy = g.library + " turns it down: " + verdict.refusal;
  } else if (!g.epilogueWhy.empty() && !verdict.takesEpilogue) {
    g.host = true;
    g.hostWhy = g.library + " does not take its epilogue, which has no " + target +
                " kernel: " + g.epilogueWhy;
  }
}

// Ops the outlining left outside every group run on the host too, and say
// so: views cost nothing, shape computations fold when the runtime plans a
// shape (ShapeComputations.h, the definition the fuse pass keeps them out
// of groups by), the CPU runtime copies Gather/Concat/Split/Slice; anything
// else is a step on the reference kernels. Control-flow ops are
// ControlFlowSteps' to decide; collectives and RankSlices are the runtime's
// own steps where the backend runs collectives.
std::vector<HostStep> hostOps(const Function &f, const CodegenBackend &b) {
  std::unordered_set<const Op *> folded = shapeComputations(f);
  std::vector<HostStep> out;
  for (const auto &op : f.ops) {
    if (op->is(OpKind::Fused) || isControlFlowOp(*op) || folded.count(op.get()) || isViewOp(*op) ||
        (!b.outlineMoves() && isCpuCopyMove(op->kind)) || (b.collectives() && isRankOp(op->kind)))
      continue;
    std::string name = op->results.empty() ? "?" : op->result()->name;
    std::string why = " is no kernel family's op";
    if (op->is(OpKind::NegativeLogLikelihoodLoss) || op->is(OpKind::SoftmaxCrossEntropyLoss))
      why = " that the lower-losses pass leaves alone: " + lossObstacle(*op);
    if (op->is(OpKind::Adagrad) || op->is(OpKind::Adam) || op->is(OpKind::Momentum))
      why = " that the lower-optimizers pass leaves alone: " + optimizerObstacle(*op);
    if (op->is(OpKind::Hardmax))
      why = " that the lower-hardmax pass leaves alone: " + hardmaxObstacle(*op);
    if (op->is(OpKind::RNN) || op->is(OpKind::GRU) || op->is(OpKind::LSTM))
      why = recurrentObstacle(*op).empty()
                ? " that the lower-recurrent pass did not run on (tc-opt -O0)"
                : " that the lower-recurrent pass leaves alone: " + recurrentObstacle(*op);
    if (std::string q = quantizeObstacle(*op); q != "not a quantization op")
      why = " that the lower-quantize pass leaves alone: " + q;
    out.push_back({"%" + name,
                   "no " + std::string(b.name()) + " kernel: " + std::string(op->name()) + why,
                   onnxNodesOf({op.get()})});
  }
  return out;
}

} // namespace

std::vector<std::string> onnxNodesOf(const std::vector<const Op *> &ops) {
  std::vector<std::pair<std::string, std::vector<std::string>>> nodes;
  for (const Op *op : ops) {
    std::string node = op->loc.node;
    if (node.empty())
      node = op->results.empty() ? "?" : "%" + op->result()->name;
    if (nodes.empty() || nodes.back().first != node)
      nodes.push_back({node, {}});
    std::vector<std::string> &types = nodes.back().second;
    std::string type(op->name());
    if (std::find(types.begin(), types.end(), type) == types.end())
      types.push_back(type);
  }
  std::vector<std::string> out;
  for (auto &[node, types] : nodes) {
    std::string s = node + " (";
    for (size_t i = 0; i < types.size(); ++i)
      s += (i ? ", " : "") + types[i];
    out.push_back(s + ")");
  }
  return out;
}
namespace {
std::vector<std::string> nodesOf(const Function &group) {
  std::vector<const Op *> ops;
  for (const auto &op : group.ops)
    ops.push_back(op.get());
  return onnxNodesOf(ops);
}
} // namespace

// A multi-rank program (RankSlice, collectives over 2+ ranks) compiles for a
// backend whose runtime runs collectives (CUDA: NCCL steps); elsewhere it
// runs only on the reference executor's simulated ranks, so no artifact is
// written that would stop at its first collective. A RankSlice shards a
// weight (the runtime uploads its rank's part): of a computed value it is
// refused.
void checkRanks(const Module &m, const CodegenBackend &b) {
  for (const Function *f : walkedFunctions(m))
    for (const auto &op : f->ops) {
      if (!isRankOp(op->kind))
        continue;
      if (!b.collectives() && op->getInt("ranks") > 1)
        fail(op->where(), ": a program over ", op->getInt("ranks"), " ranks does not compile for ",
             b.name(),
             " (no collectives): compile it for a GPU target, or run it on the "
             "reference executor, tc-run --ranks ",
             op->getInt("ranks"));
      if (op->is(OpKind::RankSlice) && !op->operand(0)->isConstant())
        fail(op->where(), ": RankSlice of %", op->operand(0)->name,
             ", a computed value: a rank's part is of a weight (run tc-opt, whose fold-constants "
             "folds what computes it)");
    }
}

CodegenResult generateCode(const Module &input, const CodegenBackend &b, bool withBinary,
                           const DriverOptions &options) {
  checkRanks(input, b);
  CodegenResult r;
  auto t0 = Clock::now();
  std::vector<StoredGuard> guards;
  std::unique_ptr<Module> owned = prepareForCodegen(input, b.outlineMoves(), &guards);
  Module &m = *owned;
  r.timeline.push_back({prepareStageName(b.outlineMoves()), since(t0)});
  t0 = Clock::now();
  EmittedKernels ks = emitKernels(m, b.dialect(), options.variants);
  std::map<std::string, EmittedKernel *> kernelOf;
  for (EmittedKernel &k : ks.kernels) {
    kernelOf[k.group] = &k;
    if (!k.slowPath.empty())
      r.notes.push_back("@" + k.group + ": " + k.slowPath);
  }
  std::map<std::string, std::string> whyOf; // "@group: why" by group
  for (const std::string &why : ks.fallback)
    whyOf[why.substr(1, why.find(':') - 1)] = reason(why);

  std::vector<GroupCode> groups;
  std::set<std::string> seen;
  for (const Function *caller : walkedFunctions(m))
    for (const auto &op : caller->ops) {
      if (!op->is(OpKind::Fused) || !seen.insert(op->getString("callee")).second)
        continue;
      GroupCode g;
      g.group = m.lookup(op->getString("callee"));
      g.call = op.get();
      if (auto k = kernelOf.find(g.group->name); k != kernelOf.end())
        g.kernel = *k->second;
      else
        g.kernelWhy = whyOf[g.group->name];
      g.library = b.libraryFor(*g.group, g.kernel.has_value());
      if (!g.library.empty() && g.kernel && !b.kernelBacksLibrary()) {
        g.kernel.reset();
        g.kernelWhy = g.library + " runs it";
      }
      // A library call writes the anchor's result; the epilogue's own kernel
      // then runs in place over it (or the library folds the epilogue).
      if (!g.library.empty())
        b.prepareLibraryGroup(*m.lookup(g.group->name), g.library);
      if (!g.library.empty())
        if (std::unique_ptr<Function> e = epilogueGroup(*g.group)) {
          std::string why;
          g.epilogue = emitKernel(*e, b.dialect(), why);
          if (!g.epilogue)
            g.epilogueWhy = reason(why);
        }
      decideHost(g, b);
      groups.push_back(std::move(g));
    }

  // Runs of equal pointwise steps as one launch, where a shape plan is
  // stored (the memory plan keeps a run's members apart; an unplanned
  // artifact's steps run one by one).
  std::string noPlan;
  if (options.multiTensor && compileShapePlan(m, noPlan, guards))
    r.multiTensor = formMultiTensorRuns(m, groups, b.dialect());
  std::string table, variants, hostLines;
  b.assemble(groups, r.source, table, variants);
  std::map<std::string, const GroupCode *> codeOf;
  for (const GroupCode &g : groups) {
    codeOf[g.group->name] = &g;
    const std::string &name = g.group->name;
    for (const EmittedKernel *k :
         {g.kernel ? &*g.kernel : nullptr, g.epilogue ? &*g.epilogue : nullptr})
      if (k) {
        r.kernels.push_back(k->group);
        r.kinds.push_back(k->kind);
      }
    if (!g.library.empty())
      r.library.push_back("@" + name + ": " + g.library + ", " +
                          (g.epilogue ? "epilogue kernel " + g.epilogue->symbol
                           : g.epilogueWhy.empty()
                               ? std::string("no epilogue")
                               : "epilogue without a kernel: " + g.epilogueWhy) +
                          (g.fuses.empty() ? "" : "; fuses " + g.fuses));
  }
  // The host steps of the entry (a control-flow op whose callees have one
  // is one itself) and the control-flow ops that run on the device.
  ControlFlowSteps steps = decideControlFlow(m, [&](const Function &f, bool body) {
    std::vector<HostStep> out;
    for (const auto &op : f.ops) {
      if (!op->is(OpKind::Fused))
        continue;
      const GroupCode &g = *codeOf.at(op->getString("callee"));
      if (g.host)
        out.push_back({"@" + g.group->name, g.hostWhy, nodesOf(*g.group)});
      else if (body && !g.kernel && g.library == "onednn") // CUDA's step by step calls
        out.push_back({"@" + g.group->name,                // cuBLASLt/cuDNN; the CPU's no oneDNN
                       g.library + " call, which a step-by-step run makes on the host",
                       nodesOf(*g.group)});
    }
    for (HostStep &h : hostOps(f, b))
      out.push_back(std::move(h));
    return out;
  });
  for (HostStep &h : steps.host) {
    hostLines += h.group + ": " + h.why + "\n";
    r.host.push_back(std::move(h));
  }
  r.controlFlow = steps.device;
  r.timeline.push_back({"emit kernels", since(t0)});
  r.timeline.insert(r.timeline.end(), ks.perGroup.begin(), ks.perGroup.end());
  r.shapePlan = compileShapePlan(m, r.noShapePlan, guards);
  if (!withBinary)
    return r;

  Artifact &a = r.artifact;
  b.compile(r.source, a, r.timeline);
  auto t1 = Clock::now();
  a.setSection(kSectionModule, bytecodeBuffer(m, a.file + ":" + kSectionModule));
  a.setSection(kSectionKernels, table);
  if (!variants.empty())
    a.setSection(kSectionKernelVariants, variants);
  a.setSection(kSectionSource, r.source);
  a.setSection(kSectionHostSteps, hostLines);
  std::string controlFlowLines;
  for (const std::string &line : r.controlFlow)
    controlFlowLines += line + "\n";
  if (!controlFlowLines.empty())
    a.setSection(kSectionControlFlow, controlFlowLines);
  // Without a plan, why not: a runtime without the tools' planner refuses
  // the artifact at load naming it (ShapePlan.h's unplannedShapes).
  StoredShapePlan unplanned;
  unplanned.unplanned = r.noShapePlan;
  a.setSection(kSectionShapePlan, writeShapePlan(r.shapePlan ? *r.shapePlan : unplanned));
  r.timeline.push_back({"write artifact", since(t1)});
  a.setSection(kSectionTimeline, artifactTimeline(input, r.timeline));
  return r;
}

} // namespace tc
