#include "tc/Tools/DecodeLoop.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <chrono>
#include <ostream>

namespace tc::tools {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Per batch row of logits [batch, 1, vocab] (or [batch, vocab]): the index
// of the largest (the first of equals).
std::vector<int64_t> argmaxRows(const HostTensor &logits) {
  int64_t vocab = logits.shape().back(), rows = vocab ? logits.numElements() / vocab : 0;
  std::vector<int64_t> best(size_t(rows), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 1; j < vocab; ++j)
      if (logits.getDouble(r * vocab + j) > logits.getDouble(r * vocab + best[size_t(r)]))
        best[size_t(r)] = j;
  return best;
}

} // namespace

DecodeSignature decodeSignature(const Function &f) {
  auto bad = [](auto &&...why) { fail("--decode: the model is not a decode step: ", why...); };
  if (f.args.size() < 2 || f.results.size() != f.args.size())
    bad("it needs token ids and past caches as inputs, logits and present caches as outputs, "
        "one present per past (",
        f.args.size(), " inputs, ", f.results.size(), " outputs)");
  const TensorType &ids = f.args[0]->type, &logits = f.results[0]->type;
  if (!isInteger(ids.dtype) || ids.rank() != 2 || ids.shape[1] != Dim::fixed(1))
    bad("input 0 must be token ids [batch, 1] (an integer type), not ", ids.str());
  if (!isFloat(logits.dtype) || logits.rank() < 2)
    bad("output 0 must be logits [batch, 1, vocab], not ", logits.str());
  DecodeSignature sig;
  sig.caches = f.args.size() - 1;
  for (size_t i = 1; i < f.args.size(); ++i) {
    const TensorType &past = f.args[i]->type, &present = f.results[i]->type;
    if (past.dtype != present.dtype || past.rank() != present.rank())
      bad("input ", i, " '", f.args[i]->name, "' (", past.str(), ") is not fed by output ", i, " '",
          f.results[i]->name, "' (", present.str(), ")");
    // The growing axis: a symbolic one other than the ids' batch.
    std::string grows;
    for (const Dim &d : past.shape)
      if (d.isSymbolic() && !(ids.shape[0].isSymbolic() && d.symbol == ids.shape[0].symbol))
        grows = d.symbol;
    if (grows.empty() || (!sig.pastDim.empty() && grows != sig.pastDim))
      bad("input ", i, " '", f.args[i]->name, "' (", past.str(),
          ") has no symbolic past length shared by every cache");
    sig.pastDim = grows;
  }
  return sig;
}

DecodeResult runDecode(const Function &f, std::vector<HostTensor> inputs, const DecodeOptions &opts,
                       const RunFn &run) {
  DecodeResult res;
  size_t n = f.args.size();
  std::vector<RunInput> in(n);
  for (size_t i = 0; i < n; ++i)
    in[i].host = &inputs[i];
  int64_t batch = inputs[0].shape()[0];
  // Where a step leaves its outputs: the logits on the host (their argmax is
  // the next token), the caches where the next step reads them.
  auto places = [&](bool host) {
    std::vector<RunOutput> out(n);
    for (size_t i = 1; i < n; ++i)
      out[i].to = opts.deviceCache && !host ? RunOutput::To::ModelDevice : RunOutput::To::Host;
    return out;
  };
  std::vector<HostTensor> caches(n); // the host path's next inputs
  for (int s = 0; s < opts.steps; ++s) {
    bool last = s + 1 == opts.steps;
    std::vector<RunOutput> out = places(last);
    auto t0 = std::chrono::steady_clock::now();
    run(in, out);
    res.stepMs.push_back(msSince(t0));
    std::vector<int64_t> next = opts.fixedToken >= 0
                                    ? std::vector<int64_t>(size_t(batch), opts.fixedToken)
                                    : argmaxRows(out[0].host);
    res.tokens.push_back(next);
    if (last) {
      for (RunOutput &o : out)
        res.outputs.push_back(std::move(o.host));
      break;
    }
    HostTensor ids(f.args[0]->type.dtype, {batch, 1});
    for (int64_t b = 0; b < batch; ++b)
      ids.setInt(b, next[size_t(b)]);
    inputs[0] = std::move(ids);
    for (size_t i = 1; i < n; ++i) {
      if (opts.deviceCache) {
        in[i] = RunInput{nullptr, f.args[i]->type.dtype, out[i].shape, out[i].device, out[i].bytes};
        continue;
      }
      caches[i] = std::move(out[i].host);
      in[i].host = &caches[i];
    }
  }
  // The last step's shape once more, now planned: what a step costs
  // without planning a new shape (every decode step is a new shape).
  for (int r = 0; r < 5 && opts.steps > 0; ++r) {
    std::vector<RunOutput> out = places(false);
    auto t0 = std::chrono::steady_clock::now();
    run(in, out);
    res.samePlanMs.push_back(msSince(t0));
  }
  return res;
}

void printDecodeReport(std::ostream &os, const DecodeResult &r, int64_t batch, int64_t past,
                       const std::string &where) {
  std::vector<double> ms = r.stepMs, again = r.samePlanMs;
  std::sort(ms.begin(), ms.end());
  std::sort(again.begin(), again.end());
  auto at = [](const std::vector<double> &v, double q) {
    return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
  };
  double total = 0;
  for (double t : r.stepMs)
    total += t;
  os << "decode: " << r.stepMs.size() << " steps, batch " << batch << ", past " << past << " -> "
     << past + int64_t(r.stepMs.size()) << " (" << where << ")\n"
     << "tokens/s: " << double(batch) * double(r.stepMs.size()) / (total / 1000) << "\n"
     << "per-token latency: p50 " << at(ms, 0.5) << " ms, p90 " << at(ms, 0.9) << " ms, min "
     << ms.front() << " ms\n"
     << "the last step's shape again (planned): median " << at(again, 0.5)
     << " ms (each decode step plans a new shape: the difference is that)\n";
}

} // namespace tc::tools
