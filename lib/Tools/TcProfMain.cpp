#include "tc/Analysis/ModelSummary.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <iostream>

namespace tc::tools {

int tcProfMain(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "dashboard")
    return tcProfDashboardMain(argc - 1, argv + 1);
  return runTool("tc-prof", [&] {
    CommonOptions common;
    bool summary = false;
    std::string format = "text";
    po::options_description opts("tc-prof options");
    opts.add_options()("summary", po::bool_switch(&summary),
                       "for IR: op counts by kind and fusion category, parameters, weight bytes, "
                       "signature")("format", po::value(&format)->value_name("text|json"),
                                    "output format");
    po::variables_map vm;
    if (!parseCommandLine("tc-prof", "--summary [options] <model.tcbc | model.tcir | ->", argc,
                          argv, opts, common, vm, /*withOutput=*/false))
      return 0;
    if (format != "text" && format != "json")
      fail("unknown --format '", format, "' (text or json)");
    if (!summary)
      fail("nothing to do: give --summary (traces and tables come with the runtime)");
    auto m = loadModule(common.input);
    ModelSummary s = summarize(*m);
    std::cout << (format == "json" ? s.json() : s.text());
    return 0;
  });
}

} // namespace tc::tools
