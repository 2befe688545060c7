// MemoryBuffer's heap forms: small buffers from the allocator, large ones
// (a train step's weights) mapped on their own with huge pages asked for.
// Either way: 64-byte aligned, the bytes as filled, a NUL after them.
#include "tc/Support/MemoryBuffer.h"
#include <cstdint>
#include <gtest/gtest.h>

using namespace tc;

TEST(MemoryBuffer, BuiltBuffersAreAlignedAndHoldTheirBytes) {
  for (size_t size : {size_t(0), size_t(100), (size_t(32) << 20) - 1, size_t(40) << 20}) {
    SCOPED_TRACE(size);
    auto b = MemoryBuffer::build(size, "b", [&](char *out) {
      for (size_t i = 0; i < size; i += 4093)
        out[i] = char(i % 251);
      if (size)
        out[size - 1] = 'z';
    });
    ASSERT_EQ(b->size(), size);
    EXPECT_EQ(b->name(), "b");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
    for (size_t i = 0; i + 1 < size; i += 4093) {
      EXPECT_EQ(b->data()[i], char(i % 251));
    }
    if (size) {
      EXPECT_EQ(b->data()[size - 1], 'z');
    }
    EXPECT_EQ(b->data()[size], '\0');
  }
  auto c = MemoryBuffer::copy(std::string(size_t(33) << 20, 'q'), "c");
  EXPECT_EQ(c->str(), std::string(size_t(33) << 20, 'q'));
}
