// `tc-prof dashboard DB -o SITE`: the static HTML dashboard of a tc-bench
// database (docs/bench.md). The rendering lives in lib/Bench/Dashboard.cpp.
#include "tc/Bench/Dashboard.h"
#include "tc/Bench/ResultStore.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

int tcProfDashboardMain(int argc, char **argv) {
  return runTool("tc-prof", [&] {
    CommonOptions common;
    po::options_description opts("tc-prof dashboard options");
    po::variables_map vm;
    if (!parseCommandLine("tc-prof dashboard", "<results.db> -o <site folder>", argc, argv, opts,
                          common, vm))
      return 0;
    if (common.input == "-")
      fail("dashboard: give the database (tc-bench --db) as the argument");
    if (common.output == "-")
      fail("dashboard: give the site folder with -o DIR");
    auto store = bench::ResultStore::openReadOnly(common.input);
    std::vector<bench::StoredResult> rows = store->all();
    if (rows.empty())
      fail(common.input, ": no results yet (run tc-bench --db ", common.input, ")");
    std::vector<std::string> files = bench::writeDashboard(rows, common.input, common.output);
    std::cerr << "tc-prof: dashboard of " << rows.size() << " results: " << files.size()
              << " pages in " << common.output << " (open " << files.front() << ")\n";
    return 0;
  });
}

} // namespace tc::tools
