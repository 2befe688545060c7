// How many 8-byte parameter slots one generated kernel may take. A CUDA
// kernel receives its buffer pointers and every buffer's dims by value, in
// 4 KB of parameters: one slot per buffer and one per dim of each. Codegen
// turns a larger group down (it would run on the host); the fuse pass keeps
// its groups below it.
#pragma once

#include "tc/IR/IR.h"
#include <cstddef>

namespace tc {

constexpr size_t kKernelParamBytes = 4096;
constexpr size_t kKernelParamSlots = kKernelParamBytes / 8;

// The slots buffer `v` takes: its pointer and its dims.
inline size_t kernelParamSlots(const Value *v) { return 1 + v->type.rank(); }

} // namespace tc
