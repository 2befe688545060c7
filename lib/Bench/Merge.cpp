#include "tc/Bench/Merge.h"
#include "tc/Bench/ResultStore.h"
#include "tc/Support/Error.h"
#include <filesystem>
#include <map>
#include <tuple>

namespace tc::bench {

std::vector<StoredResult> newestPerResult(const std::vector<StoredResult> &rows) {
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string,
                         std::string, int64_t, std::string>;
  std::map<Key, size_t> newest; // key -> index in rows
  for (size_t i = 0; i < rows.size(); ++i) {
    const RunInfo &run = rows[i].run;
    const BenchResult &r = rows[i].result;
    auto [it, added] = newest.try_emplace(
        Key{run.runId, run.suite, run.target, r.model, r.mode, r.precision, r.batch, r.kind}, i);
    if (!added && rows[it->second].run.date <= run.date)
      it->second = i;
  }
  std::vector<bool> keep(rows.size());
  for (const auto &[key, i] : newest)
    keep[i] = true;
  std::vector<StoredResult> out;
  for (size_t i = 0; i < rows.size(); ++i)
    if (keep[i])
      out.push_back(rows[i]);
  return out;
}

size_t mergeDatabases(const std::vector<std::string> &inputs, const std::string &output) {
  if (inputs.empty())
    fail("--merge: give the databases to join");
  if (std::filesystem::exists(output))
    fail(output, ": already exists (--merge writes a new file; give it as an input to add to it)");
  std::vector<StoredResult> rows;
  for (const std::string &in : inputs) {
    if (!std::filesystem::is_regular_file(in))
      fail(in, ": no such database");
    std::vector<StoredResult> part = ResultStore::openReadOnly(in)->all();
    rows.insert(rows.end(), part.begin(), part.end());
  }
  rows = newestPerResult(rows);
  ResultStore::open(output)->addAll(rows);
  return rows.size();
}

} // namespace tc::bench
