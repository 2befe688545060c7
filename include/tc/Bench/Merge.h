// Joining results: a suite run in parts (tc-bench --shard, one GPU call
// each) writes one database per part; `tc-bench --merge A.db B.db -o all.db`
// joins them. A part run again (it timed out, a model was fixed) repeats
// results: the newest of each is kept, by the dashboard as by --merge.
#pragma once
#include "tc/Bench/Result.h"
#include <string>
#include <vector>

namespace tc::bench {

// One row per result (run id, suite, target, model, mode, precision,
// batch, kind): the one with the latest date; of equal dates, the later in
// `rows`. The rows kept stay in their order.
std::vector<StoredResult> newestPerResult(const std::vector<StoredResult> &rows);

// Reads every database of `inputs` (tc::Error naming a missing or foreign
// one), keeps newestPerResult of all their rows and writes them to
// `output`, which must not exist. Returns the rows written.
size_t mergeDatabases(const std::vector<std::string> &inputs, const std::string &output);

} // namespace tc::bench
