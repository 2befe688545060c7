// tensor-parallel: splits a model's MLP blocks over N ranks, Megatron-style
// (issue 37). An MLP block is a row-parallel GEMM D = MatMul(h, W2) whose h
// is computed from column-parallel GEMMs MatMul(x, W1) by pointwise ops over
// the hidden columns (GELU, a gated SiLU * up, per-column biases): each rank
// keeps columns [r F/N, (r+1) F/N) of every W1 and bias and the same rows of
// W2, computes its partial D, and an AllReduce sums the partials. The
// program stays one function every rank runs (SPMD): a weight's shard is a
// RankSlice of the whole constant, which tc-run --ranks N checks on the
// reference executor against the unsplit model (ranks 1 leaves it as is).
//
// Gemm's forms too (transB, a bias C: a row Gemm's is added after the sum),
// and Reshapes between the GEMMs and the pointwise ops that keep the hidden
// columns last (GPT-2's Conv1D: [B*S, F] <-> [B, S, F]).
//
// Left alone (replicated): attention (its projections split by heads need
// the head reshapes rewritten too), embeddings and the LM head, GEMMs whose
// hidden values reach anything but pointwise ops and the row GEMM.
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeContents.h"
#include <map>
#include <set>
#include <unordered_map>

namespace tc {

namespace {

bool isStatic2D(const Value *w) {
  return w && w->isConstant() && w->type.rank() == 2 && isStaticShape(w->type.shape);
}

int64_t lastDim(const Value *v) { return v->type.rank() ? v->type.shape.back().size : -1; }

// A GEMM of a replicated activation by a constant [K, N] weight: MatMul(x, W),
// or Gemm(x, B) without transA. Its weight's output-column axis (N) and
// input-row axis (K), as B is stored (transB swaps them).
struct Gemm2D {
  Value *weight = nullptr;
  int64_t colAxis = 1, rowAxis = 0;
};
std::optional<Gemm2D> gemmOf(const Op &op) {
  bool gemm = op.is(OpKind::Gemm);
  if (!(gemm || op.is(OpKind::MatMul)) || !isStatic2D(op.operand(1)) ||
      op.operand(0)->isConstant() || (gemm && op.getInt("transA")))
    return std::nullopt;
  bool t = gemm && op.getInt("transB");
  return Gemm2D{op.operand(1), t ? 0 : 1, t ? 1 : 0};
}

// A Gemm's bias C over the output columns ([N] or [1, N]), or null.
Value *gemmBias(const Op &op) {
  return op.is(OpKind::Gemm) && op.operands.size() > 2 ? op.operand(2) : nullptr;
}

// One MLP block: the row GEMM, the column GEMMs, the hidden values between
// (their last dim F becomes F / N) and the per-column constants they read.
struct Block {
  Op *row = nullptr;
  std::vector<Op *> columns;
  std::set<Value *> hidden;
  std::set<std::pair<Op *, size_t>> perColumn; // (op, operand) of a [F] / [.., 1, F] constant
  std::vector<Op *> reshapes;                  // Reshapes keeping the hidden columns last
};

class Splitter {
public:
  Splitter(Function &f, int64_t ranks) : f_(f), ranks_(ranks) {
    for (auto &op : f.ops) {
      shapes_.visit(*op);
      for (Value *v : op->operands)
        if (v)
          users_[v].push_back(op.get());
    }
    for (Value *r : f.results)
      outputs_.insert(r);
  }

  // The block whose row GEMM is `d`, or nullopt.
  std::optional<Block> blockAt(Op &d) {
    std::optional<Gemm2D> g = gemmOf(d);
    if (!g)
      return std::nullopt;
    int64_t f = g->weight->type.shape[size_t(g->rowAxis)].size;
    // A row Gemm's bias is added once, after the AllReduce: beta 1 only.
    if (f % ranks_ || f < ranks_ || (gemmBias(d) && d.getFloat("beta") != 1.0))
      return std::nullopt;
    Block b;
    b.row = &d;
    std::vector<Value *> work{d.operand(0)};
    while (!work.empty()) {
      Value *v = work.back();
      work.pop_back();
      if (b.hidden.count(v))
        continue;
      if (!v->def || lastDim(v) != f || outputs_.count(v))
        return std::nullopt;
      b.hidden.insert(v);
      Op &op = *v->def;
      if (op.results.size() != 1)
        return std::nullopt;
      if (std::optional<Gemm2D> c = gemmOf(op); c && lastDim(op.operand(0)) != f) {
        b.columns.push_back(&op); // x is replicated: its columns are W1's
        if (Value *bias = gemmBias(op)) {
          if (lastDim(bias) != f || staticNumElements(bias->type.shape) != f)
            return std::nullopt;
          b.perColumn.insert({&op, 2});
        }
        continue;
      }
      if (op.is(OpKind::Reshape)) { // [M, F] <-> [B, S, F]: the columns stay last
        std::optional<ShapeContents> c = shapes_.contents(op.operand(1));
        if (!c || c->empty() || !c->back() || !c->back()->isConstant() ||
            c->back()->constantValue() != f || lastDim(op.operand(0)) != f)
          return std::nullopt;
        b.reshapes.push_back(&op);
        work.push_back(op.operand(0));
        continue;
      }
      if (op.info().category != FusionCategory::Pointwise)
        return std::nullopt;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        Value *o = op.operand(i);
        if (!o)
          continue;
        std::optional<int64_t> n = staticNumElements(o->type.shape);
        if (o->isConstant() && n == 1)
          continue; // a scalar: every rank's
        if (o->isConstant() && lastDim(o) == f && n == f)
          b.perColumn.insert({&op, i}); // a bias over the hidden columns
        else
          work.push_back(o); // must be hidden too
      }
    }
    if (b.columns.empty())
      return std::nullopt;
    // Every hidden value is read inside the block only.
    for (Value *v : b.hidden)
      for (Op *u : users_[v])
        if (u != &d && !(u->results.size() == 1 && b.hidden.count(u->result())))
          return std::nullopt;
    return b;
  }

  void split(std::vector<Block> &blocks) {
    std::unordered_map<Op *, std::vector<std::pair<size_t, int64_t>>>
        slices; // op -> (operand, axis)
    std::set<Op *> rows;
    std::set<Op *> reshapes;
    for (Block &b : blocks) {
      for (Op *c : b.columns)
        slices[c].push_back({1, gemmOf(*c)->colAxis});
      for (auto [op, i] : b.perColumn)
        slices[op].push_back({i, int64_t(op->operand(i)->type.rank()) - 1});
      slices[b.row].push_back({1, gemmOf(*b.row)->rowAxis});
      rows.insert(b.row);
      reshapes.insert(b.reshapes.begin(), b.reshapes.end());
      for (Value *v : b.hidden)
        v->type.shape.back().size /= ranks_;
    }
    std::vector<std::unique_ptr<Op>> old = std::move(f_.ops);
    f_.ops.clear();
    std::map<std::pair<Value *, int64_t>, Value *> shards; // one RankSlice per weight and axis
    std::vector<std::pair<Value *, Value *>> reduced;      // row GEMM result -> its AllReduce
    for (auto &owned : old) {
      Op &op = *owned;
      for (auto [i, axis] : slices[&op]) {
        Value *w = op.operand(i);
        Value *&s = shards[{w, axis}];
        if (!s) {
          TensorType t = w->type;
          t.shape[size_t(axis)].size /= ranks_;
          Op *rs =
              f_.addOp(OpKind::RankSlice, {w}, {f_.uniqueName(w->name + "_shard")}, {t}, op.loc);
          rs->setAttr("axis", Attribute(axis));
          rs->setAttr("ranks", Attribute(ranks_));
          s = rs->result();
        }
        op.operands[i] = s;
      }
      if (reshapes.count(&op)) // its target's last entry F (ShapeTracker): F / N
        op.operands[1] = divideLast(op.operand(1), op.loc);
      Value *bias = rows.count(&op) ? gemmBias(op) : nullptr;
      if (bias)
        op.operands.resize(2); // added once, after the sum
      f_.ops.push_back(std::move(owned));
      if (rows.count(&op)) {
        Value *partial = op.result();
        Op *ar = f_.addOp(OpKind::AllReduce, {partial},
                          {f_.uniqueName(partial->name + "_allreduce")}, {partial->type}, op.loc);
        ar->setAttr("ranks", Attribute(ranks_));
        Value *sum = ar->result();
        if (bias)
          sum = f_.addOp(OpKind::Add, {sum, bias}, {f_.uniqueName(partial->name + "_bias")},
                         {partial->type}, op.loc)
                    ->result();
        reduced.push_back({partial, sum});
      }
    }
    for (auto [partial, sum] : reduced) {
      Op *ar = sum->def->is(OpKind::AllReduce) ? sum->def : sum->def->operand(0)->def;
      Value *summed = ar->result();
      f_.replaceAllUsesWith(partial, sum);
      ar->operands[0] = partial; // the AllReduce itself reads the partial sum
      if (sum != summed)
        sum->def->operands[0] = summed;    // and the bias add the AllReduce
      std::swap(partial->name, sum->name); // the result keeps the public name
    }
  }

private:
  // shape / [1, ..., 1, N]: a shape tensor whose last entry is the hidden width.
  Value *divideLast(Value *shape, const Location &loc) {
    int64_t n = shape->type.shape.empty() ? 0 : shape->type.shape[0].size;
    std::vector<int64_t> div(size_t(n), 1);
    div.back() = ranks_;
    TensorType t{DType::I64, makeShape({n})};
    Value *c = f_.addConstant(f_.uniqueName(shape->name + "_ranks"), t,
                              TensorData::copyOf(div.data(), div.size() * sizeof(int64_t)), loc);
    return f_.addOp(OpKind::Div, {shape, c}, {f_.uniqueName(shape->name + "_shard")}, {t}, loc)
        ->result();
  }

  ShapeTracker shapes_;
  Function &f_;
  int64_t ranks_;
  std::unordered_map<Value *, std::vector<Op *>> users_;
  std::set<Value *> outputs_;
};

} // namespace

bool runTensorParallelPass(Module &m, const PassOptions &opts) {
  int64_t ranks = opts.getInt("ranks");
  if (ranks < 1)
    fail("tensor-parallel: ranks must be >= 1, not ", ranks);
  if (ranks == 1)
    return false;
  Function &f = m.main();
  Splitter s(f, ranks);
  std::vector<Block> blocks;
  std::set<Value *> taken;
  for (auto &op : f.ops)
    if (std::optional<Block> b = s.blockAt(*op)) {
      bool overlaps = false; // a hidden value of two blocks: split neither twice
      for (Value *v : b->hidden)
        overlaps = overlaps || taken.count(v);
      if (overlaps)
        continue;
      taken.insert(b->hidden.begin(), b->hidden.end());
      blocks.push_back(std::move(*b));
    }
  if (blocks.empty())
    return false;
  s.split(blocks);
  return true;
}

} // namespace tc
