// Reference execution of If, Loop and Scan: each iteration or branch is a
// runReference call of a module function. Slices and stacks are plain byte
// copies (every dtype has a fixed element size).
#include "tc/IR/ControlFlow.h"
#include "Kernels.h"
#include <algorithm>
#include <climits>
#include <cstring>

namespace tc::ref {

namespace {

// Callees may call control-flow ops again; a hostile module could make them
// call each other forever.
constexpr int kMaxCallDepth = 64;
thread_local int callDepth = 0;

std::vector<HostTensor> call(const Module *m, const Op &op, const std::string &attr,
                             const std::vector<HostTensor> &args) {
  const std::string &name = op.getString(attr);
  const Function *f = m ? m->lookup(name) : nullptr;
  if (!f)
    fail(op.where(), ": ", attr, " @", name, " is not available to the reference executor");
  if (callDepth >= kMaxCallDepth)
    fail(op.where(), ": control-flow calls nested deeper than ", kMaxCallDepth, " levels");
  ++callDepth;
  struct Leave {
    ~Leave() { --callDepth; }
  } leave;
  return runReference(m, *f, args);
}

// Element `index` of `t` along `axis` (that axis removed).
HostTensor sliceAt(const HostTensor &t, size_t axis, int64_t index) {
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

// `parts` (one shape) stacked along a new `axis`; `fallback` gives the part
// shape when there are no parts.
HostTensor stack(const std::vector<HostTensor> &parts, size_t axis, const TensorType &fallback,
                 const std::string &what) {
  Dims part;
  if (!parts.empty()) {
    part = parts[0].shape();
  } else {
    if (!isStaticShape(fallback.shape))
      fail(what, " ran zero times and its element type ", fallback.str(), " is not static");
    part = staticDims(fallback.shape);
  }
  for (const HostTensor &p : parts)
    if (p.shape() != part || p.dtype() != parts[0].dtype())
      fail(what, " changes type across iterations: ", parts[0].typeStr(), " then ", p.typeStr());
  DType dt = parts.empty() ? fallback.dtype : parts[0].dtype();
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

bool truth(const HostTensor &t, const std::string &what) {
  if (t.dtype() != DType::Bool || t.numElements() != 1)
    fail(what, " must be one bool, got ", t.typeStr());
  return t.data<uint8_t>()[0] != 0;
}

std::vector<HostTensor> runIf(const Module *m, const Op &op,
                              const std::vector<const HostTensor *> &ins) {
  std::vector<HostTensor> args;
  for (size_t i = 1; i < ins.size(); ++i)
    args.push_back(*ins[i]);
  return call(m, op, truth(*ins[0], "cond") ? "then_branch" : "else_branch", args);
}

std::vector<HostTensor> runLoop(const Module *m, const Op &op,
                                const std::vector<const HostTensor *> &ins) {
  size_t c = size_t(op.getInt("num_captures"));
  size_t n = ins.size() - std::min<size_t>(2, ins.size()) - c;
  int64_t trips = INT64_MAX;
  if (ins.size() > 0 && ins[0]) {
    if (ins[0]->numElements() != 1)
      fail(op.where(), ": M must have one element, got ", ins[0]->typeStr());
    trips = ins[0]->getInt(0);
  }
  bool cond = ins.size() > 1 && ins[1] ? truth(*ins[1], "cond") : true;
  std::vector<HostTensor> carried;
  for (size_t i = 0; i < n; ++i)
    carried.push_back(*ins[2 + i]);
  std::vector<std::vector<HostTensor>> scans;
  for (int64_t it = 0; it < trips && cond; ++it) {
    std::vector<HostTensor> args;
    HostTensor iter(DType::I64, {}), condIn(DType::Bool, {});
    iter.setInt(0, it);
    condIn.data<uint8_t>()[0] = 1;
    args.push_back(std::move(iter));
    args.push_back(std::move(condIn));
    for (HostTensor &t : carried)
      args.push_back(std::move(t));
    for (size_t i = 0; i < c; ++i)
      args.push_back(*ins[2 + n + i]);
    std::vector<HostTensor> outs = call(m, op, "body", args);
    cond = truth(outs[0], "the loop condition");
    carried.assign(std::make_move_iterator(outs.begin() + 1),
                   std::make_move_iterator(outs.begin() + 1 + std::ptrdiff_t(n)));
    scans.resize(outs.size() - 1 - n);
    for (size_t k = 0; k + 1 + n < outs.size(); ++k)
      scans[k].push_back(std::move(outs[1 + n + k]));
  }
  const Function *body = m->lookup(op.getString("body"));
  std::vector<HostTensor> results = std::move(carried);
  for (size_t k = 0; k + 1 + n < body->results.size(); ++k)
    results.push_back(stack(k < scans.size() ? scans[k] : std::vector<HostTensor>{}, 0,
                            body->results[1 + n + k]->type,
                            op.where() + ": scan output " + std::to_string(k)));
  return results;
}

int64_t attrAt(const Op &op, const char *name, size_t i) {
  const std::vector<int64_t> &v = op.getInts(name);
  return i < v.size() ? v[i] : 0;
}

// One unbatched scan over `ins` (states, scan inputs, captures).
std::vector<HostTensor> scanOnce(const Module *m, const Op &op,
                                 const std::vector<const HostTensor *> &ins, size_t nStates,
                                 size_t nScans) {
  size_t c = ins.size() - nStates - nScans;
  std::vector<size_t> axes;
  int64_t length = -1;
  for (size_t i = 0; i < nScans; ++i) {
    const HostTensor &t = *ins[nStates + i];
    axes.push_back(size_t(normalizeAxis(attrAt(op, "scan_input_axes", i), int64_t(t.rank()))));
    int64_t len = t.shape()[axes.back()];
    if (length >= 0 && len != length)
      fail(op.where(), ": scan input ", i, " has ", len, " steps, scan input 0 has ", length);
    length = len;
  }
  std::vector<HostTensor> states;
  for (size_t i = 0; i < nStates; ++i)
    states.push_back(*ins[i]);
  std::vector<std::vector<HostTensor>> outs;
  for (int64_t step = 0; step < length; ++step) {
    std::vector<HostTensor> args = std::move(states);
    for (size_t i = 0; i < nScans; ++i) {
      int64_t at = attrAt(op, "scan_input_directions", i) ? length - 1 - step : step;
      args.push_back(sliceAt(*ins[nStates + i], axes[i], at));
    }
    for (size_t i = 0; i < c; ++i)
      args.push_back(*ins[nStates + nScans + i]);
    std::vector<HostTensor> r = call(m, op, "body", args);
    states.assign(std::make_move_iterator(r.begin()),
                  std::make_move_iterator(r.begin() + std::ptrdiff_t(nStates)));
    outs.resize(r.size() - nStates);
    for (size_t k = 0; k < outs.size(); ++k)
      outs[k].push_back(std::move(r[nStates + k]));
  }
  const Function *body = m->lookup(op.getString("body"));
  std::vector<HostTensor> results = std::move(states);
  for (size_t k = 0; k + nStates < body->results.size(); ++k) {
    std::vector<HostTensor> parts =
        k < outs.size() ? std::move(outs[k]) : std::vector<HostTensor>{};
    if (attrAt(op, "scan_output_directions", k))
      std::reverse(parts.begin(), parts.end());
    const TensorType &type = body->results[nStates + k]->type;
    size_t axis =
        size_t(normalizeAxis(attrAt(op, "scan_output_axes", k), int64_t(type.rank()) + 1));
    results.push_back(stack(parts, axis, type, op.where() + ": scan output " + std::to_string(k)));
  }
  return results;
}

std::vector<HostTensor> runScan(const Module *m, const Op &op,
                                const std::vector<const HostTensor *> &ins) {
  size_t nScans = size_t(op.getInt("num_scan_inputs"));
  size_t c = size_t(op.getInt("num_captures"));
  size_t nStates = ins.size() - nScans - c;
  if (!op.getInt("batched"))
    return scanOnce(m, op, ins, nStates, nScans);
  // Opset-8 form: one scan per batch element, results stacked on axis 0.
  int64_t batch = -1;
  for (size_t i = 0; i < nStates + nScans; ++i) {
    if (ins[i]->rank() == 0 || (batch >= 0 && ins[i]->shape()[0] != batch))
      fail(op.where(), ": input ", i, " ", ins[i]->typeStr(), " does not have the batch size ",
           batch < 0 ? ins[0]->shape().at(0) : batch);
    batch = ins[i]->shape()[0];
  }
  std::vector<std::vector<HostTensor>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<HostTensor> sliced;
    for (size_t i = 0; i < nStates + nScans; ++i)
      sliced.push_back(sliceAt(*ins[i], 0, b));
    std::vector<const HostTensor *> args;
    for (const HostTensor &t : sliced)
      args.push_back(&t);
    for (size_t i = 0; i < c; ++i)
      args.push_back(ins[nStates + nScans + i]);
    perBatch.push_back(scanOnce(m, op, args, nStates, nScans));
  }
  const Function *body = m->lookup(op.getString("body"));
  std::vector<HostTensor> results;
  for (size_t k = 0; k < body->results.size(); ++k) {
    std::vector<HostTensor> parts;
    for (auto &r : perBatch)
      parts.push_back(std::move(r[k]));
    results.push_back(
        stack(parts, 0, body->results[k]->type, op.where() + ": result " + std::to_string(k)));
  }
  return results;
}

} // namespace

std::vector<HostTensor> runControlFlow(const Module *m, const Op &op,
                                       const std::vector<const HostTensor *> &ins) {
  if (!m)
    fail(op.where(), ": ", op.name(), " needs its module to run");
  // Signatures and operand counts are checked once here, so the runners can
  // index freely.
  std::vector<const Function *> callees;
  for (const std::string &attr : calleeAttrs(op)) {
    const Function *f = m->lookup(op.getString(attr));
    if (!f)
      fail(op.where(), ": ", attr, " @", op.getString(attr), " is not a function of the module");
    callees.push_back(f);
  }
  try {
    controlFlowResultTypes(op, callees);
  } catch (const Error &e) {
    fail(op.where(), ": ", e.what());
  }
  if (op.is(OpKind::If))
    return runIf(m, op, ins);
  if (op.is(OpKind::Loop))
    return runLoop(m, op, ins);
  return runScan(m, op, ins);
}

} // namespace tc::ref
