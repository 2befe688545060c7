// The benchmark history: every tc-bench result is one row of one SQLite
// table, so runs on different machines and days (a CI run on the CPU, a
// full run on the GPU machine in parts) land in one file and the dashboard
// reads them back.
//
// clang-format off
//   CREATE TABLE results (
//     id          INTEGER PRIMARY KEY,
//     run_id      TEXT NOT NULL,  -- one run: "<date> <machine> <pid>", or tc-bench --run-id
//     commit_sha  TEXT NOT NULL,  -- tc's commit (git rev-parse --short HEAD, or --commit)
//     date        TEXT NOT NULL,  -- UTC ISO 8601, "2026-11-23T07:30:00Z"
//     machine     TEXT NOT NULL,  -- host name (or --machine)
//     device      TEXT NOT NULL,  -- CPU model name / CUDA device name
//     suite       TEXT NOT NULL,  -- manifest suite: ci, vision, text, generative, ...
//     target      TEXT NOT NULL,  -- cpu | cuda
//     model       TEXT NOT NULL,
//     model_group TEXT NOT NULL,  -- the manifest's group
//     mode        TEXT NOT NULL,  -- eager | default | cudagraphs | dynamic |
//                                 -- torch-eager | torch-compile | torch-reduce-overhead
//     precision   TEXT NOT NULL,  -- fp32 | amp
//     batch       INTEGER NOT NULL,
//     status      TEXT NOT NULL,  -- pass | fail
//     reason      TEXT NOT NULL,  -- '' or missing, export, import, reference, compile, run,
//                                 -- numerics, timeout, torch, losses (Result.h)
//     error       TEXT NOT NULL,  -- the failing step's one-line error
//     latency_ms  REAL,           -- median; CUDA: device time (CUDA events), CPU: wall time
//     p10_ms      REAL,           -- 10th and 90th percentile of the timed iterations
//     p90_ms      REAL,
//     speedup     REAL,           -- tc eager latency_ms / latency_ms (same run, model,
//                                 -- precision, batch)
//     compile_s   REAL,           -- wall time of tc-import + tc-opt + tc-codegen
//     peak_bytes  INTEGER,        -- see memory_kind
//     memory_kind TEXT NOT NULL,  -- 'device': CUDA bytes held at peak (tc-run's
//                                 -- peak_device_bytes; PyTorch: max_memory_allocated);
//                                 -- 'arena+weights': the CPU plan's arena plus the
//                                 -- weights; '' not measured
//     compression REAL,           -- tc eager peak_bytes / peak_bytes
//     rss_bytes   INTEGER,        -- tc-run's maximum resident set (getrusage): an
//                                 -- upper bound including the runtime and libraries
//     fallback_steps INTEGER,     -- plan steps on the reference kernels (tc-run's
//                                 -- fallback_steps): no generated kernel or library call
//     speedup_torch_eager REAL,   -- PyTorch eager latency_ms / latency_ms
//     speedup_torch_ro REAL,      -- torch.compile(mode="reduce-overhead") latency_ms / latency_ms
//     memory_vs_torch REAL,       -- PyTorch eager peak_bytes / peak_bytes
//     host_steps  INTEGER,        -- groups tc-codegen left to the host (artifact section
//                                 -- host-steps)
//     graph_captured INTEGER,     -- 1: tc-run replayed one CUDA graph, 0: step by step;
//                                 -- NULL: not CUDA
//     rel_err     REAL,           -- amp: max|out - ref| / max|ref|, worst output (AmpRule.h)
//     err_bound   REAL,           -- amp: the bound rel_err was held to
//     torch_amp_err REAL,         -- amp: PyTorch AMP's own rel. error on the same inputs
//     kind        TEXT NOT NULL,  -- inference | train (tc-bench --train: latency_ms is ms
//                                 -- per train step; rel_err / err_bound / torch_amp_err
//                                 -- the losses' distances, LossRule.h)
//     speedup_torch_compile REAL, -- torch.compile() (default mode) latency_ms / latency_ms
//     train_steps INTEGER,        -- train: the steps run, each loss read back
//     losses      TEXT NOT NULL,  -- train: the per-step losses, "2.32236,2.36784,..."
//     traffic_bytes INTEGER,      -- grid: the point's minimum traffic (Grid.h)
//     flops       REAL,           -- grid: its FLOP count
//     roofline    REAL,           -- grid: the fraction of its roofline reached
//     bound       TEXT NOT NULL   -- grid: memory | compute ('' for other kinds)
//   );
//
// Grid rows (kind 'grid', tc-bench --import-grid): suite 'kernel-grid',
// model the point's name, model_group its family, mode 'tc', precision its
// dtype, batch 0, reason the point's failing step, latency_ms tc's time,
// speedup_torch_eager / speedup_torch_compile PyTorch's time / tc's.
// clang-format on
//
// NULL metrics were not measured (a failed row, a mode without an eager
// row to compare with). The table is created when the file is new, and the
// columns added since (the last sixteen) when it is older (its rows are
// kind 'inference'); tc-bench only adds
// rows. One run's rows may span several files (its parts): --merge
// (Merge.h) joins them.
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
  // Opens an existing database read-only (the dashboard, --merge).
  static std::unique_ptr<ResultStore> openReadOnly(const std::string &path);
  ~ResultStore();

  void add(const RunInfo &run, const BenchResult &r);
  // Many rows in one transaction (--merge).
  void addAll(const std::vector<StoredResult> &rows);
  // Every row, oldest run first (by the run's first date, then run id, then
  // insertion): a run's parts stay together whatever their dates.
  std::vector<StoredResult> all() const;

  static const char *schema();

private:
  ResultStore(sqlite3 *db, std::string path) : db_(db), path_(std::move(path)) {}
  void exec(const char *sql) const;
  std::vector<std::string> columnsPresent() const;
  sqlite3 *db_;
  std::string path_;
};

} // namespace tc::bench
