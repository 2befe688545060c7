// The .tcbc binary form: compact, versioned, with constant data aligned to
// kBytecodeAlign in the file so that an mmapped file can be used in place.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Support/MemoryBuffer.h"
#include <memory>
#include <string>

namespace tc {

constexpr char kBytecodeMagic[4] = {'T', 'C', 'B', 'C'};
// 2: every location carries its train-step phase (a byte after the node).
// Version 1 files (no phase: every op forward) are still read.
constexpr uint32_t kBytecodeVersion = 2;
constexpr uint32_t kBytecodeOldestVersion = 1;
constexpr size_t kBytecodeAlign = 64;

std::string writeBytecode(const Module &m);
bool isBytecode(std::string_view bytes);
// Constants point into `buf` (no copy). Errors: "file: what (at offset N)".
std::unique_ptr<Module> readBytecode(std::shared_ptr<const MemoryBuffer> buf);

} // namespace tc
