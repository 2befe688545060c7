// libFuzzer target: the .tcbc reader on arbitrary bytes.
#include "tc/IR/Bytecode.h"
#include "tc/IR/Printer.h"
#include "tc/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto buf = tc::MemoryBuffer::copy({reinterpret_cast<const char *>(data), size}, "fuzz.tcbc");
    auto m = tc::readBytecode(buf);
    (void)tc::printModuleToString(*m);
  } catch (const tc::Error &) {
  }
  return 0;
}
