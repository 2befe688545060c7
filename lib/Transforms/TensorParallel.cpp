// tensor-parallel: splits a model's MLP and attention blocks over N ranks,
// Megatron-style (issue 37). A block ends in a row-parallel GEMM D =
// MatMul(h, W2) (or Gemm) whose h comes from column-parallel GEMMs MatMul(x,
// W1) of a replicated x: each rank keeps columns [r F/N, (r+1) F/N) of every
// W1 and its bias and the same rows of W2, computes its partial D, and an
// AllReduce sums the partials (a row Gemm's bias added after). Between, each
// value is split along one axis, followed back from h op by op (follow()):
// pointwise ops (constants split alike, broadcasts replicated), Reshapes that
// keep the split extent's prefix ([B, S, H*D] <-> [B, S, H, D]: the target's
// entry divided by N where it spells the extent out), Transposes, Slice /
// Concat / kept reductions over other axes (RoPE, a per-head norm), batched
// MatMuls and Softmax along a batch axis, and the fused Attention op by heads
// (kv_heads divided too). The program stays one function every rank runs
// (SPMD): a weight's shard is a RankSlice of the whole constant, which
// tc-run --ranks N checks on the reference executor against the unsplit model.
//
// A decode step's KV caches (a result Concat(past, new) of an argument past)
// are split with their attention: each rank keeps its heads' caches, and the
// step's signature has each rank's shapes.
//
// A fused qkv projection (one weight, then an equal Split: GPT-2's c_attn)
// splits too: the Split's input carries its parts as segments, and the
// constants on the way back are regrouped rank by rank (regrouped()) before
// their RankSlice, so a rank's shard holds its heads of each part.
//
// A block is left whole (replicated) where a value of it is read outside it
// (a Shape of it would see the shard; a Shape of other dims is fine), is
// another output, or splits two ways, and where an extent does not divide by
// N. Embedding tables of min-head elements or more are split by rows
// (splitEmbeddings); an output GEMM by a constant weight of as many elements
// (an LM head: what splitting it saves is memory) by its columns, an
// AllGather joining them.
#include "tc/IR/ConstantInts.h"
#include "tc/Runtime/ConstantTensor.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeContents.h"
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tc {

namespace {

bool isStatic2D(const Value *w) {
  return w && w->isConstant() && w->type.rank() == 2 && isStaticShape(w->type.shape);
}

// Whether attribute axis `a` (negative from the end) of a rank-`rank` value is `axis`.
bool isAxis(int64_t a, size_t rank, int64_t axis) {
  return (a + int64_t(rank)) % int64_t(rank) == axis;
}

// Rank r's part r of `ranks` of w along `axis`, a value of type `t`.
Value *rankSlice(Function &f, Value *w, int64_t axis, int64_t ranks, TensorType t,
                 const Location &loc) {
  Op *rs = f.addOp(OpKind::RankSlice, {w}, {f.uniqueName(w->name + "_shard")}, {std::move(t)}, loc);
  rs->setAttr("axis", Attribute(axis));
  rs->setAttr("ranks", Attribute(ranks));
  return rs->result();
}

// A constant scalar or vector of `t` holding `values`.
Value *intConstant(Function &f, const std::string &name, DType t, std::vector<int64_t> values,
                   bool scalar) {
  HostTensor h(t, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    h.setInt(int64_t(i), values[i]);
  return f.addConstant(f.uniqueName(name), h.type(), TensorData::copyOf(h.bytes(), h.byteSize()));
}

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

// A dim as an expression (a symbol's text parsed: "(* 16 batch)").
DimExpr dimExpr(const Dim &d) {
  return d.isStatic() ? DimExpr::constant(d.size) : DimExpr::parse(d.symbol);
}

// The product of dims [0, k) of `s`, or nullopt where one is unknown.
std::optional<std::string> prefix(const Shape &s, int64_t k) {
  DimExpr p = DimExpr::constant(1);
  for (int64_t i = 0; i < k; ++i) {
    if (s[size_t(i)].isUnknown())
      return std::nullopt;
    p = p * dimExpr(s[size_t(i)]);
  }
  return p.str();
}

// One block: the row GEMM, the column GEMMs, the values between (each split
// along one axis, whose extent becomes 1/N), the constants they read split
// the same way, the Reshapes whose target names a split extent, and the
// Attention ops whose kv_heads attribute counts heads.
struct Block {
  Op *row = nullptr;
  std::vector<Op *> columns;
  std::map<Value *, int64_t> split; // value -> its split axis
  // (op, operand, axis, segments) of a constant; segments > 1: the axis holds
  // that many equal parts (a fused qkv projection's q, k, v), each split.
  std::set<std::tuple<Op *, size_t, int64_t, int64_t>> slices;
  std::map<Value *, int64_t> groups; // a split value's segments where > 1
  std::map<Op *, int64_t> reshapes;  // Reshape -> target entry to divide
  std::vector<Op *> attentions;
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
    // A decode step's KV caches: a result Concat(past, new) of an argument
    // past. Each rank keeps its heads' part: both may be split (the step's
    // signature then has each rank's shapes).
    for (Value *r : f.results) {
      outputs_.insert(r);
      if (r->def && r->def->is(OpKind::Concat) && r->def->operands.size() == 2 &&
          r->def->operand(0)->isArgument()) {
        caches_.insert(r);
        caches_.insert(r->def->operand(0));
      }
    }
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
    work_ = {{d.operand(0), int64_t(d.operand(0)->type.rank()) - 1, 1}};
    while (!work_.empty()) {
      auto [v, axis, segments] = work_.back();
      work_.pop_back();
      if (auto it = b.split.find(v); it != b.split.end()) {
        if (it->second != axis || groupsOf(b, v) != segments)
          return std::nullopt; // split two ways
        continue;
      }
      if (segments > 1)
        b.groups[v] = segments;
      const Dim &extent = v->type.shape[size_t(axis)];
      bool cache = caches_.count(v) != 0;
      if ((!v->def && !cache) || (outputs_.count(v) && !cache) || !extent.isStatic() ||
          extent.size % ranks_ || extent.size < ranks_)
        return std::nullopt;
      b.split[v] = axis;
      if (v->def && !follow(b, *v->def, axis, segments))
        return std::nullopt;
    }
    if (b.columns.empty())
      return std::nullopt;
    // The blocks' values are read inside the block only (a Shape of one
    // would see the shard), and the column GEMMs' inputs are whole.
    for (auto [v, axis] : b.split)
      for (Op *u : users_[v])
        if (u != &d && !allSplit(b, *u) && !shapeAwayFrom(*u, axis))
          return std::nullopt;
    for (Op *c : b.columns)
      if (b.split.count(c->operand(0)))
        return std::nullopt;
    return b;
  }

  // A model's output GEMM of a whole input by a constant weight whose
  // output columns divide by N (an LM head over its vocabulary): each rank
  // computes its columns, an AllGather puts the rows back together.
  bool isHead(const Op &op, const std::set<Value *> &split, int64_t minElements) const {
    std::optional<Gemm2D> g = gemmOf(op);
    if (!g || op.results.size() != 1 || !outputs_.count(op.result()) ||
        split.count(op.operand(0)) || *staticNumElements(g->weight->type.shape) < minElements)
      return false;
    int64_t v = g->weight->type.shape[size_t(g->colAxis)].size;
    Value *bias = gemmBias(op);
    return v % ranks_ == 0 && v >= ranks_ && (!bias || (bias->isConstant() && bias->type.rank()));
  }

  static int64_t groupsOf(const Block &b, Value *v) {
    auto it = b.groups.find(v);
    return it == b.groups.end() ? 1 : it->second;
  }
  // Whether every result of `u` is a value of the block (a Split's three).
  static bool allSplit(const Block &b, const Op &u) {
    return std::all_of(u.results.begin(), u.results.end(),
                       [&](Value *r) { return b.split.count(r) != 0; });
  }

  // A Shape of dims other than the split one (a decode step's past length
  // read from a cache): the same on every rank.
  static bool shapeAwayFrom(const Op &u, int64_t axis) {
    if (!u.is(OpKind::Shape))
      return false;
    int64_t r = int64_t(u.operand(0)->type.rank());
    auto at = [&](const char *k, int64_t dflt) {
      const Attribute *a = u.findAttr(k);
      int64_t v = a ? a->i() : dflt;
      return std::clamp(v < 0 ? v + r : v, int64_t(0), r);
    };
    return axis < at("start", 0) || axis >= at("end", r);
  }

  void split(std::vector<Block> &blocks, const std::vector<Op *> &heads) {
    std::unordered_map<Op *, std::vector<std::tuple<size_t, int64_t, int64_t>>>
        slices; // op -> (operand, axis, segments)
    std::set<Op *> rows, gathered;
    for (Op *h : heads) {
      slices[h].push_back({1, gemmOf(*h)->colAxis, 1});
      if (Value *bias = gemmBias(*h))
        slices[h].push_back({2, int64_t(bias->type.rank()) - 1, 1});
      h->result()->type.shape.back().size /= ranks_;
      gathered.insert(h);
    }
    std::map<Op *, int64_t> reshapes;
    for (Block &b : blocks) {
      for (auto [op, i, axis, segments] : b.slices)
        slices[op].push_back({i, axis, segments});
      slices[b.row].push_back({1, gemmOf(*b.row)->rowAxis, 1});
      rows.insert(b.row);
      reshapes.insert(b.reshapes.begin(), b.reshapes.end());
      for (auto [v, axis] : b.split)
        v->type.shape[size_t(axis)].size /= ranks_;
      for (Op *a : b.attentions)
        if (int64_t kv = a->getInt("kv_heads"))
          a->setAttr("kv_heads", Attribute(kv / ranks_));
    }
    std::vector<std::unique_ptr<Op>> old = std::move(f_.ops);
    f_.ops.clear();
    std::map<std::tuple<Value *, int64_t, int64_t>, Value *> shards; // one RankSlice a weight
    // A row GEMM's or head's result -> what the ops after it read instead:
    // its AllReduce (then the bias added) or AllGather, which reads it.
    std::unordered_map<Value *, Value *> after;
    for (auto &owned : old) {
      Op &op = *owned;
      for (Value *&v : op.operands)
        if (auto it = after.find(v); v && it != after.end())
          v = it->second;
      for (auto [i, axis, segments] : slices[&op]) {
        Value *w = op.operand(i);
        Value *&s = shards[{w, axis, segments}];
        if (!s) {
          TensorType t = w->type;
          t.shape[size_t(axis)].size /= ranks_;
          s = rankSlice(f_, segments > 1 ? regrouped(w, axis, segments) : w, axis, ranks_, t,
                        op.loc);
        }
        op.operands[i] = s;
      }
      if (auto it = reshapes.find(&op); it != reshapes.end()) // that entry / N
        op.operands[1] = divideEntry(op.operand(1), it->second, op.loc);
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
        after[partial] = sum;
      }
      if (gathered.count(&op)) { // the columns of every rank, in rank order
        Value *part = op.result();
        TensorType whole = part->type;
        whole.shape.back().size *= ranks_;
        Op *ag = f_.addOp(OpKind::AllGather, {part}, {f_.uniqueName(part->name + "_allgather")},
                          {whole}, op.loc);
        ag->setAttr("axis", Attribute(int64_t(whole.rank()) - 1));
        ag->setAttr("ranks", Attribute(ranks_));
        after[part] = ag->result();
      }
    }
    for (Value *&r : f_.results)
      if (auto it = after.find(r); it != after.end())
        r = it->second;
    for (auto [partial, sum] : after)
      std::swap(partial->name, sum->name); // the result keeps the public name
  }

private:
  // Constant w with its `axis` of `segments` equal parts (q, k, v) reordered
  // rank by rank, [q_0 k_0 v_0 q_1 k_1 v_1 ...] (part p's r-th N-th as
  // x_r), so that rank r's RankSlice holds its part of every segment.
  Value *regrouped(Value *w, int64_t axis, int64_t segments) {
    HostTensor src = constantTensor(*w), dst(src.dtype(), src.shape());
    const std::vector<int64_t> &d = src.shape();
    int64_t outer = 1, inner = 1, extent = d[size_t(axis)];
    for (int64_t a = 0; a < axis; ++a)
      outer *= d[size_t(a)];
    for (size_t a = size_t(axis) + 1; a < d.size(); ++a)
      inner *= d[a];
    int64_t piece = extent / segments / ranks_, at = 0; // a rank's part of a segment
    std::vector<int64_t> order;                         // source index of each position
    for (int64_t r = 0; r < ranks_; ++r)
      for (int64_t p = 0; p < segments; ++p)
        for (int64_t j = 0; j < piece; ++j)
          order.push_back(p * (extent / segments) + r * piece + j);
    size_t bytes = dtypeSize(src.dtype()) * size_t(inner);
    for (int64_t o = 0; o < outer; ++o, at = 0)
      for (int64_t from : order)
        std::memcpy(dst.bytes() + size_t(o * extent + at++) * bytes,
                    src.bytes() + size_t(o * extent + from) * bytes, bytes);
    return f_.addConstant(f_.uniqueName(w->name + "_by_rank"), w->type,
                          TensorData::copyOf(dst.bytes(), dst.byteSize()), w->loc);
  }

  // shape / [1, ..., N, ..., 1]: N at `entry`, whose value is a split extent.
  Value *divideEntry(Value *shape, int64_t entry, const Location &loc) {
    std::vector<int64_t> div(size_t(shape->type.shape[0].size), 1);
    div[size_t(entry)] = ranks_;
    Value *c = intConstant(f_, shape->name + "_ranks", DType::I64, div, false);
    return f_
        .addOp(OpKind::Div, {shape, c}, {f_.uniqueName(shape->name + "_shard")}, {c->type}, loc)
        ->result();
  }

  // Operand i of `op`, whose result is split along `axis` (of rank `rank`):
  // replicated where it broadcasts along that axis, a constant split too, or
  // a value of the block. False where it can be none of these.
  bool operandAlong(Block &b, Op &op, size_t i, int64_t axis, size_t rank, int64_t segments = 1) {
    Value *o = op.operand(i);
    if (!o)
      return true;
    int64_t a = axis - (int64_t(rank) - int64_t(o->type.rank()));
    if (a < 0 || o->type.shape[size_t(a)] == Dim::fixed(1))
      return true; // the same on every rank
    if (o->isConstant()) {
      b.slices.insert({&op, i, a, segments});
      return true;
    }
    work_.push_back({o, a, segments});
    return true;
  }

  // Follows the split of `op`'s result (`axis`; `segments` > 1: of equal
  // parts split each, what a Split of them reads) to its operands.
  bool follow(Block &b, Op &op, int64_t axis, int64_t segments) {
    size_t rank = op.result()->type.rank();
    if (op.is(OpKind::Split)) { // equal parts along the axis: the input's segments
      int64_t parts = int64_t(op.results.size());
      if (segments != 1 || op.operands.size() > 1 || !isAxis(op.getInt("axis"), rank, axis))
        return false;
      for (Value *r : op.results)
        if (r->type != op.result()->type)
          return false;
      work_.push_back({op.operand(0), axis, parts});
      return true;
    }
    if (op.results.size() != 1)
      return false;
    if (std::optional<Gemm2D> c = gemmOf(op)) { // a column GEMM: x is whole
      if (axis != int64_t(rank) - 1)
        return false;
      b.columns.push_back(&op);
      b.slices.insert({&op, 1, c->colAxis, segments});
      if (Value *bias = gemmBias(op)) {
        if (bias->type.rank() == 0 || !bias->isConstant())
          return false;
        b.slices.insert({&op, 2, int64_t(bias->type.rank()) - 1, segments});
      }
      return true;
    }
    if (segments > 1 && !op.is(OpKind::Reshape) && !op.is(OpKind::Transpose) &&
        op.info().category != FusionCategory::Pointwise)
      return false; // segments only back through layout ops and pointwise ones
    switch (op.kind) {
    case OpKind::Transpose:
      work_.push_back({op.operand(0), op.getInts("perm")[size_t(axis)], segments});
      return true;
    case OpKind::Reshape: { // the split extent keeps its prefix: [B, S, H*D] <-> [B, S, H, D]
      const Shape &in = op.operand(0)->type.shape, &out = op.result()->type.shape;
      std::optional<std::string> want = prefix(out, axis);
      std::optional<ShapeContents> c = shapes_.contents(op.operand(1));
      if (!want || !c || c->size() != out.size() || !(*c)[size_t(axis)])
        return false;
      const DimExpr &e = *(*c)[size_t(axis)];
      if (e.isConstant() && e.constantValue() == out[size_t(axis)].size)
        b.reshapes[&op] = axis; // the extent spelled out: divided
      else if (!(e == DimExpr::integer(-1)))
        return false; // -1 infers the shard's extent itself; anything else is unknown
      for (int64_t a = 0; a < int64_t(in.size()); ++a) // unit dims leave the prefix as it is
        if (prefix(in, a) == want && in[size_t(a)].isStatic() && in[size_t(a)].size != 1) {
          if (segments > 1 && in[size_t(a)] != out[size_t(axis)])
            return false; // the segments keep their axis
          work_.push_back({op.operand(0), a, segments});
          return true;
        }
      return false;
    }
    case OpKind::Attention: { // [B, H, S, D] (no layout yet): split by heads
      if (axis != 1 || !op.getInts("layout").empty())
        return false;
      b.attentions.push_back(&op);
      for (size_t i = 0; i < 3; ++i)
        work_.push_back({op.operand(i), 1, 1});
      return operandAlong(b, op, 3, 1, rank);
    }
    case OpKind::MatMul: // batched (both operands computed): along a batch axis
      if (axis >= int64_t(rank) - 2)
        return false;
      return operandAlong(b, op, 0, axis, rank) && operandAlong(b, op, 1, axis, rank);
    case OpKind::Concat: // along another axis (RoPE's halves): every part split the same way
      if (isAxis(op.getInt("axis"), rank, axis))
        return false;
      for (Value *o : op.operands)
        work_.push_back({o, axis, 1});
      return true;
    case OpKind::Slice: { // of other axes only (ONNX's axes operand, else the first ones)
      std::optional<std::vector<int64_t>> starts = infer::constantInts(op.operand(1));
      std::optional<std::vector<int64_t>> axes =
          op.operand(3) ? infer::constantInts(op.operand(3)) : std::nullopt;
      if (!starts || (op.operand(3) && !axes))
        return false;
      for (size_t k = 0; k < starts->size(); ++k) {
        int64_t a = axes ? (*axes)[k] : int64_t(k);
        if (isAxis(a, rank, axis))
          return false;
      }
      work_.push_back({op.operand(0), axis, 1});
      return true;
    }
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      if (isAxis(op.getInt("axis"), rank, axis))
        return false;
      work_.push_back({op.operand(0), axis, 1});
      return true;
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax: { // over other axes, kept (a per-head RMSNorm: qwen3's q/k norm)
      const std::vector<int64_t> &axes = op.getInts("axes");
      if (op.operand(1) || axes.empty() || !op.getInt("keepdims"))
        return false;
      for (int64_t a : axes)
        if (isAxis(a, rank, axis))
          return false;
      work_.push_back({op.operand(0), axis, 1});
      return true;
    }
    default:
      if (op.info().category != FusionCategory::Pointwise)
        return false;
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (!operandAlong(b, op, i, axis, rank, segments))
          return false;
      return true;
    }
  }

  std::vector<std::tuple<Value *, int64_t, int64_t>> work_; // value, axis, segments
  ShapeTracker shapes_;
  Function &f_;
  int64_t ranks_;
  std::unordered_map<Value *, std::vector<Op *>> users_;
  std::set<Value *> outputs_, caches_;
};

// Vocab-parallel embeddings: a Gather of rows of a constant [V, K] table of
// min-head elements or more becomes each rank's lookup in its V / N rows
// (ids outside them read row 0 and are zeroed), summed by an AllReduce.
bool splitEmbeddings(Function &f, int64_t ranks, int64_t minElements) {
  auto wanted = [&](const Op &op) {
    const Value *w = op.operand(0), *ids = op.operand(1);
    return op.is(OpKind::Gather) && op.getInt("axis") == 0 && isStatic2D(w) &&
           isInteger(ids->type.dtype) && w->type.shape[0].size % ranks == 0 &&
           *staticNumElements(w->type.shape) >= minElements && isFloat(w->type.dtype);
  };
  std::vector<std::unique_ptr<Op>> old = std::move(f.ops);
  f.ops.clear();
  std::vector<std::pair<Value *, Value *>> replaced;
  for (auto &owned : old) {
    Op &op = *owned;
    if (!wanted(op)) {
      f.ops.push_back(std::move(owned));
      continue;
    }
    Value *w = op.operand(0), *ids = op.operand(1), *out = op.result();
    int64_t rows = w->type.shape[0].size / ranks;
    DType it = ids->type.dtype;
    Location loc = op.loc;
    auto add = [&](OpKind k, std::vector<Value *> in, TensorType t, const std::string &suffix) {
      return f.addOp(k, std::move(in), {f.uniqueName(out->name + suffix)}, {t}, loc);
    };
    std::vector<int64_t> starts;
    for (int64_t r = 0; r < ranks; ++r)
      starts.push_back(r * rows);
    Value *first = rankSlice(f, intConstant(f, out->name + "_rows", it, starts, false), 0, ranks,
                             TensorType{it, makeShape({1})}, loc);
    TensorType idT = ids->type, boolT{DType::Bool, ids->type.shape};
    Value *local = add(OpKind::Sub, {ids, first}, idT, "_local")->result();
    Value *zero = intConstant(f, out->name + "_zero", it, {0}, true);
    Value *count = intConstant(f, out->name + "_count", it, {rows}, true);
    Value *ge = add(OpKind::GreaterOrEqual, {local, zero}, boolT, "_ge")->result();
    Value *lt = add(OpKind::Less, {local, count}, boolT, "_lt")->result();
    Value *mine = add(OpKind::And, {ge, lt}, boolT, "_mine")->result();
    Value *safe = add(OpKind::Where, {mine, local, zero}, idT, "_safe")->result();
    TensorType shardT = w->type;
    shardT.shape[0].size = rows;
    Op *look =
        add(OpKind::Gather, {rankSlice(f, w, 0, ranks, shardT, loc), safe}, out->type, "_lookup");
    look->setAttr("axis", Attribute(int64_t(0)));
    TensorType maskT{DType::Bool, ids->type.shape};
    maskT.shape.push_back(Dim::fixed(1));
    Op *unsq = add(OpKind::Unsqueeze, {mine}, maskT, "_mask");
    unsq->setAttr("axes", Attribute(std::vector<int64_t>{-1}));
    HostTensor z(w->type.dtype, {});
    Value *fzero = f.addConstant(f.uniqueName(out->name + "_fzero"), z.type(),
                                 TensorData::copyOf(z.bytes(), z.byteSize()));
    Value *part =
        add(OpKind::Where, {unsq->result(), look->result(), fzero}, out->type, "_part")->result();
    Op *ar = add(OpKind::AllReduce, {part}, out->type, "_allreduce");
    ar->setAttr("ranks", Attribute(ranks));
    replaced.push_back({out, ar->result()});
  }
  for (auto [from, to] : replaced) {
    f.replaceAllUsesWith(from, to);
    std::swap(from->name, to->name); // the sum keeps the lookup's name
  }
  if (!replaced.empty())
    f.removeUnusedConstants();
  return !replaced.empty();
}

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
      for (auto [v, axis] : b->split)
        overlaps = overlaps || taken.count(v);
      if (overlaps)
        continue;
      for (auto [v, axis] : b->split)
        taken.insert(v);
      blocks.push_back(std::move(*b));
    }
  std::set<const Op *> inBlocks; // a block's row GEMM may be an output too
  for (const Block &b : blocks) {
    inBlocks.insert(b.row);
    inBlocks.insert(b.columns.begin(), b.columns.end());
  }
  std::vector<Op *> heads;
  for (auto &op : f.ops)
    if (!inBlocks.count(op.get()) && s.isHead(*op, taken, opts.getInt("min-head")))
      heads.push_back(op.get());
  if (!blocks.empty() || !heads.empty())
    s.split(blocks, heads);
  bool embeddings = splitEmbeddings(f, ranks, opts.getInt("min-head"));
  return !blocks.empty() || !heads.empty() || embeddings;
}

} // namespace tc
