// tc-bench's SQLite history (ResultStore), its subprocess runner and the
// parsing of tc-run's report: known rows in, the same rows out.
#include "tc/Bench/Merge.h"
#include "tc/Bench/ResultStore.h"
#include "tc/Bench/Subprocess.h"
#include "tc/Bench/ToolSteps.h"
#include "tc/Support/Error.h"
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <sqlite3.h>
#include <unistd.h>

using namespace tc::bench;
namespace fs = std::filesystem;

namespace {

std::string tempDb(const char *name) {
  fs::path p = fs::temp_directory_path() /
               (std::string("tc-bench-test-") + std::to_string(getpid()) + "-" + name + ".db");
  fs::remove(p);
  return p.string();
}

RunInfo runAt(const std::string &id, const std::string &date) {
  return {id, "abc123", date, "host", "cpu model", "ci", "cpu"};
}

BenchResult passed(const std::string &model, const std::string &mode, double ms) {
  BenchResult r;
  r.model = model;
  r.group = "ci";
  r.mode = mode;
  r.precision = "fp32";
  r.batch = 2;
  r.passed = true;
  r.latencyMs = ms;
  r.p10Ms = ms * 0.9;
  r.p90Ms = ms * 1.1;
  r.compileS = 1.5;
  r.peakBytes = 4096;
  r.memoryKind = "arena+weights";
  r.rssBytes = 123456789;
  r.fallbackSteps = 3;
  return r;
}

} // namespace

TEST(BenchStore, RowsRoundTripWithNulls) {
  std::string path = tempDb("roundtrip");
  BenchResult ok = passed("small_cnn", "default", 2.5);
  ok.speedup = 3.0;
  ok.compression = 1.25;
  BenchResult bad;
  bad.model = "broken";
  bad.group = "extra";
  bad.mode = "eager";
  bad.precision = "amp";
  bad.batch = 2;
  bad.reason = "import";
  bad.error = "tc-import: error: broken.onnx: truncated";
  {
    auto store = ResultStore::open(path);
    store->add(runAt("r1", "2026-11-23T07:00:00Z"), ok);
    store->add(runAt("r1", "2026-11-23T07:00:00Z"), bad);
  }
  auto store = ResultStore::openReadOnly(path);
  std::vector<StoredResult> rows = store->all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].run.runId, "r1");
  EXPECT_EQ(rows[0].run.commit, "abc123");
  EXPECT_EQ(rows[0].run.device, "cpu model");
  EXPECT_EQ(rows[0].result.model, "small_cnn");
  EXPECT_TRUE(rows[0].result.passed);
  EXPECT_DOUBLE_EQ(*rows[0].result.latencyMs, 2.5);
  EXPECT_DOUBLE_EQ(*rows[0].result.p10Ms, 2.25);
  EXPECT_DOUBLE_EQ(*rows[0].result.speedup, 3.0);
  EXPECT_DOUBLE_EQ(*rows[0].result.compression, 1.25);
  EXPECT_EQ(*rows[0].result.peakBytes, 4096);
  EXPECT_EQ(rows[0].result.memoryKind, "arena+weights");
  EXPECT_EQ(*rows[0].result.rssBytes, 123456789);
  EXPECT_EQ(*rows[0].result.fallbackSteps, 3);
  const BenchResult &b = rows[1].result;
  EXPECT_FALSE(b.passed);
  EXPECT_EQ(b.reason, "import");
  EXPECT_EQ(b.error, bad.error);
  EXPECT_EQ(b.precision, "amp");
  EXPECT_FALSE(b.latencyMs); // NULL, not 0
  EXPECT_FALSE(b.speedup);
  EXPECT_FALSE(b.peakBytes);
  EXPECT_FALSE(b.rssBytes);
  fs::remove(path);
}

TEST(BenchStore, TorchRatiosHostStepsAndGraphRoundTrip) {
  std::string path = tempDb("columns");
  BenchResult r = passed("resnet50", "cudagraphs", 1.0);
  r.vsTorchEager = 4.0;
  r.vsTorchReduceOverhead = 0.4;
  r.memoryVsTorch = 2.5;
  r.hostSteps = 2;
  r.graphCaptured = false; // stored as 0, not NULL
  BenchResult cpu = passed("resnet50", "default", 1.0);
  ResultStore::open(path)->add(runAt("r", "2026-11-23T07:00:00Z"), r);
  ResultStore::open(path)->add(runAt("r", "2026-11-23T07:00:00Z"), cpu);
  std::vector<StoredResult> rows = ResultStore::openReadOnly(path)->all();
  ASSERT_EQ(rows.size(), 2u);
  const BenchResult &g = rows[0].result;
  EXPECT_DOUBLE_EQ(*g.vsTorchEager, 4.0);
  EXPECT_DOUBLE_EQ(*g.vsTorchReduceOverhead, 0.4);
  EXPECT_DOUBLE_EQ(*g.memoryVsTorch, 2.5);
  EXPECT_EQ(*g.hostSteps, 2);
  ASSERT_TRUE(g.graphCaptured);
  EXPECT_FALSE(*g.graphCaptured);
  const BenchResult &c = rows[1].result; // not measured: NULL
  EXPECT_FALSE(c.vsTorchEager);
  EXPECT_FALSE(c.memoryVsTorch);
  EXPECT_FALSE(c.hostSteps);
  EXPECT_FALSE(c.graphCaptured);
  fs::remove(path);
}

TEST(BenchStore, AmpErrorsRoundTrip) {
  std::string path = tempDb("amp");
  BenchResult r = passed("resnet50", "default", 1.0);
  r.precision = "amp";
  r.relErr = 2.4e-2;
  r.errBound = 4.5e-2;
  r.torchAmpErr = 3e-2;
  BenchResult fp32 = passed("resnet50", "default", 1.0);
  ResultStore::open(path)->add(runAt("r", "2026-11-23T07:00:00Z"), r);
  ResultStore::open(path)->add(runAt("r", "2026-11-23T07:00:00Z"), fp32);
  std::vector<StoredResult> rows = ResultStore::openReadOnly(path)->all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*rows[0].result.relErr, 2.4e-2);
  EXPECT_DOUBLE_EQ(*rows[0].result.errBound, 4.5e-2);
  EXPECT_DOUBLE_EQ(*rows[0].result.torchAmpErr, 3e-2);
  EXPECT_FALSE(rows[1].result.relErr);
  EXPECT_FALSE(rows[1].result.errBound);
  EXPECT_FALSE(rows[1].result.torchAmpErr);
  fs::remove(path);
}

// A database written before the torch, host-step, graph and amp error columns: read
// back with them NULL, and given them when opened for writing.
TEST(BenchStore, OlderDatabasesGetTheNewColumns) {
  std::string path = tempDb("old");
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, R"sql(
CREATE TABLE results (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, commit_sha TEXT NOT NULL,
  date TEXT NOT NULL, machine TEXT NOT NULL, device TEXT NOT NULL, suite TEXT NOT NULL,
  target TEXT NOT NULL, model TEXT NOT NULL, model_group TEXT NOT NULL, mode TEXT NOT NULL,
  precision TEXT NOT NULL, batch INTEGER NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
  error TEXT NOT NULL, latency_ms REAL, p10_ms REAL, p90_ms REAL, speedup REAL, compile_s REAL,
  peak_bytes INTEGER, memory_kind TEXT NOT NULL, compression REAL, rss_bytes INTEGER,
  fallback_steps INTEGER);
INSERT INTO results VALUES (1, 'old', 'c', '2026-01-01T00:00:00Z', 'm', 'd', 'ci', 'cpu', 'a', 'ci',
  'eager', 'fp32', 2, 'pass', '', '', 1.0, 0.9, 1.1, 1.0, 0.5, 10, 'arena+weights', 1.0, 20, 0);
)sql",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::vector<StoredResult> rows = ResultStore::openReadOnly(path)->all();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].result.latencyMs, 1.0);
  EXPECT_FALSE(rows[0].result.hostSteps);
  EXPECT_FALSE(rows[0].result.relErr);
  // An older row is an inference row.
  EXPECT_EQ(rows[0].result.kind, kInference);
  EXPECT_FALSE(rows[0].result.trainSteps);
  EXPECT_EQ(rows[0].result.losses, "");
  BenchResult r = passed("b", "eager", 2.0);
  r.hostSteps = 1;
  r.relErr = 1e-3;
  r.torchAmpErr = 2e-3;
  ResultStore::open(path)->add(runAt("new", "2026-02-01T00:00:00Z"), r);
  BenchResult t = passed("b", "default", 3.0);
  t.kind = kTrain;
  t.vsTorchCompile = 0.5;
  t.trainSteps = 3;
  t.losses = "2.5,2.25,2";
  ResultStore::open(path)->add(runAt("new", "2026-02-01T00:00:00Z"), t);
  rows = ResultStore::openReadOnly(path)->all();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows[0].result.hostSteps);
  EXPECT_FALSE(rows[0].result.torchAmpErr);
  EXPECT_EQ(rows[0].result.kind, kInference);
  EXPECT_EQ(rows[1].result.kind, kInference);
  EXPECT_EQ(rows[2].result.kind, kTrain);
  EXPECT_DOUBLE_EQ(*rows[2].result.vsTorchCompile, 0.5);
  EXPECT_EQ(rows[2].result.trainSteps, 3);
  EXPECT_EQ(rows[2].result.losses, "2.5,2.25,2");
  EXPECT_FALSE(rows[0].result.roofline); // the grid's columns read as NULL / '' there
  EXPECT_EQ(rows[0].result.bound, "");
  EXPECT_EQ(rows[1].result.hostSteps, 1);
  EXPECT_DOUBLE_EQ(*rows[1].result.relErr, 1e-3);
  EXPECT_DOUBLE_EQ(*rows[1].result.torchAmpErr, 2e-3);
  fs::remove(path);
}

// A kernel-grid point's columns (Grid.h) round-trip.
TEST(BenchStore, GridPointsRoundTrip) {
  std::string path = tempDb("grid");
  BenchResult g = passed("reduce/f16/axes=middle,r=64", "tc", 0.25);
  g.kind = kGrid;
  g.group = "reduce";
  g.trafficBytes = int64_t(48) << 20;
  g.flops = 1.5e7;
  g.roofline = 0.42;
  g.bound = "memory";
  g.vsTorchCompile = 0.8;
  ResultStore::open(path)->add(runAt("g", "2026-12-05T00:00:00Z"), g);
  std::vector<StoredResult> rows = ResultStore::openReadOnly(path)->all();
  ASSERT_EQ(rows.size(), 1u);
  const BenchResult &r = rows[0].result;
  EXPECT_EQ(r.kind, kGrid);
  EXPECT_EQ(r.group, "reduce");
  EXPECT_EQ(*r.trafficBytes, int64_t(48) << 20);
  EXPECT_DOUBLE_EQ(*r.flops, 1.5e7);
  EXPECT_DOUBLE_EQ(*r.roofline, 0.42);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(*r.vsTorchCompile, 0.8);
  fs::remove(path);
}

// The parts of one run (one --run-id) stay together in the history, ordered
// by the run's first date, whatever run lies between their dates.
TEST(BenchStore, PartsOfARunStayTogether) {
  std::string path = tempDb("parts");
  auto store = ResultStore::open(path);
  store->add(runAt("suite", "2026-11-22T01:00:00Z"), passed("a", "eager", 1));
  store->add(runAt("other", "2026-11-22T02:00:00Z"), passed("x", "eager", 1));
  store->add(runAt("suite", "2026-11-22T03:00:00Z"), passed("b", "eager", 1));
  std::vector<StoredResult> rows = store->all();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].result.model, "a");
  EXPECT_EQ(rows[1].result.model, "b");
  EXPECT_EQ(rows[2].result.model, "x");
  fs::remove(path);
}

// --merge: every row of both files, a result measured twice (a part run
// again) kept once, the newest; a missing input, a foreign file or an
// existing output is an error naming the file.
TEST(BenchMerge, KeepsRowsAndTheNewestOfDuplicates) {
  std::string a = tempDb("part1"), b = tempDb("part2"), out = tempDb("all");
  RunInfo first = runAt("vision", "2026-11-22T01:00:00Z");
  RunInfo again = runAt("vision", "2026-11-22T05:00:00Z");
  ResultStore::open(a)->add(first, passed("resnet50", "eager", 9.0));  // replaced below
  ResultStore::open(a)->add(first, passed("mobilenet", "eager", 2.0)); // kept
  ResultStore::open(b)->add(again, passed("resnet50", "eager", 3.0));  // newer
  ResultStore::open(b)->add(again, passed("vit", "eager", 4.0));       // kept
  BenchResult amp = passed("resnet50", "eager", 5.0);
  amp.precision = "amp"; // another result: kept
  ResultStore::open(b)->add(first, amp);
  BenchResult train = passed("resnet50", "eager", 7.0);
  train.kind = kTrain; // a train step of the same model, mode and batch: kept too
  ResultStore::open(b)->add(first, train);
  EXPECT_EQ(mergeDatabases({a, b}, out), 5u);
  std::vector<StoredResult> rows = ResultStore::openReadOnly(out)->all();
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, double> ms;
  for (const StoredResult &r : rows)
    ms[r.result.model + " " + r.result.precision + (r.result.kind == kTrain ? " train" : "")] =
        *r.result.latencyMs;
  EXPECT_EQ(ms.size(), 5u);
  EXPECT_DOUBLE_EQ(ms["resnet50 fp32 train"], 7.0);
  EXPECT_DOUBLE_EQ(ms["resnet50 fp32"], 3.0);
  EXPECT_DOUBLE_EQ(ms["mobilenet fp32"], 2.0);
  EXPECT_DOUBLE_EQ(ms["vit fp32"], 4.0);
  EXPECT_DOUBLE_EQ(ms["resnet50 amp"], 5.0);
  // The order of the inputs does not matter: the newest date wins.
  std::string out2 = tempDb("all2");
  mergeDatabases({b, a}, out2);
  for (const StoredResult &r : ResultStore::openReadOnly(out2)->all()) {
    if (r.result.model == "resnet50" && r.result.precision == "fp32" &&
        r.result.kind == kInference) {
      EXPECT_DOUBLE_EQ(*r.result.latencyMs, 3.0);
    }
  }
  EXPECT_THROW(mergeDatabases({a, b}, out), tc::Error); // exists
  EXPECT_THROW(mergeDatabases({a, tempDb("none")}, tempDb("x")), tc::Error);
  for (const std::string &p : {a, b, out, out2})
    fs::remove(p);
}

TEST(BenchStore, HistoryIsOrderedByDateAcrossOpens) {
  std::string path = tempDb("order");
  ResultStore::open(path)->add(runAt("late", "2026-11-24T00:00:00Z"), passed("m", "eager", 1));
  ResultStore::open(path)->add(runAt("early", "2026-11-22T00:00:00Z"), passed("m", "eager", 2));
  std::vector<StoredResult> rows = ResultStore::open(path)->all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].run.runId, "early");
  EXPECT_EQ(rows[1].run.runId, "late");
  fs::remove(path);
}

TEST(BenchStore, ReadOnlyRejectsOtherFiles) {
  std::string path = tempDb("missing");
  EXPECT_THROW(ResultStore::openReadOnly(path), tc::Error); // no such file
  std::string other = tempDb("other");
  {
    auto s = ResultStore::open(other);
  } // creates the table
  EXPECT_NO_THROW(ResultStore::openReadOnly(other));
  fs::remove(other);
}

TEST(BenchSubprocess, CapturesOutputAndTheErrorLine) {
  ProcessResult p = runProcess({"/bin/sh", "-c",
                                "echo out; echo note >&2; echo 'tc-x: error: boom' >&2; "
                                "echo trailing >&2; exit 3"},
                               10);
  EXPECT_FALSE(p.ok());
  EXPECT_FALSE(p.timedOut);
  EXPECT_FALSE(p.crashed);
  EXPECT_EQ(p.exitCode, 3);
  EXPECT_EQ(p.out, "out\n");
  EXPECT_EQ(p.errorLine(), "tc-x: error: boom");
}

TEST(BenchSubprocess, TimeoutAndCrashAreReasons) {
  ProcessResult slow = runProcess({"/bin/sleep", "5"}, 1);
  EXPECT_TRUE(slow.timedOut);
  EXPECT_LT(slow.wallSeconds, 4);
  EXPECT_NE(slow.errorLine().find("timed out"), std::string::npos);
  ProcessResult crash = runProcess({"/bin/sh", "-c", "kill -SEGV $$"}, 10);
  EXPECT_TRUE(crash.crashed);
  EXPECT_NE(crash.errorLine().find("crashed"), std::string::npos) << crash.errorLine();
  ProcessResult none = runProcess({"/nonexistent/tool"}, 10);
  EXPECT_FALSE(none.ok());
  EXPECT_TRUE(runProcess({"true"}, 10).ok()); // a bare name is looked up in PATH
}

TEST(BenchSubprocess, StepFailuresNameTheTool) {
  ToolSteps tools("/bin", 10);
  ProcessResult proc;
  auto f = tools.run("sh", {"-c", "echo 'sh: error: no' >&2; exit 1"}, "compile", proc);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->reason, "compile");
  EXPECT_EQ(f->error, "sh: error: no");
  EXPECT_FALSE(tools.run("true", {}, "compile", proc));
}

TEST(BenchRunReport, ReadsLatencySpreadAndMismatch) {
  std::string why;
  auto r = parseRunReport(
      R"({"target": "cpu", "latency_ms": {"min": 1, "p10": 1.5, "median": 2, "p90": 3, "max": 4},
          "arena_bytes": 4096, "fallback_steps": 2, "compared": true, "ok": false,
          "outputs": ["output 0 'y': max abs err 1 [MISMATCH]"]})",
      why);
  ASSERT_TRUE(r) << why;
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->mismatch, "output 0 'y': max abs err 1 [MISMATCH]");
  EXPECT_DOUBLE_EQ(r->medianMs, 2);
  EXPECT_DOUBLE_EQ(r->p10Ms, 1.5);
  EXPECT_DOUBLE_EQ(r->p90Ms, 3);
  EXPECT_EQ(r->arenaBytes, 4096);
  EXPECT_EQ(*r->fallbackSteps, 2);
  EXPECT_FALSE(r->peakDeviceBytes);
  // CUDA: device time wins over host time; peak device bytes are read.
  auto g = parseRunReport(R"({"ok": true, "latency_ms": {"median": 9, "p90": 9},
      "device_ms": {"min": 1, "median": 2, "p90": 3}, "device": "H100",
      "peak_device_bytes": 123})",
                          why);
  ASSERT_TRUE(g);
  EXPECT_DOUBLE_EQ(g->medianMs, 2);
  EXPECT_DOUBLE_EQ(g->p10Ms, 1); // no p10: the minimum
  EXPECT_EQ(*g->peakDeviceBytes, 123);
  EXPECT_EQ(g->device, "H100");
  EXPECT_FALSE(r->cudaGraph); // the CPU report has no graph
  auto cg = parseRunReport(R"({"ok": true, "latency_ms": {"median": 1}, "cuda_graph": true})", why);
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->cudaGraph, true);
  EXPECT_FALSE(parseRunReport("tc-run: error: no CUDA device", why));
}
