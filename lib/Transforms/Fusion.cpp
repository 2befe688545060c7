// The fuse pass: groups ops into kernels the way Inductor schedules them,
// then outlines every group of two or more ops into a module function called
// by one Fused op.
//
// Grouping walks the ops in order and puts each op into a group:
//  - a Library op (MatMul, Gemm, Conv, ...) starts a group and takes the
//    pointwise epilogue that follows it (bias, activation, residual, cast);
//  - a Reduction op (ReduceMean, Softmax, LayerNormalization, ...) joins a
//    pure pointwise group feeding its data operand (prologue), else starts one,
//    and takes a pointwise epilogue over its output or its input domain;
//  - a Pointwise op joins a producer's group with the same iteration domain,
//    and merges the other producers' pointwise groups of that domain; but a
//    Cast widening half floats that only reductions read joins no call's or
//    reduction's group, so that it becomes the reductions' prologue (read
//    half, compute f32) rather than an epilogue writing an f32 copy;
//  - Shape and Opaque ops stay on their own, and so do shape computations
//    (ShapeComputations.h: integer arithmetic on sizes that per-shape plans
//    fold; a kernel would put them on the device, out of the fold's reach);
//    but once all are placed, a data move with an index map (MoveMap.h:
//    Slice, Concat, Transpose, Expand, Tile, Pad) read only by one pointwise
//    group joins it as an inlined load, and a Concat of pointwise groups
//    read only by it becomes their root (inlineMoves).
// First, a reduction of few long rows over several runs of axes becomes one
// per run (ReductionRuns.cpp): codegen's parallel strategies take one run;
// a Split whose parts pointwise ops and Concats read becomes Slices
// (SplitSlices.cpp), which they inline; and an Expand that its pointwise
// readers would broadcast anyway goes (ExpandBroadcasts.cpp).
// Joining must keep the group graph acyclic: a group may not both feed and
// consume another group through a third. Outlined groups are then scheduled
// by a stable topological sort over the contracted graph.
#include "ExpandBroadcasts.h"
#include "ReductionRuns.h"
#include "SplitSlices.h"
#include "tc/Analysis/Views.h"
#include "tc/IR/ElementMove.h"
#include "tc/IR/MoveMap.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/KernelParams.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include "tc/Transforms/ShapeComputations.h"
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

enum class Anchor { None, Reduction, Library };

// Small constants (scalars, epsilons, short vectors) are copied into the
// kernel; larger ones (weights) stay operands so the artifact holds them once.
constexpr int64_t kInlineConstantElements = 16;

bool inlineable(const Value *v) {
  if (!v->isConstant())
    return false;
  auto n = staticNumElements(v->type.shape);
  return n && *n <= kInlineConstantElements;
}

// The parameter slots a group's kernel may take (KernelParams.h), less room
// for a family's extra fields. Reached by a train step's optimizer: with a
// loss scale every parameter's update reads the one overflow flag, and
// joining that reduction's group pulled hundreds of updates into one kernel
// that codegen then turned down (a host step).
constexpr size_t kMaxGroupSlots = kKernelParamSlots - 16;

// Whether a value is read only by reductions (as their data;
// LayerNormalizationGrad's x too) and by pointwise ops of its shape whose
// results are (mixed precision's f32 prologues: a batch norm's (x - mean)^2),
// over ValueUses (Rewrite.h); memoized, so shared chains are walked once.
struct ReductionFeeds {
  const ValueUses &uses;
  std::unordered_map<const Value *, bool> memo;

  bool operator()(const Value *v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    bool feeds = !uses.returned(v) && !uses.readers(v).empty();
    for (const Op *user : uses.readers(v)) {
      if (!feeds)
        break;
      if (user->info().category == FusionCategory::Reduction) {
        for (size_t k = 0; k < user->operands.size(); ++k)
          if (user->operands[k] == v && k != 0 &&
              !(k == 2 && user->is(OpKind::LayerNormalizationGrad)))
            feeds = false;
        continue;
      }
      feeds = user->info().category == FusionCategory::Pointwise && user->results.size() == 1 &&
              user->result()->type.shape == v->type.shape && (*this)(user->result());
    }
    return memo[v] = feeds;
  }

  // A Cast that widens half floats to f32 only for reductions to read (the
  // f32 copy mixed precision gives LayerNorm, Softmax, ReduceMean, and its
  // f32 prologues): in a producer's epilogue, the producer would write the
  // f32 copy as well as (or instead of) its half result; as the reduction's
  // prologue, it reads the half values and widens them in registers.
  bool widens(const Op &op) {
    DType from = op.operand(0) ? op.operand(0)->type.dtype : DType::F32;
    return op.is(OpKind::Cast) && (from == DType::F16 || from == DType::BF16) &&
           op.result()->type.dtype == DType::F32 && (*this)(op.result());
  }
};

// A widening Cast read by several ops (CSE merged a batch norm's mean's and
// variance's): each reader but the first gets a Cast of its own, so each
// reduction widens in its own kernel instead of one kernel writing an f32
// copy for the others to read (repvgg_a2: 2 GB more written a step).
bool splitWideningCasts(Function &f) {
  const ValueUses uses(f);
  ReductionFeeds feeds{uses, {}};
  std::vector<std::pair<Op *, std::vector<Op *>>> todo;
  for (const auto &op : f.ops) {
    if (op->results.empty() || !feeds.widens(*op))
      continue;
    std::vector<Op *> readers; // each once (ValueUses lists one an operand)
    for (Op *r : uses.readers(op->result()))
      if (std::find(readers.begin(), readers.end(), r) == readers.end())
        readers.push_back(r);
    if (readers.size() > 1)
      todo.emplace_back(op.get(), std::move(readers));
  }
  for (auto &[cast, readers] : todo) {
    Value *from = cast->result();
    for (size_t i = 1; i < readers.size(); ++i) {
      Op *reader = readers[i];
      auto copy = std::make_unique<Op>(OpKind::Cast);
      copy->attrs = cast->attrs;
      copy->loc = reader->loc;
      copy->operands = cast->operands;
      Value *r = f.newValue(f.uniqueName(from->name), from->type);
      r->def = copy.get();
      copy->results.push_back(r);
      for (Value *&o : reader->operands)
        if (o == from)
          o = r;
      auto at = std::find_if(f.ops.begin(), f.ops.end(),
                             [&](const std::unique_ptr<Op> &o) { return o.get() == reader; });
      f.ops.insert(at, std::move(copy));
    }
  }
  return !todo.empty();
}

struct Group {
  std::vector<Op *> ops; // in original order
  Anchor anchor = Anchor::None;
  Op *anchorOp = nullptr;
  Shape domain; // the iteration space pointwise members share
  size_t first = 0, last = 0;
  bool alive = true;
};

class Grouper {
public:
  Grouper(Function &f, bool siblings)
      : f_(f), siblings_(siblings), shapeOps_(shapeComputations(f)) {
    for (size_t i = 0; i < f.ops.size(); ++i) {
      index_[f.ops[i].get()] = i;
      std::unordered_set<const Value *> read(f.ops[i]->operands.begin(), f.ops[i]->operands.end());
      for (const Value *v : read)
        if (v)
          ++uses_[v];
    }
    // Each op's producer ops by index (reaches walks these, not hashes).
    opProducers_.resize(f.ops.size());
    groupAt_.assign(f.ops.size(), kNoGroup);
    for (size_t i = 0; i < f.ops.size(); ++i)
      for (const Value *v : f.ops[i]->operands)
        if (auto it = v && v->def ? index_.find(v->def) : index_.end(); it != index_.end())
          opProducers_[i].push_back(it->second);
    for (const Value *r : f.results)
      ++uses_[r];
  }

  std::vector<Group> run() {
    for (auto &p : f_.ops)
      place(*p);
    for (size_t g = 0; g < groups_.size(); ++g)
      splitSharedPrologue(g);
    mergeSharedEpilogues();
    inlineMoves();
    if (siblings_)
      mergeSiblings();
    for (size_t g = 0, n = groups_.size(); g < n; ++g)
      splitMixedPointwise(g);
    return std::move(groups_);
  }

  bool isShapeComputation(const Op *op) const { return shapeOps_.count(op) != 0; }
  const ValueUses &uses() const { return all_; }

private:
  Function &f_;
  bool siblings_;                           // mergeSiblings (the pass's `siblings` option)
  std::unordered_set<const Op *> shapeOps_; // folded per shape plan, never a kernel
  std::unordered_map<const Op *, size_t> index_;
  std::unordered_map<const Op *, size_t> groupOf_;
  // The same by op index, and the ops each op reads (for reaches).
  static constexpr size_t kNoGroup = ~size_t(0);
  std::vector<size_t> groupAt_;
  std::vector<std::vector<size_t>> opProducers_;
  mutable std::vector<unsigned> seen_; // reaches' visited groups: == stamp_
  mutable unsigned stamp_ = 0;
  mutable std::vector<size_t> stack_;

  void setGroup(const Op *o, size_t g) {
    groupOf_[o] = g;
    groupAt_[index_.at(o)] = g;
  }
  std::unordered_map<const Value *, size_t> uses_; // ops reading it, and function results
  const ValueUses all_{f_};                        // the ops reading each value, as before grouping
  mutable ReductionFeeds feeds_{all_, {}};         // (memoized answers: mutable)
  std::vector<Group> groups_;

  // A library call's epilogue runs in place over the call's result: a
  // result read elsewhere too (Swin's f16 projection and its f32 copy)
  // keeps its readers out of the group.
  bool libraryResultShared(const Group &g) const {
    if (g.anchor != Anchor::Library)
      return false;
    auto it = uses_.find(g.anchorOp->result());
    return it != uses_.end() && it->second > 1;
  }

  // A call's result that only one pointwise group of its shape reads
  // (SiLU's x * sigmoid(x) reads it twice) is kept out of the call's group
  // while the ops are placed; that whole group is the call's epilogue after
  // all, reading each element before writing it in place.
  void mergeSharedEpilogues() {
    for (size_t g = 0; g < groups_.size(); ++g) {
      const Group &call = groups_[g];
      if (!call.alive || call.ops.size() != 1 || !libraryResultShared(call))
        continue;
      const Value *r = call.anchorOp->result();
      std::set<size_t> readers;
      size_t reads = 0;
      for (const auto &op : f_.ops)
        if (std::find(op->operands.begin(), op->operands.end(), r) != op->operands.end()) {
          readers.insert(groupOf_.at(op.get()));
          ++reads;
        }
      if (readers.size() != 1 || reads != uses_.at(r)) // a returned result counts as a use
        continue;
      size_t h = *readers.begin();
      const Group &epi = groups_[h];
      if (!isolated_.count(h) && epi.alive && epi.anchor == Anchor::None && !hasDropout(epi) &&
          sameDomain(epi.domain, r->type.shape) && epi.first > call.last &&
          !pathThroughOthers(h, g) && combinable(call.ops, epi.ops))
        merge(g, h);
    }
  }

  // Pointwise groups of one domain reading a tensor of that domain, neither
  // depending on the other: one kernel, which reads the shared tensor once
  // and launches once (a SwiGLU backward's two gradients, each computing
  // sigmoid(gate) from gate, up and dy: one kernel a layer less, 3 reads of
  // [tokens, 2816] fewer, qwen3's AMP step). Siblings in a library call's
  // epilogue or a reduction's kernel stay: those read their data there.
  void mergeSiblings() {
    // Each value with several such readers, in the order first read; its
    // reading groups in program order.
    std::vector<std::vector<size_t>> sets;
    std::unordered_set<const Value *> seen;
    for (const auto &op : f_.ops)
      for (const Value *v : op->operands) {
        if (!v || inlineable(v) || !seen.insert(v).second)
          continue;
        std::vector<size_t> gs;
        for (const Op *r : readersOf(v)) {
          size_t g = groupOf_.at(r);
          if (pointwiseGroup(g) && !readsIntegers(groups_[g]) &&
              sameDomain(groups_[g].domain, v->type.shape) &&
              std::find(gs.begin(), gs.end(), g) == gs.end())
            gs.push_back(g);
        }
        if (gs.size() > 1)
          sets.push_back(std::move(gs));
      }
    for (const std::vector<size_t> &gs : sets)
      for (size_t i = 0; i < gs.size(); ++i)
        for (size_t j = i + 1; j < gs.size(); ++j) {
          size_t a = gs[i], b = gs[j];
          if (!groups_[a].alive || !groups_[b].alive || !pointwiseGroup(a) || !pointwiseGroup(b) ||
              !sameDomain(groups_[a].domain, groups_[b].domain) || reaches(producersOf(a), b) ||
              reaches(producersOf(b), a) || !combinable(groups_[a].ops, groups_[b].ops))
            continue;
          merge(a, b);
        }
  }

  // A pure pointwise group (no anchor, not a lone shape/opaque op); only
  // inlineMoves asks, and a training dropout's group reads no inlined move
  // (its mask is a function of the element's index in its own shape).
  bool pointwiseGroup(size_t g) const {
    return groups_[g].alive && !isolated_.count(g) && groups_[g].anchor == Anchor::None &&
           !hasDropout(groups_[g]);
  }

  // The one group every reader of `v` is in: none for a function result.
  std::optional<size_t> readersGroup(const Value *v) const {
    if (all_.returned(v))
      return std::nullopt;
    std::optional<size_t> g;
    for (const Op *op : readersOf(v)) {
      size_t h = groupOf_.at(op);
      if (g && *g != h)
        return std::nullopt;
      g = h;
    }
    return g;
  }

  const std::vector<Op *> &readersOf(const Value *v) const { return all_.readers(v); }

  // A lone move with an index map, which a pointwise kernel reads through.
  Op *inlinableMove(size_t g) const {
    const Group &grp = groups_[g];
    if (!grp.alive || !isolated_.count(g) || grp.ops.size() != 1 || isViewOp(*grp.ops[0]) ||
        shapeOps_.count(grp.ops[0]) || !moveMap(*grp.ops[0]))
      return nullptr;
    return grp.ops[0];
  }

  // Copies that a consumer's index map makes unnecessary, to a fixpoint:
  //  1. a move read only by one pointwise group joins it (its operands
  //     become the group's inputs; the kernel reads them remapped);
  //  2. a Concat no pointwise group takes becomes a pointwise group over
  //     its result when a pointwise group read only by it joins it (each
  //     element evaluates the one part its index selects: RoPE's last
  //     Concat with the pass-through half);
  //  3. a pointwise group read only by the moves a group inlined (RoPE's
  //     Neg of one half, before the Concat) joins that group.
  // Expand and Tile read elements more than once, so a group behind them
  // stays its own kernel rather than being recomputed per read.
  void inlineMoves() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t s = 0; s < groups_.size(); ++s) {
        Op *move = inlinableMove(s);
        if (!move)
          continue;
        std::optional<size_t> g = readersGroup(move->result());
        if (g && *g != s && pointwiseGroup(*g) && !pathThroughOthers(*g, s) && fitsInputs(*g, s) &&
            combinable(groups_[*g].ops, groups_[s].ops)) {
          isolated_.erase(s);
          merge(*g, s);
          changed = true;
          continue;
        }
        if (!move->is(OpKind::Concat))
          continue;
        for (const Value *v : move->operands)
          if (auto p = producer(v); p && *p != s && pointwiseGroup(*p) && onlyFeeds(*p, s) &&
                                    !pathThroughOthers(s, *p) && fitsInputs(s, *p) &&
                                    combinable(groups_[s].ops, groups_[*p].ops)) {
            if (isolated_.erase(s))
              groups_[s].domain = move->result()->type.shape;
            merge(s, *p);
            changed = true;
          }
      }
      for (size_t p = 0; p < groups_.size(); ++p) {
        if (!pointwiseGroup(p))
          continue;
        for (size_t g : readerGroupsOf(p))
          if (g != p && pointwiseGroup(g) && onlyFeeds(p, g) && readOnlyByMoves(p, g) &&
              !pathThroughOthers(g, p) && fitsInputs(g, p) &&
              combinable(groups_[g].ops, groups_[p].ops)) {
            merge(g, p);
            changed = true;
            break;
          }
      }
    }
  }

  // Groups a and b together read at most kMaxInlinedInputs tensors: an
  // inlined Concat selects its part per element (fitsBuffers bounds the
  // kernel's parameters). An unrolled RNN's Y, a
  // Concat of every step's h, stays a copy rather than one group reading
  // all steps.
  bool fitsInputs(size_t a, size_t b) const {
    constexpr size_t kMaxInlinedInputs = 64;
    std::unordered_set<const Value *> made, read;
    for (size_t g : {a, b})
      for (const Op *op : groups_[g].ops)
        made.insert(op->results.begin(), op->results.end());
    for (size_t g : {a, b})
      for (const Op *op : groups_[g].ops)
        for (const Value *v : op->operands)
          if (v && !made.count(v) && !inlineable(v))
            read.insert(v);
    return read.size() <= kMaxInlinedInputs;
  }

  // Every result of group p is read only by ops of p and g (and by nothing
  // outside the function); a reader not placed yet is neither.
  bool onlyFeeds(size_t p, size_t g) const {
    for (const Op *op : groups_[p].ops)
      for (const Value *r : op->results) {
        if (all_.returned(r))
          return false;
        for (const Op *reader : readersOf(r)) {
          auto it = groupOf_.find(reader);
          if (it == groupOf_.end() || (it->second != p && it->second != g))
            return false;
        }
      }
    return true;
  }
  // A pointwise group h placed before reduction group g's anchor, over the
  // anchor's input like the epilogue op of shape `s` that joined g, read by
  // g alone: it joins as prologue that only the epilogue reads, so the
  // kernel computes it per element in its last pass instead of another
  // kernel writing it for this one to read (T5's RMSNorm backward: the
  // residual gradient plus dxhat * rstd, and 2x for the variance's
  // gradient, were two launches a norm).
  bool inputOnlyFeeds(size_t h, size_t g, const Shape &s) const {
    const Op &anchor = *groups_[g].anchorOp;
    return anchor.operand(0) && anchor.operand(0)->type.shape == s && groups_[h].domain == s &&
           onlyFeeds(h, g);
  }

  // A pointwise group h placed after library group g's call, over the
  // call's result shape, read by g alone: the epilogue kernel computes it
  // per element after the call (a ReLU backward's mask y > 0 beside the
  // data gradient's GEMM was a kernel writing a bool tensor for the
  // epilogue to read: T5's FFN, 12 a step).
  bool afterCallOnlyFeeds(size_t h, size_t g, const Shape &s) const {
    const Op &call = *groups_[g].anchorOp;
    return groups_[h].first > index_.at(&call) && call.result()->type.shape == s &&
           groups_[h].domain == s && onlyFeeds(h, g);
  }

  // The groups reading some result of group p.
  std::set<size_t> readerGroupsOf(size_t p) const {
    std::set<size_t> out;
    for (const Op *op : groups_[p].ops)
      for (const Value *r : op->results)
        for (const Op *reader : readersOf(r))
          out.insert(groupOf_.at(reader));
    return out;
  }

  // The ops of g reading p's results are moves that read each element at
  // most once (Slice, Concat, Transpose, Pad): p's code is inlined, not repeated.
  bool readOnlyByMoves(size_t p, size_t g) const {
    for (const Op *op : groups_[p].ops)
      for (const Value *r : op->results)
        for (const Op *reader : readersOf(r))
          if (groupOf_.at(reader) == g &&
              !((reader->is(OpKind::Slice) || reader->is(OpKind::Concat) ||
                 reader->is(OpKind::Transpose) || reader->is(OpKind::Pad)) &&
                moveMap(*reader)))
            return false;
    return true;
  }

  size_t newGroup(Op &op, Anchor a, Shape domain) {
    Group g;
    g.ops = {&op};
    g.anchor = a;
    g.anchorOp = a == Anchor::None ? nullptr : &op;
    g.domain = std::move(domain);
    g.first = g.last = index_.at(&op);
    groups_.push_back(std::move(g));
    setGroup(&op, groups_.size() - 1);
    return groups_.size() - 1;
  }

  void join(size_t g, Op &op) {
    groups_[g].ops.push_back(&op);
    groups_[g].last = index_.at(&op);
    setGroup(&op, g);
  }

  // The group producing `v`, if an op of this function does.
  std::optional<size_t> producer(const Value *v) const {
    if (!v || !v->def)
      return std::nullopt;
    auto it = groupOf_.find(v->def);
    return it == groupOf_.end() ? std::nullopt : std::optional(it->second);
  }

  // Groups whose results `g`'s ops read (other than g itself).
  std::set<size_t> producersOf(size_t g) const {
    std::set<size_t> out;
    for (const Op *op : groups_[g].ops)
      for (const Value *v : op->operands)
        if (auto p = producer(v); p && *p != g)
          out.insert(*p);
    return out;
  }

  // Whether a group of `starts` reads, directly or through other groups, a
  // result of group `target`: one walk over the ops' producer indices with
  // stamped visits (the queries are many: one per join tried; a set-based
  // walk made fuse 80% of densenet121's train-step compile).
  // No pruning by program order: a group's ops need not be contiguous (an
  // AMP step's Adam update joins the gradient's group early in the step and
  // reads the bias corrections computed after the overflow check), so a
  // group wholly before `target` may still depend on it through one that is not.
  template <typename Starts> bool reaches(const Starts &starts, size_t target) const {
    if (seen_.size() < groups_.size())
      seen_.resize(groups_.size(), 0);
    if (++stamp_ == 0) { // wrapped: clear the stamps
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    stack_.clear();
    for (size_t s : starts) {
      if (s == target)
        return true;
      if (seen_[s] != stamp_) {
        seen_[s] = stamp_;
        stack_.push_back(s);
      }
    }
    while (!stack_.empty()) {
      size_t g = stack_.back();
      stack_.pop_back();
      for (const Op *o : groups_[g].ops)
        for (size_t p : opProducers_[index_.at(o)]) {
          size_t h = groupAt_[p];
          if (h == kNoGroup || seen_[h] == stamp_)
            continue;
          if (h == target)
            return true;
          seen_[h] = stamp_;
          stack_.push_back(h);
        }
    }
    return false;
  }

  // Whether `a` reaches `b` through some third group (a direct edge between
  // them becomes internal when they merge).
  bool pathThroughOthers(size_t a, size_t b) const {
    std::set<size_t> starts = producersOf(a);
    starts.erase(b);
    return reaches(starts, b);
  }

  // The producer groups of op's operands.
  std::set<size_t> operandGroups(const Op &op) const {
    std::set<size_t> out;
    for (const Value *v : op.operands)
      if (auto p = producer(v))
        out.insert(*p);
    return out;
  }

  // Whether `op` may join group g without making the group graph cyclic:
  // none of op's other producers may depend on g.
  bool acyclicJoin(const Op &op, size_t g) const {
    std::set<size_t> starts = operandGroups(op);
    starts.erase(g);
    return !reaches(starts, g);
  }

  bool sameDomain(const Shape &a, const Shape &b) const { return a == b; }

  // Whether pointwise `op` (result shape `s`) fits group g's iteration space.
  bool fitsDomain(const Group &g, const Shape &s) const {
    switch (g.anchor) {
    case Anchor::None: return sameDomain(g.domain, s);
    case Anchor::Library: return sameDomain(g.anchorOp->result()->type.shape, s);
    case Anchor::Reduction:
      // ArgMax / ArgMin write their i64 index as the group's last value: no
      // epilogue (Hardmax's compare after its ArgMax is a kernel of its own).
      if (g.anchorOp->is(OpKind::ArgMax) || g.anchorOp->is(OpKind::ArgMin))
        return false;
      // An epilogue over the reduced values or back over the reduced rows
      // (x - mean, softmax's divide): one persistent-reduction kernel; back
      // over rows that are not X's trailing axes only where that kernel, a
      // thread per row, is not a few threads over long rows (batch norm's
      // forward on NHWC with its normalization as the epilogue ran 64
      // threads over resnet50's 401408 pixels twice; without it the
      // statistic is a `columns` kernel, the normalization a pointwise one).
      return sameDomain(g.anchorOp->result()->type.shape, s) ||
             (sameDomain(g.domain, s) && threadPerRowFits(*g.anchorOp));
    }
    return false;
  }

  // The reduction kernel reads an epilogue op's outside operands at the
  // result's index (Reduction.cpp): each of the result's shape or a single
  // element, no broadcast one (a grouped-query dk's RoPE multiply by a
  // [1, 1, S, D] table joined its group-sum reduction: a host step).
  bool epilogueFits(const Group &g, const std::vector<Op *> &ops) const {
    if (g.anchor != Anchor::Reduction)
      return true;
    const Shape &rs = g.anchorOp->result()->type.shape;
    if (rs == g.domain)
      return true;
    std::unordered_set<const Value *> inside;
    for (const std::vector<Op *> *list : {&g.ops, &ops})
      for (const Op *o : *list)
        inside.insert(o->results.begin(), o->results.end());
    for (const Op *o : ops) {
      if (o->result()->type.shape != rs)
        continue;
      for (const Value *v : o->operands)
        if (v && !inside.count(v) && v->type.shape != rs && !hasOneElement(v))
          return false;
    }
    return true;
  }

  void place(Op &op) {
    FusionCategory cat = op.info().category;
    if (op.is(OpKind::Fused) || op.results.empty() || cat == FusionCategory::Shape ||
        cat == FusionCategory::Opaque || isWindowOp(op.kind) || shapeOps_.count(&op)) {
      isolated_.insert(newGroup(op, Anchor::None, {})); // shape/opaque ops stay alone
      return;
    }
    if (cat == FusionCategory::Library) {
      newGroup(op, Anchor::Library, op.result()->type.shape);
      return;
    }
    if (cat == FusionCategory::Reduction) {
      const Value *data = op.operand(0);
      Shape domain = data ? data->type.shape : op.result()->type.shape;
      if (auto p = producer(data);
          p && !isolated_.count(*p) && groups_[*p].anchor == Anchor::None &&
          sameDomain(groups_[*p].domain, domain) && !readsIntegers(groups_[*p]) &&
          acyclicJoin(op, *p) && combinable(groups_[*p].ops, {&op})) {
        join(*p, op);
        groups_[*p].anchor = Anchor::Reduction;
        groups_[*p].anchorOp = &op;
        joinSecondRow(*p, op);
        return;
      }
      joinSecondRow(newGroup(op, Anchor::Reduction, domain), op);
      return;
    }
    placePointwise(op);
  }

  // LayerNormalizationGrad reads dY's row beside X's: a pointwise group of
  // the domain producing dY (the residual gradients' sum, the Cast widening
  // it under AMP) becomes prologue too, so dY is not written and read back.
  void joinSecondRow(size_t g, const Op &op) {
    if (!op.is(OpKind::LayerNormalizationGrad))
      return;
    auto p = producer(op.operand(2));
    if (p && *p != g && !isolated_.count(*p) && groups_[*p].alive &&
        groups_[*p].anchor == Anchor::None && sameDomain(groups_[*p].domain, groups_[g].domain) &&
        !readsIntegers(groups_[*p]) && !pathThroughOthers(g, *p) && !pathThroughOthers(*p, g) &&
        combinable(groups_[g].ops, groups_[*p].ops))
      merge(g, *p);
  }

  // A group with a training dropout: a pointwise kernel's (placePointwise).
  static bool hasDropout(const Group &g) {
    return std::any_of(g.ops.begin(), g.ops.end(),
                       [](const Op *o) { return o->is(OpKind::PhiloxDropout); });
  }

  // Integer data (a loss's labels, quantized tensors, an i32 product's
  // cast) only in pointwise kernels: the other families' prologues and
  // epilogues are float code (Classify.cpp rejects such a group), so an op
  // reading or writing integers joins no call's or reduction's group, and a
  // pointwise group holding one stays a kernel of its own.
  static bool touchesIntegers(const Op &o) {
    auto integer = [](const Value *v) { return v && isInteger(v->type.dtype); };
    return std::any_of(o.operands.begin(), o.operands.end(), integer) ||
           std::any_of(o.results.begin(), o.results.end(), integer);
  }
  bool readsIntegers(const Group &g) const {
    return std::any_of(g.ops.begin(), g.ops.end(), [](const Op *o) { return touchesIntegers(*o); });
  }

  bool widensForReductions(const Op &op) const { return feeds_.widens(op); }
  // A group holds one reduction's widening Casts: another's (a second
  // reduction of the same values, splitWideningCasts) starts its own group,
  // or the first reduction's kernel would write its f32 copy.
  bool widensForAReduction(const Group &g) const {
    return std::any_of(g.ops.begin(), g.ops.end(),
                       [&](const Op *o) { return widensForReductions(*o); });
  }

  // `op`, over group g's input domain, reads g's total (a reduction to one
  // element): such an epilogue is a second pass over the domain, a kernel
  // of its own in all but name, and there it would take ops from their
  // other producers: a train step's update selects (Where(ok, new, old) of
  // an embedding table and an LM head the shape of the head's gradient,
  // whose overflow sum is such a total) left the updates' kernel, which
  // then wrote its results out of place (olmo: six 196 MiB tables, its peak
  // 1.3x PyTorch eager's), not over the state. Per-element values beside
  // the total (an update's moments from the summed gradient) still join:
  // one pass.
  bool afterTotal(const Group &g, const Op &op) const {
    if (g.anchor != Anchor::Reduction || !hasOneElement(g.anchorOp->result()) ||
        op.result()->type.shape == g.anchorOp->result()->type.shape)
      return false;
    std::unordered_set<const Op *> in(g.ops.begin(), g.ops.end());
    std::vector<const Value *> todo(op.operands.begin(), op.operands.end());
    std::unordered_set<const Value *> seen;
    while (!todo.empty()) {
      const Value *v = todo.back();
      todo.pop_back();
      if (!v || !seen.insert(v).second || !v->def || !in.count(v->def))
        continue;
      if (v->def == g.anchorOp)
        return true;
      todo.insert(todo.end(), v->def->operands.begin(), v->def->operands.end());
    }
    return false;
  }

  void placePointwise(Op &op) {
    const Shape &s = op.result()->type.shape;
    // Candidates: anchored groups first, then the most recent; for a Cast
    // widening for reductions, pointwise groups only (the reduction joins
    // them as a whole, or this Cast alone: place()).
    bool widens = widensForReductions(op);
    std::vector<size_t> cands;
    // A training dropout (its i64 seed and offset, its element index) and
    // integer data are pointwise kernels' only: they join no call's or
    // reduction's group.
    bool pointwiseOnly = widens || op.is(OpKind::PhiloxDropout) || touchesIntegers(op);
    for (size_t g : operandGroups(op))
      if (!isolated_.count(g) && fitsDomain(groups_[g], s) && !libraryResultShared(groups_[g]) &&
          !(pointwiseOnly && groups_[g].anchor != Anchor::None) && !afterTotal(groups_[g], op) &&
          !(widens && widensForAReduction(groups_[g])))
        cands.push_back(g);
    std::sort(cands.begin(), cands.end(), [&](size_t a, size_t b) {
      auto rankOf = [&](size_t g) { return groups_[g].anchor == Anchor::None ? 0 : 1; };
      if (rankOf(a) != rankOf(b))
        return rankOf(a) > rankOf(b);
      return groups_[a].last > groups_[b].last;
    });
    for (size_t g : cands) {
      if (!acyclicJoin(op, g) || !combinable(groups_[g].ops, {&op}) ||
          !epilogueFits(groups_[g], {&op}))
        continue;
      join(g, op);
      // Pull the other pointwise producers of this domain in as well; not
      // into a library call's group, whose ops after the call are the
      // epilogue (a producer there would run before the MatMul/Conv, and no
      // library or kernel takes that: T5's position bias, Swin's masks);
      // (but one placed after the call, over its result, that only the
      // epilogue reads is epilogue too: afterCallOnlyFeeds);
      // into a reduction's only from after it (an op before it that does
      // not feed its input is no prologue: the AMP step's Reciprocal of the
      // loss scale, pulled into the last gradient sum's group by the Sum
      // of all, was a host step), or from before it over the reduction's
      // input where only this group reads it (inputOnlyFeeds).
      for (size_t h : cands)
        if (h != g && (groups_[g].anchor != Anchor::Library || afterCallOnlyFeeds(h, g, s)) &&
            groups_[h].alive && groups_[h].anchor == Anchor::None && !pathThroughOthers(g, h) &&
            !pathThroughOthers(h, g) &&
            !(groups_[g].anchor == Anchor::Reduction &&
              (readsIntegers(groups_[h]) ||
               (groups_[h].first < index_.at(groups_[g].anchorOp) && !inputOnlyFeeds(h, g, s)))) &&
            combinable(groups_[g].ops, groups_[h].ops) && epilogueFits(groups_[g], groups_[h].ops))
          merge(g, h);
      return;
    }
    newGroup(op, Anchor::None, s);
  }

  // Whether values of group g are read outside it in more than one shape.
  bool hasMixedResults(const Group &grp) {
    std::unordered_map<const Value *, size_t> inside; // reads by the group's ops
    for (const Op *o : grp.ops)
      for (const Value *v :
           std::unordered_set<const Value *>(o->operands.begin(), o->operands.end()))
        if (v)
          ++inside[v];
    std::optional<Shape> shape;
    bool mixed = false;
    for (const Op *o : grp.ops)
      for (const Value *r : o->results)
        if (auto it = uses_.find(r); it != uses_.end() && it->second > inside[r]) {
          mixed |= shape && *shape != r->type.shape;
          shape = r->type.shape;
        }
    return mixed;
  }

  // A reduction group whose prologue values are read elsewhere too (an SE
  // block's SiLU, read by the ReduceMean and the later Mul) would have
  // results of the input's shape next to the reduced ones, which no kernel
  // writes: the ops before the reduction become a pointwise group of their
  // own, which only feeds the rest (so the group graph stays acyclic).
  void splitSharedPrologue(size_t g) {
    Group &grp = groups_[g];
    if (!grp.alive || grp.anchor != Anchor::Reduction || grp.ops.front() == grp.anchorOp)
      return;
    if (!hasMixedResults(grp))
      return;
    size_t at = index_.at(grp.anchorOp);
    // A Cast widening for the reductions stays their prologue, with the ops
    // reading it (mixed precision's f32 (x - mean)^2): the split-off ops (a
    // call's epilogue, often) then write only the half values.
    std::unordered_set<const Value *> widened;
    for (const Op *o : grp.ops)
      if (index_.at(o) < at && (widensForReductions(*o) ||
                                std::any_of(o->operands.begin(), o->operands.end(),
                                            [&](const Value *v) { return widened.count(v) != 0; })))
        widened.insert(o->results.begin(), o->results.end());
    splitOff(g, grp.domain,
             [&](const Op *o) { return index_.at(o) < at && !widened.count(o->result()); });
  }

  // Moves group g's ops that `moves` picks (none of them reading a result
  // of one that stays) into a new pointwise group over `domain`, which then
  // feeds g; g keeps its last op.
  void splitOff(size_t g, const Shape &domain, const std::function<bool(const Op *)> &moves) {
    Group pro;
    pro.domain = domain;
    for (Op *o : groups_[g].ops)
      if (moves(o))
        pro.ops.push_back(o);
    if (pro.ops.empty())
      return;
    std::erase_if(groups_[g].ops, moves);
    groups_[g].first = index_.at(groups_[g].ops.front());
    pro.first = index_.at(pro.ops.front());
    pro.last = index_.at(pro.ops.back());
    groups_.push_back(std::move(pro));
    for (Op *o : groups_.back().ops)
      setGroup(o, groups_.size() - 1);
  }

  // A pointwise group whose values are read outside in two shapes has no
  // kernel (a pointwise kernel writes its results over one domain): a
  // rematerialized RMSNorm rstd [B, T, 1] (Rematerialize.cpp) in the group of
  // the [B, T, D] gradients it scales, and read by the norm's weight
  // gradient too, was a host step of llama's train step on the H200. Its
  // leading ops of another shape (reading nothing the rest computes) become
  // a group of their own that feeds the rest.
  void splitMixedPointwise(size_t g) {
    if (!groups_[g].alive || groups_[g].anchor != Anchor::None || isolated_.count(g) ||
        groups_[g].ops.size() < 2 || !hasMixedResults(groups_[g]))
      return;
    const Shape domain = groups_[g].ops.back()->result()->type.shape;
    std::unordered_set<const Op *> inside(groups_[g].ops.begin(), groups_[g].ops.end());
    std::unordered_set<const Op *> lead;
    std::optional<Shape> leadShape;
    for (Op *o : groups_[g].ops) {
      const Shape &s = o->result()->type.shape;
      if (s == domain || (leadShape && s != *leadShape))
        continue;
      if (std::all_of(o->operands.begin(), o->operands.end(), [&](const Value *v) {
            return !v || !v->def || !inside.count(v->def) || lead.count(v->def);
          })) {
        lead.insert(o);
        leadShape = s;
      }
    }
    if (lead.empty())
      return;
    groups_[g].domain = domain;
    splitOff(g, *leadShape, [&](const Op *o) { return lead.count(o) != 0; });
  }

  // Whether ops `a` and `b` may be one group: of one phase. A train step's
  // backward op in a forward kernel would run in the forward and its result
  // be kept until the backward (a ReLU's mask, a value rematerialize
  // recomputes); a weight gradient's GEMM with its optimizer update as the
  // epilogue would run with the updates, after the whole backward, keeping
  // the activation and the result's gradient it reads alive until then.
  bool combinable(const std::vector<Op *> &a, const std::vector<Op *> &b) const {
    std::optional<Phase> phase;
    for (const auto *ops : {&a, &b})
      for (const Op *o : *ops) {
        if (phase && *phase != o->loc.phase)
          return false;
        phase = o->loc.phase;
      }
    return fitsBuffers(a, b);
  }

  // Whether ops `a` and `b` as one group stay within kMaxGroupSlots: their
  // operands from outside and their values read outside, each a pointer and
  // its dims. Small groups pass without counting (the count walks every op).
  bool fitsBuffers(const std::vector<Op *> &a, const std::vector<Op *> &b) const {
    if (a.size() + b.size() < kMaxGroupSlots / 16)
      return true;
    std::unordered_set<const Value *> defined, outside;
    std::unordered_map<const Value *, size_t> readsInside; // by distinct ops of a and b
    for (const auto *ops : {&a, &b})
      for (const Op *o : *ops)
        defined.insert(o->results.begin(), o->results.end());
    size_t slots = 0;
    for (const auto *ops : {&a, &b})
      for (const Op *o : *ops)
        for (const Value *v :
             std::unordered_set<const Value *>(o->operands.begin(), o->operands.end())) {
          if (!v)
            continue;
          if (defined.count(v))
            ++readsInside[v];
          else if (!inlineable(v) && outside.insert(v).second)
            slots += kernelParamSlots(v);
        }
    for (const Value *r : defined)
      if (auto it = uses_.find(r); it != uses_.end() && it->second > readsInside[r])
        slots += kernelParamSlots(r); // read outside the group too: a result
    return slots <= kMaxGroupSlots;
  }

  void merge(size_t into, size_t from) {
    Group &a = groups_[into], &b = groups_[from];
    for (Op *o : b.ops)
      setGroup(o, into);
    a.ops.insert(a.ops.end(), b.ops.begin(), b.ops.end());
    std::sort(a.ops.begin(), a.ops.end(),
              [&](const Op *x, const Op *y) { return index_.at(x) < index_.at(y); });
    a.first = std::min(a.first, b.first);
    a.last = std::max(a.last, b.last);
    b.ops.clear();
    b.alive = false;
  }

  std::unordered_set<size_t> isolated_;
};

std::string snakeName(std::string_view opName) {
  std::string s;
  for (char c : opName)
    s += char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "fused_conv_add_relu_3": the distinct op names in order (at most four) and
// the group's index among the module's groups.
std::string groupName(const Group &g, size_t index) {
  std::string name = "fused";
  std::vector<std::string_view> seen;
  for (const Op *op : g.ops) {
    if (std::find(seen.begin(), seen.end(), op->name()) != seen.end())
      continue;
    seen.push_back(op->name());
    if (seen.size() > 4)
      break;
    name += "_" + snakeName(op->name());
  }
  return name + "_" + std::to_string(index);
}

const char *anchorName(Anchor a) {
  switch (a) {
  case Anchor::None: return "pointwise";
  case Anchor::Reduction: return "reduction";
  case Anchor::Library: return "library";
  }
  return "pointwise";
}

// Moves group g's ops into a new function of `m` and returns the Fused op
// (not yet inserted into f) that calls it.
// Sliding-window ops (pooling, ConvTranspose) are opaque to fusion, but a
// kernel (the Pool family) or a library computes them: codegen outlines a
// lone one.
// So do Attention (with its log-sum-exp result or not) and AttentionGrad.
bool isLonePooling(const Group &g) {
  if (g.ops.size() != 1)
    return false;
  const Op &op = *g.ops[0];
  if (op.is(OpKind::Attention) || op.is(OpKind::AttentionGrad))
    return true;
  return (op.results.size() == 1 ||
          (op.is(OpKind::MaxPool) && op.results.size() == 2)) && // and Indices
         isWindowOp(op.kind);
}

// Tensor data, not a shape computation (which per-shape plans fold, so it
// stays an op): float or bool, or integers of rank 2 and up (token ids,
// position ids and masks derived from them: GPT-2's Expand/Slice/GatherND).
bool isTensorData(const Value *v) {
  DType t = v->type.dtype;
  return isFloat(t) || t == DType::Bool || v->type.rank() >= 2;
}

// A lone data-movement op on tensor data, or making it (T5's full_like: an
// Expand of a scalar to [seq, seq]); with `copies`, also those the CPU
// runtime copies itself (Gather, Concat, Split, Slice). Not a contiguous
// Slice: a view (Views.h), which no kernel runs.
bool isLoneMove(const Group &g, bool copies) {
  return g.ops.size() == 1 && isElementMove(g.ops[0]->kind) && !isViewOp(*g.ops[0]) &&
         (copies || !isCpuCopyMove(g.ops[0]->kind)) &&
         (isTensorData(g.ops[0]->operand(0)) || isTensorData(g.ops[0]->results[0]));
}

// A lone index move reading or making tensor data: a kernel on every
// target. A Range or ConstantOfShape here is no shape computation (those
// are kept out before): its bounds or shape are data.
bool isLoneIndexMove(const Group &g) {
  const Op &op = *g.ops[0];
  return g.ops.size() == 1 && isIndexMove(op.kind) && op.results.size() == 1 &&
         (isTensorData(op.result()) || op.is(OpKind::Range) || op.is(OpKind::ConstantOfShape) ||
          (!op.operands.empty() && op.operand(0) && isTensorData(op.operand(0))));
}

std::unique_ptr<Op> outline(Module &m, const ValueUses &uses, const Group &g,
                            const std::string &name) {
  std::unordered_set<const Op *> members(g.ops.begin(), g.ops.end());
  std::unordered_set<const Value *> inside;
  for (const Op *op : g.ops)
    inside.insert(op->results.begin(), op->results.end());

  // Results read outside the group (by another op or as function results).
  std::unordered_set<const Value *> usedOutside;
  for (const Value *r : inside)
    if (uses.returned(r) || std::any_of(uses.readers(r).begin(), uses.readers(r).end(),
                                        [&](const Op *reader) { return !members.count(reader); }))
      usedOutside.insert(r);

  Function *callee = m.addFunction(name);
  std::unordered_map<const Value *, Value *> map;
  std::vector<Value *> operands;
  for (const Op *op : g.ops)
    for (Value *v : op->operands) {
      if (!v || inside.count(v) || map.count(v))
        continue;
      if (inlineable(v)) {
        map[v] = callee->addConstant(v->name, v->type, *v->data, v->loc);
      } else {
        map[v] = callee->addArgument(v->name, v->type);
        operands.push_back(v);
      }
    }
  for (Op *op : g.ops) {
    std::vector<Value *> ins;
    for (Value *v : op->operands)
      ins.push_back(v ? map.at(v) : nullptr);
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (const Value *r : op->results) {
      names.push_back(r->name);
      types.push_back(r->type);
    }
    Op *clone =
        callee->addOp(op->kind, std::move(ins), std::move(names), std::move(types), op->loc);
    clone->attrs = op->attrs;
    for (size_t i = 0; i < op->results.size(); ++i)
      map[op->results[i]] = clone->results[i];
  }

  auto fused = std::make_unique<Op>(OpKind::Fused);
  fused->operands = std::move(operands);
  fused->loc = (g.anchorOp ? g.anchorOp : g.ops.front())->loc;
  // A group's phase is the latest of its ops' (forward < backward <
  // optimizer): the last gradient op fused into the update is optimizer work.
  for (const Op *op : g.ops)
    fused->loc.phase = std::max(fused->loc.phase, op->loc.phase);
  fused->setAttr("callee", Attribute(name));
  // A lone data-movement op is not pointwise: it reads other positions than
  // it writes (the memory planner must not run it in place).
  bool moves = g.ops.size() == 1 &&
               (g.ops[0]->info().category == FusionCategory::Shape || isIndexMove(g.ops[0]->kind));
  // Nor is a group with inlined moves (RoPE reads x at i and i +- d/2).
  moves |= g.anchor == Anchor::None && g.ops.size() > 1 &&
           std::any_of(g.ops.begin(), g.ops.end(), [](const Op *op) { return moveMap(*op); });
  std::string kind = moves ? "shape" : isLonePooling(g) ? "library" : anchorName(g.anchor);
  fused->setAttr("kind", Attribute(kind));
  // A lone scatter starts its result as a copy of its data: the planner may
  // write the result over that operand (MemoryPlan.cpp mayOverwrite).
  if (g.ops.size() == 1 && startsFromData(g.ops[0]->kind))
    if (auto at = std::find(fused->operands.begin(), fused->operands.end(), g.ops[0]->operand(0));
        at != fused->operands.end())
      fused->setAttr("overwrites", Attribute(int64_t(at - fused->operands.begin())));
  for (const Op *op : g.ops)
    for (Value *r : op->results)
      if (usedOutside.count(r)) {
        callee->results.push_back(map.at(r));
        r->def = fused.get();
        r->resultIndex = unsigned(fused->results.size());
        fused->results.push_back(r);
      }
  return fused;
}

// Reorders f's ops topologically, breaking ties by original position.
void scheduleStable(Function &f) {
  size_t n = f.ops.size();
  std::unordered_map<const Op *, size_t> pos;
  for (size_t i = 0; i < n; ++i)
    pos[f.ops[i].get()] = i;
  std::vector<std::vector<size_t>> users(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> preds;
    for (const Value *v : f.ops[i]->operands)
      if (v && v->def)
        preds.insert(pos.at(v->def));
    pending[i] = preds.size();
    for (size_t p : preds)
      users[p].push_back(i);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  std::vector<std::unique_ptr<Op>> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(std::move(f.ops[i]));
    for (size_t u : users[i])
      if (--pending[u] == 0)
        ready.push(u);
  }
  if (order.size() != n)
    fail(f.name, ": fusion made a cycle (internal error)");
  f.ops = std::move(order);
}

} // namespace

bool runFusePass(Module &m, const PassOptions &opts) {
  // singles=1 (what codegen runs): a lone pointwise, reduction or library op
  // (or Transpose, which moves data, or TopK) becomes a group of one too, so every
  // kernel is a Fused op; moves=1 (CUDA) outlines the copies Gather, Concat,
  // Split and Slice too. Index moves (Trilu, Resize, ...) and Expand, Pad and
  // Tile are outlined for every target.
  bool singles = opts.getBool("singles"), moves = opts.getBool("moves"),
       siblings = opts.getBool("siblings");
  std::set<std::string> callees;
  for (const auto &f : m.functions)
    for (const auto &op : f->ops)
      if (op->is(OpKind::Fused))
        callees.insert(op->getString("callee"));
  std::vector<Function *> todo;
  for (const auto &f : m.functions)
    if (!callees.count(f->name))
      todo.push_back(f.get());

  bool changed = false;
  size_t index = callees.size();
  for (Function *f : todo) {
    changed |= splitReductionRuns(*f);
    changed |= splitsAsSlices(*f);
    changed |= dropBroadcastExpands(*f);
    changed |= splitWideningCasts(*f);
    Grouper grouper(*f, siblings);
    std::vector<Group> groups = grouper.run();
    const ValueUses &uses = grouper.uses(); // as before outlining: operands stay the originals
    std::unordered_map<const Op *, std::unique_ptr<Op>> replacement; // first member -> Fused
    std::unordered_set<const Op *> absorbed;
    for (const Group &g : groups) {
      if (!g.alive || g.ops.empty() || (g.ops.size() < 2 && !singles) ||
          grouper.isShapeComputation(g.ops[0]))
        continue; // a shape computation folds when the runtime plans a shape
      if (g.ops.size() == 1) {
        FusionCategory c = g.ops[0]->info().category;
        if (c != FusionCategory::Pointwise && c != FusionCategory::Reduction &&
            c != FusionCategory::Library && !g.ops[0]->is(OpKind::Transpose) &&
            !g.ops[0]->is(OpKind::TopK) && !isLonePooling(g) && !isLoneMove(g, moves) &&
            !isLoneIndexMove(g) && !isCompaction(g.ops[0]->kind))
          continue;
      }
      // A group of constants only is one fold-constants declined (a scalar
      // broadcast to a large tensor: the zeros an embedding's gradient
      // scatters into): it still becomes a kernel, or it would run on the
      // host.
      std::string name = groupName(g, index++);
      while (m.lookup(name))
        name += "_";
      replacement[g.ops.front()] = outline(m, uses, g, name);
      absorbed.insert(g.ops.begin(), g.ops.end());
    }
    if (replacement.empty())
      continue;
    std::vector<std::unique_ptr<Op>> ops;
    for (auto &op : f->ops) {
      if (auto it = replacement.find(op.get()); it != replacement.end())
        ops.push_back(std::move(it->second));
      if (!absorbed.count(op.get()))
        ops.push_back(std::move(op));
    }
    f->ops = std::move(ops);
    f->removeUnusedConstants();
    scheduleStable(*f);
    changed = true;
  }
  return changed;
}

} // namespace tc
