#include "tc/IR/CompileTimeline.h"
#include "tc/IR/Printer.h"
#include "tc/Import/OnnxImporter.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include <chrono>
#include <iostream>
#include <map>

namespace tc::tools {

int tcImportMain(int argc, char **argv) {
  return runTool("tc-import", [&] {
    CommonOptions common;
    bool listUnsupportedOnly = false;
    po::options_description opts("tc-import options");
    opts.add_options()("list-unsupported", po::bool_switch(&listUnsupportedOnly),
                       "print the ops tc cannot import (with node names) and exit 0");
    po::variables_map vm;
    if (!parseCommandLine("tc-import", "[options] <model.onnx | model.onnxtxt | ->", argc, argv,
                          opts, common, vm))
      return 0;
    auto buf = MemoryBuffer::open(common.input);
    if (listUnsupportedOnly) {
      auto nodes = listUnsupported(*buf);
      std::map<std::string, std::vector<std::string>> byType;
      for (const auto &n : nodes)
        byType[n.domain.empty() ? n.opType : n.domain + "." + n.opType].push_back(n.nodeName);
      std::cout << byType.size() << " unsupported op type(s) in " << buf->name() << "\n";
      for (const auto &[type, names] : byType) {
        std::cout << "  " << type << " (" << names.size() << "):";
        for (const auto &n : names)
          std::cout << " " << n;
        std::cout << "\n";
      }
      return 0;
    }
    auto t0 = std::chrono::steady_clock::now();
    auto m = importOnnx(*buf);
    appendTimeline(*m,
                   {"tc-import", "import",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    dumpFile(dumpDirFor("tc-import", common), "imported.tcir", printModuleToString(*m));
    writeModule(*m, common);
    return 0;
  });
}

} // namespace tc::tools
