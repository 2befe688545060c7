// Local rewrites to a canonical form; each returns true when it changed the IR.
// Identity, mask-less inference Dropout, no-op Cast/Expand/Transpose/Reshape/Pad
// forward their operand; Transpose pairs and Reshape chains merge; Where with
// a uniform constant condition picks its side; inference BatchNormalization
// folds into a preceding Conv/Gemm with constant weights, and one that cannot
// becomes a per-channel Mul + Add; a Conv's auto_pad over static spatial sizes
// becomes explicit pads (what cuDNN and oneDNN take); a Resize to computed
// sizes that shape inference proved takes them as attributes; GroupNorm with
// one group (Reshape, InstanceNormalization, Reshape) is a LayerNormalization;
// a Dropout that drops nothing but whose mask is read is an Identity and an
// all-true ConstantOfShape; a narrowing Cast goes before the Transpose or
// Reshape only it reads; a scatter-add into zeros that only an Add of the
// same shape reads adds into the Add's other operand instead.
#include "tc/IR/ConstantInts.h"
#include "tc/IR/NNMath.h"
#include "tc/IR/OpAttrs.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <functional>
#include <numeric>

namespace tc {

namespace {

std::vector<int64_t> transposePerm(const Op &op) {
  std::vector<int64_t> p = attr<OpKind::Transpose, "perm">(op);
  if (p.empty())
    for (size_t i = 0; i < op.operand(0)->type.rank(); ++i)
      p.push_back(int64_t(op.operand(0)->type.rank() - 1 - i));
  return p;
}

bool isIdentityPerm(const std::vector<int64_t> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

// x -> op -> y where y == x: forward x.
bool foldToOperand(Function &f, Op &op) {
  Value *x = op.operand(0);
  if (!(x->type == op.result()->type))
    return false;
  return replaceValue(f, op.result(), x);
}

// Every value of `from` is exactly representable in `to`.
bool widensExactly(DType from, DType to) {
  bool lowFloat = from == DType::F16 || from == DType::BF16;
  return (lowFloat && (to == DType::F32 || to == DType::F64)) ||
         (from == DType::F32 && to == DType::F64);
}

// A constant whose elements are all nonzero (1) or all zero (0); -1 otherwise.
int constantTruth(const Value *v) {
  if (!v->isConstant() || v->type.dtype != DType::Bool || v->data->size == 0)
    return -1;
  auto b = v->data->bytes();
  bool all = std::all_of(b.begin(), b.end(), [](uint8_t x) { return x != 0; });
  bool none = std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
  return all ? 1 : none ? 0 : -1;
}

// Where with a uniform constant condition picks one side, when that side
// already has the result's type (no broadcast needed).
bool simplifyWhere(Function &f, Op &op) {
  int truth = constantTruth(op.operand(0));
  if (truth < 0)
    return false;
  Value *side = op.operand(truth ? 1 : 2);
  return side->type == op.result()->type && replaceValue(f, op.result(), side);
}

// Conv with auto_pad SAME_UPPER / SAME_LOWER / VALID and static spatial
// sizes and kernel: the same window with explicit pads (nn::poolWindow's
// SAME rule is Conv's: ceil(in / stride) windows, the odd pad at the end
// for SAME_UPPER).
bool explicitConvPads(Op &op) {
  const std::string &autoPad = op.getString("auto_pad");
  if (autoPad == "NOTSET")
    return false;
  const TensorType &x = op.operand(0)->type, &w = op.operand(1)->type;
  bool last = op.getInt("channels_last") != 0;
  size_t sp = x.rank() - 2, first = last ? 1 : 2;
  auto ints = [&](const char *name, int64_t dflt) {
    std::vector<int64_t> v = op.getInts(name);
    return v.empty() ? std::vector<int64_t>(sp, dflt) : v;
  };
  std::vector<int64_t> strides = ints("strides", 1), dil = ints("dilations", 1), pads(2 * sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    const Dim &in = x.shape[first + i], &k = w.shape[first + i];
    if (!in.isStatic() || !k.isStatic() || strides.size() != sp || dil.size() != sp)
      return false;
    int64_t effK = dil[i] * (k.size - 1) + 1;
    if (in.size < effK)
      return false;
    if (autoPad == "VALID")
      continue;
    nn::WindowAxis win = nn::poolWindow(in.size, k.size, strides[i], dil[i], 0, 0, autoPad, false);
    int64_t total = std::max<int64_t>(0, (win.out - 1) * strides[i] + effK - in.size);
    pads[i] = win.padBegin;
    pads[sp + i] = total - win.padBegin;
  }
  op.setAttr("auto_pad", Attribute(std::string("NOTSET")));
  op.setAttr("pads", Attribute(pads));
  return true;
}

// Resize to a computed `sizes` whose result dims shape inference proved
// (DeepLab's Concat(Shape(x)[0:2], [8, 8]) with a symbolic batch): the
// static ones become the sizes attribute, those equal to the input's leave
// the axes (resizing an axis to its own size is the identity, except with
// tf_half_pixel_for_nn's half-pixel shift), so the kernel knows the plan.
bool bindResizeSizes(Function &f, Op &op) {
  if (op.operands.size() != 4 || op.operand(1) || op.operand(2) || !op.operand(3) ||
      op.getString("keep_aspect_ratio_policy") != "stretch")
    return false;
  const std::string &coord = op.getString("coordinate_transformation_mode");
  const Shape &xs = op.operand(0)->type.shape, &ys = op.result()->type.shape;
  std::vector<int64_t> keptAxes, sizes;
  for (int64_t a : nn::resizeAxes(op.getInts("axes"), xs.size())) {
    if (a < 0 || size_t(a) >= ys.size() || xs.size() != ys.size())
      return false;
    const Dim &x = xs[size_t(a)], &y = ys[size_t(a)];
    if (y.isStatic()) {
      keptAxes.push_back(a);
      sizes.push_back(y.size);
    } else if (!(y.isSymbolic() && x == y) || coord == "tf_half_pixel_for_nn" ||
               coord == "tf_crop_and_resize") {
      return false;
    }
  }
  if (sizes.empty())
    return foldToOperand(f, op);
  op.operands.resize(1);
  op.setAttr("axes", Attribute(keptAxes));
  op.setAttr("sizes", Attribute(sizes));
  return true;
}

// GroupNorm with one group as exporters emit it (PoolFormer, ConvNeXt-V1):
// Reshape(x, [N, 1, L]) -> InstanceNormalization with one-element scale and
// bias -> Reshape back to x's shape is LayerNormalization over x's axes
// from 1. No reshape then parts the normalization from the per-channel
// affine after it: one kernel (fuse: its epilogue) and f16 out under mixed
// precision, where the Reshape kept an f32 value between two.
bool sampleNormToLayerNorm(Op &op) {
  Op *norm = op.operand(0)->def;
  if (!norm || !norm->is(OpKind::InstanceNormalization) || !hasOneElement(norm->operand(1)) ||
      !hasOneElement(norm->operand(2)))
    return false;
  Op *flat = norm->operand(0)->def;
  if (!flat || !flat->is(OpKind::Reshape))
    return false;
  Value *x = flat->operand(0);
  const Shape &xs = x->type.shape, &fs = flat->result()->type.shape;
  if (xs.size() < 2 || fs.size() != 3 || fs[0] != xs[0] || fs[1] != Dim::fixed(1) ||
      op.result()->type != x->type)
    return false;
  double eps = norm->getFloat("epsilon");
  Value *scale = norm->operand(1), *bias = norm->operand(2);
  op.kind = OpKind::LayerNormalization;
  op.operands = {x, scale, bias};
  op.attrs.clear();
  op.setAttr("axis", Attribute(int64_t(1)));
  op.setAttr("epsilon", Attribute(eps));
  op.setAttr("stash_type", Attribute(DType::F32));
  return true;
}

// Cast(Transpose(x)) or Cast(Reshape(x)) to a narrower float type, the move
// read by the Cast alone: the move after the Cast. A Transpose then moves
// half the bytes and the Cast fuses into x's producer (a ViT's f32
// LayerNorm output, head-transposed for an f16 projection under mixed
// precision: the LayerNorm wrote f32, the Transpose moved f32 and a lone
// Cast wrote f16); the casts of one value through different Reshapes (the
// forward GEMM's and its weight gradient's in a train step) become one
// value CSE merges, so the f16 copy is what the backward keeps. The two ops
// trade kinds in place, each keeping its location.
bool narrowBeforeMove(Function &f, Op &cast) {
  Value *t = cast.operand(0);
  Op *mv = t->def;
  DType from = t->type.dtype, to = cast.attr("to").type();
  if (!mv || !(mv->is(OpKind::Transpose) || mv->is(OpKind::Reshape)) || !isFloat(from) ||
      !isFloat(to) || dtypeSize(to) >= dtypeSize(from) || !usedOnlyBy(f, t, cast))
    return false;
  // A Transpose of an argument or of a move keeps its Cast: the two are one
  // kernel (the Cast reads through the Transpose), where a Cast first would
  // be a kernel of its own. Reshapes (views) are looked through: a weight
  // gradient's Transpose of a reshaped activation is its producer's.
  const Op *producer = mv->operand(0)->def;
  while (producer && (producer->is(OpKind::Reshape) || producer->is(OpKind::Squeeze) ||
                      producer->is(OpKind::Unsqueeze) || producer->is(OpKind::Flatten)))
    producer = producer->operand(0)->def;
  FusionCategory c = producer ? producer->info().category : FusionCategory::Shape;
  if (mv->is(OpKind::Transpose) && c != FusionCategory::Pointwise &&
      c != FusionCategory::Reduction && c != FusionCategory::Library)
    return false;
  std::vector<Value *> moveOperands = mv->operands;
  auto moveAttrs = mv->attrs;
  std::swap(mv->kind, cast.kind);
  std::swap(mv->loc, cast.loc);
  mv->operands = {moveOperands[0]};
  mv->attrs.clear();
  mv->setAttr("to", Attribute(to));
  moveOperands[0] = t;
  cast.operands = moveOperands;
  cast.attrs = moveAttrs;
  t->type = TensorType{to, mv->operand(0)->type.shape};
  return true;
}

// Add(a, ScatterND(zeros, i, u, add)) -> ScatterND(a, i, u, add), the same
// for ScatterElements, where the Add alone reads the scatter and nothing
// broadcasts: a tied embedding's gradient (the head's part plus the token
// rows' scatter-add) in one pass over the table instead of a zero fill, a
// copy of it and an Add (roberta's step on the H200: 332 us, deberta's 746).
// The token rows add onto the head's part instead of onto zeros first.
bool addIntoScatter(Function &f, Op &op) {
  for (size_t k = 0; k < 2; ++k) {
    Value *a = op.operand(k), *s = op.operand(1 - k);
    Op *sc = s->def;
    if (!sc || !(sc->is(OpKind::ScatterND) || sc->is(OpKind::ScatterElements)) ||
        sc->getString("reduction") != "add" || !isZeros(sc->operand(0)) ||
        a->type != op.result()->type || s->type != op.result()->type ||
        !isStaticShape(a->type.shape) || soleReader(f, s) != &op)
      continue;
    op.kind = sc->kind;
    op.operands = {a, sc->operand(1), sc->operand(2)};
    op.attrs = sc->attrs;
    return true;
  }
  return false;
}

bool rewrite(Function &f, Op &op) {
  if (isRankOp(op.kind)) // a one-rank group's collectives and shard are their operand
    return op.getInt("ranks") == 1 && foldToOperand(f, op);
  switch (op.kind) {
  case OpKind::Identity: return foldToOperand(f, op);
  // Inference Dropout whose mask nobody asked for is the identity.
  case OpKind::Dropout: return op.results.size() == 1 && !op.operand(2) && foldToOperand(f, op);
  // Expand to the shape x already has (static: a symbolic dim may be 1 at run time).
  case OpKind::Expand: return isStaticShape(op.result()->type.shape) && foldToOperand(f, op);
  case OpKind::Where: return simplifyWhere(f, op);
  // Pad by nothing (swin pads its windows by (7 - 56 % 7) % 7 = 0): a copy
  // kernel per block otherwise (8% of swin_tiny's device time).
  case OpKind::Pad: {
    // Pads given as an operand that folded to a constant (Twins' (7 - W % 7) % 7
    // once W is known) become the attribute, as the importer makes constant
    // ones: a fused kernel reads only argument pads.
    const Value *pv = op.operands.size() > 1 ? op.operand(1) : nullptr;
    size_t r = op.operand(0)->type.rank();
    std::optional<std::vector<int64_t>> folded = pv ? infer::constantInts(pv) : std::nullopt;
    bool noAxes = op.operands.size() < 4 || !op.operand(3);
    if (folded && folded->size() == 2 * r && noAxes) {
      op.setAttr("pads", Attribute(*folded));
      op.operands[1] = nullptr;
      if (op.operands.size() == 2)
        op.operands.resize(1);
      return true;
    }
    // Run-time pads have no attribute: not decided here.
    if (pv || !op.findAttr("pads"))
      return false;
    const std::vector<int64_t> &pads = op.getInts("pads");
    // The result is x's shape exactly (its type may say `?` where x's is known).
    return std::all_of(pads.begin(), pads.end(), [](int64_t p) { return !p; }) &&
           replaceValue(f, op.result(), op.operand(0));
  }
  case OpKind::BatchNormalization: return foldBatchNormIntoProducer(f, op);
  case OpKind::Mul: return foldScaleIntoMatMul(f, op);
  case OpKind::Add: return addIntoScatter(f, op);
  case OpKind::Conv: return explicitConvPads(op);
  case OpKind::Resize: return bindResizeSizes(f, op);
  case OpKind::Cast: {
    DType to = op.attr("to").type();
    if (to == op.operand(0)->type.dtype)
      return foldToOperand(f, op);
    if (narrowBeforeMove(f, op))
      return true;
    // Cast(Cast(x, wider), x's type) == x when the first cast is exact.
    Op *inner = op.operand(0)->def;
    if (!inner || !inner->is(OpKind::Cast) || inner->operand(0)->type.dtype != to ||
        !widensExactly(to, inner->attr("to").type()))
      return false;
    return replaceValue(f, op.result(), inner->operand(0));
  }
  case OpKind::Transpose: {
    std::vector<int64_t> p2 = transposePerm(op);
    if (isIdentityPerm(p2))
      return foldToOperand(f, op);
    Op *inner = op.operand(0)->def;
    if (!inner || !inner->is(OpKind::Transpose))
      return false;
    // out[i] = mid[p2[i]] = x[p1[p2[i]]]
    std::vector<int64_t> p1 = transposePerm(*inner), p(p2.size());
    for (size_t i = 0; i < p2.size(); ++i)
      p[i] = p1[p2[i]];
    op.operands[0] = inner->operand(0);
    op.setAttr("perm", Attribute(p));
    return true;
  }
  case OpKind::Reshape: {
    const TensorType &in = op.operand(0)->type, &out = op.result()->type;
    if (in == out && isStaticShape(in.shape))
      return foldToOperand(f, op);
    if (sampleNormToLayerNorm(op))
      return true;
    Op *inner = op.operand(0)->def;
    if (!inner || !inner->is(OpKind::Reshape))
      return false;
    // Reshape(Reshape(x, s1), s2) == Reshape(x, s2) unless s2 copies dims
    // (0 entries) from the intermediate shape.
    const Value *s2 = op.operand(1);
    if (!s2->isConstant())
      return false;
    const int64_t *d = s2->data->as<int64_t>();
    for (size_t i = 0; i < s2->data->size / 8; ++i)
      if (d[i] == 0 && !attr<OpKind::Reshape, "allowzero">(op))
        return false;
    op.operands[0] = inner->operand(0);
    return true;
  }
  default: return false;
  }
}

// A Dropout that drops nothing (inference, or a constant ratio of 0) whose
// mask is read: the identity and an all-true mask, ConstantOfShape(Shape(x))
// (a fill kernel on both targets), so neither is a host step. One whose
// training_mode or ratio is known only at run time keeps y: its kernel
// (IndexMove.cpp) copies x or refuses random drops as the reference does
// (tc-opt --train makes such a Dropout a PhiloxDropout), so the mask is all
// true whenever the run goes on: the same fill. Not when nothing reads y
// (the refusal would go with it) or the drops are certain.
bool lowerMaskedDropout(Function &f, size_t at) {
  Op &d = *f.ops[at];
  if (!d.is(OpKind::Dropout) || d.results.size() != 2)
    return false;
  Value *x = d.operand(0), *ratio = d.operand(1), *train = d.operand(2);
  std::optional<double> r = floatScalarConstant(ratio);
  bool checked = train && constantTruth(train) != 0 && !(r && *r == 0);
  if (checked) {
    Value *y = d.result(0);
    bool read = std::find(f.results.begin(), f.results.end(), y) != f.results.end() ||
                std::any_of(f.ops.begin(), f.ops.end(), [&](const auto &o) {
                  return std::find(o->operands.begin(), o->operands.end(), y) != o->operands.end();
                });
    if ((constantTruth(train) == 1 && r) || !read)
      return false;
  }
  Value *mask = d.result(1);
  TensorType shapeType{DType::I64, {Dim::fixed(int64_t(x->type.rank()))}};
  auto shape = std::make_unique<Op>(OpKind::Shape),
       fill = std::make_unique<Op>(OpKind::ConstantOfShape);
  Value *dims = f.newValue(f.uniqueName(mask->name + "_shape"), shapeType);
  dims->def = shape.get();
  shape->operands = {x};
  shape->results = {dims};
  fill->operands = {dims};
  fill->results = {mask};
  fill->setAttr("dtype", Attribute(DType::Bool));
  fill->setAttr("value", Attribute(1.0));
  shape->loc = fill->loc = d.loc;
  mask->def = fill.get();
  mask->resultIndex = 0;
  d.results.resize(1);
  if (!checked) {
    d.kind = OpKind::Identity;
    d.operands = {x};
    d.attrs.clear();
  }
  f.insertOp(at, std::move(fill));
  f.insertOp(at, std::move(shape));
  return true;
}

// ScatterND(data, indices, updates) whose indices are a grid of ranges, as
// PyTorch exports `x[:, :, a:, b:] = y` (index_put with slices): indices
// [n_0, ..., n_{K-1}, K] made by Concat(Unsqueeze(Expand(c_k, [n...])), axis
// -1), each c_k a constant counting s_k, s_k + 1, ... along grid axis k. It
// writes the box [s_k, s_k + n_k) of data's first K axes: updates where the
// box is all of data, else Concats of data's Slices around the updates.
// MViTv2's relative-position add (every block): its run-time index tensors
// were 0.6-1.3 GB of i64 a block and the CUDA step crawled past 240 s; the
// gradient of a Slice/Concat is a copy, not a GatherND and a ScatterND.
struct Box {
  int64_t start, size;
};

// Grid axis `k` of indices component `part` (shape G + [1]): its start when
// the component counts up by one along axis k of G and is constant across
// the others.
std::optional<int64_t> gridStart(const Value *part, size_t k, const Shape &grid) {
  const Op *u = part->def;
  if (!u || !(u->is(OpKind::Unsqueeze) || u->is(OpKind::Reshape)) ||
      u->operand(0)->type.shape != grid)
    return std::nullopt;
  const Value *e = u->operand(0);
  const Value *c = e->isConstant() ? e : nullptr;
  if (!c && e->def && e->def->is(OpKind::Expand) && e->def->operand(0)->isConstant())
    c = e->def->operand(0);
  std::optional<std::vector<int64_t>> v = c ? infer::constantInts(c) : std::nullopt;
  size_t r = grid.size(), cr = c ? c->type.rank() : 0;
  if (!v || v->empty() || cr > r || !isStaticShape(c->type.shape))
    return std::nullopt;
  // c's dims align to the grid's last ones; only axis k may be longer than 1.
  int64_t along = 1;
  for (size_t j = 0; j < cr; ++j) {
    int64_t d = c->type.shape[j].size, axis = int64_t(r - cr + j);
    if (axis == int64_t(k))
      along = d;
    else if (d != 1)
      return std::nullopt;
  }
  int64_t n = grid[k].size;
  if (along != n && !(along == 1 && n == 1))
    return std::nullopt;
  for (int64_t i = 0; i < along; ++i)
    if ((*v)[size_t(i)] != (*v)[0] + i)
      return std::nullopt;
  return (*v)[0];
}

// The box's starts when `idx` (shape grid + [K]) is such a grid: a Concat of
// counting components, or a constant (a small grid folds) that counts so.
std::optional<std::vector<int64_t>> gridStarts(const Value *idx, const Shape &grid) {
  size_t k = grid.size();
  std::vector<int64_t> starts;
  if (idx->isConstant()) {
    std::optional<std::vector<int64_t>> v = infer::constantInts(idx);
    if (!v || v->size() < k)
      return std::nullopt;
    starts.assign(v->begin(), v->begin() + std::ptrdiff_t(k));
    std::vector<int64_t> at(k, 0); // the grid position of element group g
    for (size_t g = 0; g < v->size() / k; ++g) {
      for (size_t a = 0; a < k; ++a)
        if ((*v)[g * k + a] != starts[a] + at[a])
          return std::nullopt;
      for (size_t a = k; a-- > 0;) // next position, last axis fastest
        if (++at[a] < grid[a].size)
          break;
        else
          at[a] = 0;
    }
    return starts;
  }
  const Op *cat = idx->def;
  if (!cat || !cat->is(OpKind::Concat) || cat->operands.size() != k)
    return std::nullopt;
  int64_t axis = cat->getInt("axis");
  if (axis != -1 && axis != int64_t(k))
    return std::nullopt;
  for (size_t a = 0; a < k; ++a) {
    std::optional<int64_t> s = gridStart(cat->operand(a), a, grid);
    if (!s)
      return std::nullopt;
    starts.push_back(*s);
  }
  return starts;
}

bool sliceScatter(Function &f, size_t at) {
  Op &op = *f.ops[at];
  if (!op.is(OpKind::ScatterND) || op.operands.size() != 3)
    return false;
  if (const Attribute *red = op.findAttr("reduction"); red && red->s() != "none")
    return false;
  Value *data = op.operand(0), *idx = op.operand(1), *upd = op.operand(2);
  const Shape &ds = data->type.shape, &is = idx->type.shape;
  if (!isStaticShape(ds) || !isStaticShape(is) || is.size() < 2 ||
      upd->type.dtype != data->type.dtype)
    return false;
  size_t k = size_t(is.back().size);
  Shape grid(is.begin(), is.end() - 1);
  if (grid.size() != k || k > ds.size())
    return false;
  // The updates: the grid's box of data, then data's remaining axes.
  Shape want = grid;
  want.insert(want.end(), ds.begin() + std::ptrdiff_t(k), ds.end());
  std::optional<std::vector<int64_t>> starts;
  if (upd->type.shape != want || !(starts = gridStarts(idx, grid)))
    return false;
  std::vector<Box> box;
  for (size_t a = 0; a < k; ++a) {
    int64_t s = (*starts)[a];
    if (s < 0 || s + grid[a].size > ds[a].size)
      return false;
    box.push_back({s, grid[a].size});
  }
  size_t before = f.ops.size();
  AtOpBuilder b{f, op};
  auto slice = [&](Value *x, size_t a, int64_t lo, int64_t hi) {
    return b.op(OpKind::Slice, {x, b.ints({lo}), b.ints({hi}), b.ints({int64_t(a)})});
  };
  // Axis a of `part` (data cut to the box on axes before a).
  std::function<Value *(size_t, Value *)> build = [&](size_t a, Value *part) -> Value * {
    if (a == k)
      return upd;
    int64_t lo = box[a].start, hi = lo + box[a].size, end = ds[a].size;
    if (lo == 0 && hi == end)
      return build(a + 1, part);
    std::vector<Value *> pieces;
    if (lo > 0)
      pieces.push_back(slice(part, a, 0, lo));
    pieces.push_back(build(a + 1, slice(part, a, lo, hi)));
    if (hi < end)
      pieces.push_back(slice(part, a, hi, end));
    return b.op(OpKind::Concat, pieces, {{"axis", Attribute(int64_t(a))}});
  };
  Value *y = build(0, data);
  if (y == upd) // the box is all of data
    return replaceValue(f, op.result(), upd);
  // The new ops (appended) go where the scatter was.
  size_t added = f.ops.size() - before;
  std::rotate(f.ops.begin() + std::ptrdiff_t(at), f.ops.begin() + std::ptrdiff_t(before),
              f.ops.end());
  adoptValue(op.result(), y, &f); // the Concat defines the result now
  f.ops.erase(f.ops.begin() + std::ptrdiff_t(at + added));
  return true;
}

// Split(x) whose every part is read only by a Cast to one float type T:
// Cast(x) to T first, then the Split of it (the Casts' readers read the
// parts). One cast of x instead of one per part, fusable into x's producer:
// a merged weight gradient (merge-gemms{trainable}) is split into each
// weight's f16 gradient and each cast to f32 under mixed precision; cast
// first, the GEMM writes f32 itself (GemmDesc::castF32) and the parts are
// views. The Casts are left dead.
bool castBeforeSplit(Function &f, size_t at) {
  Op &split = *f.ops[at];
  if (!split.is(OpKind::Split) || split.operands.size() > 2 ||
      (split.operands.size() == 2 && split.operand(1)))
    return false;
  Value *x = split.operand(0);
  std::vector<Op *> casts;
  for (Value *r : split.results) {
    Op *c = soleReader(f, r); // null for a result of f too
    if (!c || !c->is(OpKind::Cast))
      return false;
    casts.push_back(c);
  }
  DType to = casts[0]->attr("to").type();
  if (!isFloat(x->type.dtype) || !isFloat(to) || to == x->type.dtype ||
      std::any_of(casts.begin(), casts.end(),
                  [&](const Op *c) { return c->attr("to").type() != to; }))
    return false;
  auto cast = std::make_unique<Op>(OpKind::Cast);
  Value *wide = f.newValue(f.uniqueName(x->name + "_" + std::string(dtypeName(to))),
                           TensorType{to, x->type.shape});
  wide->def = cast.get();
  cast->operands = {x};
  cast->results = {wide};
  cast->setAttr("to", Attribute(to));
  cast->loc = casts[0]->loc;
  split.operands[0] = wide;
  for (size_t k = 0; k < casts.size(); ++k) {
    Value *part = split.results[k];
    part->type.dtype = to;
    if (!replaceValue(f, casts[k]->result(), part))
      fail("canonicalize: cannot replace %", casts[k]->result()->name);
  }
  f.insertOp(at, std::move(cast));
  return true;
}

} // namespace

bool runCanonicalizePass(Module &m, const PassOptions &opts) {
  int64_t maxIter = opts.getInt("max-iterations");
  bool lowerTraining = opts.getBool("lower-training-batch-norms");
  bool changedAny = false;
  for (auto &f : m.functions) {
    for (int64_t iter = 0; iter < maxIter; ++iter) {
      bool changed = false;
      for (auto &op : f->ops)
        changed |= rewrite(*f, *op);
      changed |= eraseDeadOps(*f);
      changedAny |= changed;
      if (!changed)
        break;
    }
    for (size_t i = 0; i < f->ops.size(); ++i)
      changedAny |= lowerBatchNormToAffine(*f, i) ||
                    (lowerTraining && lowerTrainingBatchNorm(*f, i)) || lowerMaskedDropout(*f, i) ||
                    castBeforeSplit(*f, i) || sliceScatter(*f, i);
  }
  return changedAny;
}

} // namespace tc
