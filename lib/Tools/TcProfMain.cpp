#include "ProfCommands.h"
#include "tc/Tools/Drivers.h"
#include <string>

namespace tc::tools {

// tc-prof [compile|diff|dashboard] ...: a subcommand name first, else a model to run
// (or IR to summarize).
int tcProfMain(int argc, char **argv) {
  std::string sub = argc > 1 ? argv[1] : "";
  if (sub == "dashboard")
    return tcProfDashboardMain(argc - 1, argv + 1);
  if (sub == "compile")
    return profCompileMain(argc - 1, argv + 1);
  if (sub == "diff")
    return profDiffMain(argc - 1, argv + 1);
  return profRunMain(argc, argv);
}

} // namespace tc::tools
