#include "tc/IR/CompileTimeline.h"
#include "tc/IR/Printer.h"
#include "tc/Import/OnnxImporter.h"
#include "tc/Support/Error.h"
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
    std::string weights, exportOnnx;
    po::options_description opts("tc-import options");
    opts.add_options()("list-unsupported", po::bool_switch(&listUnsupportedOnly),
                       "print the ops tc cannot import (with node names) and exit 0")(
        "weights", po::value(&weights)->value_name("FILE.safetensors"),
        "replace the initializers a safetensors checkpoint names by its tensors (the trained "
        "weights of tc-run --train; same names, dtypes and shapes)")(
        "export-onnx", po::value(&exportOnnx)->value_name("OUT.onnx"),
        "with --weights: write the model with those weights as ONNX (atomically) instead of "
        "importing it");
    po::variables_map vm;
    if (!parseCommandLine("tc-import", "[options] <model.onnx | model.onnxtxt | ->", argc, argv,
                          opts, common, vm))
      return 0;
    auto buf = MemoryBuffer::open(common.input);
    if (!exportOnnx.empty()) {
      if (weights.empty())
        fail("--export-onnx needs --weights FILE.safetensors");
      size_t n = exportOnnxWithWeights(*buf, weights, exportOnnx);
      std::cerr << "tc-import: wrote " << exportOnnx << " (" << n << " initializers from "
                << weights << ")\n";
      return 0;
    }
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
    ImportOptions importOpts;
    importOpts.weightsFile = weights;
    auto m = importOnnx(*buf, importOpts);
    appendTimeline(*m,
                   {"tc-import", "import",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    // Printed only for a dump folder: the text of a model's weights (base64)
    // is larger than its file.
    if (std::string dir = dumpDirFor("tc-import", common); !dir.empty())
      dumpFile(dir, "imported.tcir", printModuleToString(*m));
    writeModule(*m, common);
    return 0;
  });
}

} // namespace tc::tools
