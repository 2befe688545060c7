// How If, Loop and Scan run (ONNX's semantics, ControlFlow.h): the one
// protocol of the reference executor (host tensors, lib/Runtime/Ref/
// ControlFlow.cpp, which the CPU runtime runs with its kernels for the
// callees) and the CUDA runtime (tensors in device memory,
// lib/Runtime/CUDA/CudaControlFlow.cpp). A runtime supplies its tensor type
// `T` and what differs: how a callee runs, how a scalar is read to the host
// or made from one, how a slice is taken and parts are stacked.
#pragma once
#include "tc/IR/ControlFlow.h"
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

namespace tc {

namespace controlflow {
// The callees of `op` in `m`, their signatures checked against its operands
// (one line naming the op otherwise).
std::vector<const Function *> checkedCallees(const Module &m, const Op &op);
// One bool scalar's truth; fails naming `what` for anything else.
bool truth(const HostTensor &t, const std::string &what);
// i64 / bool scalars for a Loop body's iteration number and cond.
HostTensor iterationNumber(int64_t i);
HostTensor trueScalar();
// Element i of int attribute `name` (0 past its end).
int64_t attrAt(const Op &op, const char *name, size_t i);
// `axis` of a rank-`rank` tensor in [0, rank); fails naming `what`.
size_t axisIn(int64_t axis, size_t rank, const std::string &what);
// Counts nested callee calls for the duration of a call: a hostile module
// whose callees call each other forever fails in one line at 64 levels.
struct CallDepth {
  explicit CallDepth(const Op &op);
  ~CallDepth();
  CallDepth(const CallDepth &) = delete;
  CallDepth &operator=(const CallDepth &) = delete;
};
} // namespace controlflow

template <typename T> class ControlFlowRun {
public:
  explicit ControlFlowRun(const Module &m) : m_(m) {}
  virtual ~ControlFlowRun() = default;

  // `op`'s results from `ins` (nullptr: an absent optional operand).
  std::vector<T> run(const Op &op, const std::vector<const T *> &ins) {
    std::vector<const Function *> callees = controlflow::checkedCallees(m_, op);
    if (op.is(OpKind::If)) {
      std::vector<T> args;
      for (size_t i = 1; i < ins.size(); ++i)
        args.push_back(*ins[i]);
      bool cond = controlflow::truth(scalarOnHost(*ins[0], "cond"), "cond");
      return callee(op, *callees[cond ? 0 : 1], std::move(args));
    }
    if (op.is(OpKind::Loop))
      return runLoop(op, ins, *callees[0]);
    return runScan(op, ins, *callees[0]);
  }

protected:
  // Runs callee `f` of `op` on `args` (one per argument).
  virtual std::vector<T> call(const Op &op, const Function &f, std::vector<T> args) = 0;
  virtual DType dtype(const T &t) const = 0;
  virtual const std::vector<int64_t> &dims(const T &t) const = 0;
  // A tensor of one element on the host (the device: a read and a sync).
  virtual HostTensor read(const T &t) = 0;
  // A host scalar as a T (the device: uploaded).
  virtual T make(const HostTensor &t) = 0;
  // Element `index` of `t` along `axis` (that axis removed).
  virtual T sliceAt(const T &t, size_t axis, int64_t index) = 0;
  // `parts` (each of dims `part`, dtype `dt`; maybe none) stacked along a
  // new `axis`.
  virtual T stack(const std::vector<T> &parts, size_t axis, DType dt,
                  const std::vector<int64_t> &part) = 0;

  const Module &m_;

private:
  std::string typeStr(const T &t) const { return TensorType{dtype(t), makeShape(dims(t))}.str(); }
  int64_t elements(const T &t) const {
    int64_t n = 1;
    for (int64_t d : dims(t))
      n *= d;
    return n;
  }
  HostTensor scalarOnHost(const T &t, const std::string &what) {
    if (elements(t) != 1)
      fail(what, " must have one element, got ", typeStr(t));
    return read(t);
  }
  std::vector<T> callee(const Op &op, const Function &f, std::vector<T> args) {
    controlflow::CallDepth depth(op);
    return call(op, f, std::move(args));
  }

  // `parts` stacked; `fallback` gives the part's type when there are none.
  T stackParts(const std::vector<T> &parts, size_t axis, const TensorType &fallback,
               const std::string &what) {
    std::vector<int64_t> part;
    if (!parts.empty()) {
      part = dims(parts[0]);
    } else {
      if (!isStaticShape(fallback.shape))
        fail(what, " ran zero times and its element type ", fallback.str(), " is not static");
      part = staticDims(fallback.shape);
    }
    for (const T &p : parts)
      if (dims(p) != part || dtype(p) != dtype(parts[0]))
        fail(what, " changes type across iterations: ", typeStr(parts[0]), " then ", typeStr(p));
    return stack(parts, axis, parts.empty() ? fallback.dtype : dtype(parts[0]), part);
  }

  std::vector<T> runLoop(const Op &op, const std::vector<const T *> &ins, const Function &body) {
    size_t c = size_t(op.getInt("num_captures"));
    size_t n = ins.size() - std::min<size_t>(2, ins.size()) - c;
    int64_t trips = INT64_MAX;
    if (ins.size() > 0 && ins[0])
      trips = scalarOnHost(*ins[0], op.where() + ": M").getInt(0);
    bool cond =
        ins.size() > 1 && ins[1] ? controlflow::truth(scalarOnHost(*ins[1], "cond"), "cond") : true;
    std::vector<T> carried;
    for (size_t i = 0; i < n; ++i)
      carried.push_back(*ins[2 + i]);
    std::vector<std::vector<T>> scans;
    for (int64_t it = 0; it < trips && cond; ++it) {
      std::vector<T> args;
      args.push_back(make(controlflow::iterationNumber(it)));
      args.push_back(make(controlflow::trueScalar()));
      for (T &t : carried)
        args.push_back(std::move(t));
      for (size_t i = 0; i < c; ++i)
        args.push_back(*ins[2 + n + i]);
      std::vector<T> outs = callee(op, body, std::move(args));
      cond = controlflow::truth(scalarOnHost(outs[0], "the loop condition"), "the loop condition");
      carried.assign(std::make_move_iterator(outs.begin() + 1),
                     std::make_move_iterator(outs.begin() + 1 + std::ptrdiff_t(n)));
      scans.resize(outs.size() - 1 - n);
      for (size_t k = 0; k + 1 + n < outs.size(); ++k)
        scans[k].push_back(std::move(outs[1 + n + k]));
    }
    std::vector<T> results = std::move(carried);
    for (size_t k = 0; k + 1 + n < body.results.size(); ++k)
      results.push_back(stackParts(k < scans.size() ? scans[k] : std::vector<T>{}, 0,
                                   body.results[1 + n + k]->type,
                                   op.where() + ": scan output " + std::to_string(k)));
    return results;
  }

  // One unbatched scan over `ins` (states, scan inputs, captures).
  std::vector<T> scanOnce(const Op &op, const std::vector<const T *> &ins, size_t nStates,
                          size_t nScans, const Function &body) {
    size_t c = ins.size() - nStates - nScans;
    std::vector<size_t> axes;
    int64_t length = -1;
    for (size_t i = 0; i < nScans; ++i) {
      const T &t = *ins[nStates + i];
      axes.push_back(controlflow::axisIn(controlflow::attrAt(op, "scan_input_axes", i),
                                         dims(t).size(), op.where() + ": scan input axis"));
      int64_t len = dims(t)[axes.back()];
      if (length >= 0 && len != length)
        fail(op.where(), ": scan input ", i, " has ", len, " steps, scan input 0 has ", length);
      length = len;
    }
    std::vector<T> states;
    for (size_t i = 0; i < nStates; ++i)
      states.push_back(*ins[i]);
    std::vector<std::vector<T>> outs;
    for (int64_t step = 0; step < length; ++step) {
      std::vector<T> args = std::move(states);
      for (size_t i = 0; i < nScans; ++i) {
        int64_t at = controlflow::attrAt(op, "scan_input_directions", i) ? length - 1 - step : step;
        args.push_back(sliceAt(*ins[nStates + i], axes[i], at));
      }
      for (size_t i = 0; i < c; ++i)
        args.push_back(*ins[nStates + nScans + i]);
      std::vector<T> r = callee(op, body, std::move(args));
      states.assign(std::make_move_iterator(r.begin()),
                    std::make_move_iterator(r.begin() + std::ptrdiff_t(nStates)));
      outs.resize(r.size() - nStates);
      for (size_t k = 0; k < outs.size(); ++k)
        outs[k].push_back(std::move(r[nStates + k]));
    }
    std::vector<T> results = std::move(states);
    for (size_t k = 0; k + nStates < body.results.size(); ++k) {
      std::vector<T> parts = k < outs.size() ? std::move(outs[k]) : std::vector<T>{};
      if (controlflow::attrAt(op, "scan_output_directions", k))
        std::reverse(parts.begin(), parts.end());
      const TensorType &type = body.results[nStates + k]->type;
      size_t axis = controlflow::axisIn(controlflow::attrAt(op, "scan_output_axes", k),
                                        type.rank() + 1, op.where() + ": scan output axis");
      results.push_back(
          stackParts(parts, axis, type, op.where() + ": scan output " + std::to_string(k)));
    }
    return results;
  }

  std::vector<T> runScan(const Op &op, const std::vector<const T *> &ins, const Function &body) {
    size_t nScans = size_t(op.getInt("num_scan_inputs"));
    size_t c = size_t(op.getInt("num_captures"));
    size_t nStates = ins.size() - nScans - c;
    if (!op.getInt("batched"))
      return scanOnce(op, ins, nStates, nScans, body);
    // Opset-8 form: one scan per batch element, results stacked on axis 0.
    int64_t batch = -1;
    for (size_t i = 0; i < nStates + nScans; ++i) {
      const std::vector<int64_t> &d = dims(*ins[i]);
      if (d.empty() || (batch >= 0 && d[0] != batch))
        fail(op.where(), ": input ", i, " ", typeStr(*ins[i]), " does not have the batch size ",
             batch < 0 ? dims(*ins[0]).at(0) : batch);
      batch = d[0];
    }
    std::vector<std::vector<T>> perBatch;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<T> sliced;
      for (size_t i = 0; i < nStates + nScans; ++i)
        sliced.push_back(sliceAt(*ins[i], 0, b));
      std::vector<const T *> args;
      for (const T &t : sliced)
        args.push_back(&t);
      for (size_t i = 0; i < c; ++i)
        args.push_back(ins[nStates + nScans + i]);
      perBatch.push_back(scanOnce(op, args, nStates, nScans, body));
    }
    std::vector<T> results;
    for (size_t k = 0; k < body.results.size(); ++k) {
      std::vector<T> parts;
      for (auto &r : perBatch)
        parts.push_back(std::move(r[k]));
      results.push_back(stackParts(parts, 0, body.results[k]->type,
                                   op.where() + ": result " + std::to_string(k)));
    }
    return results;
  }
};

} // namespace tc
