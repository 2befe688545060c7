#include "tc/Tools/DecodeLoop.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <chrono>
#include <numeric>
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
  if (logits.dtype() == DType::F32) { // the common case, without a per-element dispatch
    const float *x = logits.data<float>();
    for (int64_t r = 0; r < rows; ++r)
      best[size_t(r)] = std::max_element(x + r * vocab, x + (r + 1) * vocab) - (x + r * vocab);
    return best;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 1; j < vocab; ++j)
      if (logits.getDouble(r * vocab + j) > logits.getDouble(r * vocab + best[size_t(r)]))
        best[size_t(r)] = j;
  return best;
}

// Input 1 a position ([1] or a scalar, integer), inputs 2.. of the very
// types of outputs 1..: the fixed-capacity signature.
bool fixedCapacity(const Function &f) {
  if (f.args.size() < 3 || f.results.size() + 1 != f.args.size())
    return false;
  const TensorType &pos = f.args[1]->type;
  if (!isInteger(pos.dtype) || pos.rank() > 1 || (pos.rank() == 1 && pos.shape[0] != Dim::fixed(1)))
    return false;
  for (size_t i = 2; i < f.args.size(); ++i)
    if (f.args[i]->type.dtype != f.results[i - 1]->type.dtype ||
        f.args[i]->type.shape != f.results[i - 1]->type.shape)
      return false;
  return true;
}

// `t` with `axis` grown to `capacity` slots, the new ones zero.
HostTensor grow(const HostTensor &t, int axis, int64_t capacity) {
  std::vector<int64_t> shape = t.shape();
  int64_t outer = 1, old = shape[size_t(axis)];
  for (int a = 0; a < axis; ++a)
    outer *= shape[size_t(a)];
  size_t row = old ? t.byteSize() / size_t(outer * old) : 0; // bytes per slot
  shape[size_t(axis)] = capacity;
  HostTensor out(t.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(t.bytes() + size_t(o * old) * row, size_t(old) * row,
                out.bytes() + size_t(o * capacity) * row);
  return out;
}

} // namespace

DecodeSignature decodeSignature(const Function &f) {
  auto bad = [](auto &&...why) { fail("--decode: the model is not a decode step: ", why...); };
  DecodeSignature sig;
  sig.fixedCapacity = fixedCapacity(f);
  if (!sig.fixedCapacity && (f.args.size() < 2 || f.results.size() != f.args.size()))
    bad("it needs token ids and past caches as inputs, logits and present caches as outputs, "
        "one present per past (",
        f.args.size(), " inputs, ", f.results.size(), " outputs)");
  const TensorType &ids = f.args[0]->type, &logits = f.results[0]->type;
  if (!isInteger(ids.dtype) || ids.rank() != 2 || ids.shape[1] != Dim::fixed(1))
    bad("input 0 must be token ids [batch, 1] (an integer type), not ", ids.str());
  if (!isFloat(logits.dtype) || logits.rank() < 2)
    bad("output 0 must be logits [batch, 1, vocab], not ", logits.str());
  sig.caches = f.results.size() - 1;
  for (size_t i = sig.firstCache(); i < f.args.size(); ++i) {
    size_t o = i + 1 - sig.firstCache(); // the output that feeds it
    const TensorType &past = f.args[i]->type, &present = f.results[o]->type;
    if (past.dtype != present.dtype || past.rank() != present.rank())
      bad("input ", i, " '", f.args[i]->name, "' (", past.str(), ") is not fed by output ", o, " '",
          f.results[o]->name, "' (", present.str(), ")");
    // The cache's length: a symbolic axis other than the ids' batch.
    std::string grows;
    int axis = -1;
    for (size_t a = 0; a < past.shape.size(); ++a) {
      const Dim &d = past.shape[a];
      if (d.isSymbolic() && !(ids.shape[0].isSymbolic() && d.symbol == ids.shape[0].symbol)) {
        grows = d.symbol;
        axis = int(a);
      }
    }
    if (grows.empty() || (!sig.pastDim.empty() && (grows != sig.pastDim || axis != sig.cacheAxis)))
      bad("input ", i, " '", f.args[i]->name, "' (", past.str(), ") has no symbolic ",
          sig.fixedCapacity ? "capacity" : "past length", " shared by every cache");
    sig.pastDim = grows;
    sig.cacheAxis = axis;
  }
  return sig;
}

int64_t bucketFor(const std::vector<int64_t> &buckets, int64_t position) {
  if (buckets.empty()) {
    int64_t c = 128;
    while (c <= position)
      c *= 2;
    return c;
  }
  for (int64_t b : buckets)
    if (b > position)
      return b;
  fail("--decode: position ", position, " does not fit the largest cache bucket (", buckets.back(),
       " slots): give a larger one to --decode-buckets");
}

DecodeResult runDecode(const Function &f, const DecodeSignature &sig,
                       std::vector<HostTensor> inputs, const DecodeOptions &opts,
                       const RunFn &run) {
  DecodeResult res;
  size_t n = f.args.size(), first = sig.firstCache(), results = f.results.size();
  std::vector<RunInput> in(n);
  for (size_t i = 0; i < n; ++i)
    in[i].host = &inputs[i];
  int64_t batch = inputs[0].shape()[0];
  // Where a step leaves its outputs: the logits on the host (their argmax is
  // the next token), the caches where the next step reads them.
  auto places = [&](bool host) {
    std::vector<RunOutput> out(results);
    for (size_t i = 1; i < results; ++i)
      out[i].to = opts.deviceCache && !host ? RunOutput::To::ModelDevice : RunOutput::To::Host;
    return out;
  };
  std::vector<HostTensor> caches(n); // the host path's next inputs
  int64_t capacity = sig.fixedCapacity ? inputs[first].shape()[size_t(sig.cacheAxis)] : 0;
  if (sig.fixedCapacity)
    res.buckets.emplace_back().capacity = capacity;
  for (int s = 0; s < opts.steps; ++s) {
    bool last = s + 1 == opts.steps, crossing = false;
    if (sig.fixedCapacity) {
      int64_t position = opts.position + s;
      if (position >= capacity) { // the last step brought the caches to the host
        capacity = bucketFor(opts.buckets, position);
        for (size_t i = first; i < n; ++i) {
          caches[i] = grow(*in[i].host, sig.cacheAxis, capacity);
          in[i] = RunInput{};
          in[i].host = &caches[i];
        }
        res.buckets.emplace_back().capacity = capacity;
      }
      inputs[1].setInt(0, position);
      crossing = position + 1 >= capacity;
    }
    // The last step and a bucket crossing bring every output to the host
    // (the caches too: a 144 MB copy at batch 8), so they are not steady.
    const bool toHost = last || crossing;
    std::vector<RunOutput> out = places(toHost);
    auto t0 = std::chrono::steady_clock::now();
    RunEvents ev = run(in, out);
    res.stepMs.push_back(msSince(t0));
    if (sig.fixedCapacity) {
      DecodeBucket &b = res.buckets.back();
      b.plans += ev.planned;
      b.graphsRecorded += ev.graphRecorded;
      b.graphLaunches += ev.graphLaunched;
      b.stepMs.push_back(res.stepMs.back());
      if (!ev.planned && !ev.graphRecorded && !toHost)
        b.steadyMs.push_back(res.stepMs.back());
    }
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
    for (size_t i = first; i < n; ++i) {
      RunOutput &o = out[i + 1 - first];
      if (o.to == RunOutput::To::ModelDevice) {
        in[i] = nextRunInput(o, f.args[i]->type.dtype);
        continue;
      }
      caches[i] = std::move(o.host);
      in[i] = RunInput{};
      in[i].host = &caches[i];
    }
  }
  // Growing caches: the last step's shape once more, now planned: what a
  // step costs without planning a new shape (every step is a new shape).
  // Fixed-capacity steps are all planned already (and a rerun would read
  // caches the last step overwrote in place).
  for (int r = 0; r < 5 && opts.steps > 0 && !sig.fixedCapacity; ++r) {
    std::vector<RunOutput> out = places(false);
    auto t0 = std::chrono::steady_clock::now();
    run(in, out);
    res.samePlanMs.push_back(msSince(t0));
  }
  return res;
}

void printDecodeReport(std::ostream &os, const DecodeResult &r, int64_t batch, int64_t start,
                       const std::string &where) {
  auto sorted = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  auto at = [](const std::vector<double> &v, double q) {
    return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
  };
  auto tokensPerSecond = [&](const std::vector<double> &stepMs) {
    return double(batch) * double(stepMs.size()) /
           (std::accumulate(stepMs.begin(), stepMs.end(), 0.0) / 1000);
  };
  std::vector<double> ms = sorted(r.stepMs);
  int64_t end = start + int64_t(r.stepMs.size());
  if (r.buckets.empty())
    os << "decode: " << r.stepMs.size() << " steps, batch " << batch << ", past " << start << " -> "
       << end << " (" << where << ")\n";
  else
    os << "decode: " << r.stepMs.size() << " steps, batch " << batch << ", position " << start
       << " -> " << end << ", capacity " << r.buckets.front().capacity << " -> "
       << r.buckets.back().capacity << " (" << where << ")\n";
  os << "tokens/s: " << tokensPerSecond(r.stepMs) << "\n"
     << "per-token latency: p50 " << at(ms, 0.5) << " ms, p90 " << at(ms, 0.9) << " ms, min "
     << ms.front() << " ms\n";
  if (!r.samePlanMs.empty())
    os << "the last step's shape again (planned): median " << at(sorted(r.samePlanMs), 0.5)
       << " ms (each decode step plans a new shape: the difference is that)\n";
  std::vector<double> steady;
  for (const DecodeBucket &b : r.buckets)
    steady.insert(steady.end(), b.steadyMs.begin(), b.steadyMs.end());
  if (!steady.empty()) { // what a token costs once its bucket is set up (PyTorch's warm-up)
    double rate = tokensPerSecond(steady);
    steady = sorted(steady);
    os << "steady (" << steady.size()
       << " steps that neither planned, recorded a graph nor copied the caches to the host): "
          "tokens/s "
       << rate << ", p50 " << at(steady, 0.5) << " ms, p90 " << at(steady, 0.9) << " ms\n";
  }
  for (const DecodeBucket &b : r.buckets) {
    std::vector<double> bms = sorted(b.stepMs);
    os << "bucket " << b.capacity << ": " << b.stepMs.size() << " steps, " << b.plans << " plans, "
       << b.graphsRecorded << " graphs recorded, " << b.graphLaunches << " graph launches; p50 "
       << at(bms, 0.5) << " ms, p90 " << at(bms, 0.9) << " ms\n";
  }
}

} // namespace tc::tools
