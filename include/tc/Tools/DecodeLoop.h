// tc-run --decode: a token loop over a KV-cache decode step (a model whose
// input 0 is the new token ids [batch, 1] and output 0 the logits [batch, 1,
// vocab]; models/export_decode_step.py), in one of two signatures:
//  - growing caches: inputs 1.. / outputs 1.. the past / present caches in
//    the same order, the present one token longer on the past's symbolic axis;
//  - fixed-capacity caches (--static): input 1 the position (i64 [1], the
//    new token's slot), inputs 2.. fed by outputs 1.. of identical types
//    (a symbolic capacity): each capacity bucket is one input shape.
// Each step feeds its argmax (or a fixed) token and its caches back as the
// next step's inputs.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include "tc/Runtime/RunBuffers.h"
#include "tc/Target/Executable.h"
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tc::tools {

struct DecodeSignature {
  std::string pastDim;        // the caches' symbolic length ("past", or "cap" when fixed)
  size_t caches = 0;          // inputs firstCache().. feed from outputs 1..caches
  bool fixedCapacity = false; // input 1 is the position; caches keep their shape
  int cacheAxis = -1;         // pastDim's axis in every cache
  size_t firstCache() const { return fixedCapacity ? 2 : 1; }
};
// The signature of `f` as a decode step; a tc::Error saying what does not
// fit otherwise ("--decode: input 0 must be token ids [batch, 1] ...").
DecodeSignature decodeSignature(const Function &f);

// Fixed-capacity caches: the capacity that holds slot `position`: the
// smallest of `buckets` (ascending) above it, or with none given the
// smallest power of two >= 128 above it; an error past the last bucket.
int64_t bucketFor(const std::vector<int64_t> &buckets, int64_t position);

struct DecodeOptions {
  int steps = 0;
  int64_t fixedToken = -1; // >= 0: feed this token every step (else the argmax)
  // Caches stay where the run leaves them (RunOutput::ModelDevice) and are
  // the next step's device inputs: a GPU target's device memory, no host
  // round trip. Off: every output comes to the host.
  bool deviceCache = false;
  // Fixed-capacity caches: the first step's position, and the buckets
  // (bucketFor). Crossing into a larger bucket copies the caches into it
  // (the tail zeroed) once, through the host.
  int64_t position = 0;
  std::vector<int64_t> buckets;
};

// A fixed-capacity decode's steps at one capacity.
struct DecodeBucket {
  int64_t capacity = 0;
  int plans = 0, graphsRecorded = 0, graphLaunches = 0;
  std::vector<double> stepMs;
  std::vector<double> steadyMs; // the steps that neither planned nor recorded a graph
};

struct DecodeResult {
  std::vector<double> stepMs;               // wall time of each step (its outputs ready)
  std::vector<std::vector<int64_t>> tokens; // each step's fed-back token per batch row
  std::vector<HostTensor> outputs;          // the last step's, on the host
  std::vector<double> samePlanMs;           // growing caches: the last step's shape again
  std::vector<DecodeBucket> buckets;        // fixed capacity: per bucket, in order
};

using RunFn = std::function<RunEvents(const std::vector<RunInput> &, std::vector<RunOutput> &)>;

// Runs opts.steps (>= 1) steps of `f` from `inputs` (the first step's, on
// the host; fixed-capacity caches at bucketFor(opts.position)); growing
// caches then run the last step's inputs five times more (samePlanMs).
DecodeResult runDecode(const Function &f, const DecodeSignature &sig,
                       std::vector<HostTensor> inputs, const DecodeOptions &opts, const RunFn &run);

// tc-run's lines: steps, tokens/s, per-token p50/p90, the planned rerun or
// each bucket's plans and graphs. `start`: the first step's past length or
// position; `where`: "cpu, cache on the host" ...
void printDecodeReport(std::ostream &os, const DecodeResult &r, int64_t batch, int64_t start,
                       const std::string &where);

} // namespace tc::tools
