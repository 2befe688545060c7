// rematerialize: in a train step every forward value the backward reads
// stays alive from the forward to the backward (a saved activation). Where
// such a value is a cheap pointwise function of values the backward keeps
// anyway (saved activations that are not recomputed themselves), of
// arguments, constants or small tensors, the backward recomputes it instead:
// a clone of its op (and of such ops under it, up to max-chain deep) in the
// backward phase, placed before the first backward op that needs it. The
// forward value then dies with its last forward reader. A batch norm
// followed by a ReLU saved x - mean, x^ and the ReLU's input (three tensors
// of the activation's size) where PyTorch saves x and the ReLU's output; with
// this pass the backward recomputes x^ and the ReLU's input from x - mean.
// The greedy form of torch.compile's min-cut partitioner: a value is
// recomputed when all it reads is available, decided in forward order.
// It runs late (pipelineForLevel: after the last CSE, which would merge the
// clones back), and fusion keeps backward ops out of forward kernels
// (Fusion.cpp), so a clone fuses into the backward kernel that reads it.
//
// Then (split-shared) the backward's own shared values: a cheap pointwise
// value that reads one large tensor (the rest small, constants) and has
// several readers, all pointwise ops or reductions, gets a clone per reader. Fusion puts a value
// with readers in two kernels into a kernel of its own, written out and read back; a batch norm's
// xhat = x * invStd + shift, read by its ds sum and by dx, was written out with g * xhat (two
// activation-sized tensors a norm), where each reader recomputing it from x reads x instead.
//
// Then (half-gradients) an AMP weight gradient: the backward's half GEMM
// result widened to f32 (the gradient of mixed precision's Cast), read only
// by the optimizer (the overflow check's sum, the update). In the backward
// that Cast is the GEMM's epilogue, which then writes an f32 copy (4 bytes a
// parameter, read back by each reader); as one Cast a reader in the
// optimizer, each reader's kernel reads the half values (2 bytes) and widens
// them in registers. PyTorch's autocast leaves the same values: its .grad is
// the half GEMM's result cast up.
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// An operand this many times smaller than the result (a batch norm's
// per-channel mean) is kept alive rather than counted against recomputing.
constexpr int64_t kSmallRatio = 16;
// A shared backward value this small is written once (a per-channel
// coefficient read by two kernels costs nothing written out).
constexpr int64_t kSplitMinElements = int64_t(1) << 14;

bool forward(const Op &op) { return op.loc.phase == Phase::Forward; }

int64_t elements(const Value *v) { return staticNumElements(v->type.shape).value_or(-1); }

// Pointwise ops, and a Transpose (a copy as memory-bound as one: the
// channels-last or head-split copy of a value saved anyway).
bool cheap(const Op &op) {
  return (op.info().category == FusionCategory::Pointwise || op.is(OpKind::Transpose)) &&
         op.results.size() == 1 && !op.is(OpKind::Fused) && elements(op.result()) > 0;
}

} // namespace

static bool rematerializeSaved(Function &f, int64_t maxChain, bool keepLibraryOperands);

// A clone of a shared backward value's op per reader op after the first
// (placed right after the op: its operands are there), latest values first
// so a clone's operands, read by one more op now, are split in turn.
static bool splitSharedBackwardValues(Function &f) {
  auto splittable = [](const Op &op) {
    if (forward(op) || op.info().category != FusionCategory::Pointwise ||
        op.is(OpKind::PhiloxDropout) || op.results.size() != 1 || op.is(OpKind::Fused))
      return false;
    int64_t n = elements(op.result());
    if (n < kSplitMinElements)
      return false;
    int large = 0;
    for (const Value *o : op.operands)
      if (o && !o->isConstant() && !(elements(o) >= 0 && elements(o) * kSmallRatio <= n))
        ++large;
    return large <= 1;
  };
  // Each value's (reader op, operand slot) pairs in program order, kept so
  // as clones are inserted (one scan of the function, not one a value).
  using Reads = std::vector<std::pair<Op *, size_t>>;
  std::unordered_map<const Value *, Reads> readers;
  for (const auto &o : f.ops)
    for (size_t k = 0; k < o->operands.size(); ++k)
      if (o->operands[k])
        readers[o->operands[k]].emplace_back(o.get(), k);
  std::unordered_set<const Value *> returned(f.results.begin(), f.results.end());
  bool changed = false;
  for (size_t i = f.ops.size(); i-- > 0;) {
    Op &op = *f.ops[i];
    if (!splittable(op) || returned.count(op.result()))
      continue;
    auto found = readers.find(op.result());
    if (found == readers.end())
      continue;
    const Reads &reads = found->second;
    Op *firstReader = reads.front().first;
    // Readers that fusion cannot take it into (a GEMM, a conv, a move, an
    // op of another phase: the optimizer's update of an AMP weight gradient
    // cast to f32, which three clones wrote out three times) need it written
    // out anyway: once, for all.
    bool fusible = reads.back().first != firstReader;
    for (const auto &[reader, k] : reads) {
      FusionCategory c = reader->info().category;
      fusible &= (c == FusionCategory::Pointwise || c == FusionCategory::Reduction) &&
                 reader->loc.phase == op.loc.phase;
    }
    if (!fusible)
      continue;
    std::vector<std::unique_ptr<Op>> clones;
    const Op *last = firstReader;
    Value *c = nullptr;
    for (const auto &[reader, k] : reads) {
      if (reader == firstReader)
        continue;
      if (reader != last) { // one clone a reader, for all its slots
        auto copy = std::make_unique<Op>(op.kind);
        copy->operands = op.operands;
        copy->attrs = op.attrs;
        copy->loc = op.loc;
        c = f.newValue(f.uniqueName(op.result()->name + "_split"), op.result()->type);
        c->def = copy.get();
        copy->results = {c};
        clones.push_back(std::move(copy));
        last = reader;
      }
      reader->operands[k] = c;
    }
    // The clones read op's operands right after op does.
    for (size_t k = 0; k < op.operands.size(); ++k) {
      if (!op.operands[k])
        continue;
      Reads &r = readers[op.operands[k]];
      auto at = std::find_if(r.rbegin(), r.rend(), [&](const auto &e) { return e.first == &op; });
      Reads added;
      for (const auto &clone : clones)
        added.emplace_back(clone.get(), k);
      r.insert(at.base(), added.begin(), added.end());
    }
    f.ops.insert(f.ops.begin() + std::ptrdiff_t(i + 1), std::make_move_iterator(clones.begin()),
                 std::make_move_iterator(clones.end()));
    changed = true;
  }
  return changed;
}

// The half-gradients part (the file's comment): each reader's Cast right
// before it, tagged with its phase; the backward's Cast goes.
static bool widenInOptimizer(Function &f) {
  ValueUses uses(f);
  auto movable = [&](const Op &op) {
    if (!op.is(OpKind::Cast) || op.loc.phase != Phase::Backward || !op.operand(0) ||
        (op.operand(0)->type.dtype != DType::F16 && op.operand(0)->type.dtype != DType::BF16) ||
        op.result()->type.dtype != DType::F32 || uses.returned(op.result()) ||
        uses.readers(op.result()).empty())
      return false;
    // Optimizer-phase pointwise ops, and reductions reading it as their
    // data (operand 0) only.
    for (const Op *reader : uses.readers(op.result())) {
      FusionCategory c = reader->info().category;
      bool dataOnly = std::find(reader->operands.begin() + 1, reader->operands.end(),
                                op.result()) == reader->operands.end();
      if (reader->loc.phase != Phase::Optimizer ||
          !(c == FusionCategory::Pointwise || (c == FusionCategory::Reduction && dataOnly)))
        return false;
    }
    return true;
  };
  std::unordered_map<const Op *, std::vector<std::unique_ptr<Op>>> before; // reader -> its Casts
  std::unordered_set<const Op *> gone;
  for (const auto &op : f.ops) {
    if (!movable(*op))
      continue;
    for (Op *reader : uses.readers(op->result())) {
      auto &casts = before[reader];
      Value *c = nullptr;
      for (const auto &cast : casts) // one Cast a reader, for all its slots
        if (cast->operand(0) == op->operand(0))
          c = cast->result();
      if (!c) {
        auto copy = std::make_unique<Op>(op->kind);
        copy->operands = op->operands;
        copy->attrs = op->attrs;
        copy->loc = op->loc;
        copy->loc.phase = reader->loc.phase;
        c = f.newValue(f.uniqueName(op->result()->name + "_read"), op->result()->type);
        c->def = copy.get();
        copy->results = {c};
        casts.push_back(std::move(copy));
      }
      std::replace(reader->operands.begin(), reader->operands.end(), op->result(), c);
    }
    gone.insert(op.get());
  }
  if (gone.empty())
    return false;
  std::vector<std::unique_ptr<Op>> ops;
  for (auto &op : f.ops) {
    if (gone.count(op.get()))
      continue;
    if (auto b = before.find(op.get()); b != before.end())
      for (auto &c : b->second)
        ops.push_back(std::move(c));
    ops.push_back(std::move(op));
  }
  f.ops = std::move(ops);
  return true;
}

bool runRematerializePass(Module &m, const PassOptions &opts) {
  Function &f = m.main();
  if (std::all_of(f.ops.begin(), f.ops.end(), [](const auto &op) { return forward(*op); }))
    return false;
  bool widened = opts.getBool("half-gradients") && widenInOptimizer(f);
  // Ops recomputed for one saved value, on its deepest path (0: off).
  int64_t maxChain = opts.getInt("max-chain");
  if (maxChain <= 0)
    return widened;
  bool split = opts.getBool("split-shared");
  return widened | rematerializeSaved(f, maxChain, opts.getBool("keep-library-operands")) |
         (split && splitSharedBackwardValues(f));
}

// Backward ops still placed in the forward (the forward ops only backward
// ops read, just retagged) move to right before their first reader: where
// they stood, their results lived from the forward to the backward (a GELU's
// output that only the weight gradient reads once gemm-views folded its 0.5
// into the forward GEMM: 74 MB a layer of vit_b_16 at batch 32), and the
// clones of the values under them went there too. An op moves when what it
// keeps alive longer instead -- its operands no backward op reads anyway --
// is no larger than its results.
static void sinkBackwardWork(Function &f) {
  std::unordered_map<const Value *, std::vector<size_t>> readers;
  std::vector<size_t> forwardBefore(f.ops.size() + 1); // forward ops in [0, i)
  for (size_t i = 0; i < f.ops.size(); ++i) {
    for (const Value *o : f.ops[i]->operands)
      if (o)
        readers[o].push_back(i);
    forwardBefore[i + 1] = forwardBefore[i] + forward(*f.ops[i]);
  }
  std::unordered_map<const Op *, const Op *> target; // moved op -> the op it goes before
  std::unordered_map<const Op *, size_t> indexOf;
  for (size_t i = 0; i < f.ops.size(); ++i)
    indexOf[f.ops[i].get()] = i;
  // Where reader j runs once moved: a chain of backward ops (a GELU's
  // output and the channels-last Transpose of it the weight gradient reads)
  // moves as a whole, each op before its reader's new place (last first).
  auto placeOf = [&](size_t j) {
    auto t = target.find(f.ops[j].get());
    return t == target.end() ? j : indexOf.at(t->second);
  };
  for (size_t i = f.ops.size(); i-- > 0;) {
    Op &op = *f.ops[i];
    if (forward(op) || op.results.empty())
      continue;
    size_t first = f.ops.size();
    int64_t size = 0;
    bool known = true;
    for (const Value *r : op.results) {
      for (size_t j : readers[r])
        first = std::min(first, placeOf(j));
      known &= elements(r) >= 0;
      size += std::max<int64_t>(elements(r), 0);
    }
    // Only ops that sit in the forward: a forward op between them and their
    // first reader.
    if (first == f.ops.size() || forwardBefore[first] == forwardBefore[i + 1] || !known)
      continue;
    int64_t extended = 0;
    for (const Value *o : op.operands) {
      if (!o || o->isArgument() || o->isConstant())
        continue;
      bool backwardReads = false;
      for (size_t j : readers[o])
        backwardReads |= j != i && !forward(*f.ops[j]) && placeOf(j) >= first;
      if (!backwardReads)
        extended += std::max<int64_t>(elements(o), 0);
    }
    if (extended <= size)
      target[&op] = f.ops[first].get();
  }
  if (target.empty())
    return;
  // Rebuilt with each moved op (and what moves before it) ahead of its target.
  std::unordered_map<const Op *, std::vector<std::unique_ptr<Op>>> before;
  std::vector<std::unique_ptr<Op>> rest;
  for (auto &op : f.ops) {
    auto t = target.find(op.get());
    if (t != target.end())
      before[t->second].push_back(std::move(op));
    else
      rest.push_back(std::move(op));
  }
  std::vector<std::unique_ptr<Op>> ops;
  std::function<void(std::unique_ptr<Op>)> emit = [&](std::unique_ptr<Op> op) {
    auto b = before.find(op.get());
    if (b != before.end()) {
      std::vector<std::unique_ptr<Op>> moved = std::move(b->second);
      before.erase(b);
      for (auto &m : moved)
        emit(std::move(m));
    }
    ops.push_back(std::move(op));
  };
  for (auto &op : rest)
    emit(std::move(op));
  f.ops = std::move(ops);
}

// The saved forward values' recomputation (the file's first part).
static bool rematerializeSaved(Function &f, int64_t maxChain, bool keepLibraryOperands) {
  std::unordered_set<const Value *> returned(f.results.begin(), f.results.end());
  // A forward-tagged op that only backward ops read is backward work (a
  // layout Transpose channels-last made for a backward reader, tagged with
  // its operand's location): it becomes backward (reverse order: readers
  // first).
  std::unordered_map<const Value *, bool> forwardRead; // read by a forward op or returned
  for (const Value *v : f.results)
    forwardRead[v] = true;
  for (auto it = f.ops.rbegin(); it != f.ops.rend(); ++it) {
    Op &op = **it;
    bool read = false, readForward = false;
    for (const Value *r : op.results) {
      auto fr = forwardRead.find(r);
      read |= fr != forwardRead.end();
      readForward |= fr != forwardRead.end() && fr->second;
    }
    if (forward(op) && read && !readForward)
      op.loc.phase = Phase::Backward;
    for (const Value *o : op.operands)
      if (o)
        forwardRead[o] = forwardRead[o] || forward(op);
  }
  sinkBackwardWork(f);
  // Each forward value's first backward reader (saved when it has one).
  std::unordered_map<const Value *, size_t> firstBackward;
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (!forward(*f.ops[i]))
      for (const Value *v : f.ops[i]->operands)
        if (v && v->def && forward(*v->def) && !firstBackward.count(v))
          firstBackward[v] = i;
  const ValueUses uses(f);
  // keep-library-operands: whether a backward op other than a library call
  // reads a value, through Reshapes (a weight gradient's GEMM reads its
  // operand flattened to rows).
  std::function<bool(const Value *)> fusiblyRead = [&](const Value *v) {
    for (const Op *r : uses.readers(v)) {
      if (forward(*r) || r->info().category == FusionCategory::Library)
        continue;
      if (!r->is(OpKind::Reshape) || fusiblyRead(r->result()))
        return true;
    }
    return false;
  };

  // The largest result of a value's readers (in elements).
  auto largestReader = [&](const Value *v) {
    int64_t n = 0;
    for (const Op *r : uses.readers(v))
      if (!r->results.empty())
        n = std::max(n, elements(r->results[0]));
    return n;
  };

  // In forward order: a cheap forward value is recomputable when all it
  // reads is available in the backward (saved anyway, recomputable, an
  // argument, a constant or small); its chain depth bounds the work.
  std::unordered_map<const Value *, int> depth; // recomputable values
  for (const auto &op : f.ops) {
    if (!forward(*op) || !cheap(*op) || returned.count(op->result()))
      continue;
    const Value *v = op->result();
    // A saved value its readers broadcast (an RMSNorm's rstd per row, 4 KB
    // beside its 1 MB rows) stays saved: its forward kernel stores it beside
    // its rows for nothing, where a recompute is a kernel of its own in the
    // backward (t5_small: 30 a step).
    if (firstBackward.count(v) && elements(v) * kSmallRatio <= largestReader(v))
      continue;
    int d = 1;
    bool available = true;
    // A widening Cast (the f32 copy mixed precision gives a LayerNorm's
    // input, read by its gradient too) is recomputed even where its operand
    // is not saved otherwise: saving the operand instead halves the bytes.
    bool widens =
        op->is(OpKind::Cast) && dtypeSize(op->operand(0)->type.dtype) < dtypeSize(v->type.dtype);
    // A narrowing Cast of an argument (mixed precision's f16 copy of a
    // weight) stays saved, as autocast's copy does: its backward readers are
    // GEMMs, which fuse no prologue, so a recompute is a kernel of its own
    // reading 4 bytes and writing 2 a parameter each step (roberta's AMP
    // step: 0.26 ms) to save 2 bytes a parameter of peak memory.
    if (op->is(OpKind::Cast) && op->operand(0)->isArgument() &&
        dtypeSize(op->operand(0)->type.dtype) > dtypeSize(v->type.dtype))
      continue;
    // keep-library-operands (an A/B, off by default): a value only GEMMs
    // and convs of the backward read (a GELU's or SiLU-gate's output, an
    // RMSNorm's: the weight gradients' operand) is kept from the forward,
    // which wrote it anyway, rather than recomputed by a kernel of its own
    // (roberta: 12 GELU recomputes, 77 us a step; llama: SiLU * up and the
    // norms', ~100 us), at the cost of its bytes from the forward to the
    // backward.
    if (keepLibraryOperands && firstBackward.count(v) && !fusiblyRead(v))
      continue;
    for (const Value *o : op->operands) {
      if (!o || o->isArgument() || o->isConstant())
        continue;
      int64_t n = elements(o);
      if (n >= 0 && n * kSmallRatio <= elements(v))
        continue;
      if (auto it = depth.find(o); it != depth.end())
        d = std::max(d, it->second + 1);
      else
        available &= widens || firstBackward.count(o) != 0; // saved anyway
    }
    if (available && d <= maxChain)
      depth[v] = d;
  }
  // What the backward recomputes: the saved recomputable values and the
  // recomputable values under them; in forward order.
  std::unordered_set<const Value *> needed;
  std::vector<const Value *> todo;
  for (const auto &[v, _] : depth)
    if (firstBackward.count(v))
      todo.push_back(v);
  while (!todo.empty()) {
    const Value *v = todo.back();
    todo.pop_back();
    if (!needed.insert(v).second)
      continue;
    for (const Value *o : v->def->operands)
      if (o && depth.count(o))
        todo.push_back(o);
  }
  if (needed.empty())
    return false;
  std::vector<const Value *> order;
  for (const auto &op : f.ops)
    if (forward(*op) && needed.count(op->result()))
      order.push_back(op->result());

  // Where each clone goes: before the first backward op that reads the
  // value, or the first clone that does (reverse order: readers first).
  std::unordered_map<const Value *, size_t> at;
  for (auto v = order.rbegin(); v != order.rend(); ++v) {
    auto fb = firstBackward.find(*v);
    size_t pos = fb != firstBackward.end() ? fb->second : f.ops.size();
    for (const Value *w : order)
      if (at.count(w) &&
          std::find(w->def->operands.begin(), w->def->operands.end(), *v) != w->def->operands.end())
        pos = std::min(pos, at.at(w));
    at[*v] = pos;
  }

  // The clones, in forward order (operands before readers), each tagged
  // with its insertion point.
  std::unordered_map<const Value *, Value *> clone;
  std::multimap<size_t, Op *> inserted; // position -> clone op, in creation order
  for (const Value *v : order) {
    Op &op = *v->def;
    std::vector<Value *> ins;
    for (Value *o : op.operands) {
      auto c = o ? clone.find(o) : clone.end();
      ins.push_back(c == clone.end() ? o : c->second);
    }
    Location loc = op.loc;
    loc.phase = Phase::Backward;
    Op *c = f.addOp(op.kind, std::move(ins), {f.uniqueName(v->name + "_remat")}, {v->type}, loc);
    c->attrs = op.attrs;
    clone[v] = c->result();
    inserted.emplace(at.at(v), c);
  }
  // Backward readers read the clones.
  for (const auto &op : f.ops)
    if (!forward(*op))
      for (Value *&o : op->operands)
        if (auto c = o ? clone.find(o) : clone.end(); c != clone.end() && o != c->second)
          o = c->second;
  // The clones (appended by addOp) move before their insertion points.
  std::unordered_set<const Op *> clones;
  for (const auto &[_, c] : inserted)
    clones.insert(c);
  std::unordered_map<const Op *, std::unique_ptr<Op>> owned;
  std::vector<std::unique_ptr<Op>> rest;
  for (auto &op : f.ops) {
    const Op *p = op.get();
    if (clones.count(p))
      owned[p] = std::move(op);
    else
      rest.push_back(std::move(op));
  }
  std::vector<std::unique_ptr<Op>> ops;
  auto it = inserted.begin();
  for (size_t i = 0; i < rest.size(); ++i) {
    for (; it != inserted.end() && it->first <= i; ++it)
      ops.push_back(std::move(owned.at(it->second)));
    ops.push_back(std::move(rest[i]));
  }
  for (; it != inserted.end(); ++it)
    ops.push_back(std::move(owned.at(it->second)));
  f.ops = std::move(ops);
  return true;
}

} // namespace tc
