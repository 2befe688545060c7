// libFuzzer target: the .tcir parser (and, for what parses, printing and the
// bytecode round trip, which must then be exact).
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/Support/Error.h"
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    auto m = tc::parseModule(text, "fuzz.tcir");
    std::string printed = tc::printModuleToString(*m);
    auto again = tc::readBytecode(tc::MemoryBuffer::copy(tc::writeBytecode(*m), "fuzz.tcbc"));
    if (tc::printModuleToString(*again) != printed)
      std::abort(); // the round trip must be exact for anything that parses
  } catch (const tc::Error &) {
  }
  return 0;
}
