// cuBLASLt picks its fast kernels only for 16-byte aligned rows: a GEMM
// whose N is not a multiple of 8 f16 (GPT-2's and GPT-Neo's vocabulary of
// 50257) ran gpt_neo's LM head at 109 TFLOP/s, 725 us, 45% of the model,
// where OPT's 50272 ran at 404. This pass (CUDA's pre-fusion pipeline) pads
// a constant B [K, N] with zero columns to N' (a multiple of 8) and slices
// the result back:
//   MatMul(A, B) -> Slice(MatMul(A, B'), [0, N) of the last axis)
// the GEMM writes aligned rows, and the pointwise kernel after it (the
// logits' Cast) reads through the Slice (inlined moves).
// In a train step the weight is an argument: `trainable` (before autodiff)
// joins it to zero columns instead, so the forward's and the backward's
// GEMMs are all aligned (roberta's tied head, N = 50265: 2.1 ms of a 9.5 ms
// step at 9-13% of the f16 peak on the H200, mistral's aligned head 64-70%).
// It also gives a Gemm's C the forms cuBLASLt takes (CudaLibraryPlan.cpp): a
// full [M, N] scaled by beta, or a per-column bias row with beta 1. Any other
// broadcast C (a scalar, a column, a row with beta != 1: torch.addmm with a
// scalar, ONNX's Gemm tests) becomes Expand(C, [M, N]): a small copy kernel,
// not a host step; so does an f64 bias row (cuBLASLt's epilogues are not
// given f64). A MatMul whose B is shared over batch dims of A that are not
// its trailing ones ([b, h, M, K] x [1, h, K, N]: DeBERTa's relative-position
// scores) has no single batch stride for cuBLASLt: those dims are moved last
// in A, B and the result (Transposes), where they are more rows of each GEMM.
#include "tc/IR/Layout.h"
#include "tc/IR/MatMulViews.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/ConstantEval.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>
#include <limits>

namespace tc {

namespace {

// Columns of a row that make 16 bytes in f16 (f32 rows need 4; 8 serves both).
constexpr int64_t kAlign = 8;
// Narrower GEMMs are not worth a Slice.
constexpr int64_t kMinN = 1024;

// `trainable`: B a weight argument (align-gemms{trainable=1}), else a constant.
bool misalignedN(const Function &f, const Op &mm, bool trainable) {
  const Value *b = mm.operand(1);
  if (!(trainable ? isWeightArgument(f, b) : b->isConstant()) || b->type.rank() != 2 ||
      !b->type.shape[0].isStatic() || !b->type.shape[1].isStatic() || !isFloat(b->type.dtype))
    return false;
  int64_t n = b->type.shape[1].size;
  return n >= kMinN && n % kAlign != 0;
}

// Appends the padded MatMul to f and turns `mm` into the Slice of it: a
// constant B padded here, a weight argument's joined to zero columns by a
// Concat (which the kernel casting it to f16 reads in place; autodiff's
// gradient of it is the padded gradient's first N columns).
void pad(Function &f, Op &mm) {
  Value *b = mm.operand(1);
  int64_t k = b->type.shape[0].size, n = b->type.shape[1].size,
          np = (n + kAlign - 1) / kAlign * kAlign;
  Value *bp = nullptr;
  if (b->isConstant()) {
    HostTensor bt = constantTensor(*b);
    HostTensor padded(bt.dtype(), {k, np}); // zero-filled
    placeColumns(padded, bt, 0);
    bp = f.addConstant(f.uniqueName(b->name + "_aligned"), padded.type(),
                       TensorData::copyOf(padded.bytes(), padded.byteSize()), b->loc);
  } else {
    // A tied head's Transpose(table) [K, N]: the table [N, K] joined to zero
    // rows, then transposed: the GEMMs read the padded table by transB (no
    // transposed copy of the f32 table each step, gemm-views) and the
    // table's gradient comes out [N', K], its first N rows (roberta: a 131
    // us f32 Transpose forward, a Transpose and a Split of the gradient 144).
    bool tied = b->def && b->def->is(OpKind::Transpose);
    Value *src = tied ? b->def->operand(0) : b;
    std::vector<int64_t> zd =
        tied ? std::vector<int64_t>{np - n, k} : std::vector<int64_t>{k, np - n};
    HostTensor zeros(b->type.dtype, zd);
    Value *z = f.addConstant(f.uniqueName(src->name + "_pad"), zeros.type(),
                             TensorData::copyOf(zeros.bytes(), zeros.byteSize()), mm.loc);
    std::vector<int64_t> cd = tied ? std::vector<int64_t>{np, k} : std::vector<int64_t>{k, np};
    Op *cat = f.addOp(OpKind::Concat, {src, z}, {f.uniqueName(src->name + "_aligned")},
                      {TensorType{b->type.dtype, makeShape(cd)}}, mm.loc);
    cat->setAttr("axis", Attribute(int64_t(tied ? 0 : 1)));
    bp = cat->result();
    if (tied) {
      Op *t = f.addOp(OpKind::Transpose, {bp}, {f.uniqueName(b->name + "_aligned")},
                      {TensorType{b->type.dtype, makeShape({k, np})}}, mm.loc);
      t->setAttr("perm", Attribute(std::vector<int64_t>{1, 0}));
      bp = t->result();
    }
  }
  Value *y = mm.result();
  Shape wide = y->type.shape;
  wide.back() = Dim::fixed(np);
  Op *gemm = f.addOp(OpKind::MatMul, {mm.operand(0), bp}, {f.uniqueName(y->name + "_aligned")},
                     {TensorType{y->type.dtype, wide}}, mm.loc);
  mm.kind = OpKind::Slice;
  mm.attrs.clear();
  mm.operands = {gemm->result(), addIntsConstant(f, y->name + "_start", {0}, mm.loc),
                 addIntsConstant(f, y->name + "_end", {n}, mm.loc),
                 addIntsConstant(f, y->name + "_axis", {-1}, mm.loc)};
}

// A train step's padded head whose logits only a softmax cross-entropy
// reads (AppendLoss's, over the last axis): Slice(Y', [0, N)) (+ bias) ->
// (Reshape ->) SCE becomes Y' + Concat(bias, -inf x (N' - N)) -> SCE over
// N' classes. exp(-inf) is 0: the loss is the same, the padded classes'
// gradient exactly 0; the bias rides in the GEMM's epilogue, the loss
// reads the GEMM's aligned rows and its backward writes them (the head's
// GEMMs read them, no Pad), where the Slice + bias Add wrote the logits
// once more and the backward padded their gradient (roberta: 122 + 230 us
// on an H100). A target in [N, N') (out of range before) gets an infinite
// loss.
bool maskPaddedClasses(Function &f, Op &slice) {
  Value *y = slice.result(), *wide = slice.operand(0);
  int64_t n = y->type.shape.back().size, np = wide->type.shape.back().size;
  Op *next = soleReader(f, y);
  Value *bias = nullptr, *logits = y;
  if (next && next->is(OpKind::Add)) {
    bias = next->operand(0) == y ? next->operand(1) : next->operand(0);
    if (bias->type.rank() != 1 || bias->type.shape[0] != Dim::fixed(n) ||
        bias->type.dtype != y->type.dtype || next->result()->type.shape != y->type.shape)
      return false;
    logits = next->result();
    next = soleReader(f, logits);
  }
  Op *reshape = nullptr;
  if (next && next->is(OpKind::Reshape) && next->result()->type.rank() == 2 &&
      next->result()->type.shape[1] == Dim::fixed(n)) {
    reshape = next;
    next = soleReader(f, reshape->result());
  }
  if (!next || !next->is(OpKind::SoftmaxCrossEntropyLoss) || next->results.size() != 1 ||
      next->operand(0) != (reshape ? reshape->result() : logits) ||
      (!reshape && y->type.rank() != 2) || (bias && bias->def))
    return false;
  size_t mark = f.ops.size();
  // The bias over N' classes: the bias (or zeros) and -inf.
  HostTensor tail(y->type.dtype, {np - n});
  for (int64_t i = 0; i < np - n; ++i)
    tail.setDouble(i, -std::numeric_limits<double>::infinity());
  Value *masked = f.addConstant(f.uniqueName(y->name + "_masked"), tail.type(),
                                TensorData::copyOf(tail.bytes(), tail.byteSize()), slice.loc);
  if (!bias) {
    HostTensor zeros(y->type.dtype, {n});
    bias = f.addConstant(f.uniqueName(y->name + "_bias"), zeros.type(),
                         TensorData::copyOf(zeros.bytes(), zeros.byteSize()), slice.loc);
  }
  Op *cat = f.addOp(OpKind::Concat, {bias, masked}, {f.uniqueName(bias->name + "_aligned")},
                    {TensorType{y->type.dtype, makeShape({np})}}, slice.loc);
  cat->setAttr("axis", Attribute(int64_t(0)));
  Op *add = f.addOp(OpKind::Add, {wide, cat->result()}, {f.uniqueName(y->name + "_classes")},
                    {wide->type}, slice.loc);
  Value *scores = add->result();
  if (reshape) {
    std::vector<int64_t> dims = staticDims(reshape->result()->type.shape);
    dims[1] = np;
    Op *r = f.addOp(OpKind::Reshape,
                    {scores, addIntsConstant(f, scores->name + "_shape", dims, slice.loc)},
                    {f.uniqueName(scores->name + "_rows")},
                    {TensorType{y->type.dtype, makeShape(dims)}}, slice.loc);
    scores = r->result();
  }
  next->operands[0] = scores;
  // The new ops go right before the loss (f.addOp appended them).
  auto at =
      std::find_if(f.ops.begin(), f.ops.end(), [&](const auto &o) { return o.get() == next; });
  std::rotate(at, f.ops.begin() + std::ptrdiff_t(mark), f.ops.end());
  return true;
}

// Gemm(A, B, C) whose static C is no full [M, N] and no row with beta 1 (in
// f64: no full [M, N]).
bool expandC(Function &f, Op &g) {
  Value *c = g.is(OpKind::Gemm) ? g.operand(2) : nullptr;
  const TensorType &y = g.result()->type;
  if (!c || y.rank() != 2 || !isStaticShape(y.shape) || !isStaticShape(c->type.shape) ||
      c->type.rank() > 2)
    return false;
  std::vector<int64_t> full = staticDims(y.shape), cd = staticDims(c->type.shape);
  cd.insert(cd.begin(), 2 - cd.size(), 1);
  bool row =
      cd == std::vector<int64_t>{1, full[1]} && g.getFloat("beta") == 1 && y.dtype != DType::F64;
  if (cd == full || row)
    return false;
  if (g.getFloat("beta") == 0) { // C is not read (torch.mm exported as Gemm)
    g.operands.resize(2);
    return true;
  }
  Value *shape = addIntsConstant(f, c->name + "_shape", full, g.loc);
  Op *e = f.addOp(OpKind::Expand, {c, shape}, {f.uniqueName(c->name + "_full")},
                  {TensorType{c->type.dtype, y.shape}}, g.loc);
  g.operands[2] = e->result();
  return true;
}

Value *transposed(Function &f, Value *v, const std::vector<int64_t> &perm, const std::string &name,
                  const Location &loc) {
  Op *t = f.addOp(OpKind::Transpose, {v}, {f.uniqueName(name)},
                  {TensorType{v->type.dtype, permuteShape(v->type.shape, perm)}}, loc);
  t->setAttr("perm", Attribute(perm));
  return t->result();
}

// MatMul(A, B) of equal ranks whose B is 1 on batch dims where A is not,
// some of them before a dim where B is not 1 (cuBLASLt's plan takes B's
// trailing 1s as rows already): Transpose(MatMul(A', B'), inverse) with
// those dims last in A' and B'. B only moves dims of extent 1: a constant B
// becomes a constant over the same bytes (an op on it would be left for run
// time after the last constant fold).
bool foldSharedBatch(Function &f, Op &mm) {
  if (!isPlainMatMul(mm))
    return false;
  Value *a = mm.operand(0), *b = mm.operand(1);
  size_t r = a->type.rank();
  if (r < 4 || b->type.rank() != r || mm.result()->type.rank() != r || a->isConstant())
    return false;
  auto unit = [](const Dim &d) { return d.isStatic() && d.size == 1; };
  std::vector<int64_t> kept, shared;
  bool needed = false;
  for (size_t i = 0; i + 2 < r; ++i) {
    const Dim &da = a->type.shape[i], &db = b->type.shape[i];
    if (unit(db) && !unit(da)) {
      shared.push_back(int64_t(i));
    } else if (da == db) {
      kept.push_back(int64_t(i));
      needed |= !unit(db) && !shared.empty();
    } else {
      return false; // A broadcast, or unknown sizes: not this form
    }
  }
  if (!needed)
    return false;
  std::vector<int64_t> perm = kept, inverse(r);
  perm.insert(perm.end(), shared.begin(), shared.end());
  perm.push_back(int64_t(r - 2));
  perm.push_back(int64_t(r - 1));
  for (size_t i = 0; i < r; ++i)
    inverse[size_t(perm[i])] = int64_t(i);
  Value *y = mm.result();
  Value *at = transposed(f, a, perm, a->name + "_rows", mm.loc);
  Value *bt = nullptr;
  if (b->isConstant()) {
    bt = f.addConstant(f.uniqueName(b->name + "_rows"),
                       TensorType{b->type.dtype, permuteShape(b->type.shape, perm)}, *b->data,
                       b->loc);
  } else {
    bt = transposed(f, b, perm, b->name + "_rows", mm.loc);
  }
  Op *g = f.addOp(OpKind::MatMul, {at, bt}, {f.uniqueName(y->name + "_rows")},
                  {TensorType{y->type.dtype, permuteShape(y->type.shape, perm)}}, mm.loc);
  mm.kind = OpKind::Transpose;
  mm.attrs.clear();
  mm.operands = {g->result()};
  mm.setAttr("perm", Attribute(inverse));
  return true;
}

} // namespace

bool runAlignGemmsPass(Module &m, const PassOptions &opts) {
  // trainable: a train step before autodiff (tc-opt --train on CUDA), only
  // the GEMMs of weight arguments (the backward's GEMMs come out aligned).
  if (opts.getBool("trainable")) {
    std::vector<Op *> slices;
    bool changed = rewriteOpsInPlace(m.main(), [&](Function &f, Op &op) {
      bool misaligned = isPlainMatMul(op) && misalignedN(f, op, true);
      if (misaligned) {
        pad(f, op);
        slices.push_back(&op);
      }
      return misaligned;
    });
    for (Op *slice : slices) // (once every reader is in place)
      maskPaddedClasses(m.main(), *slice);
    return changed;
  }
  return rewriteOpsInPlace(m, [](Function &f, Op &op) {
    bool misaligned = isPlainMatMul(op) && misalignedN(f, op, false);
    if (misaligned)
      pad(f, op);
    return misaligned || expandC(f, op) || foldSharedBatch(f, op);
  });
}

} // namespace tc
