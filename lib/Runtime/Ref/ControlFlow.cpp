// Reference execution of If, Loop and Scan: the protocol of ControlFlowRun.h
// over host tensors, each callee a runReference call (through the caller's
// OpOverride when one is given: the CPU runtime's kernels). Slices and
// stacks are plain byte copies (every dtype has a fixed element size).
#include "Kernels.h"
#include "tc/Runtime/ControlFlowRun.h"
#include "tc/Runtime/RefExecutor.h"
#include <cstring>

namespace tc {

namespace controlflow {

namespace {
// Callees may call control-flow ops again; a hostile module could make them
// call each other forever.
constexpr int kMaxCallDepth = 64;
thread_local int callDepth = 0;
} // namespace

CallDepth::CallDepth(const Op &op) {
  if (callDepth >= kMaxCallDepth)
    fail(op.where(), ": control-flow calls nested deeper than ", kMaxCallDepth, " levels");
  ++callDepth;
}
CallDepth::~CallDepth() { --callDepth; }

std::vector<const Function *> checkedCallees(const Module &m, const Op &op) {
  // Signatures and operand counts are checked once here, so the runners can
  // index freely.
  std::vector<const Function *> callees;
  for (const std::string &attr : calleeAttrs(op)) {
    const Function *f = m.lookup(op.getString(attr));
    if (!f)
      fail(op.where(), ": ", attr, " @", op.getString(attr), " is not a function of the module");
    callees.push_back(f);
  }
  try {
    controlFlowResultTypes(op, callees);
  } catch (const Error &e) {
    fail(op.where(), ": ", e.what());
  }
  return callees;
}

bool truth(const HostTensor &t, const std::string &what) {
  if (t.dtype() != DType::Bool || t.numElements() != 1)
    fail(what, " must be one bool, got ", t.typeStr());
  return t.data<uint8_t>()[0] != 0;
}

HostTensor iterationNumber(int64_t i) {
  HostTensor t(DType::I64, {});
  t.setInt(0, i);
  return t;
}

HostTensor trueScalar() {
  HostTensor t(DType::Bool, {});
  t.data<uint8_t>()[0] = 1;
  return t;
}

int64_t attrAt(const Op &op, const char *name, size_t i) {
  const std::vector<int64_t> &v = op.getInts(name);
  return i < v.size() ? v[i] : 0;
}

size_t axisIn(int64_t axis, size_t rank, const std::string &what) {
  try {
    return size_t(ref::normalizeAxis(axis, int64_t(rank)));
  } catch (const Error &e) {
    fail(what, ": ", e.what());
  }
}

} // namespace controlflow

namespace {

using ref::Dims;
using ref::numElements;

class HostControlFlow : public ControlFlowRun<HostTensor> {
public:
  HostControlFlow(const Module &m, const OpOverride *bodies) : ControlFlowRun(m), bodies_(bodies) {}

protected:
  std::vector<HostTensor> call(const Op &, const Function &f,
                               std::vector<HostTensor> args) override {
    return runReference(&m_, f, args, nullptr, bodies_);
  }
  DType dtype(const HostTensor &t) const override { return t.dtype(); }
  const std::vector<int64_t> &dims(const HostTensor &t) const override { return t.shape(); }
  HostTensor read(const HostTensor &t) override { return t; }
  HostTensor make(const HostTensor &t) override { return t; }

  HostTensor sliceAt(const HostTensor &t, size_t axis, int64_t index) override {
    Dims dims = t.shape(), out = dims;
    out.erase(out.begin() + std::ptrdiff_t(axis));
    HostTensor r(t.dtype(), out);
    size_t es = dtypeSize(t.dtype());
    int64_t outer = numElements(Dims(dims.begin(), dims.begin() + std::ptrdiff_t(axis)));
    int64_t inner = numElements(Dims(dims.begin() + std::ptrdiff_t(axis) + 1, dims.end()));
    size_t chunk = size_t(inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(r.bytes() + size_t(o) * chunk, t.bytes() + size_t(o * dims[axis] + index) * chunk,
                  chunk);
    return r;
  }

  HostTensor stack(const std::vector<HostTensor> &parts, size_t axis, DType dt,
                   const Dims &part) override {
    Dims out = part;
    out.insert(out.begin() + std::ptrdiff_t(axis), int64_t(parts.size()));
    HostTensor r(dt, out);
    size_t es = dtypeSize(dt);
    int64_t outer = numElements(Dims(part.begin(), part.begin() + std::ptrdiff_t(axis)));
    int64_t inner = numElements(Dims(part.begin() + std::ptrdiff_t(axis), part.end()));
    size_t chunk = size_t(inner) * es, n = parts.size();
    for (int64_t o = 0; o < outer; ++o)
      for (size_t t = 0; t < n; ++t)
        std::memcpy(r.bytes() + (size_t(o) * n + t) * chunk, parts[t].bytes() + size_t(o) * chunk,
                    chunk);
    return r;
  }

private:
  const OpOverride *bodies_;
};

} // namespace

std::vector<HostTensor> runControlFlow(const Module &m, const Op &op,
                                       const std::vector<const HostTensor *> &ins,
                                       const OpOverride *bodies) {
  return HostControlFlow(m, bodies).run(op, ins);
}

namespace ref {

std::vector<HostTensor> runControlFlow(const Module *m, const Op &op,
                                       const std::vector<const HostTensor *> &ins) {
  if (!m)
    fail(op.where(), ": ", op.name(), " needs its module to run");
  return tc::runControlFlow(*m, op, ins, nullptr);
}

} // namespace ref

} // namespace tc
