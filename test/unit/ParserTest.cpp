#include "tc/IR/Parser.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/Printer.h"
#include "tc/Support/Error.h"
#include <cstring>
#include <gtest/gtest.h>

using namespace tc;

namespace {

const char *kCanonical = R"(// tc IR
module @m {
  meta "opset" = "20"

  func @main(%x: f32[N,4], %"onnx::w": f32[4,4]) -> (f32[N,4], bool[N,4]) {
    %b = const f32[4] [0.5, -0, inf, nan] loc("m.onnx":"b")
    %flags = const bool[2] [true, false]
    %big = const f16[17] blob 0
    %y = MatMul(%x, %"onnx::w") : f32[N,4] loc("m.onnx":"mm")
    %z = Add(%y, %b) : f32[N,4] loc("m.onnx":"add")
    %c = Less(%z, %y) : bool[N,4]
    return %z, %c
  }
}

blob 0 = "AAAAPAA8ADwAPAA8ADwAPAA8ADwAPAA8ADwAPAA8ADwAPA=="
)";

std::string errorOf(const char *text) {
  try {
    parseModule(text, "t.tcir");
  } catch (const Error &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST(Parser, CanonicalTextPrintsBackIdentically) {
  auto m = parseModule(kCanonical, "t.tcir");
  EXPECT_EQ(printModuleToString(*m), kCanonical);
}

TEST(Parser, BytecodeRoundTripIsByteIdentical) {
  auto m = parseModule(kCanonical, "t.tcir");
  std::string bc = writeBytecode(*m);
  auto m2 = readBytecode(MemoryBuffer::copy(bc, "t.tcbc"));
  EXPECT_EQ(printModuleToString(*m2), kCanonical);
  EXPECT_EQ(writeBytecode(*m2), bc);
  for (const Value *c : m2->main().constants)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(c->data->ptr) % kBytecodeAlign, 0u) << c->name;
}

TEST(Parser, NanPayloadsGoToABlobAndSurvive) {
  auto m = parseModule(kCanonical, "t.tcir");
  Value *b = m->main().constants[0];
  std::vector<uint8_t> bytes(b->data->ptr, b->data->ptr + b->data->size);
  uint32_t oddNan = 0x7fa00001;
  std::memcpy(bytes.data() + 12, &oddNan, 4);
  b->data = TensorData::fromVector(bytes);
  std::string text = printModuleToString(*m);
  EXPECT_NE(text.find("%b = const f32[4] blob 0"), std::string::npos) << text;
  auto m2 = parseModule(text, "t.tcir");
  EXPECT_EQ(*m2->main().constants[0]->data, *b->data);
}

TEST(Parser, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(
      errorOf("module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    %y = Frob(%x) : f32[2]\n"
              "    return %y\n  }\n}\n"),
      "t.tcir:3:10: unknown op 'Frob'");
  EXPECT_EQ(
      errorOf("module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    %y = Relu(%q) : f32[2]\n"
              "    return %y\n  }\n}\n"),
      "t.tcir:3:15: use of undefined value %q");
  EXPECT_EQ(
      errorOf(
          "module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    %y = Relu(%x, %x) : f32[2]\n"
          "    return %y\n  }\n}\n"),
      "t.tcir:3:5: <unknown> (Relu): expects 1 operands, got 2");
  EXPECT_EQ(
      errorOf("module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    %y = Relu(%x) : f32[3]\n"
              "    return %y\n  }\n}\n"),
      "t.tcir:3:5: <unknown> (Relu): result 0 is declared f32[3] but the operands give f32[2]");
  EXPECT_EQ(
      errorOf("module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    %c = const f32[2] [1.0]\n"),
      "t.tcir:3:28: expected 2 elements, got 1");
  EXPECT_EQ(errorOf("module @m {\n  func @main(%x: f32[2]) -> (f32[2]) {\n    return %x\n  }\n"),
            "t.tcir:5:1: expected '}' to close the module");
}

TEST(Parser, TruncatedBytecodeIsAnErrorAtEveryLength) {
  auto m = parseModule(kCanonical, "t.tcir");
  std::string bc = writeBytecode(*m);
  for (size_t n = 0; n < bc.size(); ++n) {
    std::string cut = bc.substr(0, n);
    try {
      readBytecode(MemoryBuffer::copy(cut, "cut.tcbc"));
      // Cutting only the data section's trailing padding cannot happen: the
      // last constant ends the file, so every cut must fail.
      ADD_FAILURE() << "accepted a file cut at " << n << " of " << bc.size();
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind("cut.tcbc: ", 0), 0u) << e.what();
    }
  }
}
