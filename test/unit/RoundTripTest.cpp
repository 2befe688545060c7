// Round trip on the committed real models: ONNX → IR → text → IR → bytecode
// → IR → text must be byte-identical.
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/Import/OnnxImporter.h"
#include <filesystem>
#include <gtest/gtest.h>

using namespace tc;
namespace fs = std::filesystem;

TEST(RoundTrip, CommittedModelsAreExact) {
  size_t models = 0;
  for (const auto &entry : fs::directory_iterator(fs::path(TC_SOURCE_DIR) / "models" / "ci")) {
    if (entry.path().extension() != ".onnx")
      continue;
    ++models;
    SCOPED_TRACE(entry.path().string());
    auto m = importOnnx(*MemoryBuffer::open(entry.path().string()));
    std::string text = printModuleToString(*m);
    auto fromText = parseModule(text, "model.tcir");
    EXPECT_EQ(printModuleToString(*fromText), text);
    std::string bc = writeBytecode(*fromText);
    auto fromBc = readBytecode(MemoryBuffer::copy(bc, "model.tcbc"));
    EXPECT_EQ(printModuleToString(*fromBc), text);
    EXPECT_EQ(writeBytecode(*fromBc), bc);
    EXPECT_FALSE(fromBc->main().constants.empty());
  }
  EXPECT_GE(models, 3u);
}
