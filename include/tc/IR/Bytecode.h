// The .tcbc binary form: compact, versioned, with constant data aligned to
// kBytecodeAlign in the file so that an mmapped file can be used in place.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Support/ByteSink.h"
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

// The file's bytes, handed to `sink` in order (a tool's output streams them
// to its file: the constants are not copied first); returns their count.
size_t writeBytecode(const Module &m, const ByteSink &sink);
std::string writeBytecode(const Module &m);
// The file's bytes in one aligned buffer (one copy of the constants).
std::shared_ptr<const MemoryBuffer> bytecodeBuffer(const Module &m, std::string name);
bool isBytecode(std::string_view bytes);
// Constants point into `buf` (no copy). Errors: "file: what (at offset N)".
std::unique_ptr<Module> readBytecode(std::shared_ptr<const MemoryBuffer> buf);
// A deep copy of `m` (its bytecode read back) whose constants share m's
// bytes: no copy of the weights.
std::unique_ptr<Module> cloneModule(const Module &m);

} // namespace tc
