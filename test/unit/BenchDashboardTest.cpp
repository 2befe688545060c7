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

TEST(BenchDashboard, NoRegressionWithOneRun) {
  std::vector<StoredResult> rows = history();
  rows.resize(3); // the first run only
  std::string index = renderDashboard(rows, "bench.db")[0].html;
  EXPECT_EQ(index.find("class=\"regress\""), std::string::npos);
  EXPECT_NE(index.find("<td data-metric=\"pass_rate\" class=\"ok\">3/3 (100%)</td>"),
            std::string::npos);
}
