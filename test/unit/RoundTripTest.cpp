// Round trip on the committed real models: ONNX → IR → text → IR → bytecode
// → IR → text must be byte-identical.
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/Import/OnnxImporter.h"
#include <filesystem>
#include <gtest/gtest.h>
#include <vector>

using namespace tc;
namespace fs = std::filesystem;

// models/ci holds hand-built ONNX files; models/small/*/model.onnx are real
// torch.onnx (dynamo, opset 20) exports.
static std::vector<fs::path> committedModels() {
  std::vector<fs::path> paths;
  fs::path root = fs::path(TC_SOURCE_DIR) / "models";
  for (const auto &entry : fs::directory_iterator(root / "ci"))
    if (entry.path().extension() == ".onnx")
      paths.push_back(entry.path());
  for (const auto &entry : fs::directory_iterator(root / "small"))
    if (fs::exists(entry.path() / "model.onnx"))
      paths.push_back(entry.path() / "model.onnx");
  return paths;
}

TEST(RoundTrip, CommittedModelsAreExact) {
  size_t models = 0;
  for (const fs::path &path : committedModels()) {
    ++models;
    SCOPED_TRACE(path.string());
    auto m = importOnnx(*MemoryBuffer::open(path.string()));
    std::string text = printModuleToString(*m);
    auto fromText = parseModule(text, "model.tcir");
    EXPECT_EQ(printModuleToString(*fromText), text);
    std::string bc = writeBytecode(*fromText);
    auto fromBc = readBytecode(MemoryBuffer::copy(bc, "model.tcbc"));
    EXPECT_EQ(printModuleToString(*fromBc), text);
    EXPECT_EQ(writeBytecode(*fromBc), bc);
    EXPECT_FALSE(fromBc->main().constants.empty());
  }
  EXPECT_GE(models, 6u);
}

// The three ways out (string, streamed pieces, one aligned buffer) give the
// same bytes, and a clone prints the same module while sharing (not copying)
// its constants' bytes.
TEST(RoundTrip, StreamedBufferedAndClonedBytecodeAgree) {
  size_t models = 0;
  for (const fs::path &path : committedModels()) {
    ++models;
    SCOPED_TRACE(path.string());
    auto m = importOnnx(*MemoryBuffer::open(path.string()));
    std::string bc = writeBytecode(*m);
    std::string streamed;
    size_t pieces = 0;
    EXPECT_EQ(writeBytecode(*m,
                            [&](std::string_view b) {
                              streamed += b;
                              ++pieces;
                            }),
              bc.size());
    EXPECT_EQ(streamed, bc);
    EXPECT_GT(pieces, 1u);
    auto buf = bytecodeBuffer(*m, "model.tcbc");
    EXPECT_EQ(buf->str(), bc);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf->data()) % kBytecodeAlign, 0u);
    auto clone = cloneModule(*m);
    EXPECT_EQ(printModuleToString(*clone), printModuleToString(*m));
    EXPECT_EQ(writeBytecode(*clone), bc);
    ASSERT_EQ(clone->main().constants.size(), m->main().constants.size());
    for (size_t i = 0; i < m->main().constants.size(); ++i)
      EXPECT_EQ(clone->main().constants[i]->data->ptr, m->main().constants[i]->data->ptr);
    // The clone is its own module: changing it leaves the source alone.
    clone->main().constants[0]->name = "renamed";
    EXPECT_NE(m->main().constants[0]->name, "renamed");
  }
  EXPECT_GE(models, 6u);
}
