// The benchmark history: every tc-bench result is one row of one SQLite
// table, so runs on different machines and days (a CI run on the CPU, a
// full run on the GPU machine) land in one file and the dashboard reads
// them back.
//
//   CREATE TABLE results (
//     id          INTEGER PRIMARY KEY,
//     run_id      TEXT NOT NULL,  -- one tc-bench invocation ("<date> <machine> <pid>")
//     commit_sha  TEXT NOT NULL,  -- tc's commit (git rev-parse --short HEAD, or --commit)
//     date        TEXT NOT NULL,  -- UTC ISO 8601, "2026-11-23T07:30:00Z"
//     machine     TEXT NOT NULL,  -- host name (or --machine)
//     device      TEXT NOT NULL,  -- CPU model name / CUDA device name
//     suite       TEXT NOT NULL,  -- manifest suite: ci, vision, transformer, mixed
//     target      TEXT NOT NULL,  -- cpu | cuda
//     model       TEXT NOT NULL,
//     model_group TEXT NOT NULL,  -- the manifest's group (vision, transformer, mixed, ci)
//     mode        TEXT NOT NULL,  -- eager | default | cudagraphs | dynamic | torch-eager |
//     torch-compile precision   TEXT NOT NULL,  -- fp32 | amp batch       INTEGER NOT NULL, status
//     TEXT NOT NULL,  -- pass | fail reason      TEXT NOT NULL,  -- '' or missing, import,
//     reference, compile, run, numerics, timeout, torch error       TEXT NOT NULL,  -- the failing
//     step's one-line error latency_ms  REAL,           -- median; CUDA: device time (CUDA events),
//     CPU: wall time p10_ms      REAL,           -- 10th and 90th percentile of the timed
//     iterations p90_ms      REAL, speedup     REAL,           -- eager latency_ms / latency_ms
//     (same run, model, precision, batch) compile_s   REAL,           -- wall time of tc-import +
//     tc-opt + tc-codegen peak_bytes  INTEGER,        -- see memory_kind memory_kind TEXT NOT NULL,
//     -- 'device': CUDA bytes tc held at peak (tc-run's
//                                 -- peak_device_bytes); 'arena+weights': the CPU plan's arena
//                                 -- plus the weights; '' not measured
//     compression REAL,           -- eager peak_bytes / peak_bytes
//     rss_bytes   INTEGER,        -- tc-run's maximum resident set (getrusage): an
//                                 -- upper bound including the runtime and libraries
//     fallback_steps INTEGER      -- plan steps on the reference kernels (tc-run's
//                                 -- fallback_steps): no generated kernel or library call
//   );
//
// NULL metrics were not measured (a failed row, a mode without an eager
// row to compare with). The table is created when the file is new; rows are
// only ever added.
#pragma once
#include "tc/Bench/Result.h"
#include <memory>
#include <string>
#include <vector>

struct sqlite3;

namespace tc::bench {

class ResultStore {
public:
  // Opens (creating if needed) the database at `path`; throws tc::Error
  // naming the file when it cannot, or when it is not a tc-bench database.
  static std::unique_ptr<ResultStore> open(const std::string &path);
  // Opens an existing database read-only (the dashboard).
  static std::unique_ptr<ResultStore> openReadOnly(const std::string &path);
  ~ResultStore();

  void add(const RunInfo &run, const BenchResult &r);
  // Every row, oldest run first (by date, then run id, then insertion).
  std::vector<StoredResult> all() const;

  static const char *schema();

private:
  ResultStore(sqlite3 *db, std::string path) : db_(db), path_(std::move(path)) {}
  void exec(const char *sql) const;
  sqlite3 *db_;
  std::string path_;
};

} // namespace tc::bench
