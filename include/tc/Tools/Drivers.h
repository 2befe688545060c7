// The real mains of the tools; tools/tc-X/*.cpp only forward to these,
// so tests and other tools can reuse the drivers.
#pragma once

namespace tc::tools {
int tcImportMain(int argc, char **argv);
int tcOptMain(int argc, char **argv);
int tcCodegenMain(int argc, char **argv);
int tcRunMain(int argc, char **argv);
int tcProfMain(int argc, char **argv);
// tc-bench: runs a benchmark suite through the tools above (as subprocesses)
// and records the results in SQLite (docs/bench.md).
int tcBenchMain(int argc, char **argv);
// `tc-prof dashboard DB -o SITE`: the static HTML dashboard of a tc-bench
// database; argv[0] is "dashboard".
int tcProfDashboardMain(int argc, char **argv);
} // namespace tc::tools
