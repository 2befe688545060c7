// The dashboard's pages from known rows (BenchRows.h): the landing table
// shows the latest run's numbers, regressions are flagged, nothing is
// fetched from the network.
#include "BenchRows.h"
#include "tc/Bench/Dashboard.h"
#include <gtest/gtest.h>

using namespace tc::bench;
using namespace tc::bench::testing;

TEST(BenchDashboard, LandingShowsTheLatestNumbersAndFlagsRegressions) {
  std::vector<DashboardPage> pages = renderDashboard(history(), "bench.db");
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages[0].file, "index.html");
  EXPECT_EQ(pages[1].file, "suite-ci-cpu.html");
  const std::string &index = pages[0].html;
  EXPECT_NE(index.find("<tr data-key=\"ci/cpu/default/fp32\" class=\"regress\">"),
            std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"bad\">2/4 (50%)</td>"),
            std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"speedup\">2.83x</td>"), std::string::npos); // sqrt 8
  EXPECT_NE(index.find("<td data-metric=\"compile_s\">1.50</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"compression\">1.00x</td>"), std::string::npos);
  EXPECT_NE(index.find("id=\"regressions\""), std::string::npos);
  EXPECT_EQ(index.find("<script"), std::string::npos); // static: no script, no network
  EXPECT_EQ(index.find("<link"), std::string::npos);
  EXPECT_EQ(index.find("src="), std::string::npos);
  // The suite page: b (+50%, spreads apart) and c (now failing) regressed, a did not.
  const std::string &suite = pages[1].html;
  EXPECT_NE(suite.find("<tr class=\"regress\" data-model=\"b\">"), std::string::npos);
  EXPECT_NE(suite.find("<tr class=\"regress\" data-model=\"c\">"), std::string::npos);
  EXPECT_NE(suite.find("<tr data-model=\"a\">"), std::string::npos);
  EXPECT_NE(suite.find("+50.0%"), std::string::npos);
  EXPECT_NE(suite.find("<svg"), std::string::npos);
}

// Training rows: their own landing table and page, beside inference's.
TEST(BenchDashboard, TrainingSection) {
  std::vector<StoredResult> rows = history();
  for (const StoredResult &r : trainingHistory())
    rows.push_back(r);
  std::vector<DashboardPage> pages = renderDashboard(rows, "bench.db");
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[1].file, "suite-ci-cpu.html");
  EXPECT_EQ(pages[2].file, "train-train-ci-cuda.html");
  const std::string &index = pages[0].html;
  size_t training = index.find("<table id=\"training\">");
  ASSERT_NE(training, std::string::npos);
  EXPECT_LT(index.find("data-key=\"ci/cpu/default/fp32\""), training);
  size_t row = index.find("<tr data-key=\"train-ci/cuda/default/fp32/train\" class=\"regress\">");
  ASSERT_NE(row, std::string::npos);
  EXPECT_GT(row, training);
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"bad\">1/2 (50%)</td>", row),
            std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"vs_torch_eager\">2.00x</td>", row), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"vs_torch_compile\">1.00x</td>", row), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"memory_vs_torch\">1.50x</td>", row), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"runs\">1</td>", row), std::string::npos);
  EXPECT_NE(index.find("train-ci/cuda/default/fp32/train</a>: pass 2/2 \u2192 1/2, geomean "
                       "speedup vs PyTorch eager 4.00x \u2192 2.00x"),
            std::string::npos);
  const std::string &page = pages[2].html;
  EXPECT_NE(page.find("Training suite train-ci on cuda"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"regress\" data-model=\"n\">"), std::string::npos);
  EXPECT_NE(page.find("<td data-metric=\"losses\" class=\"red\">1.0e-02 &gt; 1.0e-03</td>"),
            std::string::npos);
  EXPECT_NE(page.find("2.3,2.2,2.1"), std::string::npos);
}

// A training sweep of a few models a run: the suite is every model's
// newest row (index and page), not the last sweep's models alone.
TEST(BenchDashboard, TrainingSuiteIsEveryModelsNewestRow) {
  std::vector<StoredResult> rows = trainingHistory();
  rows.erase(rows.begin() + 3); // run t2 measured m alone
  std::vector<DashboardPage> pages = renderDashboard(rows, "bench.db");
  const std::string &index = pages[0].html;
  size_t row = index.find("<tr data-key=\"train-ci/cuda/default/fp32/train\"");
  ASSERT_NE(row, std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"ok\">2/2 (100%)</td>", row),
            std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"runs\">2</td>", row), std::string::npos);
  const std::string &page = pages.back().html;
  EXPECT_NE(page.find("data-model=\"m\""), std::string::npos);
  EXPECT_NE(page.find("data-model=\"n\""), std::string::npos);
  EXPECT_NE(page.find("Each model's newest row (2 run(s)"), std::string::npos);
}

TEST(BenchDashboard, NoRegressionWithOneRun) {
  std::vector<StoredResult> rows = history();
  rows.resize(3); // the first run only
  std::string index = renderDashboard(rows, "bench.db")[0].html;
  EXPECT_EQ(index.find("class=\"regress\""), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"ok\">3/3 (100%)</td>"),
            std::string::npos);
}

// The vs-PyTorch columns: the landing's geomeans and counts, the suite
// page's red host-step cell, the flagged slow model and the graph column.
TEST(BenchDashboard, VersusPyTorchHostStepsAndGraph) {
  std::vector<DashboardPage> pages = renderDashboard(visionOnCuda(), "bench.db");
  ASSERT_EQ(pages.size(), 2u);
  const std::string &index = pages[0].html;
  EXPECT_NE(index.find("<td data-metric=\"vs_torch_eager\">4.00x</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"vs_torch_ro\">0.50x</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"memory_vs_torch\">4.00x</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"compile_s\">15.00</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"slow\" class=\"red\">1</td>"), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"host_steps\" class=\"red\">2</td>"), std::string::npos);
  const std::string &suite = pages[1].html;
  EXPECT_EQ(pages[1].file, "suite-vision-cuda.html");
  EXPECT_NE(suite.find("<tr class=\"slow\" data-model=\"r50\">"), std::string::npos);
  EXPECT_NE(suite.find("<tr data-model=\"vit\">"), std::string::npos);
  EXPECT_NE(suite.find("<tr class=\"fail\" data-model=\"bert\">"), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"host_steps\" class=\"red\">2</td>"), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"host_steps\">0</td>"), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"graph\">yes</td>"), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"graph\">no</td>"), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"vs_torch_ro\" class=\"red\""), std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"err\">\u2013</td>"), std::string::npos); // not amp
}

// amp rows show the rule's numbers: red above the bound, PyTorch's error in the title.
TEST(BenchDashboard, AmpErrorAndBound) {
  std::vector<StoredResult> rows = visionOnCuda();
  for (StoredResult &s : rows) {
    s.result.precision = "amp";
    s.result.relErr = 3e-2;
    s.result.errBound = s.result.model == "bert" ? 2e-2 : 4.5e-2;
    if (s.result.model != "bert")
      s.result.torchAmpErr = 3e-2;
  }
  std::vector<DashboardPage> pages = renderDashboard(rows, "bench.db");
  ASSERT_EQ(pages.size(), 2u);
  const std::string &suite = pages[1].html;
  EXPECT_NE(suite.find("<td data-metric=\"err\" title=\"1.5x torch amp 3.0e-02\">3.0e-02 &lt;= "
                       "4.5e-02</td>"),
            std::string::npos);
  EXPECT_NE(suite.find("<td data-metric=\"err\" class=\"red\">3.0e-02 &gt; 2.0e-02</td>"),
            std::string::npos);
}

// A result measured twice in one run (a part run again) counts once: the newest.
TEST(BenchDashboard, RepeatedResultsCountOnce) {
  std::vector<StoredResult> rows = visionOnCuda();
  StoredResult again = rows[2]; // bert, passing now
  again.run.date = "2026-11-22T11:00:00Z";
  again.result = rows[1].result;
  again.result.model = "bert";
  rows.push_back(again);
  std::string index = renderDashboard(rows, "bench.db")[0].html;
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"ok\">3/3 (100%)</td>"),
            std::string::npos);
}
