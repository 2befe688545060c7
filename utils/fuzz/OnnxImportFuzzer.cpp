// libFuzzer target: the ONNX importer (binary protos and text syntax).
#include "tc/IR/Printer.h"
#include "tc/Import/OnnxImporter.h"
#include "tc/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto buf = tc::MemoryBuffer::copy({reinterpret_cast<const char *>(data), size}, "fuzz.onnx");
    (void)tc::listUnsupported(*buf);
    tc::ImportOptions opts;
    opts.allowExternalData = false; // a fuzzed model must never read files
    auto m = tc::importOnnx(*buf, opts);
    (void)tc::printModuleToString(*m);
  } catch (const tc::Error &) {
  }
  return 0;
}
