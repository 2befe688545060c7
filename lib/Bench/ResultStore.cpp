#include "tc/Bench/ResultStore.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstring>
#include <sqlite3.h>

namespace tc::bench {

namespace {
// The table as documented in ResultStore.h.
const char *kSchema = R"sql(
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL, commit_sha TEXT NOT NULL, date TEXT NOT NULL, machine TEXT NOT NULL,
  device TEXT NOT NULL, suite TEXT NOT NULL, target TEXT NOT NULL,
  model TEXT NOT NULL, model_group TEXT NOT NULL, mode TEXT NOT NULL, precision TEXT NOT NULL,
  batch INTEGER NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL, error TEXT NOT NULL,
  latency_ms REAL, p10_ms REAL, p90_ms REAL, speedup REAL, compile_s REAL,
  peak_bytes INTEGER, memory_kind TEXT NOT NULL, compression REAL, rss_bytes INTEGER,
  fallback_steps INTEGER, speedup_torch_eager REAL, speedup_torch_ro REAL, memory_vs_torch REAL,
  host_steps INTEGER, graph_captured INTEGER, rel_err REAL, err_bound REAL, torch_amp_err REAL,
  kind TEXT NOT NULL DEFAULT 'inference', speedup_torch_compile REAL, train_steps INTEGER,
  losses TEXT NOT NULL DEFAULT '', traffic_bytes INTEGER, flops REAL, roofline REAL,
  bound TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id);
)sql";

const char *kColumns =
    "run_id, commit_sha, date, machine, device, suite, target, model, model_group, mode, "
    "precision, batch, status, reason, error, latency_ms, p10_ms, p90_ms, speedup, compile_s, "
    "peak_bytes, memory_kind, compression, rss_bytes, fallback_steps, speedup_torch_eager, "
    "speedup_torch_ro, memory_vs_torch, host_steps, graph_captured, rel_err, err_bound, "
    "torch_amp_err, kind, speedup_torch_compile, train_steps, losses, traffic_bytes, flops, "
    "roofline, bound";

// Columns added after the first databases were written (docs/bench/bench.db):
// an older file gets them (their default: NULL, or an older row's kind,
// inference) when opened for writing, and reads them as that default when
// opened read-only.
struct AddedColumn {
  const char *name, *type, *value; // value: what an older row reads as
};
const AddedColumn kAddedColumns[] = {{"speedup_torch_eager", "REAL", "NULL"},
                                     {"speedup_torch_ro", "REAL", "NULL"},
                                     {"memory_vs_torch", "REAL", "NULL"},
                                     {"host_steps", "INTEGER", "NULL"},
                                     {"graph_captured", "INTEGER", "NULL"},
                                     {"rel_err", "REAL", "NULL"},
                                     {"err_bound", "REAL", "NULL"},
                                     {"torch_amp_err", "REAL", "NULL"},
                                     {"kind", "TEXT NOT NULL DEFAULT 'inference'", "'inference'"},
                                     {"speedup_torch_compile", "REAL", "NULL"},
                                     {"train_steps", "INTEGER", "NULL"},
                                     {"losses", "TEXT NOT NULL DEFAULT ''", "''"},
                                     {"traffic_bytes", "INTEGER", "NULL"},
                                     {"flops", "REAL", "NULL"},
                                     {"roofline", "REAL", "NULL"},
                                     {"bound", "TEXT NOT NULL DEFAULT ''", "''"}};

// A prepared statement, finalized when it goes out of scope.
struct Statement {
  sqlite3_stmt *stmt = nullptr;
  Statement(sqlite3 *db, const std::string &sql, const std::string &path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
      fail(path, ": ", sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt); }
  void text(int i, const std::string &s) {
    sqlite3_bind_text(stmt, i, s.c_str(), int(s.size()), SQLITE_TRANSIENT);
  }
  void real(int i, const std::optional<double> &v) {
    v ? sqlite3_bind_double(stmt, i, *v) : sqlite3_bind_null(stmt, i);
  }
  void integer(int i, const std::optional<int64_t> &v) {
    v ? sqlite3_bind_int64(stmt, i, *v) : sqlite3_bind_null(stmt, i);
  }
  std::string columnText(int i) const {
    const unsigned char *s = sqlite3_column_text(stmt, i);
    return s ? reinterpret_cast<const char *>(s) : "";
  }
  std::optional<double> columnReal(int i) const {
    if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
      return std::nullopt;
    return sqlite3_column_double(stmt, i);
  }
  std::optional<int64_t> columnInt(int i) const {
    if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
      return std::nullopt;
    return sqlite3_column_int64(stmt, i);
  }
};

sqlite3 *openDb(const std::string &path, int flags) {
  sqlite3 *db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    fail(path, ": cannot open the database: ", why);
  }
  // Another process (a second tc-bench) may be writing: wait, don't fail.
  sqlite3_busy_timeout(db, 10000);
  return db;
}
} // namespace

const char *ResultStore::schema() { return kSchema; }

void ResultStore::exec(const char *sql) const {
  char *msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string why = msg ? msg : "unknown error";
    sqlite3_free(msg);
    fail(path_, ": ", why);
  }
}

std::vector<std::string> ResultStore::columnsPresent() const {
  Statement st(db_, "PRAGMA table_info(results)", path_);
  std::vector<std::string> names;
  while (sqlite3_step(st.stmt) == SQLITE_ROW)
    names.push_back(st.columnText(1));
  return names;
}

std::unique_ptr<ResultStore> ResultStore::open(const std::string &path) {
  std::unique_ptr<ResultStore> s(
      new ResultStore(openDb(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), path));
  s->exec(kSchema);
  std::vector<std::string> present = s->columnsPresent();
  for (const AddedColumn &c : kAddedColumns)
    if (std::find(present.begin(), present.end(), c.name) == present.end())
      s->exec(("ALTER TABLE results ADD COLUMN " + std::string(c.name) + " " + c.type).c_str());
  return s;
}

std::unique_ptr<ResultStore> ResultStore::openReadOnly(const std::string &path) {
  std::unique_ptr<ResultStore> s(new ResultStore(openDb(path, SQLITE_OPEN_READONLY), path));
  // Fails with "no such table" (as a tc::Error) for any other database.
  Statement check(s->db_, "SELECT count(*) FROM results", path);
  return s;
}

ResultStore::~ResultStore() { sqlite3_close(db_); }

void ResultStore::add(const RunInfo &run, const BenchResult &r) {
  Statement st(
      db_,
      std::string("INSERT INTO results (") + kColumns +
          ") VALUES "
          "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      path_);
  int i = 0;
  for (const std::string *s : {&run.runId, &run.commit, &run.date, &run.machine, &run.device,
                               &run.suite, &run.target, &r.model, &r.group, &r.mode, &r.precision})
    st.text(++i, *s);
  st.integer(++i, r.batch);
  st.text(++i, r.passed ? "pass" : "fail");
  st.text(++i, r.reason);
  st.text(++i, r.error);
  for (const std::optional<double> *v : {&r.latencyMs, &r.p10Ms, &r.p90Ms, &r.speedup, &r.compileS})
    st.real(++i, *v);
  st.integer(++i, r.peakBytes);
  st.text(++i, r.memoryKind);
  st.real(++i, r.compression);
  st.integer(++i, r.rssBytes);
  st.integer(++i, r.fallbackSteps);
  for (const std::optional<double> *v :
       {&r.vsTorchEager, &r.vsTorchReduceOverhead, &r.memoryVsTorch})
    st.real(++i, *v);
  st.integer(++i, r.hostSteps);
  st.integer(++i, r.graphCaptured ? std::optional<int64_t>(*r.graphCaptured) : std::nullopt);
  for (const std::optional<double> *v : {&r.relErr, &r.errBound, &r.torchAmpErr})
    st.real(++i, *v);
  st.text(++i, r.kind);
  st.real(++i, r.vsTorchCompile);
  st.integer(++i, r.trainSteps);
  st.text(++i, r.losses);
  st.integer(++i, r.trafficBytes);
  st.real(++i, r.flops);
  st.real(++i, r.roofline);
  st.text(++i, r.bound);
  if (sqlite3_step(st.stmt) != SQLITE_DONE)
    fail(path_, ": cannot add a result: ", sqlite3_errmsg(db_));
}

void ResultStore::addAll(const std::vector<StoredResult> &rows) {
  exec("BEGIN");
  for (const StoredResult &r : rows)
    add(r.run, r.result);
  exec("COMMIT");
}

std::vector<StoredResult> ResultStore::all() const {
  // A read-only older file lacks the added columns: read them as NULL.
  std::string columns = kColumns;
  std::vector<std::string> present = columnsPresent();
  for (const AddedColumn &c : kAddedColumns)
    if (std::find(present.begin(), present.end(), c.name) == present.end()) {
      // The name as a whole word: "losses" is not the end of another name.
      size_t at = (", " + columns + ",").find(", " + std::string(c.name) + ",");
      columns.replace(at, std::strlen(c.name), std::string(c.value) + " AS " + c.name);
    }
  Statement st(db_,
               "SELECT " + columns +
                   " FROM results ORDER BY (SELECT min(date) FROM results AS first WHERE "
                   "first.run_id = results.run_id), run_id, id",
               path_);
  std::vector<StoredResult> rows;
  int rc;
  while ((rc = sqlite3_step(st.stmt)) == SQLITE_ROW) {
    StoredResult s;
    RunInfo &run = s.run;
    BenchResult &r = s.result;
    int i = 0;
    for (std::string *f : {&run.runId, &run.commit, &run.date, &run.machine, &run.device,
                           &run.suite, &run.target, &r.model, &r.group, &r.mode, &r.precision})
      *f = st.columnText(i++);
    r.batch = st.columnInt(i++).value_or(0);
    r.passed = st.columnText(i++) == "pass";
    r.reason = st.columnText(i++);
    r.error = st.columnText(i++);
    for (std::optional<double> *v : {&r.latencyMs, &r.p10Ms, &r.p90Ms, &r.speedup, &r.compileS})
      *v = st.columnReal(i++);
    r.peakBytes = st.columnInt(i++);
    r.memoryKind = st.columnText(i++);
    r.compression = st.columnReal(i++);
    r.rssBytes = st.columnInt(i++);
    r.fallbackSteps = st.columnInt(i++);
    for (std::optional<double> *v : {&r.vsTorchEager, &r.vsTorchReduceOverhead, &r.memoryVsTorch})
      *v = st.columnReal(i++);
    r.hostSteps = st.columnInt(i++);
    if (std::optional<int64_t> g = st.columnInt(i++))
      r.graphCaptured = *g != 0;
    for (std::optional<double> *v : {&r.relErr, &r.errBound, &r.torchAmpErr})
      *v = st.columnReal(i++);
    r.kind = st.columnText(i++);
    r.vsTorchCompile = st.columnReal(i++);
    r.trainSteps = st.columnInt(i++);
    r.losses = st.columnText(i++);
    r.trafficBytes = st.columnInt(i++);
    r.flops = st.columnReal(i++);
    r.roofline = st.columnReal(i++);
    r.bound = st.columnText(i++);
    rows.push_back(std::move(s));
  }
  if (rc != SQLITE_DONE)
    fail(path_, ": ", sqlite3_errmsg(db_));
  return rows;
}

} // namespace tc::bench
