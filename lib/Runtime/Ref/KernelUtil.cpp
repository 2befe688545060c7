// Helpers shared by the reference kernels.
#include "Kernels.h"
#include "tc/IR/Layout.h"
#include <algorithm>
#include <cstring>

namespace tc::ref {

int64_t numElements(const Dims &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x; // dims come from allocated tensors: no overflow
  return n;
}

Dims stridesOf(const Dims &d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;)
    s[i - 1] = s[i] * d[i];
  return s;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

BroadcastWalk::BroadcastWalk(const Dims &out, const std::vector<Dims> &ins) : out_(out) {
  size_t r = out.size();
  for (const Dims &in : ins) {
    if (in.size() > r)
      fail("internal: operand of rank ", in.size(), " does not broadcast to rank ", r);
    Dims inStrides = stridesOf(in), s(r, 0);
    size_t lead = r - in.size();
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t id = in[d], od = out[lead + d];
      if (id == od)
        s[lead + d] = id == 1 ? 0 : inStrides[d];
      else if (id == 1)
        s[lead + d] = 0;
      else
        fail("internal: dimension ", id, " does not broadcast to ", od);
    }
    strides_.push_back(std::move(s));
  }
}

std::vector<double> loadDoubles(const HostTensor &t) {
  std::vector<double> v(size_t(t.numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.getDouble(int64_t(i));
  return v;
}

std::vector<int64_t> loadInts(const HostTensor &t) {
  std::vector<int64_t> v(size_t(t.numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.getInt(int64_t(i));
  return v;
}

void expectArity(const std::vector<const HostTensor *> &ins, size_t min,
                 const std::vector<HostTensor> &outs, size_t nOuts) {
  if (ins.size() < min || outs.size() != nOuts)
    fail("internal: kernel called with ", ins.size(), " operands and ", outs.size(), " results");
  for (size_t i = 0; i < min; ++i)
    if (!ins[i])
      fail("internal: operand ", i, " is missing");
}

void runChannelsFirst(RefKernel channelsFirst, const Op &op,
                      const std::vector<const HostTensor *> &ins, std::vector<HostTensor> &outs,
                      size_t layoutOperands) {
  expectArity(ins, layoutOperands, outs, 1);
  size_t r = ins[0]->rank();
  for (size_t i = 0; i < layoutOperands; ++i)
    if (ins[i]->rank() != r || r < 3)
      fail("internal: unexpected ranks ", ins[0]->typeStr(), ", ", ins[i]->typeStr());
  if (outs[0].rank() != r)
    fail("internal: unexpected result ", outs[0].typeStr());
  std::vector<HostTensor> moved;
  moved.reserve(layoutOperands);
  std::vector<const HostTensor *> first = ins;
  for (size_t i = 0; i < layoutOperands; ++i)
    first[i] = &moved.emplace_back(permuteAxes(*ins[i], toChannelsFirstPerm(r)));
  Dims firstDims;
  for (int64_t a : toChannelsFirstPerm(r))
    firstDims.push_back(outs[0].shape()[size_t(a)]);
  std::vector<HostTensor> y;
  y.emplace_back(outs[0].dtype(), std::move(firstDims));
  channelsFirst(op, first, y);
  outs[0] = permuteAxes(y[0], toChannelsLastPerm(r));
}

} // namespace tc::ref
