// tc-run --decode: a token loop over a KV-cache decode step (a model whose
// input 0 is the new token ids [batch, 1], output 0 the logits [batch, 1,
// vocab], and inputs 1.. / outputs 1.. the past / present caches in the same
// order, the present one token longer on the past's symbolic axis:
// models/export_decode_step.py). Each step feeds its argmax (or a fixed)
// token and its present caches back as the next step's inputs.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/RunBuffers.h"
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tc::tools {

struct DecodeSignature {
  std::string pastDim; // the caches' growing symbolic dim ("past")
  size_t caches = 0;   // inputs 1..caches feed from outputs 1..caches
};
// The signature of `f` as a decode step; a tc::Error saying what does not
// fit otherwise ("--decode: input 0 must be token ids [batch, 1] ...").
DecodeSignature decodeSignature(const Function &f);

struct DecodeOptions {
  int steps = 0;
  int64_t fixedToken = -1; // >= 0: feed this token every step (else the argmax)
  // Caches stay where the run leaves them (RunOutput::ModelDevice) and are
  // the next step's device inputs: a GPU target's device memory, no host
  // round trip. Off: every output comes to the host.
  bool deviceCache = false;
};

struct DecodeResult {
  std::vector<double> stepMs;               // wall time of each step (its outputs ready)
  std::vector<std::vector<int64_t>> tokens; // each step's fed-back token per batch row
  std::vector<HostTensor> outputs;          // the last step's, on the host
  std::vector<double> samePlanMs;           // the last step's shape again (already planned)
};

using RunFn = std::function<void(const std::vector<RunInput> &, std::vector<RunOutput> &)>;

// Runs opts.steps (>= 1) steps of `f` from `inputs` (the first step's, on
// the host), then the last step's inputs five times more (samePlanMs).
DecodeResult runDecode(const Function &f, std::vector<HostTensor> inputs, const DecodeOptions &opts,
                       const RunFn &run);

// tc-run's lines: steps, tokens/s, per-token p50/p90, the planned rerun.
// `where`: "cpu, cache on the host" ...
void printDecodeReport(std::ostream &os, const DecodeResult &r, int64_t batch, int64_t past,
                       const std::string &where);

} // namespace tc::tools
