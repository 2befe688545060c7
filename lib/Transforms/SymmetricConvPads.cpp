// cuDNN's convolutions pad each spatial axis the same at both ends; a Conv
// whose pads differ (SAME with an even window or a stride, TF exports) would
// be turned down at run time and run on the host. This pass (CUDA's
// pre-fusion pipeline) moves the difference into a zero Pad before the
// Conv, which keeps the common part: Conv(x, pads [b, e]) with b != e is
// Conv(Pad(x, [b - min, e - min]), pads [min, min]).
// Depthwise convs keep their pads: the generated kernel takes them with any
// padding (lib/CodeGen/CudaCodegen.cpp), and the Pad cost more than the conv
// (maxvit's TF-"same" stride-2 depthwise convs: 5 Pads, 693 us of 7.0 ms at
// batch 32 on the H200, session 20's profile).
#include "tc/IR/ConvForms.h"
#include "tc/IR/OpTable.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/Rewrite.h"
#include <algorithm>

namespace tc {

namespace {

// The Pad `conv` needs before it (null when its pads are symmetric), and
// conv's pads made symmetric.
Op *splitPads(Function &f, Op &conv) {
  const Value *x = conv.operand(0);
  std::vector<int64_t> pads = conv.getInts("pads");
  if (conv.getString("auto_pad") != "NOTSET" || x->type.rank() < 3 || pads.empty())
    return nullptr;
  size_t r = x->type.rank(), sp = r - 2, first = conv.getInt("channels_last") ? 1 : 2;
  std::vector<int64_t> extra(2 * r, 0);
  bool asymmetric = false;
  for (size_t i = 0; i < sp; ++i) {
    int64_t lo = std::min(pads[i], pads[sp + i]);
    extra[first + i] = pads[i] - lo;
    extra[r + first + i] = pads[sp + i] - lo;
    asymmetric |= pads[i] != pads[sp + i];
    pads[i] = pads[sp + i] = lo;
  }
  if (!asymmetric)
    return nullptr;
  Op *pad = f.addOp(OpKind::Pad, {conv.operand(0)}, {f.uniqueName(x->name + "_padded")},
                    {TensorType{}}, conv.loc);
  pad->setAttr("pads", Attribute(extra));
  pad->result()->type = opInfo(OpKind::Pad).infer(*pad).at(0);
  conv.operands[0] = pad->result();
  conv.setAttr("pads", Attribute(pads));
  return pad;
}

} // namespace

bool runSymmetricConvPadsPass(Module &m, const PassOptions &) {
  return rewriteOpsInPlace(m, [](Function &f, Op &op) {
    return op.is(OpKind::Conv) && !isKernelDepthwiseConv(op) &&
           splitPads(f, op) != nullptr; // appends the Pad first
  });
}

} // namespace tc
